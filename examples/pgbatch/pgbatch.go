// Package pgbatch is the audit writer of a busy host: an [events.BatchSink]
// that writes events to PostgreSQL in batches, one transaction and one
// COPY per table each, into the tables of [pgsink] (which it creates
// through [pgsink.New]), so that [pgsink.Sink.RunEvents] and
// [pgsink.Sink.HostEvents] read what it wrote.
//
// # The pipeline
//
// A Writer does no buffering of its own: put an [events.Async] in front of
// it, which keeps the request path off the database and hands the Writer
// what is queued, in the order accepted, a batch at a time:
//
//	w, err := pgbatch.New(ctx, pool, pgbatch.Options{})
//	…
//	audit := events.NewAsync(w, events.AsyncOptions{Batch: 512})
//	defer audit.Close() // writes everything accepted
//
// The Async bounds the wait for room (AsyncOptions.Buffer, MaxWait, Drop),
// counts and refuses every event it does not queue ([events.Async.Stats]),
// reports each event it could not write (AsyncOptions.OnError, Close), and
// records a batch the Writer failed again one event at a time through
// [Writer.Emit], so that one event the database refuses (an event id
// already recorded, say) fails alone and the others are written.
//
// # Batches and sequences
//
// [Writer.EmitBatch] writes a batch of host events alone in one INSERT
// from arrays, a transaction and a round trip to the database: the
// acknowledged mode waits on it, and a transaction of its own would take
// four. It writes any other batch in one transaction: first one
// INSERT … ON CONFLICT DO UPDATE on the counter rows of the batch's runs
// (in run order, so that replicas writing the same runs take the row locks
// in one order and cannot deadlock), which reserves a block of consecutive
// sequences per run, then one COPY of the run events numbered from those
// blocks in the order of the batch, and one COPY of the host events. The
// counter rows stay locked until the commit, and a failed transaction
// rolls its reservation back: as with pgsink, each run is numbered without
// gap or repeat, in commit order, across any number of writers and
// replicas. [Writer.Emit] writes one event the same way, in a transaction
// of its own.
//
// # Failures and outages
//
// A write that fails for want of the database (no connection, a server
// shutting down or restarting, out of connections, a deadlock, a
// timeout) is tried again, Options.Retries times, after a pause that
// starts at 10 ms and doubles each time, and then returned wrapping
// [events.ErrUnavailable], which makes the Async in front try it again,
// with a backoff capped at AsyncOptions.Backoff, until the database is
// back; meanwhile the Async's buffer (AsyncOptions.Buffer and
// BufferBytes) takes the events that come, and drops, counted and
// logged, only past it. A write PostgreSQL refused for what it held (an
// event id already recorded) is not tried again: the Async writes its
// batch one event at a time, and that event fails alone. Every failed
// attempt is counted ([Writer.BatchErrors]).
//
// # What is durable when
//
// A Writer's nil means its transaction committed: the events survive a
// crash of the host, and of the database as far as PostgreSQL keeps its
// commits (synchronous_commit on, the default). The Writer says so
// ([Writer.Durable]). Behind an Async, that promise reaches the caller
// only in the acknowledged mode, which a host requiring the audit runs:
//
//	audit := events.NewAsync(w, events.AsyncOptions{Acknowledge: time.Second})
//
// Each Emit then returns nil once the transaction holding its event
// committed; the Emits that come while a transaction is under way are
// written together in the next one (group commit), so that the database
// sees one transaction per round, not per request. An Emit whose
// transaction failed, or did not commit within the bound, returns an
// error, which a host requiring the audit answers with internal_error;
// its event stays queued and may still be written, so the database may
// hold an event for a decision answered with an error, never the reverse.
// Without Acknowledge, Emit's nil means queued in memory: a crash of the
// host loses what is queued, and a database down for longer than the
// buffer holds loses the drops, which are counted and refused.
package pgbatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/examples/pgsink"
)

// The type of every event the events package carries, and the delivery of
// every host event, as the tables store them.
const (
	eventType = "negotiation.decided"
	delivery  = "durable"
)

const (
	defaultRetries = 3
	// firstPause is the pause before the first retry; each retry doubles
	// it. Both durations are plain nanoseconds rather than products, so
	// that no arithmetic sits outside the code the tests run through.
	firstPause time.Duration = 10_000_000 // 10 ms
	// attemptTimeout bounds one write, so that a Close of the Async in
	// front returns even when the database stops answering.
	attemptTimeout time.Duration = 30_000_000_000 // 30 s
)

