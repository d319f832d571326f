package events

// White-box tests of the asynchronous sink: what the recording goroutine
// does is only visible inside the package.

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// countingSink records how many events it was given and the context each
// came with; it fails the events for which fail returns true.
type countingSink struct {
	mu   sync.Mutex
	n    int
	ctxs []context.Context
	fail func(n int) bool
}

func (s *countingSink) Emit(ctx context.Context, e Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	s.ctxs = append(s.ctxs, ctx)
	if s.fail != nil && s.fail(s.n) {
		return errors.New("store down")
	}
	return nil
}

type mutantCtxKey struct{}

// The recording goroutine keeps the context's values and drops its
// cancellation: the request is usually over by the time the event is
// written.
func TestAsyncRecordsWithTheContextDetached(t *testing.T) {
	defer verifyNoLeak(t)
	synctest.Test(t, func(t *testing.T) {
		s := &countingSink{}
		a := NewAsync(s, AsyncOptions{})
		defer a.Close()
		synctest.Wait()
		ctx, cancel := context.WithCancel(context.WithValue(context.Background(), mutantCtxKey{}, "trace-1"))
		e := mutantHostEvent(t)
		if err := a.Emit(ctx, e); err != nil {
			t.Fatal(err)
		}
		if err := a.Emit(context.Background(), e); err != nil {
			t.Fatal(err)
		}
		cancel() // before the goroutine's next poll
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if len(s.ctxs) != 2 {
			t.Fatalf("recorded %d events, want 2", len(s.ctxs))
		}
		if err := s.ctxs[0].Err(); err != nil {
			t.Errorf("the sink got a context done with %v, want it detached from the caller's cancellation", err)
		}
		if v := s.ctxs[0].Value(mutantCtxKey{}); v != "trace-1" {
			t.Errorf("the sink's context carries %v, want the caller's value", v)
		}
		if s.ctxs[1] != context.Background() {
			t.Errorf("a context that cannot be cancelled reached the sink as %v, want it as it was", s.ctxs[1])
		}
	})
}

type closeFailingSink struct {
	countingSink
	err error
}

func (s *closeFailingSink) Close() error { return s.err }

func TestAsyncCloseReturnsTheSinksCloseError(t *testing.T) {
	defer verifyNoLeak(t)
	closeErr := errors.New("flush failed")
	a := NewAsync(&closeFailingSink{err: closeErr}, AsyncOptions{})
	if err := a.Emit(context.Background(), mutantHostEvent(t)); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != closeErr {
		t.Errorf("Close = %v, want the wrapped sink's Close error", err)
	}
	if err := a.Close(); err != closeErr {
		t.Errorf("second Close = %v, want the same error", err)
	}
}

// Pending counts what was accepted and not yet settled, and Recorded and
// Failed split what was: the store holds each event until let through.
func TestAsyncStatsPending(t *testing.T) {
	defer verifyNoLeak(t)
	synctest.Test(t, func(t *testing.T) {
		// The first event fails, the rest are recorded.
		g := &gatedSink{pass: make(chan struct{}), open: make(chan struct{})}
		g.fail = func(n int) bool { return n == 1 }
		a := NewAsync(g, AsyncOptions{})
		defer a.Close()
		e := mutantHostEvent(t)
		emit := func(n int) {
			for range n {
				if err := a.Emit(t.Context(), e); err != nil {
					t.Fatal(err)
				}
			}
		}
		emit(2)
		synctest.Wait()
		size := uint64(sizeOf(&e))
		if got, want := a.Stats(), (AsyncStats{Emitted: 2, Accepted: 2, Pending: 2, PendingBytes: 2 * size}); got != want {
			t.Errorf("with the store held: Stats = %+v, want %+v", got, want)
		}
		emit(2)
		for range 4 {
			g.pass <- struct{}{}
		}
		synctest.Wait()
		if got, want := a.Stats(), (AsyncStats{Emitted: 4, Accepted: 4, Recorded: 3, Failed: 1}); got != want {
			t.Errorf("after four passed: Stats = %+v, want %+v", got, want)
		}
		emit(3)
		synctest.Wait()
		if got, want := a.Stats(), (AsyncStats{Emitted: 7, Accepted: 7, Recorded: 3, Failed: 1, Pending: 3, PendingBytes: 3 * size}); got != want {
			t.Errorf("with 3 queued: Stats = %+v, want %+v", got, want)
		}
		close(g.open)
		if err := a.Close(); err == nil {
			t.Error("Close = nil, want the store's error")
		}
		if got, want := a.Stats(), (AsyncStats{Emitted: 7, Accepted: 7, Recorded: 6, Failed: 1}); got != want {
			t.Errorf("after Close: Stats = %+v, want %+v", got, want)
		}
	})
}

// gatedSink holds each Emit until the test lets it through, one at a time
// by pass or all at once by closing open.
type gatedSink struct {
	countingSink
	pass, open chan struct{}
}

