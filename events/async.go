package events

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultAsyncBuffer is the buffer of an [Async] whose options name none.
const DefaultAsyncBuffer = 1024

// Overflow is what [Async.Emit] does when the buffer is full. The zero
// Overflow is Block: losing an audit record is something a host must ask
// for.
type Overflow uint8

const (
	// Block waits for room, for at most AsyncOptions.MaxWait (when it is
	// not zero) and never past the context; an event that found no room
	// in time is dropped, counted, and refused with ErrDropped or
	// ctx.Err().
	Block Overflow = iota
	// Drop refuses the event at once with ErrDropped and counts it.
	Drop
)

// AsyncOptions configures an [Async]. The zero value is a buffer of
// DefaultAsyncBuffer events that blocks, bounded only by the context.
type AsyncOptions struct {
	// Buffer is how many accepted events may wait to be recorded, those
	// being recorded included; zero or less means DefaultAsyncBuffer.
	Buffer int
	// Overflow is what Emit does when the buffer is full.
	Overflow Overflow
	// MaxWait bounds how long a blocking Emit waits for room; zero means
	// until its context is done. It is ignored under Drop.
	MaxWait time.Duration
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
	// once under Drop, or when MaxWait or the context ran out under Block.
	Dropped uint64
	// Rejected is the number of events refused before queueing: invalid,
	// a context already done, no wrapped sink, or Emit after Close.
	Rejected uint64
	// Recorded is the number of accepted events the wrapped sink recorded.
	Recorded uint64
	// Failed is the number of accepted events the wrapped sink failed to
	// record.
	Failed uint64
	// Pending is the number of accepted events not yet recorded or failed.
	Pending uint64
}

// Async takes events off the request path: Emit validates the event and
// queues it in a bounded buffer, and one goroutine records the queue, in
// order, in the sink it wraps. On the request path Emit never waits longer
// than its [Overflow] policy says and, when there is room, allocates
// nothing and wakes nobody: the recording goroutine polls while events keep
// coming and is woken only when it has gone to sleep or the buffer is half
// full. Every event it does not queue is counted ([Async.Stats]) and
// refused with an error, so that a policy requiring the audit can fail
// closed on a drop.
//
// The recording goroutine emits with the caller's context stripped of its
// cancellation (its values, such as a trace id, are kept): the request an
// event came from is usually over by the time it is written.
//
// Close stops accepting events, records everything already accepted,
// closes the wrapped sink when it is an io.Closer, and returns the first
// error the wrapped sink reported; the goroutine has exited when it
// returns. A zero Async records nothing and refuses every event; use
// [NewAsync].
type Async struct {
	next Sink
	opts AsyncOptions

	mu sync.Mutex
	// ring holds the queue: count items from head, wrapping.
	ring        []asyncItem
	head, count int
	closed      bool
	// asleep is set while the recording goroutine waits for a wake-up
	// rather than polling, so that only the Emit that finds it so pays for
	// waking it.
	asleep bool
	// room is closed (and replaced) when the recording goroutine frees
	// room while Emits are blocked waiting for it; nil when none are.
	room chan struct{}

	wake chan struct{} // capacity 1: a wake-up is never lost or waited on
	done chan struct{}

	// The request path's counters and the recording goroutine's sit on
	// different cache lines, so that counting does not make the two
	// sides take turns with the line.
	accepted, dropped, rejected atomic.Uint64
	_                           [64]byte
	recorded, failed            atomic.Uint64

	closeOnce sync.Once
	errMu     sync.Mutex
	firstErr  error
}

type asyncItem struct {
	ctx context.Context
	e   Event
}

// How the recording goroutine waits for work: it polls every asyncPoll
// while events keep arriving, and sleeps until woken after asyncIdle
// without one. A busy sink (an event every few milliseconds or more) thus
// wakes nobody from the request path, and an idle one costs nothing; below
// that rate the first Emit after a pause pays for one wake-up. The poll
// bounds how long an accepted event waits, unless the buffer fills to half
// first, which wakes the goroutine at once.
const (
	asyncPoll  = 200 * time.Microsecond
	asyncIdle  = 2 * time.Millisecond
	asyncBatch = 64
)

// errZeroAsync is returned by a zero Async, which has no buffer.
var errZeroAsync = fmt.Errorf("events: Async was not made by NewAsync: %w", ErrNoSink)

// NewAsync starts the goroutine that records into next and returns the
// Async that feeds it. Call Close to stop it.
func NewAsync(next Sink, opts AsyncOptions) *Async {
	if opts.Buffer <= 0 {
		opts.Buffer = DefaultAsyncBuffer
	}
	a := &Async{
		next: next,
		opts: opts,
		ring: make([]asyncItem, opts.Buffer),
		wake: make(chan struct{}, 1),
		done: make(chan struct{}),
	}
	go a.run()
	return a
}

