package mrtr

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// NonceStore remembers the nonces of opened requestStates until they
// expire, so that each state opens once. A host with several replicas
// backs it with a store they share.
type NonceStore interface {
	// Consume records c.Nonce as used until c.ExpiresAt, on behalf of
	// c.Principal; c has passed every other check of [Sealer.Open]. It
	// returns an error wrapping ErrReplayed when the nonce was consumed
	// before (or may have been: a store that has forgotten a nonce must
	// refuse every state that expires no later than it), and any other
	// error when it cannot tell or will not hold the nonce: Open then
	// refuses the state, never lets it through. A store that forgets
	// expired nonces must judge expiry by the clock of the Sealers it
	// serves.
	Consume(ctx context.Context, c Claims) error
}

// defaultNonceCapacity bounds the store of a Sealer given no NonceStore
// and no NonceCapacity.
const defaultNonceCapacity = 100000

// ErrNonceStoreFull refuses a state when the nonce store of a Sealer given
// no NonceStore holds as many unexpired nonces as it may, in all or for
// the state's principal: forgetting one would let its state be replayed,
// so a new state is refused instead until some expire.
var ErrNonceStoreFull = errors.New("mrtr: the nonce store has no room for another unexpired nonce")

// memoryNonces is the bounded in-memory NonceStore of a Sealer given none,
// for a single process. It is safe for concurrent use.
//
// It holds at most capacity unexpired nonces, and at most its
// per-principal share of them for any one principal of a tenant (the
// same principal name in two tenants is two callers), so that one caller
// cannot fill it for everyone. Expired nonces are forgotten oldest first,
// each once and in O(log capacity), so that a Consume costs O(log
// capacity) on average and at worst the forgetting of capacity nonces:
// the bound the host configured. A Consume refused because the store is
// full costs O(1). A state that expires no later than the last nonce
// forgotten is refused as replayed: whatever the clocks say, a consumed
// state never opens again.
type memoryNonces struct {
	mu       sync.Mutex
	capacity int
	share    int
	used     map[string]bool
	held     map[holder]int // nonces held by each principal of each tenant
	byExpiry expiryHeap
	horizon  time.Time // the expiry of the last nonce forgotten
	now      func() time.Time
}

// newMemoryNonces returns a store for up to capacity unexpired nonces, of
// which one principal may hold perPrincipal, judging expiry by now, the
// clock of the Sealer it serves. A capacity below 1 is
// defaultNonceCapacity; a perPrincipal below 1 is a hundredth of the
// capacity, and any share is at least 1 and at most the capacity.
func newMemoryNonces(capacity, perPrincipal int, now func() time.Time) *memoryNonces {
	if capacity < 1 {
		capacity = defaultNonceCapacity
	}
	if perPrincipal < 1 {
		perPrincipal = capacity / 100
	}
	return &memoryNonces{
		capacity: capacity, share: min(max(perPrincipal, 1), capacity),
		used: make(map[string]bool), held: make(map[holder]int), now: now,
	}
}

// Consume forgets the nonces that have expired, then records c.Nonce, or
// refuses it as replayed, or refuses it with ErrNonceStoreFull when the
// store or the principal's share is full of unexpired nonces.
func (m *memoryNonces) Consume(ctx context.Context, c Claims) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	for len(m.byExpiry) > 0 && !now.Before(m.byExpiry[0].expires) {
		e := heap.Pop(&m.byExpiry).(nonce)
		delete(m.used, e.nonce)
		m.held[e.holder]--
		if m.held[e.holder] == 0 {
			delete(m.held, e.holder)
		}
		m.horizon = e.expires
	}
	if m.used[c.Nonce] {
		return ErrReplayed
	}
	if !c.ExpiresAt.After(m.horizon) {
		// Its nonce may be one of those forgotten.
		return fmt.Errorf("%w: it expires no later than nonces the store has forgotten", ErrReplayed)
	}
	if len(m.used) >= m.capacity {
		return ErrNonceStoreFull
	}
	who := holder{tenant: c.Tenant, principal: c.Principal}
	if m.held[who] >= m.share {
		return fmt.Errorf("%w: the principal holds its share of %d", ErrNonceStoreFull, m.share)
	}
	m.used[c.Nonce] = true
	m.held[who]++
	heap.Push(&m.byExpiry, nonce{expires: c.ExpiresAt, nonce: c.Nonce, holder: who})
	return nil
}

type nonce struct {
	expires time.Time
	nonce   string
	holder  holder
}

// holder is whose a nonce is: a principal of a tenant, since a principal
// is named by the host within its tenant, and two tenants' principals of
// one name are two callers, each with its own share.
type holder struct{ tenant, principal string }

// expiryHeap is a min-heap of nonces by expiry, for container/heap.
type expiryHeap []nonce

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].expires.Before(h[j].expires) }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(nonce)) }
func (h *expiryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nonce{} // so that the strings can be collected
	*h = old[:len(old)-1]
	return e
}
