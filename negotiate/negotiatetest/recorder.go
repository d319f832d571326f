package negotiatetest

import (
	"context"
	"sync"

	"github.com/wopneg/wopneg/events"
)

// Recorder is an in-memory [events.Sink] for tests, in the spirit of
// httptest.ResponseRecorder: it keeps every event it is given, numbering
// run events per run as a store does, and can be told to fail. It passes
// [TestSink]. The zero Recorder is ready to use.
type Recorder struct {
	mu     sync.Mutex
	events []events.Event
	next   map[string]int64
	err    error
	closed bool
}

// Emit records e, giving a run event the next sequence of its run. It
// refuses an invalid event, a context already done, and every event after
// Close or while [Recorder.Fail] is in force, recording nothing then.
func (r *Recorder) Emit(ctx context.Context, e events.Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := e.Validate(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return events.ErrClosed
	}
	if r.err != nil {
		return r.err
	}
	if e.RunID != "" {
		if r.next == nil {
			r.next = make(map[string]int64)
		}
		e.Sequence, e.HasSequence = r.next[e.RunID], true
		r.next[e.RunID]++
	}
	r.events = append(r.events, e)
	return nil
}

// Durable reports true: a Recorder stands in for a host's durable store,
// so that a host under test may require the audit
// (policy.Policy.RequireAudit), which the adapters allow only over an
// [events.Durable] sink. What it records is in memory, for the test.
func (r *Recorder) Durable() bool { return true }

// Events returns a copy of the events recorded so far, in the order they
// were recorded.
func (r *Recorder) Events() []events.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]events.Event(nil), r.events...)
}

// Fail makes every later Emit return err, recording nothing, as a store
// that is down would; Fail(nil) makes it record again. It is how a test
// checks that a host fails closed when its audit cannot be written.
func (r *Recorder) Fail(err error) {
	r.mu.Lock()
	r.err = err
	r.mu.Unlock()
}

// Close makes every later Emit return [events.ErrClosed]. The events
// recorded so far stay readable.
func (r *Recorder) Close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	return nil
}
