package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
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
	// Buffer is how many accepted events may wait to be recorded, those
	// being recorded included; zero or less means 1,024. A Buffer of 1
	// queues nothing: an event is accepted only when the recording
	// goroutine is free to take it. The Async keeps two slices of Buffer
	// events, the one Emit fills and the one being recorded.
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
	// Batch is the most events handed to a [BatchSink] in one EmitBatch;
	// zero or less means 512. It does not apply to other sinks.
	Batch int

	// BufferBytes bounds the accepted events by size as Buffer bounds
	// them by count; zero or less means 16 MiB. An event's size is its
	// strings' bytes plus a fixed 256 for the rest; one larger than
	// BufferBytes is accepted only into an empty buffer.
	BufferBytes int
	// Acknowledge, when positive, is the acknowledged mode: Emit returns
	// nil only once the write holding its event has succeeded, waiting
	// at most this long for it. Events queued while a write is under way
	// are written together in the next one (group commit), so that many
	// concurrent Emits share one transaction. An event whose write
	// failed returns that error; one not written within Acknowledge, or
	// before the context is done, returns an error wrapping
	// [ErrUnavailable] (or ctx.Err()) and stays queued: it may still be
	// written, so the store may hold an event its caller was told was
	// not recorded, never the reverse. Over a [Durable] sink this makes
	// the Async durable (see [Async.Durable]).
	Acknowledge time.Duration
	// Backoff is the longest pause between two attempts at a write that
	// failed with an error wrapping [ErrUnavailable]: the Async tries
	// such a write again, first after 10 ms and then after twice the
	// pause before, up to Backoff, until it succeeds, for as long as the
	// Async is open, while Emit goes on accepting events into the
	// buffer, up to Buffer and BufferBytes, and drops only past that.
	// Zero means 1 s; a negative Backoff never retries, failing those
	// events at once. A write failing with any other error is not tried
	// again: a [BatchSink]'s batch is split, one Emit per event.
	Backoff time.Duration
	// CloseWait bounds how long Close keeps trying again a write that
	// fails with ErrUnavailable, before it fails what is left; zero or
	// less means 10 s.
	CloseWait time.Duration
	// Logger, when set, is told of the events dropped and of the writes
	// tried again, at most once per LogEvery each (10 s when zero or
	// less) and with the counts since the last time, never once per
	// event: an outage must not flood the log it is reported in.
	Logger   *slog.Logger
	LogEvery time.Duration
}

// Defaults of the AsyncOptions added for acknowledged writes and outages.
const (
	asyncDefaultBufferBytes               = 16 << 20
	asyncDefaultBackoff     time.Duration = 1_000_000_000  // 1 s
	asyncFirstBackoff       time.Duration = 10_000_000     // 10 ms
	asyncDefaultCloseWait   time.Duration = 10_000_000_000 // 10 s
	asyncDefaultLogEvery    time.Duration = 10_000_000_000 // 10 s
	asyncEventOverhead                    = 256
)

// asyncDefaultBatch is the Batch of an [Async] whose options name none.
const asyncDefaultBatch = 512

// BatchSink is a [Sink] that records several events at once, as a
// database does in one transaction. An [Async] wrapping one hands it what
// is queued, in the order accepted, up to AsyncOptions.Batch events at a
// time. EmitBatch records all of batch or reports an error; the Async
// then records that batch's events one by one with Emit, so that an event
// the store refuses fails alone and the others are still recorded.
// EmitBatch must not keep batch after it returns. Its context carries no
// caller's values: a batch holds many callers' events.
type BatchSink interface {
	Sink
	EmitBatch(ctx context.Context, batch []Event) error
}

// AsyncStats counts what an [Async] did with the events it was given, all
// read at one instant: Emitted = Accepted + Dropped + Rejected and
// Accepted = Recorded + Failed + Pending always hold.
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
	// PendingBytes is the size of the Pending events, as BufferBytes
	// counts it.
	PendingBytes uint64
	// Waiting is the number of Emits waiting now: for room, or, in the
	// acknowledged mode, for the write of their event.
	Waiting uint64
	// Unacknowledged is the number of Emits of the acknowledged mode that
	// returned an error after their event was accepted: its write failed,
	// or did not succeed within AsyncOptions.Acknowledge or the context.
	Unacknowledged uint64
	// Retries is the number of writes tried again after failing with
	// [ErrUnavailable].
	Retries uint64
}

