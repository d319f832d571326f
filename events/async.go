package events

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// asyncDefaultBuffer is the buffer of an [Async] whose options name none.
const asyncDefaultBuffer = 1024

// asyncDefaultMaxWait is the wait of a blocking Emit whose options name
// none. It is long enough to ride out a store's hiccup (a checkpoint, a
// failover) and short against any request deadline, so that a stalled
// store costs each request at most this much rather than its deadline.
const asyncDefaultMaxWait time.Duration = 100_000_000 // 100 ms

// AsyncOptions configures an [Async]. The zero value is a buffer of 1,024
// events that, when full, makes Emit wait at most 100 ms for room: losing
// an audit record is something a host must ask for.
type AsyncOptions struct {
	// Buffer is how many accepted events may wait to be recorded, the one
	// being recorded included; zero or less means 1,024. A Buffer of 1
	// queues nothing: an event is accepted only when the recording
	// goroutine is free to take it.
	Buffer int
	// MaxWait bounds how long Emit waits for room in a full buffer; zero
	// or less means 100 ms. The context can only shorten the wait: an
	// audit record is never worth holding a request for long, and a drop
	// is counted and refused, so a host that requires the audit fails
	// closed on it. An event that found no room in time is dropped,
	// counted, and refused with ErrDropped or ctx.Err().
	MaxWait time.Duration
	// Drop makes Emit refuse an event at once, with ErrDropped, when the
	// buffer is full, instead of waiting; the drop is counted.
	Drop bool
	// OnError, when set, is called from the recording goroutine with each
	// accepted event the wrapped sink failed to record, so that a host can
	// log or re-queue it; Close still returns the first such error.
	OnError func(Event, error)
}

// AsyncStats counts what an [Async] did with the events it was given.
// Emitted = Accepted + Dropped + Rejected always holds, and once Close has
// returned, Accepted = Recorded + Failed exactly; while events are in
// flight the counters are read one after another, so Pending is
// approximate.
type AsyncStats struct {
	// Emitted is the number of Emit calls that have returned.
	Emitted uint64
	// Accepted is the number of events queued for recording.
	Accepted uint64
	// Dropped is the number of events turned away for want of room: at
	// once under Drop, or when MaxWait or the context ran out.
	Dropped uint64
	// Rejected is the number of events refused before queueing: invalid,
	// a context already done, no wrapped sink, Emit after Close or after
	// the recording goroutine stopped.
	Rejected uint64
	// Recorded is the number of accepted events the wrapped sink recorded.
	Recorded uint64
	// Failed is the number of accepted events the wrapped sink failed to
	// record, those left queued when the recording goroutine stopped
	// included.
	Failed uint64
	// Pending is the number of accepted events not yet recorded or failed.
	Pending uint64
}

// Async takes events off the request path: Emit validates the event and
// queues it on a buffered channel, and one goroutine records the queue, in
// order, in the sink it wraps. Emit never waits longer than
// AsyncOptions.MaxWait (100 ms unless set, and not at all under Drop), and
// with room in the buffer it allocates nothing. Every
// event it does not queue is counted ([Async.Stats]) and refused with an
// error, so that a policy requiring the audit fails closed on a drop.
//
// Emit validates the event, as every sink does, before queueing it: a
// caller must learn of an invalid event from Emit, because one that failed
// later, on the recording goroutine, would have been reported as accepted
// to a host that requires the audit. An event from [NewRunEvent] or
// [NewHostEvent], unchanged, is checked against its proof instead of being
// validated again, which is what keeps Emit cheap.
//
// The recording goroutine emits with the caller's context stripped of its
// cancellation (its values, such as a trace id, are kept): the request an
// event came from is usually over by the time it is written. If the
// wrapped sink stops that goroutine (runtime.Goexit, as testing.T.FailNow
// does), the Async stops too: the event being recorded and those queued
// behind it count as failed, later Emits are refused with an error that
// wraps [ErrClosed], and Close reports it.
//
// Close stops accepting events, records everything already accepted,
// closes the wrapped sink when it is an io.Closer, and returns the first
// error the wrapped sink reported; the goroutine has exited when it
// returns. A zero Async records nothing and refuses every event with
// [ErrClosed]; use [NewAsync].
type Async struct {
	// The fields Emit writes come first, those of the recording goroutine
	// last, so that the two do not share a cache line.
	//
	// mu makes closing queue safe: an Emit holds it for reading from its
	// check of closed to the end of its send, and stopping takes it for
	// writing to set closed, so no send is in flight once closed is set.
	mu                          sync.RWMutex
	accepted, dropped, rejected atomic.Uint64

	closed  bool
	next    Sink
	maxWait time.Duration
	drop    bool
	onError func(Event, error)
	queue   chan asyncItem
	// quit is closed when the Async stops accepting events, to release
	// the Emits blocked for room; stopErr, set just before, is what they
	// and every later Emit return.
	quit     chan struct{}
	stopErr  error
	stopOnce sync.Once
	// done is closed when the recording goroutine has exited.
	done chan struct{}

	closeOnce sync.Once
	errMu     sync.Mutex
	firstErr  error

	recorded, failed atomic.Uint64
}