// Emit validates e and queues it for recording. It returns nil when e was
// accepted; a failure to record it later is reported by Close (and
// OnError). It returns the [*FieldError] of an invalid event, ctx.Err()
// for a context already done or done while waiting for room, [ErrDropped]
// when there was no room within the policy, and [ErrClosed] after Close.
func (a *Async) Emit(ctx context.Context, e Event) error {
	if a == nil || a.ring == nil {
		return errZeroAsync
	}
	if a.next == nil {
		// Accepting would promise a recording that can never happen.
		a.rejected.Add(1)
		return ErrNoSink
	}
	if err := ctx.Err(); err != nil {
		a.rejected.Add(1)
		return err
	}
	if err := e.Validate(); err != nil {
		a.rejected.Add(1)
		return err
	}
	a.mu.Lock()
	if done, err := a.tryPush(ctx, &e); done {
		return err
	}
	if a.opts.Overflow == Drop {
		a.mu.Unlock()
		a.dropped.Add(1)
		return ErrDropped
	}
	return a.wait(ctx, &e)
}

// push queues the event, unlocks a.mu and wakes the recording goroutine
// when it sleeps or the buffer is half full. a.mu must be held and the
// buffer must have room.
func (a *Async) push(ctx context.Context, e *Event) {
	i := a.head + a.count
	if i >= len(a.ring) {
		i -= len(a.ring)
	}
	a.ring[i] = asyncItem{ctx, *e}
	a.count++
	wake := a.asleep || a.count == (len(a.ring)+1)/2
	a.asleep = false
	a.mu.Unlock()
	a.accepted.Add(1)
	if wake {
		a.signal()
	}
}

func (a *Async) signal() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// wait is the slow path of a blocking Emit: the buffer is full. a.mu must
// be held; wait releases it.
func (a *Async) wait(ctx context.Context, e *Event) error {
	var expired <-chan time.Time
	if a.opts.MaxWait > 0 {
		t := time.NewTimer(a.opts.MaxWait)
		defer t.Stop()
		expired = t.C
	}
	for {
		if a.room == nil {
			a.room = make(chan struct{})
		}
		room := a.room
		a.mu.Unlock()
		// A full buffer must be drained now, whatever the goroutine is doing.
		a.signal()
		select {
		case <-room:
		case <-ctx.Done():
			a.dropped.Add(1)
			return ctx.Err()
		case <-expired:
			a.dropped.Add(1)
			return ErrDropped
		}
		// Close waits for nobody blocked here: it takes a.mu only to set
		// closed, and the events already queued are still recorded.
		a.mu.Lock()
		if done, err := a.tryPush(ctx, e); done {
			return err
		}
	}
}

// tryPush refuses the event after Close or queues it when there is room,
// releasing a.mu and reporting done; otherwise it keeps a.mu held and
// reports not done. a.mu must be held.
func (a *Async) tryPush(ctx context.Context, e *Event) (done bool, err error) {
	if a.closed {
		a.mu.Unlock()
		a.rejected.Add(1)
		return true, ErrClosed
	}
	if a.count < len(a.ring) {
		a.push(ctx, e)
		return true, nil
	}
	return false, nil
}

// run records the queue until Close, then records what is left and exits.
// It records events in place in the ring: the slots from head to head+n
// stay counted in count, so no Emit writes to them, and the lock is held
// only to move the indices, never while an event is copied or recorded.
func (a *Async) run() {
	defer close(a.done)
	poll := time.NewTimer(asyncPoll)
	defer poll.Stop()
	idleSince := time.Now()
	for {
		a.mu.Lock()
		head, n := a.head, min(a.count, asyncBatch)
		if n == 0 {
			if a.closed {
				a.mu.Unlock()
				return
			}
			a.asleep = time.Since(idleSince) >= asyncIdle
			asleep := a.asleep
			a.mu.Unlock()
			if asleep {
				<-a.wake
			} else {
				poll.Reset(asyncPoll)
				select {
				case <-a.wake:
				case <-poll.C:
				}
			}
			continue
		}
		a.mu.Unlock()

		for i := range n {
			j := head + i
			if j >= len(a.ring) {
				j -= len(a.ring)
			}
			a.record(&a.ring[j])
			a.ring[j] = asyncItem{} // let the context and strings be collected
		}

		a.mu.Lock()
		a.head = (head + n) % len(a.ring)
		a.count -= n
		if a.room != nil {
			close(a.room)
			a.room = nil
		}
		a.mu.Unlock()
		idleSince = time.Now()
	}
}

func (a *Async) record(it *asyncItem) {
	ctx := it.ctx
	if ctx.Done() != nil { // only a context that can be cancelled needs detaching
		ctx = context.WithoutCancel(ctx)
	}
	err := emitSafely(ctx, a.next, it.e)
	if err == nil {
		a.recorded.Add(1)
		return
	}
	a.failed.Add(1)
	a.noteErr(err)
	if a.opts.OnError != nil {
		a.callOnError(it.e, err)
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
// record has already noted err, so Close has its first error whatever
// OnError does.
func (a *Async) callOnError(e Event, err error) {
	defer func() { _ = recover() }()
	a.opts.OnError(e, err)
}

// Close stops accepting events, waits until every accepted event has been
// recorded or has failed, closes the wrapped sink when it is an io.Closer,
// and returns the first error of all that. An Emit still blocked for room
// returns ErrClosed. Later calls return the same error.
func (a *Async) Close() error {
	if a == nil || a.ring == nil {
		return nil
	}
	a.closeOnce.Do(func() {
		a.mu.Lock()
		a.closed = true
		if a.room != nil {
			close(a.room)
			a.room = nil
		}
		a.mu.Unlock()
		a.signal()
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
