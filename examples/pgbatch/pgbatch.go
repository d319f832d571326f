// Package pgbatch is the audit writer of a busy host: an [events.Sink]
// that buffers events in process, as [events.Async] does, and writes them
// to PostgreSQL in batches, one transaction and one COPY per table each,
// into the tables of [pgsink] (which it creates through [pgsink.New]), so
// that [pgsink.Sink.RunEvents] and [pgsink.Sink.HostEvents] read what it
// wrote.
//
// # The request path
//
// Emit keeps the guarantees of [events.Async]: it validates the event in
// full, queues it on a bounded buffer, waits for room at most MaxWait
// (never past the context), or not at all under Options.Drop, and refuses — and counts — every event it does not queue,
// so that a policy requiring the audit fails closed on a drop. Close stops
// accepting, writes everything accepted, and returns the first error.
//
// # Batches and sequences
//
// One goroutine takes what is queued, up to Options.Batch events, and
// writes it in one transaction: first one INSERT … ON CONFLICT DO UPDATE
// on the counter rows of the batch's runs (in run order, so that replicas
// writing the same runs take the row locks in one order and cannot
// deadlock), which reserves a block of consecutive sequences per run,
// then one COPY of the run events numbered from those blocks in the order
// they were accepted, and one COPY of the host events. The counter rows
// stay locked until the commit, and a failed transaction rolls its
// reservation back: as with pgsink, each run is numbered without gap or
// repeat, in commit order, across any number of writers and replicas.
//
// # Failures
//
// A batch that fails is retried, Options.Retries times, with a doubling
// pause; if it still fails, its events are written one per transaction,
// so that one event the database refuses (an event id already recorded,
// say) fails alone. Each event that fails is counted as Failed, handed to
// OnError, and its error is the one Close returns first: nothing accepted
// is lost without a count and an error.
package pgbatch

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/examples/pgsink"
)

// Defaults of the zero [Options].
// The type of every event the events package carries, and the delivery of
// every host event, as the tables store them.
const (
	eventType = "negotiation.decided"
	delivery  = "durable"
)

const (
	defaultBatch   = 512
	defaultRetries = 3
	defaultMaxWait = 100 * time.Millisecond
	// firstPause is the pause before the first retry; each retry doubles it.
	firstPause = 10 * time.Millisecond
	// attemptTimeout bounds one write, so that Close returns even when
	// the database stops answering.
	attemptTimeout = 30 * time.Second
)

// Options configures a [Writer]. The zero value buffers
// 1024 events, blocks at most 100 ms for room, and
// writes batches of up to 512 events, each retried 3 times.
type Options struct {
	// Schema holds the tables, as in pgsink.Options.
	Schema string
	// Buffer is how many accepted events may wait to be written; zero or
	// less means 1024.
	Buffer int
	// Batch is the most events written in one transaction; zero or less
	// means 512.
	Batch int
	// MaxWait bounds how long Emit waits for room in a full buffer; zero
	// or less means 100 ms.
	MaxWait time.Duration
	// Drop makes Emit refuse an event at once, with events.ErrDropped,
	// when the buffer is full, instead of waiting.
	Drop bool
	// Retries is how many times a failed batch is written again before
	// its events are written one by one; zero or less means 3.
	Retries int
	// OnError, when set, is called from the writing goroutine with each
	// accepted event that could not be written.
	OnError func(events.Event, error)
}

// Writer is the batching audit writer. Make one with [New]; it is safe for
// concurrent use. It does not own the pool.
type Writer struct {
	pool    *pgxpool.Pool
	runs    pgx.Identifier
	hosts   pgx.Identifier
	reserve string

	batch   int
	retries int
	maxWait time.Duration
	drop    bool
	onError func(events.Event, error)

	queue chan events.Event
	// mu makes closing queue safe: Emit holds it for reading from its
	// check of closed to the end of its send; Close takes it for writing.
	mu     sync.RWMutex
	closed bool
	quit   chan struct{}
	done   chan struct{}

	accepted, dropped, rejected, recorded, failed atomic.Uint64
	batchErrs                                     atomic.Uint64

	closeOnce sync.Once
	errMu     sync.Mutex
	firstErr  error
}

