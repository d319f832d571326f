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
	t.Cleanup(func() { _ = w.Close() })
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

// The writer keeps the events.Sink contract of every sink, buffering ones
// included: the kit closes it before reading back.
func TestConformance(t *testing.T) {
	pool := pgtest.Connect(t, nil)
	negotiatetest.TestSink(t, func(t *testing.T, fault error) (events.Sink, func() []events.Event) {
		if fault != nil {
			var failing atomic.Bool
			faulty := pgtest.Connect(t, func(context.Context, *pgx.Conn) (bool, error) {
				if failing.Load() {
					return true, fault
				}
				return true, nil
			})
			schema := pgtest.Schema(t, faulty)
			w := newWriter(t, faulty, pgbatch.Options{Schema: schema, Retries: 1})
			faulty.Reset() // every connection from now on is a new one, which fails
			failing.Store(true)
			t.Cleanup(func() { failing.Store(false) })
			return w, nil
		}
		schema := pgtest.Schema(t, pool)
		return newWriter(t, pool, pgbatch.Options{Schema: schema}), reader(t, pool, schema)
	})
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
		w := newWriter(t, pgtest.Connect(t, nil), pgbatch.Options{Schema: schema, Batch: 7 + 50*r, MaxWait: time.Minute})
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
// the rest of its batch is written, it is counted as failed, handed to
// OnError, and Close reports it.
func TestRefusedEventFailsAlone(t *testing.T) {
	pool := pgtest.Connect(t, nil)
	schema := pgtest.Schema(t, pool)
	read := reader(t, pool, schema)
	var handed []string
	w := newWriter(t, pool, pgbatch.Options{Schema: schema, Retries: 1, OnError: func(e events.Event, err error) {
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
	if w.BatchErrors() < 2 {
		t.Errorf("BatchErrors = %d, want the failed batch and its retry counted", w.BatchErrors())
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
	w := newWriter(t, pool, pgbatch.Options{Schema: schema, Retries: 3})
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
	if n := w.BatchErrors(); n < 1 || n > 2 {
		t.Errorf("BatchErrors = %d, want the failed attempts counted", n)
	}
}

// stalled returns a writer whose database does not answer until release is
// called, with one event already taken by the writing goroutine and so a
// buffer that is empty.
func stalled(t *testing.T, opts pgbatch.Options) (w *pgbatch.Writer, release func()) {
	t.Helper()
	gate, entered := make(chan struct{}), make(chan struct{}, 1)
	var stall atomic.Bool
	pool := pgtest.Connect(t, func(ctx context.Context, _ *pgx.Conn) (bool, error) {
		if stall.Load() {
			select {
			case entered <- struct{}{}:
			default:
			}
			<-gate
		}
		return true, nil
	})
	opts.Schema = pgtest.Schema(t, pool)
	w = newWriter(t, pool, opts)
	pool.Reset()
	stall.Store(true)
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	if err := w.Emit(context.Background(), runEvent(t, "acme/batch-stall-0123456789", 0)); err != nil {
		t.Fatal(err)
	}
	<-entered
	return w, release
}

// With the buffer full, Drop refuses at once and Block waits at most
// MaxWait or the context; every refusal is counted, and Close, once the
// database answers, writes every event accepted.
func TestFullBuffer(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		opts     pgbatch.Options
		ctx      func() (context.Context, context.CancelFunc)
		want     error
		dropped  uint64
		rejected uint64
	}{
		{"drop", pgbatch.Options{Buffer: 2, Drop: true}, nil, events.ErrDropped, 1, 0},
		{"block", pgbatch.Options{Buffer: 2, MaxWait: 20 * time.Millisecond}, nil, events.ErrDropped, 1, 0},
		{"block until the context ends", pgbatch.Options{Buffer: 2, MaxWait: time.Hour}, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(ctx, 20*time.Millisecond)
		}, context.DeadlineExceeded, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, release := stalled(t, tc.opts)
			for i := range 2 {
				if err := w.Emit(ctx, runEvent(t, "acme/batch-full-0123456789", i)); err != nil {
					t.Fatalf("Emit %d into a buffer with room: %v", i, err)
				}
			}
			c, cancel := ctx, context.CancelFunc(func() {})
			if tc.ctx != nil {
				c, cancel = tc.ctx()
			}
			defer cancel()
			if err := w.Emit(c, runEvent(t, "acme/batch-full-0123456789", 9)); !errors.Is(err, tc.want) {
				t.Errorf("Emit into a full buffer = %v, want %v", err, tc.want)
			}
			release()
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if s := w.Stats(); s.Accepted != 3 || s.Recorded != 3 || s.Dropped != tc.dropped || s.Emitted != 4 || s.Pending != 0 {
				t.Errorf("Stats = %+v", s)
			}
		})
	}
}

// Close releases an Emit waiting for room with ErrClosed, and writes what
// was accepted before it.
func TestCloseReleasesWaitingEmit(t *testing.T) {
	w, release := stalled(t, pgbatch.Options{Buffer: 1, MaxWait: time.Hour})
	ctx := context.Background()
	if err := w.Emit(ctx, runEvent(t, "acme/batch-close-0123456789", 1)); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- w.Emit(ctx, runEvent(t, "acme/batch-close-0123456789", 2)) }()
	for w.Stats().Emitted == 2 && len(errc) == 0 {
		time.Sleep(time.Millisecond) // let the Emit reach its wait
		break
	}
	closed := make(chan error, 1)
	go func() { closed <- w.Close() }()
	if err := <-errc; !errors.Is(err, events.ErrClosed) {
		t.Errorf("the waiting Emit returned %v, want ErrClosed", err)
	}
	release()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if s := w.Stats(); s.Recorded != 2 || s.Rejected != 1 {
		t.Errorf("Stats = %+v, want the 2 accepted events recorded and the waiting one rejected", s)
	}
	if err := w.Emit(ctx, runEvent(t, "acme/batch-close-0123456789", 3)); !errors.Is(err, events.ErrClosed) {
		t.Errorf("Emit after Close = %v, want ErrClosed", err)
	}
}

// A nil or zero Writer refuses every event and closes quietly.
func TestZeroWriter(t *testing.T) {
	for _, w := range []*pgbatch.Writer{nil, {}} {
		if err := w.Emit(context.Background(), runEvent(t, "acme/batch-zero-0123456789", 0)); !errors.Is(err, events.ErrClosed) {
			t.Errorf("Emit = %v, want ErrClosed", err)
		}
		if err := w.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
	}
	if s := (*pgbatch.Writer)(nil).Stats(); s != (events.AsyncStats{}) {
		t.Errorf("Stats of nil = %+v", s)
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