// Async takes events off the request path: Emit validates the event and
// queues it, and one goroutine records the queue, in order, in the sink it
// wraps, a [BatchSink] a batch at a time. By default Emit returns once the
// event is queued; in the acknowledged mode (AsyncOptions.Acknowledge)
// once it is written, or failed, or the bound has passed. A write that
// fails with [ErrUnavailable] is tried again (AsyncOptions.Backoff) until
// the store is back, while the buffer takes what comes meanwhile. Emit never waits longer than
// AsyncOptions.MaxWait (100 ms unless set, and not at all under Drop), and
// with room in the buffer it allocates nothing. Every event it does not
// queue is counted ([Async.Stats]) and refused with an error, so that a
// policy requiring the audit fails closed on a drop.
//
// Emit validates the event, as every sink does, before queueing it: a
// caller must learn of an invalid event from Emit, because one that failed
// later, on the recording goroutine, would have been reported as accepted
// to a host that requires the audit. An event from [NewRunEvent] or
// [NewHostEvent], unchanged, is checked against its proof instead of being
// validated again, which is what keeps Emit cheap.
//
// The recording goroutine takes everything queued at once and frees its
// room in the buffer once that batch is recorded: an Emit touches the
// recording goroutine only to wake it when it waits for work, so that a
// busy host pays one wake-up per batch, not one per event. It emits with
// the caller's context stripped of its cancellation (its values, such as a
// trace id, are kept): the request an event came from is usually over by
// the time it is written. If the wrapped sink stops that goroutine
// (runtime.Goexit, as testing.T.FailNow does), the Async stops too: the
// event being recorded and those queued behind it count as failed, later
// Emits are refused with an error that wraps [ErrClosed], and Close
// reports it.
//
// Close stops accepting events, records everything already accepted,
// closes the wrapped sink when it is an io.Closer, and returns the first
// error the wrapped sink reported; the goroutine has exited when it
// returns. A zero Async records nothing and refuses every event with
// [ErrClosed]; use [NewAsync].
type Async struct {
	next        Sink
	batcher     BatchSink // next, when it records batches
	buffer      int
	bufferBytes int
	batch       int
	maxWait     time.Duration
	drop        bool
	onError     func(Event, error)
	ack         time.Duration
	backoff     time.Duration // the longest pause; negative: no retry
	closeWait   time.Duration
	logger      *slog.Logger
	logEvery    time.Duration
	// errLate is what an acknowledged Emit returns when its write did not
	// succeed within ack: made once, so that saying so allocates nothing.
	errLate error

	// mu guards everything below it but hand and the recording
	// goroutine's tallies, which only that goroutine touches.
	mu sync.Mutex
	// queue and ctxs are the events accepted and not yet taken, in order,
	// and the context each came with; spare and spareCtxs are empty
	// slices the recording goroutine swaps in when it takes them, so
	// that appending to the queue never allocates.
	queue, spare       []Event
	ctxs, spareCtxs    []context.Context
	held               int       // accepted and not yet recorded or failed
	heldBytes          int       // their size
	queueBytes         int       // the size of queue
	cur                *ackBatch // the acknowledged mode's waiters on queue; nil when none
	closeBy            time.Time // once closed: when Close stops trying again
	idle               bool      // the recording goroutine waits on wake
	closed             bool
	stopErr            error
	room               chan struct{} // closed when room frees; nil while nobody waits for it
	firstErr           error
	accepted, dropped  uint64
	rejected, recorded uint64
	failed             uint64
	unacked, retries   uint64
	// The drops and retries not yet logged, and when they last were.
	droppedLog, retriesLog uint64
	droppedAt, retriedAt   time.Time
	waiting                atomic.Int64

	wake chan struct{} // one token: the recording goroutine has work or must stop
	// quit is closed when the Async stops accepting events, to release
	// the Emits blocked for room.
	quit chan struct{}
	// done is closed when the recording goroutine has exited.
	done      chan struct{}
	closeOnce sync.Once

	// hand is the batch the recording goroutine took and ctxsInHand their
	// contexts; taken of them are settled, and recN and failN count how.
	hand        []Event
	ctxsInHand  []context.Context
	taken       int
	recN, failN uint64
	handBytes   int
	handAck     *ackBatch
	pause       time.Duration // the next pause before trying again; 0 after a success
}

