package events

// Tests that pin down behaviour the rest of the suite left loose, each
// named after what it guards. They are white-box where the behaviour is
// only visible inside the package (which wake-ups the recording goroutine
// gets, what quoteTrunc writes).

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/wopneg/wopneg/facets"
)

func mutantPayload() NegotiationDecided {
	return NegotiationDecided{
		Protocol: facets.ProtocolA2A, Outcome: Accepted, Version: "1.1", Requested: "1.2",
		Reason: ReasonOK, Floor: "1.1", At: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC),
	}
}

func mutantHostEvent(t *testing.T) Event {
	t.Helper()
	e, err := NewHostEvent("", mutantPayload())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestDeliveryValid(t *testing.T) {
	for d, want := range map[Delivery]bool{
		DeliveryDurable:   true,
		DeliveryEphemeral: true,
		"":                false,
		"Durable":         false,
		"eventual":        false,
	} {
		if got := d.Valid(); got != want {
			t.Errorf("Delivery(%q).Valid() = %t, want %t", d, got, want)
		}
	}
}

func TestEventTypePatternEdges(t *testing.T) {
	for s, want := range map[string]bool{
		"a.a":          true,
		"z.z":          true,
		"az09.za90":    true,
		"a-z.z-a":      true,
		"a-0-9.b-a-z":  true,
		"a9-0z.x":      true,
		"`.a":          false, // '`' is just below 'a'
		"{.a":          false, // '{' is just above 'z'
		"a.`":          false,
		"a.{":          false,
		"a`.a":         false,
		"a{.a":         false,
		"a/.a":         false, // '/' is just below '0'
		"a:.a":         false, // ':' is just above '9'
		"0a.a":         false,
		"a.9":          false,
		"-a.a":         false,
		"a-.a":         false,
		"a.a-":         false,
		"a--b.a":       false,
		"a.b--c":       false,
		"a-b-.c":       false,
		"a":            false,
		".a":           false,
		"a.":           false,
		".":            false,
		"":             false,
		"a.b.c":        false,
		"ab.cd-ef-gh0": true,
	} {
		if got := validEventType(s); got != want {
			t.Errorf("validEventType(%q) = %t, want %t", s, got, want)
		}
	}
}

func TestRunIDPatternEdges(t *testing.T) {
	id := strings.Repeat("i", 16)
	for s, want := range map[string]bool{
		"t/" + id:           true,
		"anon:t/" + id:      true,
		"/" + id:            false,
		"anon:/" + id:       false,
		"t" + id:            false,
		"t/" + id[1:]:       false,
		"t/" + id + "/":     false,
		"t/" + id + "/x":    false,
		"anon:anon:t/" + id: false,
		"":                  false,
	} {
		if got := validRunID(s); got != want {
			t.Errorf("validRunID(%q) = %t, want %t", s, got, want)
		}
	}
}

func TestQuoteTruncCutsAtARuneStart(t *testing.T) {
	a79 := strings.Repeat("a", 79)
	for _, tc := range []struct{ in, want string }{
		// Exactly the limit is written whole.
		{a79 + "b", `"` + a79 + `b"`},
		// One past it is cut to 80 bytes.
		{a79 + "bc", `"` + a79 + `b"…`},
		// Never inside a rune: "é" starts at byte 79, so the cut moves
		// back to it.
		{a79 + "éz", `"` + a79 + `"…`},
		// A string of nothing but continuation bytes is cut to nothing.
		{strings.Repeat("\x80", 81), `""…`},
	} {
		if got := quoteTrunc(tc.in); got != tc.want {
			t.Errorf("quoteTrunc(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestJSONStringEdgeBytes(t *testing.T) {
	for in, want := range map[string]string{
		" ":           `" "`,
		"a b":         `"a b"`,
		"\x1f":        `"\u001f"`,
		"\x7f":        "\"\x7f\"",
		"\x80":        `"\ufffd"`,
		"a\x80b":      `"a\ufffdb"`,
		"\xc3":        `"\ufffd"`,
		"é":           `"é"`,
		"\u2028x":     `"\u2028x"`,
		"x\u2029":     `"x\u2029"`,
		"\U0001F642!": "\"\U0001F642!\"",
	} {
		if got := string(appendJSONString(nil, in)); got != want {
			t.Errorf("appendJSONString(%q) = %s, want %s", in, got, want)
		}
	}
	// The same bytes reach a refused event's error message.
	e := mutantHostEvent(t)
	e.ID = "bad id\x80"
	var fe *FieldError
	if err := e.Validate(); !errors.As(err, &fe) || fe.Reason != `"bad id\ufffd" is not 16 to 128 of [A-Za-z0-9._~-]` {
		t.Errorf("Validate() = %v, want the id quoted with U+FFFD", err)
	}
}

// failOnceWriter fails its first write having written nothing, then
// writes normally.
type failOnceWriter struct {
	bytes.Buffer
	failed bool
}

func (w *failOnceWriter) Write(p []byte) (int, error) {
	if !w.failed {
		w.failed = true
		return 0, errors.New("EAGAIN")
	}
	return w.Buffer.Write(p)
}

// A write that failed before writing anything left no fragment, so the next
// line needs no repair newline.
func TestJSONLinesAfterAnUntornFailure(t *testing.T) {
	w := &failOnceWriter{}
	j := NewJSONLines(w)
	e := mutantHostEvent(t)
	if err := j.Emit(context.Background(), e); err == nil {
		t.Fatal("the failed write was not reported")
	}
	if err := j.Emit(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	want, err := e.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.String(); got != string(want)+"\n" {
		t.Errorf("wrote %q, want the one line %q", got, string(want)+"\n")
	}
}

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

// The recording goroutine is woken from the request path only when the
// buffer reaches half full or when it has gone to sleep, which it does
// after asyncIdle without an event. In a synctest bubble time stands still
// until every goroutine is blocked, so which Emit woke it is exact.
func TestAsyncWakesAtHalfFullOrWhenAsleep(t *testing.T) {
	defer goleak.VerifyNone(t)
	synctest.Test(t, func(t *testing.T) {
		a := NewAsync(&countingSink{}, AsyncOptions{Buffer: 5})
		defer a.Close() // so that a failure ends the bubble's goroutines too
		synctest.Wait()
		e := mutantHostEvent(t)
		recorded := func() uint64 {
			synctest.Wait()
			return a.Stats().Recorded
		}
		// Just started, so polling: the first two Emits wake nobody; the
		// third fills the buffer to half ((5+1)/2) and wakes it.
		for i, want := range []uint64{0, 0, 3} {
			if err := a.Emit(t.Context(), e); err != nil {
				t.Fatal(err)
			}
			if got := recorded(); got != want {
				t.Fatalf("after Emit %d: %d recorded, want %d", i+1, got, want)
			}
		}
		// Still polling for just under asyncIdle: an Emit waits for the poll.
		time.Sleep(asyncIdle - asyncPoll)
		synctest.Wait() // let the goroutine take the poll due at this instant
		if err := a.Emit(t.Context(), e); err != nil {
			t.Fatal(err)
		}
		if got := recorded(); got != 3 {
			t.Fatalf("an Emit %v after the last one was recorded at once (%d recorded): the goroutine should still be polling", asyncIdle-asyncPoll, got)
		}
		time.Sleep(asyncPoll) // the poll records it
		if got := recorded(); got != 4 {
			t.Fatalf("after a poll: %d recorded, want 4", got)
		}
		// Exactly asyncIdle after that, the goroutine has gone to sleep, and
		// the next Emit wakes it.
		time.Sleep(asyncIdle)
		synctest.Wait() // let the goroutine take the poll due at this instant
		if err := a.Emit(t.Context(), e); err != nil {
			t.Fatal(err)
		}
		if got := recorded(); got != 5 {
			t.Fatalf("an Emit to a sleeping goroutine left %d recorded, want 5", got)
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

type mutantCtxKey struct{}

// The recording goroutine keeps the context's values and drops its
// cancellation: the request is usually over by the time the event is
// written.
func TestAsyncRecordsWithTheContextDetached(t *testing.T) {
	defer goleak.VerifyNone(t)
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
	defer goleak.VerifyNone(t)
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

func TestAsyncStatsPending(t *testing.T) {
	defer goleak.VerifyNone(t)
	synctest.Test(t, func(t *testing.T) {
		// The first event fails, the rest are recorded.
		s := &countingSink{fail: func(n int) bool { return n == 1 }}
		a := NewAsync(s, AsyncOptions{})
		defer a.Close()
		synctest.Wait()
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
		if got, want := a.Stats(), (AsyncStats{Emitted: 2, Accepted: 2, Pending: 2}); got != want {
			t.Errorf("before the poll: Stats = %+v, want %+v", got, want)
		}
		emit(2)
		time.Sleep(asyncPoll) // the goroutine polls and records all four
		synctest.Wait()
		if got, want := a.Stats(), (AsyncStats{Emitted: 4, Accepted: 4, Recorded: 3, Failed: 1}); got != want {
			t.Errorf("after the poll: Stats = %+v, want %+v", got, want)
		}
		emit(3)
		synctest.Wait()
		if got, want := a.Stats(), (AsyncStats{Emitted: 7, Accepted: 7, Recorded: 3, Failed: 1, Pending: 3}); got != want {
			t.Errorf("with 3 queued: Stats = %+v, want %+v", got, want)
		}
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
	defer goleak.VerifyNone(t)
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
		time.Sleep(asyncPoll) // the goroutine takes the event to the gate
		synctest.Wait()
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