type asyncItem struct {
	ctx context.Context
	e   Event
}

// errAsyncStopped is what an Async reports once the sink it wraps, or its
// OnError, ended the recording goroutine: there is nobody left to record.
var errAsyncStopped = fmt.Errorf("events: the asynchronous sink stopped: its sink or OnError called runtime.Goexit on the recording goroutine: %w", ErrClosed)

// NewAsync starts the goroutine that records into next and returns the
// Async that feeds it. Call Close to stop it.
func NewAsync(next Sink, opts AsyncOptions) *Async {
	if opts.Buffer <= 0 {
		opts.Buffer = asyncDefaultBuffer
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = asyncDefaultMaxWait
	}
	a := &Async{
		next:    next,
		maxWait: opts.MaxWait,
		drop:    opts.Drop,
		onError: opts.OnError,
		// The recording goroutine holds the event it records outside the
		// channel: that event is the Buffer's last slot.
		queue: make(chan asyncItem, opts.Buffer-1),
		quit:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	go a.run()
	return a
}

// Emit validates e and queues it for recording. It returns nil when e was
// accepted; a failure to record it later is reported by Close (and
// OnError). It returns the [*FieldError] of an invalid event, ctx.Err()
// for a context already done or done while waiting for room, [ErrDropped]
// when there was no room in time, [ErrClosed] after Close, on a zero Async
// and when there is no sink to record into, and an error wrapping
// ErrClosed once the recording goroutine was stopped.
func (a *Async) Emit(ctx context.Context, e Event) error {
	if a == nil || a.queue == nil {
		return ErrClosed
	}
	if err := a.check(ctx, &e); err != nil {
		a.rejected.Add(1)
		return err
	}
	// No defer: this is the request path, and each return unlocks.
	a.mu.RLock()
	if a.closed {
		a.mu.RUnlock()
		a.rejected.Add(1)
		return a.stopErr
	}
	select {
	case a.queue <- asyncItem{ctx, e}:
		a.mu.RUnlock()
		a.accepted.Add(1)
		return nil
	default:
	}
	var err error
	if a.drop {
		a.dropped.Add(1)
		err = ErrDropped
	} else {
		err = a.wait(ctx, &e)
	}
	a.mu.RUnlock()
	return err
}

// check is what Emit refuses before queueing.
func (a *Async) check(ctx context.Context, e *Event) error {
	if a.next == nil {
		// Accepting would promise a recording that can never happen.
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return e.check()
}

// wait is the slow path of a blocking Emit: the buffer is full. a.mu must
// be held for reading.
func (a *Async) wait(ctx context.Context, e *Event) error {
	t := time.NewTimer(a.maxWait)
	defer t.Stop()
	select {
	case a.queue <- asyncItem{ctx, *e}:
		a.accepted.Add(1)
		return nil
	case <-ctx.Done():
		a.dropped.Add(1)
		return ctx.Err()
	case <-t.C:
		a.dropped.Add(1)
		return ErrDropped
	case <-a.quit:
		a.rejected.Add(1)
		return a.stopErr
	}
}

// stop makes every later Emit, and every Emit blocked for room, return
// err, and returns once no Emit is sending. Only the first call's err is
// kept.
func (a *Async) stop(err error) {
	a.stopOnce.Do(func() {
		a.stopErr = err
		close(a.quit)
		a.mu.Lock()
		a.closed = true
		a.mu.Unlock()
	})
}

// run records the queue until Close has closed it and it is empty. If the
// wrapped sink (or OnError) ends the goroutine with runtime.Goexit, the
// deferred call stops the Async and fails what was left, so that nothing
// waits for a goroutine that is gone.
//
// It takes one event at a time; a store that writes in batches can be fed
// from here by taking what is queued (len(a.queue)) at once, without a
// change to Emit, since the buffer's bound and counting are the channel's.
func (a *Async) run() {
	defer close(a.done)
	var it asyncItem
	settled := true // whether it has been counted as recorded or failed
	finished := false
	defer func() {
		if finished {
			return
		}
		// Stop first: OnError, called below, may end the goroutine again,
		// and Emits must not queue for nobody whatever it does.
		a.stop(errAsyncStopped)
		a.noteErr(errAsyncStopped)
		if !settled {
			a.fail(it.e, errAsyncStopped)
		}
		// No Emit is sending now, so what is queued is all there will be.
		for {
			select {
			case it, ok := <-a.queue:
				if !ok {
					return
				}
				a.fail(it.e, errAsyncStopped)
			default:
				return
			}
		}
	}()
	for it = range a.queue {
		settled = false
		ctx := it.ctx
		if ctx.Done() != nil { // only a context that can be cancelled needs detaching
			ctx = context.WithoutCancel(ctx)
		}
		err := emitSafely(ctx, a.next, it.e)
		settled = true
		if err == nil {
			a.recorded.Add(1)
		} else {
			a.noteErr(err)
			a.fail(it.e, err)
		}
		it = asyncItem{} // let the context and strings be collected
	}
	finished = true
}

// fail counts e as failed and hands it to OnError.
func (a *Async) fail(e Event, err error) {
	a.failed.Add(1)
	if a.onError != nil {
		a.callOnError(e, err)
	}
}

func (a *Async) noteErr(err error) {
	a.errMu.Lock()
	if a.firstErr == nil {
		a.firstErr = err
	}
	a.errMu.Unlock()
}

// callOnError keeps a panicking OnError from killing the recording
// goroutine, and so every event queued behind it. The panic is dropped:
// the caller has already noted err, so Close has its first error whatever
// OnError does.
func (a *Async) callOnError(e Event, err error) {
	defer func() { _ = recover() }()
	a.onError(e, err)
}

// Close stops accepting events, waits until every accepted event has been
// recorded or has failed, closes the wrapped sink when it is an io.Closer,
// and returns the first error of all that. An Emit still blocked for room
// returns ErrClosed. Later calls return the same error.
func (a *Async) Close() error {
	if a == nil || a.queue == nil {
		return nil
	}
	a.closeOnce.Do(func() {
		a.stop(ErrClosed)
		close(a.queue) // no Emit is sending, and none will
		<-a.done
		if err := closeIfCloser(a.next); err != nil {
			a.noteErr(err)
		}
	})
	a.errMu.Lock()
	defer a.errMu.Unlock()
	return a.firstErr
}

// Stats returns the counts so far.
func (a *Async) Stats() AsyncStats {
	if a == nil {
		return AsyncStats{}
	}
	s := AsyncStats{
		Accepted: a.accepted.Load(),
		Dropped:  a.dropped.Load(),
		Rejected: a.rejected.Load(),
		Recorded: a.recorded.Load(),
		Failed:   a.failed.Load(),
	}
	s.Emitted = s.Accepted + s.Dropped + s.Rejected
	// The recording goroutine can finish an event before its Emit has
	// counted it as accepted; Pending must not wrap below zero then.
	s.Pending = s.Accepted - min(s.Accepted, s.Recorded+s.Failed)
	return s
}