// ackBatch is how the acknowledged mode's Emits learn what became of the
// events they queued: those taken together in one batch share one.
type ackBatch struct {
	// done is closed once every event of the batch is recorded or failed.
	done chan struct{}
	// errs holds, by position in the batch, the error of each event that
	// failed; nil until one does.
	errs []error
}

// failAt notes that the event at i, of a batch of n, failed with err.
func (b *ackBatch) failAt(i, n int, err error) {
	if b.errs == nil {
		b.errs = make([]error, n)
	}
	b.errs[i] = err
}

// errAt is the error of the event at i; nil when it was recorded. Read it
// only once done is closed.
func (b *ackBatch) errAt(i int) error {
	if b.errs == nil {
		return nil
	}
	return b.errs[i]
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
	if opts.Batch <= 0 {
		opts.Batch = asyncDefaultBatch
	}
	if opts.BufferBytes <= 0 {
		opts.BufferBytes = asyncDefaultBufferBytes
	}
	if opts.Backoff == 0 {
		opts.Backoff = asyncDefaultBackoff
	}
	if opts.CloseWait <= 0 {
		opts.CloseWait = asyncDefaultCloseWait
	}
	if opts.LogEvery <= 0 {
		opts.LogEvery = asyncDefaultLogEvery
	}
	a := &Async{
		next:        next,
		buffer:      opts.Buffer,
		bufferBytes: opts.BufferBytes,
		batch:       opts.Batch,
		maxWait:     opts.MaxWait,
		drop:        opts.Drop,
		onError:     opts.OnError,
		ack:         opts.Acknowledge,
		backoff:     opts.Backoff,
		closeWait:   opts.CloseWait,
		logger:      opts.Logger,
		logEvery:    opts.LogEvery,
		errLate:     fmt.Errorf("events: the event was not written within %v: %w", opts.Acknowledge, ErrUnavailable),
		queue:       make([]Event, 0, opts.Buffer),
		ctxs:        make([]context.Context, 0, opts.Buffer),
		wake:        make(chan struct{}, 1),
		quit:        make(chan struct{}),
		done:        make(chan struct{}),
	}
	a.batcher, _ = next.(BatchSink)
	go a.run()
	return a
}

// Emit validates e and queues it for recording. It returns nil when e was
// accepted; a failure to record it later is reported by Close (and
// OnError). In the acknowledged mode it then waits for e's write, and
// returns nil once e is written, the store's error when e failed, and an
// error wrapping [ErrUnavailable] (or ctx.Err()) when the write did not
// succeed within AsyncOptions.Acknowledge (or the context). It returns the [*FieldError] of an invalid event, ctx.Err()
// for a context already done or done while waiting for room, [ErrDropped]
// when there was no room in time, [ErrClosed] after Close, on a zero Async
// and when there is no sink to record into, and an error wrapping
// ErrClosed once the recording goroutine was stopped.
func (a *Async) Emit(ctx context.Context, e Event) error {
	if a == nil || a.wake == nil {
		return ErrClosed
	}
	if err := a.check(ctx, &e); err != nil {
		a.mu.Lock()
		a.rejected++
		a.mu.Unlock()
		return err
	}
	size := sizeOf(&e)
	// No defer: this is the request path, and each return unlocks.
	a.mu.Lock()
	var (
		b   *ackBatch
		i   int
		err error
	)
	if a.fits(size) && !a.closed {
		b, i = a.enqueue(ctx, &e, size)
	} else if b, i, err = a.full(ctx, &e, size); err != nil {
		return err
	}
	if b == nil {
		return nil
	}
	return a.await(ctx, b, i)
}

// sizeOf is the size of e as BufferBytes counts it: its strings, and a
// fixed overhead for the rest.
func sizeOf(e *Event) int {
	p := &e.Payload
	return asyncEventOverhead + len(e.ID) + len(e.RunID) + len(e.NodeID) + len(e.CausationID) +
		len(e.WorkspaceID) + len(e.Tenant) + len(p.Protocol) + len(p.Outcome) + len(p.Version) +
		len(p.Requested) + len(p.Reason) + len(p.Floor) + len(p.PeerDigest)
}

// fits reports, with a.mu held, whether the buffer has room for an event
// of size: an empty buffer takes any event, so that an event larger than
// BufferBytes is not refused forever.
func (a *Async) fits(size int) bool {
	return a.held < a.buffer && (a.held == 0 || a.heldBytes+size <= a.bufferBytes)
}