// New creates the tables when they do not exist (through pgsink.New) and
// starts the goroutine that writes into them. Call Close to stop it.
func New(ctx context.Context, pool *pgxpool.Pool, opts Options) (*Writer, error) {
	if _, err := pgsink.New(ctx, pool, pgsink.Options{Schema: opts.Schema}); err != nil {
		return nil, fmt.Errorf("pgbatch: %w", err)
	}
	id := func(table string) pgx.Identifier {
		if opts.Schema == "" {
			return pgx.Identifier{table}
		}
		return pgx.Identifier{opts.Schema, table}
	}
	if opts.Buffer <= 0 {
		opts.Buffer = 1024
	}
	if opts.Batch <= 0 {
		opts.Batch = defaultBatch
	}
	if opts.Retries <= 0 {
		opts.Retries = defaultRetries
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = defaultMaxWait
	}
	w := &Writer{
		pool:  pool,
		runs:  id("wopneg_run_events"),
		hosts: id("wopneg_host_events"),
		// The insert value is the number of events, and so the next
		// sequence of a new run; the update adds it to the next sequence
		// of a known one. Either way the block starts at the returned
		// next minus the count.
		reserve: `INSERT INTO ` + id("wopneg_run_sequences").Sanitize() + ` AS s (run_id, next)
			SELECT r, n FROM unnest($1::text[], $2::bigint[]) AS u(r, n) ORDER BY r
			ON CONFLICT (run_id) DO UPDATE SET next = s.next + excluded.next
			RETURNING s.run_id, s.next`,
		batch:   opts.Batch,
		retries: opts.Retries,
		maxWait: opts.MaxWait,
		drop:    opts.Drop,
		onError: opts.OnError,
		queue:   make(chan events.Event, opts.Buffer),
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	go w.run()
	return w, nil
}

// Emit validates e and queues it for writing. It returns nil when e was
// accepted, the [*events.FieldError] of an invalid event, ctx.Err() for a
// context done before or while waiting for room, [events.ErrDropped] when
// there was no room within the policy, and [events.ErrClosed] after Close.
func (w *Writer) Emit(ctx context.Context, e events.Event) error {
	if w == nil || w.queue == nil {
		return events.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		w.rejected.Add(1)
		return err
	}
	if err := e.Validate(); err != nil {
		w.rejected.Add(1)
		return err
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		w.rejected.Add(1)
		return events.ErrClosed
	}
	select {
	case w.queue <- e:
		w.accepted.Add(1)
		return nil
	default:
	}
	if w.drop {
		w.dropped.Add(1)
		return events.ErrDropped
	}
	t := time.NewTimer(w.maxWait)
	defer t.Stop()
	select {
	case w.queue <- e:
		w.accepted.Add(1)
		return nil
	case <-ctx.Done():
		w.dropped.Add(1)
		return ctx.Err()
	case <-t.C:
		w.dropped.Add(1)
		return events.ErrDropped
	case <-w.quit:
		w.rejected.Add(1)
		return events.ErrClosed
	}
}

// Close stops accepting events, writes every accepted one, and returns the
// first error of a write that failed. Later calls return the same error.
func (w *Writer) Close() error {
	if w == nil || w.queue == nil {
		return nil
	}
	w.closeOnce.Do(func() {
		close(w.quit)
		w.mu.Lock()
		w.closed = true
		w.mu.Unlock()
		close(w.queue)
		<-w.done
	})
	w.errMu.Lock()
	defer w.errMu.Unlock()
	return w.firstErr
}

// Stats returns the counts so far, as events.Async counts: Emitted =
// Accepted + Dropped + Rejected, and after Close, Accepted = Recorded +
// Failed.
func (w *Writer) Stats() events.AsyncStats {
	if w == nil {
		return events.AsyncStats{}
	}
	s := events.AsyncStats{
		Accepted: w.accepted.Load(),
		Dropped:  w.dropped.Load(),
		Rejected: w.rejected.Load(),
		Recorded: w.recorded.Load(),
		Failed:   w.failed.Load(),
	}
	s.Emitted = s.Accepted + s.Dropped + s.Rejected
	s.Pending = s.Accepted - min(s.Accepted, s.Recorded+s.Failed)
	return s
}

// BatchErrors is how many batch writes have failed, retries included: the
// write errors a host graphs, while Stats().Failed counts the events
// given up on.
func (w *Writer) BatchErrors() uint64 { return w.batchErrs.Load() }

// run writes the queue, a batch at a time, until Close has closed it and
// it is empty.
func (w *Writer) run() {
	defer close(w.done)
	batch := make([]events.Event, 0, w.batch)
	for e := range w.queue {
		batch = append(batch[:0], e)
	fill:
		for len(batch) < w.batch {
			select {
			case e, ok := <-w.queue:
				if !ok {
					break fill
				}
				batch = append(batch, e)
			default:
				break fill
			}
		}
		w.settle(batch)
		clear(batch) // let the strings be collected
	}
}

// settle writes batch, retrying, then one event at a time, and counts
// every event as recorded or failed.
func (w *Writer) settle(batch []events.Event) {
	err := w.retry(batch)
	if err == nil {
		w.recorded.Add(uint64(len(batch)))
		return
	}
	if len(batch) == 1 {
		w.fail(batch[0], err)
		return
	}
	for i := range batch {
		w.settle(batch[i : i+1])
	}
}

// retry writes batch, and again after a doubling pause while it fails, at
// most 1 + w.retries times.
func (w *Writer) retry(batch []events.Event) error {
	pause := firstPause
	var err error
	for range 1 + w.retries {
		if err = w.write(batch); err == nil {
			return nil
		}
		w.batchErrs.Add(1)
		time.Sleep(pause)
		pause *= 2
	}
	return err
}

// write writes batch in one transaction.
func (w *Writer) write(batch []events.Event) error {
	ctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
	defer cancel()
	runRows, hostRows, counts, err := rowsOf(batch)
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		if len(runRows) > 0 {
			if err := w.number(ctx, tx, runRows, counts); err != nil {
				return err
			}
			if _, err := tx.CopyFrom(ctx, w.runs, runColumns, pgx.CopyFromRows(runRows)); err != nil {
				return fmt.Errorf("pgbatch: writing %d run events: %w", len(runRows), err)
			}
		}
		if len(hostRows) > 0 {
			if _, err := tx.CopyFrom(ctx, w.hosts, hostColumns, pgx.CopyFromRows(hostRows)); err != nil {
				return fmt.Errorf("pgbatch: writing %d host events: %w", len(hostRows), err)
			}
		}
		return nil
	})
}

