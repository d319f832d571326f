package pgbatch_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/examples/internal/pgtest"
	"github.com/wopneg/wopneg/examples/pgbatch"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
)

// reader returns a function that reads back every event in schema.
func reader(t testing.TB, pool *pgxpool.Pool, schema string) func() []events.Event {
	return func() []events.Event { return pgtest.All(t, pool, schema) }
}

func newWriter(t testing.TB, pool *pgxpool.Pool, opts pgbatch.Options) *pgbatch.Writer {
	t.Helper()
	w, err := pgbatch.New(context.Background(), pool, opts)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// newAsync is the pipeline of the package doc: an events.Async in front of
// w, closed when the test ends.
func newAsync(t testing.TB, w *pgbatch.Writer, opts events.AsyncOptions) *events.Async {
	t.Helper()
	a := events.NewAsync(w, opts)
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// failing returns a pool on which every connection from now on fails
// with fault, and a Writer on it whose tables were made before.
func failing(t *testing.T, fault error, opts pgbatch.Options) *pgbatch.Writer {
	t.Helper()
	var fail atomic.Bool
	pool := pgtest.Connect(t, func(context.Context, *pgx.Conn) (bool, error) {
		if fail.Load() {
			return true, fault
		}
		return true, nil
	})
	opts.Schema = pgtest.Schema(t, pool)
	w := newWriter(t, pool, opts)
	pool.Reset() // every connection from now on is a new one, which fails
	fail.Store(true)
	t.Cleanup(func() { fail.Store(false) })
	return w
}

func runEvent(t testing.TB, run string, i int) events.Event {
	t.Helper()
	e, err := events.NewRunEvent(run, pgtest.Payload(i))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// One EmitBatch numbers each run's events in the order of the batch,
// following what earlier batches and single Emits reserved, and writes its
// host events beside them. (First in the file: a Writer that numbers a
// batch wrongly still passes the tests below, slowly, through the Async's
// one-by-one fallback.)
func TestEmitBatchNumbersInBatchOrder(t *testing.T) {
	pool := pgtest.Connect(t, nil)
	schema := pgtest.Schema(t, pool)
	w := newWriter(t, pool, pgbatch.Options{Schema: schema})
	ctx := context.Background()
	a, b := "acme/batch-order-a-0123456789", "acme/batch-order-b-0123456789"
	host, err := events.NewHostEvent("ws-1", pgtest.Payload(99))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Emit(ctx, runEvent(t, b, 0)); err != nil {
		t.Fatal(err)
	}
	batch := []events.Event{runEvent(t, a, 1), runEvent(t, b, 2), host, runEvent(t, a, 3), runEvent(t, b, 4), runEvent(t, a, 5)}
	if err := w.EmitBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if err := w.EmitBatch(ctx, []events.Event{runEvent(t, a, 6)}); err != nil {
		t.Fatal(err)
	}
	got := make(map[string][]int64)
	hosts := 0
	for _, e := range pgtest.All(t, pool, schema) {
		if e.RunID == "" {
			hosts++
			if e.ID != host.ID {
				t.Errorf("host event %s, want %s", e.ID, host.ID)
			}
			continue
		}
		got[e.RunID] = append(got[e.RunID], e.Sequence)
		if want := slices.IndexFunc(batch, func(b events.Event) bool { return b.ID == e.ID }); want >= 0 && batch[want].RunID != e.RunID {
			t.Errorf("event %s read back on run %s", e.ID, e.RunID)
		}
	}
	if hosts != 1 {
		t.Errorf("%d host events, want 1", hosts)
	}
	if !slices.Equal(got[a], []int64{0, 1, 2, 3}) || !slices.Equal(got[b], []int64{0, 1, 2}) {
		t.Errorf("sequences %v, want a: 0…3 and b: 0…2", got)
	}
	if n := w.BatchErrors(); n != 0 {
		t.Errorf("BatchErrors = %d after writes that succeeded", n)
	}
}

// The Writer keeps the events.Sink contract of every sink, alone (each
// Emit a transaction) and behind an events.Async (a batch at a time).
func TestConformance(t *testing.T) {
	pool := pgtest.Connect(t, nil)
	for _, async := range []bool{false, true} {
		t.Run(map[bool]string{false: "Writer", true: "Async"}[async], func(t *testing.T) {
			negotiatetest.TestSink(t, func(t *testing.T, fault error) (events.Sink, func() []events.Event) {
				var w *pgbatch.Writer
				var read func() []events.Event
				if fault != nil {
					w = failing(t, fault, pgbatch.Options{Retries: 1})
				} else {
					schema := pgtest.Schema(t, pool)
					w, read = newWriter(t, pool, pgbatch.Options{Schema: schema}), reader(t, pool, schema)
				}
				if async {
					return newAsync(t, w, events.AsyncOptions{Batch: 5}), read
				}
				return w, read
			})
		})
	}
}

// Three writers — three replicas — with small batches on the same ten runs:
// each run is numbered 0…n−1 with every event once, and each writer's
// events of a run keep the order it accepted them in.
func TestReplicasNumberEachRunWithoutGaps(t *testing.T) {
	const replicas, perReplica, runs = 3, 2000, 10
	pool := pgtest.Connect(t, nil)
	schema := pgtest.Schema(t, pool)
	read := reader(t, pool, schema)
	runIDs := make([]string, runs)
	for i := range runIDs {
		runIDs[i] = fmt.Sprintf("acme/batch-load-%08d", i)
	}
	emitted := make([][]string, replicas)
	var wg sync.WaitGroup
	for r := range replicas {
		w := newAsync(t, newWriter(t, pgtest.Connect(t, nil), pgbatch.Options{Schema: schema}),
			events.AsyncOptions{Batch: 7 + 50*r, MaxWait: time.Minute})
		wg.Go(func() {
			ctx := context.Background()
			for i := range perReplica {
				e := runEvent(t, runIDs[(r+i)%runs], i)
				if i%10 == 9 {
					var err error
					if e, err = events.NewHostEvent("ws-1", pgtest.Payload(i)); err != nil {
						t.Error(err)
						return
					}
				}
				if err := w.Emit(ctx, e); err != nil {
					t.Errorf("replica %d, event %d: %v", r, i, err)
					return
				}
				emitted[r] = append(emitted[r], e.ID)
			}
			if err := w.Close(); err != nil {
				t.Errorf("replica %d: Close: %v", r, err)
			}
			if s := w.Stats(); s.Recorded != perReplica || s.Failed != 0 || s.Pending != 0 {
				t.Errorf("replica %d: %+v, want every event recorded", r, s)
			}
		})
	}
	wg.Wait()

	got := read()
	position := make(map[string]int)
	for r := range emitted {
		for i, id := range emitted[r] {
			position[id] = r*perReplica + i
		}
	}
	byRun := make(map[string][]events.Event)
	var ids []string
	for _, e := range got {
		byRun[e.RunID] = append(byRun[e.RunID], e)
		ids = append(ids, e.ID)
	}
	for _, run := range runIDs {
		last := make(map[int]int) // replica → last position seen
		for i, e := range byRun[run] {
			if n, ok := e.Sequence, e.HasSequence; !ok || n != int64(i) {
				t.Fatalf("run %s: position %d holds sequence %d: want 0…n−1 with no gap or repeat", run, i, n)
			}
			p := position[e.ID]
			if prev, ok := last[p/perReplica]; ok && prev > p {
				t.Fatalf("run %s: replica %d's event %d comes after its event %d", run, p/perReplica, prev%perReplica, p%perReplica)
			}
			last[p/perReplica] = p
		}
	}
	hosts := byRun[""]
	if len(hosts) != replicas*perReplica/10 {
		t.Errorf("%d host events, want %d", len(hosts), replicas*perReplica/10)
	}
	want := slices.Concat(emitted...)
	slices.Sort(want)
	slices.Sort(ids)
	if !slices.Equal(ids, want) {
		t.Errorf("read back %d events, emitted %d: not the same set", len(ids), len(want))
	}
}

// An event the database refuses (its id is already recorded) fails alone:
// the Writer fails its batch, the Async writes the batch again one event
// at a time, and the rest of the batch is written; the refused event is
// counted as failed, handed to OnError, and Close reports it.
func TestRefusedEventFailsAlone(t *testing.T) {
	pool := pgtest.Connect(t, nil)
	schema := pgtest.Schema(t, pool)
	read := reader(t, pool, schema)
	var handed []string
	pw := newWriter(t, pool, pgbatch.Options{Schema: schema, Retries: 1})
	w := newAsync(t, pw, events.AsyncOptions{OnError: func(e events.Event, err error) {
		handed = append(handed, e.ID)
		panic("OnError's panic must not stop the writer")
	}})
	run := "acme/batch-dup-0123456789abcdef"
	first := runEvent(t, run, 0)
	ctx := context.Background()
	if err := w.Emit(ctx, first); err != nil {
		t.Fatal(err)
	}
	for w.Stats().Pending > 0 { // first is written before the batch that repeats it
		time.Sleep(time.Millisecond)
	}
	batch := []events.Event{runEvent(t, run, 1), first, runEvent(t, run, 2)}
	for _, e := range batch {
		if err := w.Emit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	err := w.Close()
	if err == nil || !strings.Contains(err.Error(), first.ID) && !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("Close = %v, want the database's refusal of the repeated event", err)
	}
	if s := w.Stats(); s.Recorded != 3 || s.Failed != 1 || s.Accepted != 4 {
		t.Errorf("Stats = %+v, want 3 recorded, 1 failed", s)
	}
	if !slices.Equal(handed, []string{first.ID}) {
		t.Errorf("OnError got %v, want the repeated event alone", handed)
	}
	// Whatever batch the repeated event was taken in, that batch failed
	// once, and so did the event alone: a refusal is not tried again.
	if n := pw.BatchErrors(); n != 2 {
		t.Errorf("BatchErrors = %d, want 2: the failed batch and the refused event, each tried once", n)
	}
	got := read()
	if len(got) != 3 {
		t.Fatalf("read back %d events, want 3", len(got))
	}
	for i, e := range got {
		if n := e.Sequence; !e.HasSequence || n != int64(i) {
			t.Errorf("position %d holds sequence %d: the refused event left a gap", i, n)
		}
	}
	if got[1].ID != batch[0].ID || got[2].ID != batch[2].ID {
		t.Errorf("the batch's events came back out of order")
	}
}

// A batch that fails for a moment is retried and written, once.
func TestFailedBatchIsRetried(t *testing.T) {
	var fails atomic.Int32
	fault := errors.New("injected: connection refused")
	pool := pgtest.Connect(t, func(context.Context, *pgx.Conn) (bool, error) {
		if fails.Add(-1) >= 0 {
			return true, fault
		}
		return true, nil
	})
	schema := pgtest.Schema(t, pool)
	read := reader(t, pool, schema)
	pw := newWriter(t, pool, pgbatch.Options{Schema: schema, Retries: 3})
	w := newAsync(t, pw, events.AsyncOptions{})
	pool.Reset()
	fails.Store(2)
	for i := range 5 {
		if err := w.Emit(context.Background(), runEvent(t, "acme/batch-retry-0123456789", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close = %v, want the retries to have written the batch", err)
	}
	if got := len(read()); got != 5 {
		t.Errorf("read back %d events, want 5", got)
	}
	if n := pw.BatchErrors(); n < 1 || n > 2 {
		t.Errorf("BatchErrors = %d, want the failed attempts counted", n)
	}
}

// New refuses a missing pool, and a schema the database refuses.
func TestNewRefuses(t *testing.T) {
	if _, err := pgbatch.New(context.Background(), nil, pgbatch.Options{}); err == nil {
		t.Error("New(nil pool) succeeded")
	}
	pool := pgtest.Connect(t, nil)
	if _, err := pgbatch.New(context.Background(), pool, pgbatch.Options{Schema: "pg_catalog"}); err == nil {
		t.Error("New in pg_catalog succeeded")
	}
}

// A write that fails for want of the database is tried again
// Options.Retries times (3 when zero), after a pause that starts at 10 ms
// and doubles, and its error then wraps events.ErrUnavailable; one that
// PostgreSQL refused for what was sent is tried once, and does not. Every
// attempt counts in BatchErrors, and the last one's error is returned.
func TestRetries(t *testing.T) {
	refused := &pgconn.PgError{Code: "23505", Message: "injected: duplicate key"}
	for _, tc := range []struct {
		name        string
		fault       error
		retries     int
		attempts    uint64
		pauses      time.Duration
		unavailable bool
	}{
		{"no answer, default retries", errors.New("injected: connection refused"), 0, 4, (10 + 20 + 40) * time.Millisecond, true},
		{"no answer, 4 retries", errors.New("injected: connection refused"), 4, 5, (10 + 20 + 40 + 80) * time.Millisecond, true},
		{"shutting down", &pgconn.PgError{Code: "57P01", Message: "injected: terminating connection due to administrator command"}, 1, 2, 10 * time.Millisecond, true},
		{"connection exception", &pgconn.PgError{Code: "08006"}, 1, 2, 0, true},
		{"deadlock", &pgconn.PgError{Code: "40P01"}, 1, 2, 0, true},
		{"too many connections", &pgconn.PgError{Code: "53300"}, 1, 2, 0, true},
		{"system error", &pgconn.PgError{Code: "58030"}, 1, 2, 0, true},
		{"duplicate", refused, 3, 1, 0, false},
		{"no SQLSTATE", &pgconn.PgError{Code: "5"}, 3, 1, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := failing(t, tc.fault, pgbatch.Options{Retries: tc.retries})
			start := time.Now()
			err := w.EmitBatch(context.Background(), []events.Event{runEvent(t, "acme/batch-retries-0123456789", 0)})
			if !errors.Is(err, tc.fault) {
				t.Errorf("EmitBatch = %v, want the fault", err)
			}
			if errors.Is(err, events.ErrUnavailable) != tc.unavailable {
				t.Errorf("EmitBatch = %v: wraps events.ErrUnavailable %v, want %v", err, !tc.unavailable, tc.unavailable)
			}
			if took := time.Since(start); took < tc.pauses {
				t.Errorf("EmitBatch gave up after %v, want at least %v of pauses", took, tc.pauses)
			}
			if n := w.BatchErrors(); n != tc.attempts {
				t.Errorf("BatchErrors = %d, want %d attempts", n, tc.attempts)
			}
		})
	}
}

// A Writer is durable: its nil means committed; a nil or zero one writes
// nothing, and is not.
func TestDurable(t *testing.T) {
	if (*pgbatch.Writer)(nil).Durable() || new(pgbatch.Writer).Durable() {
		t.Error("a nil or zero Writer says it is durable")
	}
	pool := pgtest.Connect(t, nil)
	if w := newWriter(t, pool, pgbatch.Options{Schema: pgtest.Schema(t, pool)}); !w.Durable() {
		t.Error("a Writer says it is not durable")
	}
}

// A context that ends between attempts stops the retries, with the error
// of the last attempt.
func TestRetriesStopWithTheContext(t *testing.T) {
	fault := errors.New("injected: connection refused")
	w := failing(t, fault, pgbatch.Options{Retries: 30})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	// The context may end during an attempt (a loaded machine makes one
	// slow), which then fails with the context's error.
	if err := w.Emit(ctx, runEvent(t, "acme/batch-ctx-0123456789", 0)); !errors.Is(err, fault) && !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, events.ErrUnavailable) {
		t.Errorf("Emit = %v, want the fault of the last attempt or the context's end, not marked unavailable: the caller ended it", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Emit returned after %v, long after its context ended", took)
	}
	if n := w.BatchErrors(); n < 1 || n > 10 {
		t.Errorf("BatchErrors = %d, want the few attempts made before the context ended", n)
	}
}

// What EmitBatch refuses it refuses without trying: a nil or zero Writer,
// a context already done, a batch holding an invalid event (none of it is
// written); an empty batch writes nothing and succeeds.
func TestRefusedWithoutTrying(t *testing.T) {
	ctx := context.Background()
	run := "acme/batch-refuse-0123456789"
	for _, w := range []*pgbatch.Writer{nil, {}} {
		if err := w.Emit(ctx, runEvent(t, run, 0)); !errors.Is(err, events.ErrClosed) {
			t.Errorf("Emit on %#v = %v, want ErrClosed", w, err)
		}
		if err := w.EmitBatch(ctx, nil); !errors.Is(err, events.ErrClosed) {
			t.Errorf("EmitBatch on %#v = %v, want ErrClosed", w, err)
		}
	}
	w := failing(t, errors.New("injected: the writer must not have tried"), pgbatch.Options{Retries: 1})
	if err := w.EmitBatch(ctx, nil); err != nil {
		t.Errorf("EmitBatch(empty) = %v, want nil", err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := w.Emit(done, runEvent(t, run, 1)); !errors.Is(err, context.Canceled) {
		t.Errorf("Emit with a done context = %v, want context.Canceled", err)
	}
	invalid := runEvent(t, run, 2)
	invalid.ID = ""
	var fe *events.FieldError
	if err := w.EmitBatch(ctx, []events.Event{runEvent(t, run, 3), invalid}); !errors.As(err, &fe) {
		t.Errorf("EmitBatch with an invalid event = %v, want its *events.FieldError", err)
	}
	if err := w.Emit(ctx, invalid); !errors.As(err, &fe) {
		t.Errorf("Emit(invalid) = %v, want its *events.FieldError", err)
	}
	if n := w.BatchErrors(); n != 0 {
		t.Errorf("BatchErrors = %d, want no attempt", n)
	}
}