// Options configures a [Writer]. The zero value writes in the default
// schema and tries a write that failed for want of the database again 3
// times. The buffer, the batch size,
// the wait for room and the error hook are the [events.AsyncOptions] of
// the Async in front of the Writer.
type Options struct {
	// Schema holds the tables, as in pgsink.Options.
	Schema string
	// Retries is how many times a write that failed for want of the
	// database is tried again; zero or less means 3.
	Retries int
}

// Writer writes events to PostgreSQL, a batch per transaction. Make one
// with [New]; it is safe for concurrent use. It does not own the pool, and
// has nothing to close.
type Writer struct {
	pool        *pgxpool.Pool
	runs        pgx.Identifier
	hosts       pgx.Identifier
	reserve     string
	insertHosts string
	retries     int

	batchErrs atomic.Uint64
}

// New creates the tables when they do not exist (through pgsink.New) and
// returns the Writer that writes into them.
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
	if opts.Retries <= 0 {
		opts.Retries = defaultRetries
	}
	return &Writer{
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
		// In the batch's order, so that the positions are too.
		insertHosts: `INSERT INTO ` + id("wopneg_host_events").Sanitize() + ` (event_id, type, "timestamp", delivery, workspace_id, payload, tenant)
			SELECT i, $1, t, $2, w, p::jsonb, n FROM unnest($3::text[], $4::timestamptz[], $5::text[], $6::text[], $7::text[])
				WITH ORDINALITY AS u(i, t, w, p, n, o) ORDER BY o`,
		retries: opts.Retries,
	}, nil
}

// Emit validates e and writes it in a transaction of its own, as a batch
// of one: see [Writer.EmitBatch]. An invalid event is refused with its
// [*events.FieldError] and nothing is written.
func (w *Writer) Emit(ctx context.Context, e events.Event) error {
	return w.EmitBatch(ctx, []events.Event{e})
}

// EmitBatch writes batch in one transaction, its run events numbered in
// the order of batch, or writes none of it and returns an error: without
// trying, [events.ErrClosed] from a nil or zero Writer, ctx.Err() for a
// context already done, or the [*events.FieldError] of the first invalid
// event; otherwise the error of the last attempt, wrapping
// [events.ErrUnavailable] when the database was not there to write to
// (see the package doc). It stops trying once ctx is done, and after the
// first attempt PostgreSQL refused. An empty batch writes nothing. It
// does not keep batch.
func (w *Writer) EmitBatch(ctx context.Context, batch []events.Event) error {
	if w == nil || w.pool == nil {
		return events.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r, err := rowsOf(batch)
	if err != nil || len(batch) == 0 {
		return err
	}
	pause := firstPause
	for range w.retries {
		if err = w.write(ctx, r); err == nil {
			return nil
		}
		w.batchErrs.Add(1)
		if !unavailable(err) || !sleep(ctx, pause) {
			return marked(ctx, err)
		}
		pause *= 2
	}
	if err = w.write(ctx, r); err != nil {
		w.batchErrs.Add(1)
	}
	return marked(ctx, err)
}

// unavailable reports whether err says the database was not there to
// write to, so that trying again later may succeed: an error with no
// answer from PostgreSQL (no connection, a connection lost, a timeout),
// or one whose SQLSTATE class says so: 08 connection exception, 40
// transaction rollback (a serialization failure, a deadlock), 53
// insufficient resources, 57 operator intervention (a shutdown, a
// restart), 58 system error. Anything else PostgreSQL answered is about
// what was sent, and would fail again.
func unavailable(err error) bool {
	var pg *pgconn.PgError
	if !errors.As(err, &pg) {
		return true
	}
	for _, class := range unavailableClasses {
		if strings.HasPrefix(pg.Code, class) {
			return true
		}
	}
	return false
}

// unavailableClasses are the SQLSTATE classes of unavailable.
var unavailableClasses = []string{"08", "40", "53", "57", "58"}

// marked wraps err in events.ErrUnavailable when it is unavailable and not
// the end of ctx, the caller's own doing.
func marked(ctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil || !unavailable(err) {
		return err
	}
	return fmt.Errorf("%w: %w", events.ErrUnavailable, err)
}

// sleep pauses for d, and reports false when ctx ended the pause.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Durable reports whether a nil from the Writer means committed: true,
// but for a nil or zero Writer, which writes nothing. See the package doc
// for what that promises, and what reaches a caller behind an Async.
func (w *Writer) Durable() bool { return w != nil && w.pool != nil }

// BatchErrors is how many writes have failed, retries included: the write
// errors a host graphs, while the Async's Stats().Failed counts the events
// given up on.
func (w *Writer) BatchErrors() uint64 { return w.batchErrs.Load() }

// rows is a batch as the statements write it: run events and host events
// apart, and how many events each run has. A run row's sequence is set by
// number, at each attempt. The host events are in columns, the arrays of
// insertHosts.
type rows struct {
	runs   [][]any
	hosts  hostColumns
	counts map[string]int64
}

// hostColumns are host events by column.
type hostColumns struct {
	ids, payloads, tenants []string
	times                  []time.Time
	workspaces             []*string
}

// row is the COPY row of the i-th host event.
func (c *hostColumns) row(i int) ([]any, error) {
	return []any{c.ids[i], eventType, c.times[i], delivery, c.workspaces[i], json.RawMessage(c.payloads[i]), c.tenants[i]}, nil
}

// write writes rows in one transaction: host events alone in one
// statement, anything else in a transaction of its own.
func (w *Writer) write(ctx context.Context, r *rows) error {
	ctx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	hosts := len(r.hosts.ids)
	if len(r.runs) == 0 {
		c := &r.hosts
		if _, err := w.pool.Exec(ctx, w.insertHosts, eventType, delivery, c.ids, c.times, c.workspaces, c.payloads, c.tenants); err != nil {
			return fmt.Errorf("pgbatch: writing %d host events: %w", hosts, err)
		}
		return nil
	}
	return pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		if err := w.number(ctx, tx, r); err != nil {
			return err
		}
		if _, err := tx.CopyFrom(ctx, w.runs, runColumns, pgx.CopyFromRows(r.runs)); err != nil {
			return fmt.Errorf("pgbatch: writing %d run events: %w", len(r.runs), err)
		}
		if hosts != 0 {
			if _, err := tx.CopyFrom(ctx, w.hosts, hostNames, pgx.CopyFromSlice(hosts, r.hosts.row)); err != nil {
				return fmt.Errorf("pgbatch: writing %d host events: %w", hosts, err)
			}
		}
		return nil
	})
}