// number reserves a block of sequences for each run of the batch and
// writes each run event's sequence into its row, in the order accepted.
func (w *Writer) number(ctx context.Context, tx pgx.Tx, rows [][]any, counts map[string]int64) error {
	ids := make([]string, 0, len(counts))
	for id := range counts {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	ns := make([]int64, len(ids))
	for i, id := range ids {
		ns[i] = counts[id]
	}
	res, err := tx.Query(ctx, w.reserve, ids, ns)
	if err != nil {
		return fmt.Errorf("pgbatch: reserving sequences: %w", err)
	}
	next := make(map[string]int64, len(ids))
	var (
		id  string
		end int64
	)
	_, err = pgx.ForEachRow(res, []any{&id, &end}, func() error {
		next[id] = end - counts[id]
		return nil
	})
	if err != nil {
		return fmt.Errorf("pgbatch: reserving sequences: %w", err)
	}
	for _, row := range rows {
		run := row[0].(string)
		row[1] = next[run]
		next[run]++
	}
	return nil
}

var (
	runColumns  = []string{"run_id", "sequence", "event_id", "type", "timestamp", "schema_version", "node_id", "engine_version", "causation_id", "payload"}
	hostColumns = []string{"event_id", "type", "timestamp", "delivery", "workspace_id", "payload", "tenant"}
)

// rowsOf is the COPY rows of batch, run events and host events apart, and
// how many events each run has. A run row's sequence is set by number.
func rowsOf(batch []events.Event) (runRows, hostRows [][]any, counts map[string]int64, err error) {
	counts = make(map[string]int64)
	for _, e := range batch {
		payload, err := json.Marshal(e.Payload)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("pgbatch: encoding the payload of %s: %w", e.ID, err)
		}
		if e.RunID == "" {
			hostRows = append(hostRows, []any{e.ID, eventType, e.Time, delivery, nullable(e.WorkspaceID), json.RawMessage(payload), e.Tenant})
			continue
		}
		var engine *int64
		if e.HasEngineVersion {
			engine = &e.EngineVersion
		}
		counts[e.RunID]++
		runRows = append(runRows, []any{e.RunID, int64(0), e.ID, eventType, e.Time, int32(e.SchemaVersion),
			nullable(e.NodeID), engine, nullable(e.CausationID), json.RawMessage(payload)})
	}
	return runRows, hostRows, counts, nil
}

// fail counts e as failed, keeps the first error for Close and hands e to
// OnError, whose panic would otherwise stop the writing of every event
// queued behind it.
func (w *Writer) fail(e events.Event, err error) {
	w.failed.Add(1)
	w.errMu.Lock()
	if w.firstErr == nil {
		w.firstErr = err
	}
	w.errMu.Unlock()
	if w.onError != nil {
		func() {
			defer func() { _ = recover() }()
			w.onError(e, err)
		}()
	}
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// compile-time check that Writer is a sink.
var _ events.Sink = (*Writer)(nil)
