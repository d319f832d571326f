package mrtr

import (
	"context"
	"errors"
	"sync"
	"time"
)

// NonceStore remembers the nonces of opened requestStates until they
// expire, so that each state opens once. A host with several replicas
// backs it with a store they share.
type NonceStore interface {
	// Consume records nonce as used until expires. It returns an error
	// wrapping ErrReplayed when the nonce was consumed before, and any other
	// error when it cannot tell: the state is then refused, never let
	// through.
	Consume(ctx context.Context, nonce string, expires time.Time) error
}

// DefaultNonceCapacity bounds a MemoryNonces that NewSealer makes.
const DefaultNonceCapacity = 100000

// ErrNonceStoreFull is returned by [MemoryNonces.Consume] when it holds as
// many unexpired nonces as it may: forgetting one would let its state be
// replayed, so a new state is refused instead until some expire.
var ErrNonceStoreFull = errors.New("mrtr: the nonce store is full of unexpired nonces")

// MemoryNonces is a bounded in-memory NonceStore for a single process.
// It is safe for concurrent use.
type MemoryNonces struct {
	mu       sync.Mutex
	capacity int
	used     map[string]time.Time
	now      func() time.Time
}

// NewMemoryNonces returns a store for up to capacity unexpired nonces; a
// capacity below 1 is 1.
func NewMemoryNonces(capacity int) *MemoryNonces {
	return &MemoryNonces{capacity: max(capacity, 1), used: make(map[string]time.Time), now: time.Now}
}

// WithClock makes m read time from now, for tests; it returns m.
func (m *MemoryNonces) WithClock(now func() time.Time) *MemoryNonces {
	m.mu.Lock()
	m.now = now
	m.mu.Unlock()
	return m
}

// Consume records nonce, or refuses it as replayed. When the store is full
// it first forgets the nonces that have expired, whose states no longer
// open anyway; if none has, it refuses with ErrNonceStoreFull.
func (m *MemoryNonces) Consume(ctx context.Context, nonce string, expires time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if _, ok := m.used[nonce]; ok {
		// Expired or not: a nonce seen is never taken for a new one.
		return ErrReplayed
	}
	if len(m.used) >= m.capacity {
		for n, until := range m.used {
			if !now.Before(until) {
				delete(m.used, n)
			}
		}
		if len(m.used) >= m.capacity {
			return ErrNonceStoreFull
		}
	}
	m.used[nonce] = expires
	return nil
}

// Len returns how many nonces m holds, expired ones not yet forgotten
// included.
func (m *MemoryNonces) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.used)
}