// await is the acknowledged mode's wait, once e was queued at i in b: for
// b's write, at most a.ack and never past ctx.
func (a *Async) await(ctx context.Context, b *ackBatch, i int) error {
	a.waiting.Add(1)
	t := time.NewTimer(a.ack)
	var err error
	select {
	case <-b.done:
		err = b.errAt(i)
	case <-t.C:
		err = a.errLate
	case <-ctx.Done():
		err = ctx.Err()
	}
	t.Stop()
	a.waiting.Add(-1)
	if err != nil {
		a.mu.Lock()
		a.unacked++
		a.mu.Unlock()
	}
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

// enqueue accepts e, of size, with a.mu held, and unlocks it. In the
// acknowledged mode it returns the batch e will be written in and e's
// position there; otherwise nil.
func (a *Async) enqueue(ctx context.Context, e *Event, size int) (*ackBatch, int) {
	a.queue = append(a.queue, *e)
	a.ctxs = append(a.ctxs, ctx)
	a.held++
	a.heldBytes += size
	a.queueBytes += size
	a.accepted++
	b, i := a.cur, len(a.queue)-1
	if a.ack > 0 && b == nil {
		b = &ackBatch{done: make(chan struct{})}
		a.cur = b
	}
	wake := a.idle
	a.idle = false
	a.mu.Unlock()
	if wake {
		a.wake <- struct{}{} // only the Emit that saw idle sends: never blocks
	}
	return b, i
}

// full is the slow path of Emit, with a.mu held: the Async is closed or
// its buffer is full. It waits for room unless the options say not to,
// and unlocks a.mu before it returns.
func (a *Async) full(ctx context.Context, e *Event, size int) (*ackBatch, int, error) {
	var t *time.Timer
	for {
		if a.closed {
			a.rejected++
			err := a.stopErr
			a.mu.Unlock()
			return nil, 0, err
		}
		if a.fits(size) {
			b, i := a.enqueue(ctx, e, size)
			return b, i, nil
		}
		if a.drop {
			a.dropLocked()
			return nil, 0, ErrDropped
		}
		if a.room == nil {
			a.room = make(chan struct{})
		}
		room := a.room
		a.mu.Unlock()
		if t == nil {
			t = time.NewTimer(a.maxWait)
			defer t.Stop()
			a.waiting.Add(1)
			defer a.waiting.Add(-1)
		}
		var err error
		select {
		case <-room:
		case <-a.quit:
		case <-ctx.Done():
			err = ctx.Err()
		case <-t.C:
			err = ErrDropped
		}
		a.mu.Lock()
		if err != nil {
			a.dropLocked()
			return nil, 0, err
		}
	}
}

// dropLocked counts a drop, with a.mu held, and unlocks it. The drops are
// logged at most once per logEvery, with their count since the last time.
func (a *Async) dropLocked() {
	a.dropped++
	if a.logger == nil {
		a.mu.Unlock()
		return
	}
	a.droppedLog++
	now := time.Now()
	if now.Sub(a.droppedAt) < a.logEvery {
		a.mu.Unlock()
		return
	}
	n, total := a.droppedLog, a.dropped
	a.droppedLog, a.droppedAt = 0, now
	a.mu.Unlock()
	a.logger.Warn("events: audit events dropped: the buffer is full", "dropped", n, "droppedTotal", total)
}

// stop makes every later Emit, and every Emit blocked for room, return
// err, and wakes the recording goroutine so that it finishes. Only the
// first call's err is kept.
func (a *Async) stop(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return
	}
	a.closed, a.stopErr = true, err
	a.closeBy = time.Now().Add(a.closeWait)
	close(a.quit)
	if a.idle {
		a.idle = false
		a.wake <- struct{}{}
	}
}

// run records the queue until the Async is closed and the queue is empty.
// If the wrapped sink (or OnError) ends the goroutine with runtime.Goexit,
// the deferred call stops the Async and fails what was left, so that
// nothing waits for a goroutine that is gone.
func (a *Async) run() {
	defer close(a.done)
	finished := false
	defer func() {
		if !finished {
			a.abandon()
		}
	}()
	for a.take() {
		if a.batcher != nil {
			a.recordBatches()
		} else {
			a.recordEach(len(a.hand))
		}
		a.settle()
	}
	finished = true
}

