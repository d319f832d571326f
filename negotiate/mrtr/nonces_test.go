package mrtr_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wopneg/wopneg/negotiate/mrtr"
)

// use is the claims a store sees for nonce n of principal p, expiring
// after d from t0.
func use(p, n string, d time.Duration) mrtr.Claims {
	c := mrtr.Claims{Binding: binding, Round: 1, ExpiresAt: t0.Add(d), Nonce: n}
	c.Principal = p
	return c
}

// TestMemoryNonces runs steps against one store: each step moves the
// clock, consumes a nonce and says what the store answers and how many
// nonces it holds after.
func TestMemoryNonces(t *testing.T) {
	type step struct {
		at      time.Duration // the clock, from t0
		c       mrtr.Claims
		want    error  // nil, ErrReplayed, ErrNonceStoreFull
		msg     string // the error's text, when it matters
		holding int
	}
	full := "mrtr: the nonce store has no room for another unexpired nonce"
	share := full + ": the principal holds its share of 2"
	forgotten := "mrtr: requestState was used before: it expires no later than nonces the store has forgotten"
	for _, c := range []struct {
		name                  string
		capacity, perPrincipl int
		steps                 []step
	}{
		{"replay", 4, 4, []step{
			{0, use("p", "a", time.Minute), nil, "", 1},
			{0, use("p", "a", time.Minute), mrtr.ErrReplayed, "mrtr: requestState was used before", 1},
			// Expired or not, a nonce held is never taken for a new one.
			{0, use("p", "a", time.Hour), mrtr.ErrReplayed, "", 1},
		}},
		{"full of live nonces: refuse rather than forget one", 2, 2, []step{
			{0, use("p", "a", time.Minute), nil, "", 1},
			{0, use("q", "b", time.Hour), nil, "", 2},
			{0, use("r", "c", time.Hour), mrtr.ErrNonceStoreFull, full, 2},
			{time.Minute - time.Millisecond, use("r", "c", time.Hour), mrtr.ErrNonceStoreFull, full, 2},
			// At its expiry "a" is forgotten, which makes room.
			{time.Minute, use("r", "c", time.Hour), nil, "", 2},
		}},
		{"a principal's share", 10, 2, []step{
			{0, use("p", "a", time.Minute), nil, "", 1},
			{0, use("p", "b", 2*time.Minute), nil, "", 2},
			{0, use("p", "c", time.Hour), mrtr.ErrNonceStoreFull, share, 2},
			// Others are not held back by p.
			{0, use("q", "d", time.Hour), nil, "", 3},
			{0, use("q", "e", time.Hour), nil, "", 4},
			// p gets back what expires, and no more.
			{time.Minute, use("p", "c", time.Hour), nil, "", 4},
			{time.Minute, use("p", "f", time.Hour), mrtr.ErrNonceStoreFull, share, 4},
			{2 * time.Minute, use("p", "f", time.Hour), nil, "", 4},
			{2 * time.Minute, use("p", "g", time.Hour), mrtr.ErrNonceStoreFull, share, 4},
		}},
		{"forgotten in expiry order", 10, 10, []step{
			{0, use("p", "late", 3*time.Minute), nil, "", 1},
			{0, use("p", "early", time.Minute), nil, "", 2},
			{0, use("p", "middle", 2*time.Minute), nil, "", 3},
			// Only "early" has expired: it goes, the others stay.
			{time.Minute, use("p", "x", time.Hour), nil, "", 3},
			{time.Minute, use("p", "late", time.Hour), mrtr.ErrReplayed, "", 3},
			{time.Minute, use("p", "middle", time.Hour), mrtr.ErrReplayed, "", 3},
			{2*time.Minute + time.Millisecond, use("p", "y", time.Hour), nil, "", 3},
		}},
		{"what expires no later than a forgotten nonce is refused", 10, 10, []step{
			{0, use("p", "a", time.Minute), nil, "", 1},
			{time.Hour, use("p", "b", 2*time.Hour), nil, "", 1},
			// "a" is forgotten: a replay of it is refused all the same,
			// even by a clock that went back, and so is anything that
			// expires with it.
			{0, use("p", "a", time.Minute), mrtr.ErrReplayed, forgotten, 1},
			{0, use("p", "c", time.Minute), mrtr.ErrReplayed, forgotten, 1},
			{0, use("p", "d", time.Minute+time.Millisecond), nil, "", 2},
		}},
		{"capacity below 1 is the default", -1, 2, []step{
			{0, use("p", "a", time.Minute), nil, "", 1},
			{0, use("q", "b", time.Minute), nil, "", 2},
			{0, use("p", "c", time.Minute), nil, "", 3},
			{0, use("p", "d", time.Minute), mrtr.ErrNonceStoreFull, share, 3},
		}},
		{"the default share is a hundredth", 300, 0, []step{
			{0, use("p", "a", time.Minute), nil, "", 1},
			{0, use("p", "b", time.Minute), nil, "", 2},
			{0, use("p", "c", time.Minute), nil, "", 3},
			{0, use("p", "d", time.Minute), mrtr.ErrNonceStoreFull, "mrtr: the nonce store has no room for another unexpired nonce: the principal holds its share of 3", 3},
		}},
		{"a share of 1", 300, 1, []step{
			{0, use("p", "a", time.Minute), nil, "", 1},
			{0, use("p", "b", time.Minute), mrtr.ErrNonceStoreFull, "mrtr: the nonce store has no room for another unexpired nonce: the principal holds its share of 1", 1},
		}},
		{"the default share is at least 1", 99, 0, []step{
			{0, use("p", "a", time.Minute), nil, "", 1},
			{0, use("p", "b", time.Minute), mrtr.ErrNonceStoreFull, "mrtr: the nonce store has no room for another unexpired nonce: the principal holds its share of 1", 1},
		}},
		{"a share is at most the capacity", 2, 5, []step{
			{0, use("p", "a", time.Minute), nil, "", 1},
			{0, use("p", "b", time.Minute), nil, "", 2},
			{0, use("p", "c", time.Minute), mrtr.ErrNonceStoreFull, full, 2},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			clk := &clock{t: t0}
			m := mrtr.NewMemoryNonces(c.capacity, c.perPrincipl, clk.now)
			for i, s := range c.steps {
				clk.mu.Lock()
				clk.t = t0.Add(s.at)
				clk.mu.Unlock()
				err := m.Consume(context.Background(), s.c)
				if !errors.Is(err, s.want) || (err == nil) != (s.want == nil) || (s.msg != "" && err.Error() != s.msg) {
					t.Errorf("step %d (%s by %s): %v, want %v %q", i, s.c.Nonce, s.c.Principal, err, s.want, s.msg)
				}
				if m.Len() != s.holding {
					t.Errorf("step %d: holding %d, want %d", i, m.Len(), s.holding)
				}
			}
		})
	}
}

