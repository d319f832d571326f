package events_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// gate is a store that holds every Emit until it is opened, and tells when
// the recording goroutine has reached it.
type gate struct {
	sinkMemory
	arrived chan struct{} // receives once per Emit that reaches the gate
	open    chan struct{}
}

func newGate() *gate {
	return &gate{arrived: make(chan struct{}, 1<<16), open: make(chan struct{})}
}

func (g *gate) Emit(ctx context.Context, e events.Event) error {
	g.arrived <- struct{}{}
	<-g.open
	return g.sinkMemory.Emit(ctx, e)
}

// parkedAsync returns an Async whose recording goroutine is held inside
// the store with one event, which keeps its slot in the buffer until it is
// recorded; the rest of the buffer fills only from the test's emits.
func parkedAsync(t *testing.T, opts events.AsyncOptions) (*events.Async, *gate) {
	t.Helper()
	g := newGate()
	a := events.NewAsync(g, opts)
	if err := a.Emit(sinkCtx, sinkHost("", sinkAccepted())); err != nil {
		t.Fatal(err)
	}
	<-g.arrived
	return a, g
}

func TestAsyncCloseFlushesEverythingAccepted(t *testing.T) {
	defer events.VerifyNoLeak(t)
	m := &sinkCloser{}
	a := events.NewAsync(m, events.AsyncOptions{Buffer: 8})
	for i := range 100 {
		if err := a.Emit(sinkCtx, sinkRun(sinkRunID(i%3), sinkAccepted())); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(m.all()); n != 100 {
		t.Errorf("recorded %d of 100 accepted events", n)
	}
	s := a.Stats()
	if s.Emitted != 100 || s.Accepted != 100 || s.Recorded != 100 || s.Pending != 0 || s.Dropped+s.Rejected+s.Failed != 0 {
		t.Errorf("Stats = %+v", s)
	}
	if err := a.Emit(sinkCtx, sinkHost("", sinkAccepted())); !errors.Is(err, events.ErrClosed) {
		t.Errorf("Emit after Close = %v, want ErrClosed", err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	// Close closed the sink it owns, once.
	if m.closed != 1 {
		t.Errorf("the wrapped sink was closed %d times, want once", m.closed)
	}
}

func TestAsyncDropCountsEveryDrop(t *testing.T) {
	defer events.VerifyNoLeak(t)
	a, g := parkedAsync(t, events.AsyncOptions{Buffer: 5, Drop: true})
	var accepted, dropped int
	for range 10 {
		switch err := a.Emit(sinkCtx, sinkHost("", sinkAccepted())); {
		case err == nil:
			accepted++
		case errors.Is(err, events.ErrDropped):
			dropped++
		default:
			t.Fatal(err)
		}
	}
	if accepted != 4 || dropped != 6 {
		t.Errorf("accepted %d, dropped %d; want the 4 free slots filled and the other 6 dropped", accepted, dropped)
	}
	close(g.open)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	s := a.Stats()
	if s.Dropped != 6 || s.Accepted != 5 || s.Emitted != 11 || s.Recorded != 5 {
		t.Errorf("Stats = %+v, want 11 emitted = 5 accepted (all recorded) + 6 dropped", s)
	}
}

func TestAsyncBlockWaitsForRoom(t *testing.T) {
	defer events.VerifyNoLeak(t)
	a, g := parkedAsync(t, events.AsyncOptions{Buffer: 3})
	for range 2 {
		if err := a.Emit(sinkCtx, sinkHost("", sinkAccepted())); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error)
	go func() { done <- a.Emit(sinkCtx, sinkHost("", sinkRefused())) }()
	select {
	case err := <-done:
		t.Fatalf("Emit into a full buffer returned %v without waiting", err)
	case <-g.arrived: // cannot happen while the gate is shut; keeps the select honest
		t.Fatal("the store was reached twice while shut")
	case <-time.After(20 * time.Millisecond):
	}
	close(g.open)
	if err := <-done; err != nil {
		t.Errorf("blocked Emit = %v, want nil once there was room", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(g.all()); n != 4 {
		t.Errorf("recorded %d events, want 4", n)
	}
}

func TestAsyncBlockStopsAtMaxWait(t *testing.T) {
	defer events.VerifyNoLeak(t)
	a, g := parkedAsync(t, events.AsyncOptions{Buffer: 2, MaxWait: time.Millisecond})
	if err := a.Emit(sinkCtx, sinkHost("", sinkAccepted())); err != nil {
		t.Fatal(err)
	}
	if err := a.Emit(sinkCtx, sinkHost("", sinkAccepted())); !errors.Is(err, events.ErrDropped) {
		t.Errorf("Emit past MaxWait = %v, want ErrDropped", err)
	}
	close(g.open)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if s := a.Stats(); s.Dropped != 1 {
		t.Errorf("Stats = %+v, want one drop", s)
	}
}

// cancelAfterEntry is a context that Emit's entry check finds live, however
// late the test's goroutine runs, and that is canceled once done is closed:
// it makes "canceled while blocked" the only path the test can take.
type cancelAfterEntry struct {
	context.Context
	done  chan struct{}
	calls atomic.Int32
}

func (c *cancelAfterEntry) Done() <-chan struct{} { return c.done }

func (c *cancelAfterEntry) Err() error {
	if c.calls.Add(1) == 1 {
		return nil
	}
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}

func TestAsyncBlockStopsWithTheContext(t *testing.T) {
	defer events.VerifyNoLeak(t)
	a, g := parkedAsync(t, events.AsyncOptions{Buffer: 2})
	if err := a.Emit(sinkCtx, sinkHost("", sinkAccepted())); err != nil {
		t.Fatal(err)
	}
	c := &cancelAfterEntry{Context: sinkCtx, done: make(chan struct{})}
	done := make(chan error)
	go func() { done <- a.Emit(c, sinkHost("", sinkAccepted())) }()
	close(c.done)
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("blocked Emit after cancel = %v, want context.Canceled", err)
	}
	// A context already done is refused without queueing.
	canceled, cancel := context.WithCancel(sinkCtx)
	cancel()
	if err := a.Emit(canceled, sinkHost("", sinkAccepted())); !errors.Is(err, context.Canceled) {
		t.Errorf("Emit with a canceled context = %v", err)
	}
	close(g.open)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if s := a.Stats(); s.Dropped != 1 || s.Rejected != 1 || s.Recorded != 2 {
		t.Errorf("Stats = %+v, want 1 dropped (canceled while waiting), 1 rejected, 2 recorded", s)
	}
}

func TestAsyncCloseReleasesBlockedEmits(t *testing.T) {
	defer events.VerifyNoLeak(t)
	a, g := parkedAsync(t, events.AsyncOptions{Buffer: 2})
	if err := a.Emit(sinkCtx, sinkHost("", sinkAccepted())); err != nil {
		t.Fatal(err)
	}
	blocked := make(chan error)
	go func() { blocked <- a.Emit(sinkCtx, sinkHost("", sinkAccepted())) }()
	time.Sleep(5 * time.Millisecond) // let it block; the test holds either way
	closed := make(chan error)
	go func() { closed <- a.Close() }()
	if err := <-blocked; err != nil && !errors.Is(err, events.ErrClosed) {
		t.Errorf("Emit blocked across Close = %v, want nil or ErrClosed", err)
	}
	close(g.open)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	s := a.Stats()
	if s.Emitted != s.Accepted+s.Dropped+s.Rejected || s.Accepted != s.Recorded {
		t.Errorf("Stats = %+v: every emit must be accounted for, every accepted event recorded", s)
	}
}

func TestAsyncReportsStoreFailures(t *testing.T) {
	defer events.VerifyNoLeak(t)
	first, second := errors.New("first"), errors.New("second")
	var mu sync.Mutex
	n := 0
	var seen []error
	store := events.SinkFunc(func(context.Context, events.Event) error {
		mu.Lock()
		defer mu.Unlock()
		n++
		switch n {
		case 2:
			return first
		case 3:
			return second
		case 4:
			panic("store bug")
		}
		return nil
	})
	a := events.NewAsync(store, events.AsyncOptions{OnError: func(_ events.Event, err error) {
		seen = append(seen, err) // the recording goroutine is the only caller
		if errors.Is(err, second) {
			panic("OnError bug")
		}
	}})
	for range 5 {
		if err := a.Emit(sinkCtx, sinkHost("", sinkAccepted())); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); !errors.Is(err, first) {
		t.Errorf("Close = %v, want the first store error", err)
	}
	if len(seen) != 3 {
		t.Errorf("OnError saw %d failures, want 3 (two errors and a panic): %v", len(seen), seen)
	}
	var pe *events.PanicError
	if len(seen) == 3 && !errors.As(seen[2], &pe) {
		t.Errorf("the store's panic reached OnError as %v, want a PanicError", seen[2])
	}
	if s := a.Stats(); s.Failed != 3 || s.Recorded != 2 {
		t.Errorf("Stats = %+v, want 3 failed and 2 recorded: a panicking OnError must not stop the goroutine", s)
	}
}

func TestAsyncRejectsInvalidEvents(t *testing.T) {
	defer events.VerifyNoLeak(t)
	a := events.NewAsync(&sinkMemory{}, events.AsyncOptions{})
	defer a.Close()
	bad := sinkHost("", sinkAccepted())
	bad.Payload.Outcome = "downgraded"
	if err := a.Emit(sinkCtx, bad); !errors.As(err, new(*events.FieldError)) {
		t.Errorf("Emit = %v, want the payload refused on the request path", err)
	}
	if s := a.Stats(); s.Rejected != 1 || s.Accepted != 0 {
		t.Errorf("Stats = %+v", s)
	}
}

// The request path allocates nothing: with the recording goroutine parked,
// every allocation during the loop is Emit's.
func TestAsyncEmitAllocatesNothing(t *testing.T) {
	defer events.VerifyNoLeak(t)
	const runs = 1000
	a, g := parkedAsync(t, events.AsyncOptions{Buffer: 2*runs + 2})
	c, cancel := context.WithCancel(sinkCtx)
	defer cancel()
	e := sinkRun(sinkRunID(1), sinkAccepted())
	// One measured run of all the emits, so that the count is every
	// allocation rather than their average rounded down: a queue that
	// grows as it fills allocates a few times in a thousand. AllocsPerRun
	// warms up with one run first, hence the two thousand of buffer.
	allocs := testing.AllocsPerRun(1, func() {
		for range runs {
			if err := a.Emit(c, e); err != nil {
				panic(err)
			}
		}
	})
	close(g.open)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if allocs != 0 {
		t.Errorf("%d Emits allocated %.0f times, want 0", runs, allocs)
	}
}

// stalled returns an Async with the zero options whose store has stopped:
// its recording goroutine is held inside the store and the buffer is full,
// as a host's is when its database stalls. release lets it go and closes.
func stalled(t *testing.T) (a *events.Async, release func()) {
	t.Helper()
	a, g := parkedAsync(t, events.AsyncOptions{})
	for range 1024 - 1 {
		if err := a.Emit(sinkCtx, sinkHost("", sinkAccepted())); err != nil {
			t.Fatal(err)
		}
	}
	return a, func() {
		close(g.open)
		if err := a.Close(); err != nil {
			t.Error(err)
		}
	}
}

// Issue 8 item 5: with the options the README wires (none), request 1,026
// against a stalled store waited until its own deadline. The zero options
// bound the wait (100 ms, documented on MaxWait): the event is dropped,
// counted, and refused with ErrDropped, however long the context would
// have let it wait. In a synctest bubble the clock only moves when every
// goroutine waits, so the hour below is reached at once if nothing else
// ends the wait.
func TestAsyncZeroOptionsBoundTheWaitOnAStalledStore(t *testing.T) {
	defer events.VerifyNoLeak(t)
	synctest.Test(t, func(t *testing.T) {
		a, release := stalled(t)
		defer release()
		ctx, cancel := context.WithTimeout(sinkCtx, time.Hour)
		defer cancel()
		if err := a.Emit(ctx, sinkHost("", sinkAccepted())); !errors.Is(err, events.ErrDropped) {
			t.Errorf("Emit into a stalled store with the zero options = %v, want ErrDropped before the context's deadline", err)
		}
		if s := a.Stats(); s.Dropped != 1 || s.Accepted != 1024 {
			t.Errorf("Stats = %+v, want the %d accepted and 1 dropped", s, 1024)
		}
	})
}

// Issue 8 item 5: under RequireAudit, that drop is a refusal with
// internal_error by the audit rule, and the AuditError says it was a drop.
func TestAsyncDropOnAStalledStoreIsAnInternalErrorUnderRequireAudit(t *testing.T) {
	defer events.VerifyNoLeak(t)
	synctest.Test(t, func(t *testing.T) {
		a, release := stalled(t)
		defer release()
		set := facets.Set{A2A: &facets.A2A{
			Versions: []string{"1.0", "1.1", "1.2"}, PreferredVersion: "1.2", MinimumVersion: "1.1", RefreshedAt: "2026-11-01",
		}}
		p := policy.Policy{RequireAudit: true, Now: func() time.Time { return sinkAt }}
		offer := negotiate.Offer{Protocol: facets.ProtocolA2A, PeerVersions: []string{"1.2"}}
		ctx, cancel := context.WithTimeout(sinkCtx, time.Hour)
		defer cancel()
		n, err := negotiate.Compile(set, p)
		if err != nil {
			t.Fatal(err)
		}
		o, err := n.DecideAndRecord(ctx, a, negotiate.Destination{}, nil, offer)
		var ae *negotiate.AuditError
		if !errors.As(err, &ae) || !errors.Is(err, events.ErrDropped) {
			t.Fatalf("DecideAndRecord = %v, want an AuditError for ErrDropped", err)
		}
		if ae.Decided.Err() != nil {
			t.Errorf("the decision itself was %v, want accepted (only the audit refused it)", ae.Decided.Kind)
		}
		if o.Err() == nil || o.Rule != negotiate.RuleAudit || !errors.Is(o.Error, wperrors.Internal) {
			t.Errorf("outcome = %v by %v (%v), want refused with internal_error by the audit rule", o.Kind, o.Rule, o.Error)
		}
		if s := a.Stats(); s.Dropped != 1 {
			t.Errorf("Stats = %+v, want the drop counted", s)
		}
	})
}

// goexitSink stops the goroutine that calls it, as testing.T.FailNow or a
// log.Fatal-style helper does, on the events for which stop returns true.
type goexitSink struct {
	sinkMemory
	calls atomic.Int32
	stop  func(n int32) bool
}

func (s *goexitSink) Emit(ctx context.Context, e events.Event) error {
	if s.stop(s.calls.Add(1)) {
		runtime.Goexit()
	}
	return s.sinkMemory.Emit(ctx, e)
}

// Issue 8 item 5: a sink that calls runtime.Goexit ended the recording
// goroutine, after which Emits queued into a buffer nobody read and Close
// returned nil. Now the Async stops with it: later Emits are refused with
// an error that wraps ErrClosed, and Close reports it.
func TestAsyncSinkThatCallsGoexitStopsTheAsyncLoudly(t *testing.T) {
	defer events.VerifyNoLeak(t)
	synctest.Test(t, func(t *testing.T) {
		s := &goexitSink{stop: func(n int32) bool { return n == 2 }}
		var failed []error
		a := events.NewAsync(s, events.AsyncOptions{OnError: func(_ events.Event, err error) { failed = append(failed, err) }})
		for range 2 {
			if err := a.Emit(sinkCtx, sinkHost("", sinkAccepted())); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait() // the first is recorded, the second stops the goroutine
		err := a.Emit(sinkCtx, sinkHost("", sinkAccepted()))
		if err == nil || !errors.Is(err, events.ErrClosed) {
			t.Errorf("Emit after the recording goroutine stopped = %v, want an error wrapping ErrClosed", err)
		}
		if err := a.Close(); err == nil || !errors.Is(err, events.ErrClosed) {
			t.Errorf("Close = %v, want the stopped goroutine reported", err)
		}
		if got, want := a.Stats(), (events.AsyncStats{Emitted: 3, Accepted: 2, Rejected: 1, Recorded: 1, Failed: 1}); got != want {
			t.Errorf("Stats = %+v, want %+v", got, want)
		}
		if len(failed) != 1 || !errors.Is(failed[0], events.ErrClosed) {
			t.Errorf("OnError saw %v, want the event that stopped the goroutine", failed)
		}
		if n := len(s.all()); n != 1 {
			t.Errorf("the store recorded %d events, want 1", n)
		}
	})
}
