package mrtr_test

import (
	"context"
	"errors"
	"testing"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/negotiate/mrtr"
)

// FuzzOpen holds Open to never panicking on any state, to refusing every
// state it did not seal with one of the Err values, and to opening a state
// it sealed exactly once.
func FuzzOpen(f *testing.F) {
	c := &clock{t: t0}
	s, err := mrtr.NewSealer(mrtr.SealerOptions{Keys: []mrtr.Key{key("k", 1)}, MaxRounds: 4, Now: c.now})
	if err != nil {
		f.Fatal(err)
	}
	st, _ := s.Seal(binding, 2)
	f.Add(st, false)
	f.Add(st+"x", false)
	f.Add("eyJ2IjoxfQ.AAAA", false)
	f.Add(".", false)
	f.Add("", true)
	refusals := []error{mrtr.ErrMalformed, mrtr.ErrSignature, mrtr.ErrExpired, mrtr.ErrBinding, mrtr.ErrReplayed, wperrors.MCPRoundsExceeded}
	f.Fuzz(func(t *testing.T, state string, sealFresh bool) {
		if sealFresh {
			// A Sealer of its own, so that nonces do not pile up over a
			// long fuzzing run with the clock stopped.
			s, err := mrtr.NewSealer(mrtr.SealerOptions{Keys: []mrtr.Key{key("k", 1)}, MaxRounds: 4, Now: c.now})
			if err != nil {
				t.Fatal(err)
			}
			fresh, err := s.Seal(binding, 3)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Open(context.Background(), fresh, binding); err != nil {
				t.Fatalf("a fresh state did not open: %v", err)
			}
			if _, err := s.Open(context.Background(), fresh, binding); !errors.Is(err, mrtr.ErrReplayed) {
				t.Fatalf("a fresh state opened twice: %v", err)
			}
			return
		}
		claims, err := s.Open(context.Background(), state, binding)
		if err == nil {
			if claims.Round < 1 || claims.Round > 4 || claims.Binding != binding {
				t.Fatalf("opened %q into %+v", state, claims)
			}
			return
		}
		for _, r := range refusals {
			if errors.Is(err, r) {
				return
			}
		}
		t.Fatalf("refused %q with %v, which wraps none of the Err values nor is the rounds error", state, err)
	})
}
