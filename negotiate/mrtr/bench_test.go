package mrtr_test

import (
	"context"
	"testing"
	"time"

	"github.com/wopneg/wopneg/negotiate/mrtr"
)

// BenchmarkSealOpen is one round's cost on the server: sealing the
// requestState of an input_required result, and opening it when the retry
// echoes it (the MAC, the claims, the binding and the nonce). The clock
// moves a TTL on now and then so that the nonce store keeps room.
func BenchmarkSealOpen(b *testing.B) {
	c := &clock{t: t0}
	s, err := mrtr.NewSealer(mrtr.SealerOptions{Keys: []mrtr.Key{key("k", 1)}, MaxRounds: 4, Now: c.now,
		Nonces: mrtr.NewMemoryNonces(1 << 16).WithClock(c.now)})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i++; i%(1<<15) == 0 {
			c.add(mrtr.DefaultTTL + time.Second)
		}
		st, err := s.Seal(binding, 1)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Open(ctx, st, binding); err != nil {
			b.Fatal(err)
		}
	}
}