func (g *gatedSink) Emit(ctx context.Context, e Event) error {
	select {
	case <-g.pass:
	case <-g.open:
	}
	return g.countingSink.Emit(ctx, e)
}

// When one slot frees up, one blocked Emit takes it; the others keep
// waiting rather than write over a slot still counted in the buffer.
func TestAsyncOneFreedSlotReleasesOneBlockedEmit(t *testing.T) {
	defer verifyNoLeak(t)
	synctest.Test(t, func(t *testing.T) {
		g := &gatedSink{pass: make(chan struct{}), open: make(chan struct{})}
		a := NewAsync(g, AsyncOptions{Buffer: 1})
		defer func() {
			close(g.open)
			a.Close()
		}()
		e := mutantHostEvent(t)
		if err := a.Emit(t.Context(), e); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the goroutine takes the event to the gate
		results := make(chan error, 2)
		for range 2 {
			go func() { results <- a.Emit(t.Context(), e) }()
		}
		synctest.Wait() // both are blocked for room
		if got := a.Stats().Accepted; got != 1 {
			t.Fatalf("%d accepted with the buffer full, want 1", got)
		}
		g.pass <- struct{}{} // the first event is recorded: one slot frees
		synctest.Wait()      // one Emit has taken it; its event waits at the gate
		if err := <-results; err != nil {
			t.Fatalf("the Emit given the freed slot = %v", err)
		}
		if got := a.Stats().Accepted; got != 2 {
			t.Fatalf("%d accepted after one slot freed, want 2", got)
		}
		select {
		case err := <-results:
			t.Fatalf("both blocked Emits returned (%v) for one free slot", err)
		default:
		}
		g.pass <- struct{}{}
		g.pass <- struct{}{}
		if err := <-results; err != nil {
			t.Fatalf("the second blocked Emit = %v", err)
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if got, want := a.Stats(), (AsyncStats{Emitted: 3, Accepted: 3, Recorded: 3}); got != want {
			t.Errorf("Stats = %+v, want %+v", got, want)
		}
	})
}

// stalledAsync returns an Async whose store holds the first event until
// g.open is closed, with the rest of its buffer filled.
func stalledAsync(t *testing.T, opts AsyncOptions) (*Async, *gatedSink) {
	t.Helper()
	g := &gatedSink{pass: make(chan struct{}), open: make(chan struct{})}
	a := NewAsync(g, opts)
	buffer := opts.Buffer
	if buffer <= 0 {
		buffer = 1024
	}
	for range buffer {
		if err := a.Emit(t.Context(), mutantHostEvent(t)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the first reaches the store before the next is sent
	}
	return a, g
}

// The documented bound: a blocking Emit into a full buffer waits exactly
// MaxWait, 100 ms when it is zero or less, by the bubble's clock, which
// only moves when every goroutine waits.
func TestAsyncMaxWaitIsTheWait(t *testing.T) {
	defer verifyNoLeak(t)
	for _, tc := range []struct {
		opts AsyncOptions
		want time.Duration
	}{
		{AsyncOptions{}, 100 * time.Millisecond},
		{AsyncOptions{Buffer: 2, MaxWait: -1}, 100 * time.Millisecond},
		{AsyncOptions{Buffer: 2, MaxWait: 1}, 1},
		{AsyncOptions{Buffer: 3, MaxWait: time.Minute}, time.Minute},
	} {
		synctest.Test(t, func(t *testing.T) {
			a, g := stalledAsync(t, tc.opts)
			start := time.Now()
			if err := a.Emit(t.Context(), mutantHostEvent(t)); !errors.Is(err, ErrDropped) {
				t.Errorf("%+v: Emit into a full buffer = %v, want ErrDropped", tc.opts, err)
			}
			if got := time.Since(start); got != tc.want {
				t.Errorf("%+v: Emit waited %v, want %v", tc.opts, got, tc.want)
			}
			close(g.open)
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// goexitOn is a store that ends the goroutine that calls it on its at-th
// event, once let through by pass.
type goexitOn struct {
	gatedSink
	at int
}

func (s *goexitOn) Emit(ctx context.Context, e Event) error {
	s.mu.Lock()
	next := s.n + 1
	s.mu.Unlock()
	if next == s.at {
		<-s.pass
		runtime.Goexit()
	}
	return s.countingSink.Emit(ctx, e)
}

// When the store ends the recording goroutine, the event it held and every
// event queued behind it fail (OnError sees each), an Emit blocked for
// room is released with the stop error, and nothing waits for a goroutine
// that is gone.
func TestAsyncGoexitFailsWhatIsQueuedAndReleasesBlockedEmits(t *testing.T) {
	defer verifyNoLeak(t)
	synctest.Test(t, func(t *testing.T) {
		s := &goexitOn{gatedSink: gatedSink{pass: make(chan struct{})}, at: 1}
		var failed []error
		a := NewAsync(s, AsyncOptions{Buffer: 3, MaxWait: time.Hour, OnError: func(_ Event, err error) { failed = append(failed, err) }})
		for range 3 {
			if err := a.Emit(t.Context(), mutantHostEvent(t)); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
		}
		blocked := make(chan error)
		go func() { blocked <- a.Emit(t.Context(), mutantHostEvent(t)) }()
		synctest.Wait()
		s.pass <- struct{}{} // the store ends the goroutine on the first event
		if err := <-blocked; err != errAsyncStopped {
			t.Errorf("Emit blocked for room = %v, want %v", err, errAsyncStopped)
		}
		synctest.Wait()
		if got, want := a.Stats(), (AsyncStats{Emitted: 4, Accepted: 3, Rejected: 1, Failed: 3}); got != want {
			t.Errorf("Stats = %+v, want %+v", got, want)
		}
		if len(failed) != 3 {
			t.Errorf("OnError saw %d events, want the 3 accepted", len(failed))
		}
		for _, err := range failed {
			if err != errAsyncStopped {
				t.Errorf("OnError saw %v, want %v", err, errAsyncStopped)
			}
		}
		if err := a.Close(); err != errAsyncStopped {
			t.Errorf("Close = %v, want %v", err, errAsyncStopped)
		}
	})
}

// A store that ends the recording goroutine while Close flushes: Close has
// already closed the queue, and what was left in it fails all the same.
func TestAsyncGoexitDuringClose(t *testing.T) {
	defer verifyNoLeak(t)
	synctest.Test(t, func(t *testing.T) {
		s := &goexitOn{gatedSink: gatedSink{pass: make(chan struct{})}, at: 2}
		a := NewAsync(s, AsyncOptions{Buffer: 4})
		for range 4 {
			if err := a.Emit(t.Context(), mutantHostEvent(t)); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait() // the first is recorded; the second waits to end the goroutine
		closed := make(chan error)
		go func() { closed <- a.Close() }()
		synctest.Wait()
		s.pass <- struct{}{}
		if err := <-closed; err != errAsyncStopped {
			t.Errorf("Close = %v, want %v", err, errAsyncStopped)
		}
		if got, want := a.Stats(), (AsyncStats{Emitted: 4, Accepted: 4, Recorded: 1, Failed: 3}); got != want {
			t.Errorf("Stats = %+v, want %+v", got, want)
		}
		if err := a.Emit(t.Context(), mutantHostEvent(t)); err != ErrClosed {
			t.Errorf("Emit after Close = %v, want ErrClosed", err)
		}
	})
}

// OnError can end the recording goroutine too, even while the Async is
// failing what a stopped store left queued: later Emits are refused all
// the same, rather than queued for nobody.
func TestAsyncGoexitInOnError(t *testing.T) {
	defer verifyNoLeak(t)
	for _, tc := range []struct {
		name string
		// store is made in the bubble, so that its channels are the
		// bubble's; it holds each Emit until pass lets it through, so that
		// both events are queued before the first one fails.
		store func() (s Sink, pass chan struct{})
	}{
		{"after a store error", func() (Sink, chan struct{}) {
			g := &gatedSink{pass: make(chan struct{})}
			g.fail = func(int) bool { return true }
			return g, g.pass
		}},
		{"after the store ended the goroutine", func() (Sink, chan struct{}) {
			g := &goexitOn{gatedSink: gatedSink{pass: make(chan struct{})}, at: 1}
			return g, g.pass
		}},
	} {
		synctest.Test(t, func(t *testing.T) {
			store, pass := tc.store()
			a := NewAsync(store, AsyncOptions{OnError: func(Event, error) { runtime.Goexit() }})
			for range 2 {
				if err := a.Emit(t.Context(), mutantHostEvent(t)); err != nil {
					t.Fatal(err)
				}
			}
			synctest.Wait()
			pass <- struct{}{}
			synctest.Wait()
			if err := a.Emit(t.Context(), mutantHostEvent(t)); err != errAsyncStopped {
				t.Errorf("%s: Emit after OnError ended the goroutine = %v, want %v", tc.name, err, errAsyncStopped)
			}
			if err := a.Close(); err == nil {
				t.Errorf("%s: Close = nil, want an error", tc.name)
			}
		})
	}
}

func BenchmarkEventSealed(b *testing.B) {
	e, err := NewRunEvent("acme/run-0123456789abcdef", NegotiationDecided{
		Protocol: "a2a", Outcome: "accepted", Version: "1.1", Requested: "1.2", Reason: ReasonOK, Floor: "1.1",
		PeerDigest: "a8b9cbc6a1eb3ac2b5ed6d6a2a0ea58f2fb1c3d6b5ac5c4c0c6c1e7f2e5a3b90", At: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC),
	})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if !e.sealed() {
			b.Fatal("not sealed")
		}
	}
}