// take waits until events are queued and takes them all into hand. It
// reports false once the Async is closed and nothing is left to take.
func (a *Async) take() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for len(a.queue) == 0 {
		if a.closed {
			return false
		}
		a.idle = true
		a.mu.Unlock()
		<-a.wake
		a.mu.Lock()
	}
	if a.spare == nil { // the first take: make the second buffer off the request path
		a.spare, a.spareCtxs = make([]Event, 0, a.buffer), make([]context.Context, 0, a.buffer)
	}
	a.hand, a.ctxsInHand, a.taken = a.queue, a.ctxs, 0
	a.handBytes, a.queueBytes = a.queueBytes, 0
	a.handAck, a.cur = a.cur, nil
	a.queue, a.ctxs = a.spare, a.spareCtxs
	a.spare, a.spareCtxs = nil, nil
	return true
}

// recordBatches hands what is in hand to the BatchSink, a.batch events at
// a time. A batch failed with ErrUnavailable is tried again (see retry),
// or failed whole once retry gives up; one failed otherwise is recorded
// one event at a time, so that an event the store refuses fails alone.
func (a *Async) recordBatches() {
	for a.taken < len(a.hand) {
		end := min(len(a.hand), a.taken+a.batch)
		err := emitBatchSafely(a.batcher, a.hand[a.taken:end])
		if err == nil {
			a.recN += uint64(end - a.taken)
			a.taken, a.pause = end, 0
		} else if !errors.Is(err, ErrUnavailable) {
			a.recordEach(end)
		} else if !a.retry(err) {
			for a.taken < end {
				a.taken++
				a.fail(a.taken-1, err)
			}
		}
	}
}

// retry pauses before the next attempt at a write that failed with err,
// which wraps ErrUnavailable, and reports whether to make it: not when
// retries are off, nor once Close has waited CloseWait. Each pause is
// twice the one before, from 10 ms up to Backoff, until a write succeeds.
// The retries are logged at most once per logEvery.
func (a *Async) retry(err error) bool {
	if a.backoff < 0 {
		return false
	}
	now := time.Now()
	a.mu.Lock()
	if a.closed && !now.Before(a.closeBy) {
		a.mu.Unlock()
		return false
	}
	a.retries++
	a.retriesLog++
	n, pending := a.retriesLog, a.accepted-a.recorded-a.failed
	log := a.logger != nil && now.Sub(a.retriedAt) >= a.logEvery
	if log {
		a.retriesLog, a.retriedAt = 0, now
	}
	a.mu.Unlock()
	if log {
		a.logger.Warn("events: the audit store is unavailable; writing again", "retries", n, "pending", pending, "error", err)
	}
	a.pause = min(max(2*a.pause, asyncFirstBackoff), a.backoff)
	time.Sleep(a.pause)
	return true
}

// recordEach records the events in hand up to end, one Emit each.
func (a *Async) recordEach(end int) {
	for a.taken < end {
		a.recordUntilPanic(end)
	}
}

// recordUntilPanic records the events in hand up to end, one Emit each,
// and returns early after one whose Emit panicked, which fails with a
// [*PanicError]: one deferred recover serves a run of events rather than
// each. A runtime.Goexit is no panic: it goes on to end the goroutine.
func (a *Async) recordUntilPanic(end int) {
	defer a.failPanicked()
	for a.taken < end {
		ctx := a.ctxsInHand[a.taken]
		if ctx.Done() != nil { // only a context that can be cancelled needs detaching
			ctx = context.WithoutCancel(ctx)
		}
		err := a.next.Emit(ctx, a.hand[a.taken])
		if err == nil {
			a.taken++
			a.recN++
			a.pause = 0
			continue
		}
		if errors.Is(err, ErrUnavailable) && a.retry(err) {
			continue
		}
		a.taken++
		a.fail(a.taken-1, err)
	}
}

// failPanicked, deferred, fails the event in hand whose Emit panicked.
func (a *Async) failPanicked() {
	if r := recover(); r != nil {
		a.taken++
		a.fail(a.taken-1, &PanicError{Value: r, Stack: debug.Stack()})
	}
}

// fail counts the event in hand at i as failed, notes err, tells its
// acknowledged Emit, and hands both to OnError.
func (a *Async) fail(i int, err error) {
	a.failN++
	a.noteErr(err)
	if a.handAck != nil {
		a.handAck.failAt(i, len(a.hand), err)
	}
	if a.onError != nil {
		a.callOnError(a.hand[i], err)
	}
}