func TestMemoryNoncesCanceled(t *testing.T) {
	m := mrtr.NewMemoryNonces(2, 2, nil)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Consume(done, use("p", "a", time.Minute)); !errors.Is(err, context.Canceled) || m.Len() != 0 {
		t.Errorf("canceled: %v, %d held", err, m.Len())
	}
}

// TestMemoryNoncesProperty: whatever the clock does (forwards, backwards,
// standing still) and whatever the expiries, no nonce is consumed twice,
// the store never holds more than its capacity, and a principal never more
// than its share.
func TestMemoryNoncesProperty(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 1))
		clk := &clock{t: t0}
		capacity, share := 1+r.IntN(20), 1+r.IntN(8)
		m := mrtr.NewMemoryNonces(capacity, share, clk.now)
		consumed := map[string]bool{}
		live := map[string][]time.Time{} // principal → expiries of its consumed nonces
		latest := t0                     // the clock never told the store a later time
		for range 2000 {
			clk.mu.Lock()
			clk.t = t0.Add(time.Duration(r.IntN(60)) * time.Second)
			if clk.t.After(latest) {
				latest = clk.t
			}
			clk.mu.Unlock()
			p := fmt.Sprint("p", r.IntN(4))
			// A nonce is one state's: it always comes with one expiry.
			i := r.IntN(300)
			n, expires := fmt.Sprint("n", i), t0.Add(time.Duration(1+i%60)*time.Second)
			err := m.Consume(context.Background(), use(p, n, expires.Sub(t0)))
			if err != nil {
				if !errors.Is(err, mrtr.ErrReplayed) && !errors.Is(err, mrtr.ErrNonceStoreFull) {
					t.Fatalf("seed %d: %v", seed, err)
				}
				continue
			}
			if consumed[n] {
				t.Fatalf("seed %d: nonce %s consumed twice", seed, n)
			}
			consumed[n] = true
			live[p] = append(live[p], expires)
			unexpired := 0
			for _, e := range live[p] {
				if latest.Before(e) {
					unexpired++
				}
			}
			if unexpired > share {
				t.Fatalf("seed %d: %s holds %d unexpired nonces, share %d", seed, p, unexpired, share)
			}
			if m.Len() > capacity {
				t.Fatalf("seed %d: %d held, capacity %d", seed, m.Len(), capacity)
			}
		}
	}
}