// number reserves a block of sequences for each run of r and writes each
// run event's sequence into its row, in the order of the batch.
func (w *Writer) number(ctx context.Context, tx pgx.Tx, r *rows) error {
	ids := make([]string, 0, len(r.counts))
	for id := range r.counts {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	ns := make([]int64, len(ids))
	for i, id := range ids {
		ns[i] = r.counts[id]
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
		next[id] = end - r.counts[id]
		return nil
	})
	if err != nil {
		return fmt.Errorf("pgbatch: reserving sequences: %w", err)
	}
	for _, row := range r.runs {
		run := row[0].(string)
		row[1] = next[run]
		next[run]++
	}
	return nil
}

var (
	runColumns = []string{"run_id", "sequence", "event_id", "type", "timestamp", "schema_version", "node_id", "engine_version", "causation_id", "payload"}
	hostNames  = []string{"event_id", "type", "timestamp", "delivery", "workspace_id", "payload", "tenant"}
)

// rowsOf validates every event of batch and makes its COPY row.
func rowsOf(batch []events.Event) (*rows, error) {
	r := &rows{counts: make(map[string]int64)}
	for i := range batch {
		e := &batch[i]
		if err := e.Validate(); err != nil {
			return nil, err
		}
		payload, err := json.Marshal(e.Payload)
		if err != nil {
			return nil, fmt.Errorf("pgbatch: encoding the payload of %s: %w", e.ID, err)
		}
		if e.RunID == "" {
			c := &r.hosts
			c.ids, c.times, c.workspaces = append(c.ids, e.ID), append(c.times, e.Time), append(c.workspaces, nullable(e.WorkspaceID))
			c.payloads, c.tenants = append(c.payloads, string(payload)), append(c.tenants, e.Tenant)
			continue
		}
		var engine *int64
		if e.HasEngineVersion {
			engine = &e.EngineVersion
		}
		r.counts[e.RunID]++
		r.runs = append(r.runs, []any{e.RunID, int64(0), e.ID, eventType, e.Time, int32(e.SchemaVersion),
			nullable(e.NodeID), engine, nullable(e.CausationID), json.RawMessage(payload)})
	}
	return r, nil
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// compile-time check that Writer records batches, durably.
var (
	_ events.BatchSink = (*Writer)(nil)
	_ events.Durable   = (*Writer)(nil)
)