// settle counts what the recording goroutine did with the events in hand,
// frees their room, and gives the emptied slices back to be the next
// queue.
func (a *Async) settle() {
	// Let the callers' contexts be collected: they may hold a request's
	// values. The events stay until their slots are written again, which
	// bounds them at two buffers' worth and spares a clear per batch.
	clear(a.ctxsInHand)
	a.mu.Lock()
	a.recorded += a.recN
	a.failed += a.failN
	a.held -= len(a.hand)
	a.heldBytes -= a.handBytes
	a.spare, a.spareCtxs = a.hand[:0], a.ctxsInHand[:0]
	if a.room != nil {
		close(a.room)
		a.room = nil
	}
	a.mu.Unlock()
	if a.handAck != nil { // after the counts, so that a caller it frees reads them
		close(a.handAck.done)
	}
	a.hand, a.ctxsInHand, a.recN, a.failN, a.handBytes, a.handAck = nil, nil, 0, 0, 0, nil
}

// abandon is what is left to do when the recording goroutine was ended:
// stop the Async, and fail the events in hand that were not settled and
// everything queued behind them. It counts them all before it calls
// OnError, which may end the goroutine again.
func (a *Async) abandon() {
	a.stop(errAsyncStopped)
	a.noteErr(errAsyncStopped)
	left := a.hand[a.taken:]
	a.mu.Lock()
	// No Emit can queue now, so what is queued is all there will be.
	failAll(a.handAck, a.taken, len(a.hand))
	failAll(a.cur, 0, len(a.queue))
	left = append(left[:len(left):len(left)], a.queue...)
	a.queue, a.ctxs, a.cur = nil, nil, nil
	a.recorded += a.recN
	a.failed += a.failN + uint64(len(left))
	a.held, a.heldBytes, a.queueBytes = 0, 0, 0
	a.mu.Unlock()
	a.hand, a.recN, a.failN, a.handAck = nil, 0, 0, nil
	if a.onError == nil {
		return
	}
	for _, e := range left {
		a.callOnError(e, errAsyncStopped)
	}
}

// failAll fails the events of b from i to n, of a batch of n, with
// errAsyncStopped, and tells their acknowledged Emits; b may be nil.
func failAll(b *ackBatch, i, n int) {
	if b == nil {
		return
	}
	for ; i < n; i++ {
		b.failAt(i, n, errAsyncStopped)
	}
	close(b.done)
}

func (a *Async) noteErr(err error) {
	a.mu.Lock()
	if a.firstErr == nil {
		a.firstErr = err
	}
	a.mu.Unlock()
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
	if a == nil || a.wake == nil {
		return nil
	}
	a.closeOnce.Do(func() {
		a.stop(ErrClosed)
		<-a.done
		if err := closeIfCloser(a.next); err != nil {
			a.noteErr(err)
		}
		a.logUnlogged()
	})
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.firstErr
}

// logUnlogged logs, at Close, the drops and retries that the once per
// logEvery left unlogged.
func (a *Async) logUnlogged() {
	a.mu.Lock()
	dropped, retries := a.droppedLog, a.retriesLog
	a.mu.Unlock()
	if a.logger == nil {
		return
	}
	if dropped != 0 {
		a.logger.Warn("events: audit events dropped: the buffer is full", "dropped", dropped, "droppedTotal", a.Stats().Dropped)
	}
	if retries != 0 {
		a.logger.Warn("events: the audit store was unavailable; written again", "retries", retries)
	}
}

// Durable reports whether a nil from Emit means the event is durably
// stored: in the acknowledged mode (AsyncOptions.Acknowledge) over a sink
// that is [Durable] and says so. Without Acknowledge a nil means only
// queued, in memory, and lost if the process dies.
func (a *Async) Durable() bool {
	if a == nil || a.ack <= 0 {
		return false
	}
	d, ok := a.next.(Durable)
	return ok && d.Durable()
}

// Stats returns the counts so far, read at one instant.
func (a *Async) Stats() AsyncStats {
	if a == nil || a.wake == nil {
		return AsyncStats{}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return AsyncStats{
		Emitted:  a.accepted + a.dropped + a.rejected,
		Accepted: a.accepted,
		Dropped:  a.dropped,
		Rejected: a.rejected,
		Recorded: a.recorded,
		Failed:   a.failed,
		Pending:  a.accepted - a.recorded - a.failed,

		PendingBytes:   uint64(a.heldBytes),
		Waiting:        uint64(a.waiting.Load()),
		Unacknowledged: a.unacked,
		Retries:        a.retries,
	}
}
