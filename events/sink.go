package events

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sync"
)

// Sink records events: an event log, a database table, a logger. It is
// this package's slog.Handler: one method, so that any store can be one
// and sinks compose by wrapping.
//
// Emit records e, or returns an error saying why it did not. The contract
// every sink in this package keeps, and that negotiatetest.TestSink checks
// for any sink:
//
//   - nil means recorded, or, for a buffering sink such as [Async],
//     accepted for recording, with any later failure reported by Close;
//   - an event that fails [Event.Validate] is refused with its
//     [*FieldError], and nothing is recorded;
//   - a context already done is refused with ctx.Err(), and a blocking
//     Emit stops with ctx.Err() when its context is done;
//   - the store, not the caller, assigns a run event's sequence: 0 for the
//     run's first event, then 1, 2, …, with no gap and no repeat among the
//     events it records (see [JSONLines]);
//   - Emit is safe for concurrent use, and one caller's events on one run
//     are recorded in the order it emitted them;
//   - a sink that also implements io.Closer refuses Emit after Close.
//
// What a nil promises on a crash differs by sink, and a sink that keeps
// its events across one says so by being [Durable]:
//
//   - [JSONLines] has handed the line to its io.Writer: durable only as
//     far as that writer is (an *os.File without Sync is in the page
//     cache, and survives a crash of the process but not of the machine),
//     and it does not say it is Durable; made by [NewJSONLinesFile], it
//     has synced its file too, and is Durable;
//   - the slog sink has handed the record to its handler, with the same
//     reach;
//   - [Async], by default, has queued the event in memory: a crash of the
//     process loses what is queued, and a store that stays down past
//     CloseWait fails it (reported by Close and OnError, never by that
//     Emit); in the acknowledged mode (AsyncOptions.Acknowledge) its nil
//     is the nil of the wrapped sink's write, and it is Durable when that
//     sink is;
//   - a fan-out is Durable when one of its sinks is: its nil means every
//     sink recorded the event;
//   - examples/pgbatch's Writer has committed the event's transaction,
//     and is Durable: the event survives a crash of the process, and of
//     the database as far as PostgreSQL's synchronous_commit (on by
//     default) makes commits durable.
//
// A host that must answer nothing it has no record of
// (policy.Policy.RequireAudit) records into a Durable sink: anything else
// can lose an event it already answered for, and the adapters refuse to
// start with one (negotiate/mcphttp.New, negotiate/a2ahttp.New, their
// one-call Handlers, outbound Negotiate and Connect), and the seams refuse
// every exchange.
type Sink interface {
	Emit(ctx context.Context, e Event) error
}

// Durable is implemented by a [Sink] that can say whether its Emit
// returns nil only once the event is durably stored: kept across a crash
// of the process. A sink that does not implement it is not durable.
type Durable interface {
	Durable() bool
}

// SinkFunc adapts a function to a [Sink], as http.HandlerFunc adapts one to
// a Handler.
type SinkFunc func(ctx context.Context, e Event) error

// Emit calls f(ctx, e).
func (f SinkFunc) Emit(ctx context.Context, e Event) error { return f(ctx, e) }

// Errors the shipped sinks return. They are sentinels so that the request
// path can test for them without allocating.
var (
	// ErrClosed is returned by a sink that records nothing: one that was
	// closed, and a nil or zero one, which never could. An event with
	// nowhere to go was not recorded, and saying so is what lets a policy
	// that requires the audit fail closed.
	ErrClosed = errors.New("events: the sink is closed or missing")
	// ErrDropped is returned by [Async.Emit] when its buffer had no room
	// in time; the drop is counted in [AsyncStats].Dropped.
	ErrDropped = errors.New("events: event dropped: the asynchronous sink's buffer is full")
	// ErrUnavailable says the store could not be reached or did not
	// answer in time, so that trying again later may succeed. A sink
	// wraps it in such errors (examples/pgbatch does, for a database that
	// is down or restarting); an [Async] tries those writes again
	// (AsyncOptions.Backoff) rather than failing their events, and its
	// acknowledged Emit returns an error wrapping it when the write did
	// not succeed in time.
	ErrUnavailable = errors.New("events: the store is unavailable")
)

// PanicError is the error a shipped sink returns when the sink or handler
// it calls panicked: an audit write must not take the request down with
// it, and a policy that requires the audit then fails closed on it.
type PanicError struct {
	// Value is what was passed to panic.
	Value any
	// Stack is the stack of the goroutine that panicked, for the log.
	Stack []byte
}

// Error reports the value the sink panicked with.
func (e *PanicError) Error() string { return fmt.Sprintf("events: sink panicked: %v", e.Value) }

// emitSafely calls s.Emit, turning a panic into a [*PanicError] and a nil
// sink into [ErrClosed].
func emitSafely(ctx context.Context, s Sink, e Event) (err error) {
	if s == nil {
		return ErrClosed
	}
	defer recoverInto(&err)
	return s.Emit(ctx, e)
}

// emitBatchSafely is emitSafely for a batch, with a context of its own: a
// batch holds many callers' events.
func emitBatchSafely(s BatchSink, batch []Event) (err error) {
	defer recoverInto(&err)
	return s.EmitBatch(context.Background(), batch)
}

// recoverInto, deferred, turns a panic into a [*PanicError] in *err.
func recoverInto(err *error) {
	if r := recover(); r != nil {
		*err = &PanicError{Value: r, Stack: debug.Stack()}
	}
}

// closeIfCloser closes s when it is an io.Closer, turning a panic into an
// error for the same reason as emitSafely.
func closeIfCloser(s Sink) (err error) {
	c, ok := s.(io.Closer)
	if !ok {
		return nil
	}
	defer recoverInto(&err)
	return c.Close()
}

// NewFanout returns a sink that records each event in every one of sinks,
// one after another, so that a host can keep its event store and its audit
// log side by side. It keeps its own copy of the list.
//
// Its Emit validates the event once, then emits it to every sink, even
// after one fails, and returns every failure, each naming its sink's
// position, joined with errors.Join: a host must learn that its audit log
// failed even when its event store did not. A fan-out of no sinks returns
// [ErrClosed].
//
// The sink it returns is an io.Closer that owns sinks: Close waits for the
// emits in flight, then closes every sink that is an io.Closer, in order,
// and returns their errors joined. Emit afterwards returns ErrClosed; a
// second Close does nothing.
func NewFanout(sinks ...Sink) Sink {
	return &fanout{sinks: append([]Sink(nil), sinks...)}
}

type fanout struct {
	sinks []Sink
	// mu lets Close wait for the emits in flight, so that none reaches a
	// sink after it was closed.
	mu     sync.RWMutex
	closed bool
}

func (f *fanout) Emit(ctx context.Context, e Event) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed || len(f.sinks) == 0 {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := e.check(); err != nil {
		return err
	}
	var errs []error
	for i, s := range f.sinks {
		if err := emitSafely(ctx, s, e); err != nil {
			errs = append(errs, fmt.Errorf("events: fan-out sink %d: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

// Durable reports whether one of the sinks is Durable: Emit returns nil
// only when every sink recorded the event, that one included.
func (f *fanout) Durable() bool {
	for _, s := range f.sinks {
		if d, ok := s.(Durable); ok && d.Durable() {
			return true
		}
	}
	return false
}

func (f *fanout) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	var errs []error
	for i, s := range f.sinks {
		if err := closeIfCloser(s); err != nil {
			errs = append(errs, fmt.Errorf("events: fan-out sink %d: %w", i, err))
		}
	}
	return errors.Join(errs...)
}