// TestMemoryNoncesConcurrent: of many callers presenting one nonce at
// once, exactly one consumes it.
func TestMemoryNoncesConcurrent(t *testing.T) {
	m := mrtr.NewMemoryNonces(100, 100, func() time.Time { return t0 })
	var ok, replayed atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			switch err := m.Consume(context.Background(), use("p", "a", time.Minute)); {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, mrtr.ErrReplayed):
				replayed.Add(1)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 1 || replayed.Load() != 15 {
		t.Errorf("%d consumed, %d replayed", ok.Load(), replayed.Load())
	}
}

// failing is a store that cannot answer.
type failing struct{ err error }

func (f failing) Consume(context.Context, mrtr.Claims) error { return f.err }

// recording is a store that keeps what it was given.
type recording struct{ got []mrtr.Claims }

func (r *recording) Consume(_ context.Context, c mrtr.Claims) error {
	r.got = append(r.got, c)
	return nil
}

// TestSealerNonceStore: Open hands the store the opened claims, and a
// store that cannot answer makes Open refuse.
func TestSealerNonceStore(t *testing.T) {
	c := &clock{t: t0}
	rec := &recording{}
	s, _ := mrtr.NewSealer(mrtr.SealerOptions{Keys: []mrtr.Key{key("k", 1)}, MaxRounds: 2, Now: c.now, Nonces: rec})
	st, _ := s.Seal(binding, 2)
	got, err := s.Open(context.Background(), st, binding)
	if err != nil || len(rec.got) != 1 || rec.got[0] != got || got.Round != 2 || got.Principal != binding.Principal {
		t.Errorf("the store got %+v; Open gave %+v, %v", rec.got, got, err)
	}
	s, _ = mrtr.NewSealer(mrtr.SealerOptions{Keys: []mrtr.Key{key("k", 1)}, MaxRounds: 1, Now: c.now,
		Nonces: failing{errors.New("redis down")}})
	st, _ = s.Seal(binding, 1)
	if _, err := s.Open(context.Background(), st, binding); err == nil || err.Error() != "redis down" {
		t.Errorf("failing store: %v", err)
	}
}

// TestOnePrincipalCannotFillTheStore (issue 8 item 4): on a Sealer's
// default store, one principal opening states as fast as it can is
// refused at its share, and the next principal's state still opens.
func TestOnePrincipalCannotFillTheStore(t *testing.T) {
	s, err := mrtr.NewSealer(mrtr.SealerOptions{Keys: []mrtr.Key{key("k", 1)}, MaxRounds: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var refused error
	opened := 0
	for refused == nil && opened <= mrtr.DefaultNonceCapacity {
		st, err := s.Seal(binding, 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, refused = s.Open(ctx, st, binding); refused == nil {
			opened++
		}
	}
	if !errors.Is(refused, mrtr.ErrNonceStoreFull) || opened != mrtr.DefaultNonceCapacity/100 {
		t.Errorf("one principal opened %d states, then %v", opened, refused)
	}
	other := binding
	other.Principal = "https://idp.example|u-43"
	st, _ := s.Seal(other, 1)
	if _, err := s.Open(ctx, st, other); err != nil {
		t.Errorf("another principal's state: %v", err)
	}
}

// TestOneSpelling (issue 8 item 10): exactly one byte sequence opens a
// state. CR and LF anywhere, padding, and a last MAC character whose
// unused bits are set are refused, and do not consume the state.
func TestOneSpelling(t *testing.T) {
	c := &clock{t: t0}
	s := newSealer(t, c, 4, key("k1", 1))
	st, err := s.Seal(binding, 1)
	if err != nil {
		t.Fatal(err)
	}
	head, sig, _ := strings.Cut(st, ".")
	last := sig[len(sig)-1]
	// 32 bytes are 43 characters, the last carrying 2 unused bits: the
	// character after it in the alphabet decodes the same.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	sibling := alphabet[strings.IndexByte(alphabet, last)^1]
	for _, other := range []string{
		head + ".\n" + sig,
		head + "." + sig[:10] + "\n" + sig[10:],
		head + "." + sig[:10] + strings.Repeat("\r", 100) + sig[10:],
		head + "." + sig + "\r\n",
		head + "\n." + sig,
		"\n" + st,
		head + "." + sig + "=",
		head + "." + sig[:42] + string(sibling),
	} {
		if _, err := s.Open(context.Background(), other, binding); !errors.Is(err, mrtr.ErrSignature) {
			t.Errorf("%q: %v", other, err)
		}
	}
	if _, err := s.Open(context.Background(), st, binding); err != nil {
		t.Errorf("the state itself: %v", err)
	}
}
