package mrtr

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"
)

// TestLaggingClockCannotReopen (issue 8 item 4): a Sealer whose clock lags
// the wall clock by an hour fills its default store; a state it consumed
// first is still refused. A store on the wall clock took every nonce for
// expired once it was full, forgot them, and let the state open again.
// (The default store holds 3, so that filling it is quick.)
func TestLaggingClockCannotReopen(t *testing.T) {
	lag := func() time.Time { return time.Now().Add(-time.Hour) }
	s, err := NewSealer(SealerOptions{Keys: []Key{{ID: "k", Secret: bytes.Repeat([]byte{1}, 32)}}, MaxRounds: 1, Now: lag, NonceCapacity: 3})
	if err != nil {
		t.Fatal(err)
	}
	b := Binding{Principal: "p", Tenant: "t", RunID: "r", InterruptID: "i", RequestDigest: "d"}
	ctx := context.Background()
	first, _ := s.Seal(b, 1)
	if _, err := s.Open(ctx, first, b); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		st, _ := s.Seal(b, 1)
		_, _ = s.Open(ctx, st, b) // the last one finds the store full
	}
	if _, err := s.Open(ctx, first, b); !errors.Is(err, ErrReplayed) {
		t.Errorf("the first state, again, once the store was full: %v", err)
	}
}
