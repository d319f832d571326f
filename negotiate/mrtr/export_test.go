package mrtr

import "time"

// What the tests of package mrtr_test see of the package's insides.

const (
	DefaultTTL           = defaultTTL
	MaxStateBytes        = maxStateBytes
	DefaultNonceCapacity = defaultNonceCapacity
)

type MemoryNonces = memoryNonces

// NewMemoryNonces is newMemoryNonces on now, or the wall clock when now is nil.
func NewMemoryNonces(capacity, perPrincipal int, now func() time.Time) *MemoryNonces {
	if now == nil {
		now = time.Now
	}
	return newMemoryNonces(capacity, perPrincipal, now)
}

// Len returns how many nonces m holds, expired ones not yet forgotten
// included.
func (m *memoryNonces) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.used)
}

// Rounds returns how many input_required results g has seen.
func (g *Guard) Rounds() int { return g.seen }

// MaxRounds returns g's bound.
func (g *Guard) MaxRounds() int { return g.max }

// MaxRounds returns s's bound.
func (s *Sealer) MaxRounds() int { return s.maxRounds }
