package pgsink_test

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
	"github.com/wopneg/wopneg/examples/pgsink"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
)

// newSink returns a Sink in a schema of its own, dropped when the test
// ends, so that tests neither see nor leave each other's rows.
func newSink(t *testing.T, pool *pgxpool.Pool) (*pgsink.Sink, string) {
	t.Helper()
	schema := pgtest.Schema(t, pool)
	s, err := pgsink.New(context.Background(), pool, pgsink.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	return s, schema
}

// TestConcurrentWritersNumberEachRunWithoutGaps is the database's half of
// the sequence guarantee: 8 writers × 1,000 events on 10 runs, and each
// run comes back numbered 0…n−1 with every event once.
func TestConcurrentWritersNumberEachRunWithoutGaps(t *testing.T) {
	const writers, perWriter, runs = 8, 1000, 10
	pool := pgtest.Connect(t, nil)
	s, schema := newSink(t, pool)
	runIDs := make([]string, runs)
	for i := range runIDs {
		runIDs[i] = fmt.Sprintf("acme/pg-load-%08d", i)
	}
	emitted := make([][]string, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			ctx := context.Background()
			for i := range perWriter {
				e, err := events.NewRunEvent(runIDs[(w*perWriter+i)%runs], pgtest.Payload(i))
				if err != nil {
					t.Error(err)
					return
				}
				if err := s.Emit(ctx, e); err != nil {
					t.Errorf("writer %d, event %d: %v", w, i, err)
					return
				}
				emitted[w] = append(emitted[w], e.ID)
			}
		})
	}
	wg.Wait()

	got := pgtest.All(t, pool, schema)
	byRun := make(map[string][]events.Event)
	var ids []string
	for _, e := range got {
		byRun[e.RunID] = append(byRun[e.RunID], e)
		ids = append(ids, e.ID)
	}
	for _, run := range runIDs {
		es := byRun[run]
		if len(es) != writers*perWriter/runs {
			t.Errorf("run %s has %d events, want %d", run, len(es), writers*perWriter/runs)
		}
		for i, e := range es { // Poll returns them in sequence order
			if n, ok := e.Sequence, e.HasSequence; !ok || n != int64(i) {
				t.Errorf("run %s: position %d holds sequence %d: want 0…n−1 with no gap or repeat", run, i, n)
				break
			}
		}
	}
	want := slices.Concat(emitted...)
	slices.Sort(want)
	slices.Sort(ids)
	if !slices.Equal(ids, want) {
		t.Errorf("read back %d events, emitted %d: not the same set", len(ids), len(want))
	}
	t.Logf("%d writers × %d events on %d runs: %d rows, each run 0…%d", writers, perWriter, runs, len(got), writers*perWriter/runs-1)
}

func TestSinkConformance(t *testing.T) {
	pool := pgtest.Connect(t, nil)
	negotiatetest.TestSink(t, func(t *testing.T, fault error) (events.Sink, func() []events.Event) {
		if fault != nil {
			// The tables are made on a healthy connection, then every
			// query fails as a lost database would.
			var failing atomic.Bool
			faulty := pgtest.Connect(t, func(context.Context, *pgx.Conn) (bool, error) {
				if failing.Load() {
					return true, fault
				}
				return true, nil
			})
			s, _ := newSink(t, faulty)
			failing.Store(true)
			t.Cleanup(func() { failing.Store(false) }) // let newSink's cleanup drop the schema
			return s, nil
		}
		s, schema := newSink(t, pool)
		return s, func() []events.Event { return pgtest.All(t, pool, schema) }
	})
}

// A failed insert rolls its sequence back with it.
func TestFailedInsertLeavesNoGap(t *testing.T) {
	pool := pgtest.Connect(t, nil)
	s, _ := newSink(t, pool)
	ctx := context.Background()
	run := "acme/pg-gap-0123456789abcdef"
	first, err := events.NewRunEvent(run, pgtest.Payload(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Emit(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := s.Emit(ctx, first); err == nil {
		t.Fatal("recording the same event id twice succeeded")
	}
	second, err := events.NewRunEvent(run, pgtest.Payload(2))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Emit(ctx, second); err != nil {
		t.Fatal(err)
	}
	got, err := s.Poll(ctx, run, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1].ID != second.ID {
		t.Fatalf("Poll = %d events, want the two recorded", len(got))
	}
	if n := got[1].Sequence; !got[1].HasSequence || n != 1 {
		t.Errorf("the event after a failed insert is sequence %d, want 1", n)
	}
	// Poll pages from a sequence on.
	if page, err := s.Poll(ctx, run, 1, 10); err != nil || len(page) != 1 || page[0].ID != second.ID {
		t.Errorf("Poll from 1 = %v (%v), want the second event alone", page, err)
	}
}

func TestTablesAreAppendOnly(t *testing.T) {
	pool := pgtest.Connect(t, nil)
	s, schema := newSink(t, pool)
	ctx := context.Background()
	e, err := events.NewRunEvent("acme/pg-append-0123456789ab", pgtest.Payload(1))
	if err != nil {
		t.Fatal(err)
	}
	h, err := events.NewHostEvent("ws", pgtest.Payload(2))
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []events.Event{e, h} {
		if err := s.Emit(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	for _, table := range []string{"wopneg_run_events", "wopneg_host_events"} {
		name := pgx.Identifier{schema, table}.Sanitize()
		for _, stmt := range []string{"UPDATE " + name + " SET type = 'x.y'", "DELETE FROM " + name, "TRUNCATE " + name} {
			if _, err := pool.Exec(ctx, stmt); err == nil || !strings.Contains(err.Error(), "append-only") {
				t.Errorf("%s: %v, want it refused as append-only", stmt, err)
			}
		}
	}
	if got := pgtest.All(t, pool, schema); len(got) != 2 {
		t.Errorf("%d events after the refused edits, want 2", len(got))
	}
}

// New is idempotent, and hosts starting together do not race on it.
func TestNewIsIdempotent(t *testing.T) {
	pool := pgtest.Connect(t, nil)
	s, schema := newSink(t, pool)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { _, errs[i] = pgsink.New(context.Background(), pool, pgsink.Options{Schema: schema}) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	h, err := events.NewHostEvent("", pgtest.Payload(0))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Emit(context.Background(), h); err != nil {
		t.Fatal(err)
	}
}

func TestEmitRefusesInvalidEvents(t *testing.T) {
	pool := pgtest.Connect(t, nil)
	s, schema := newSink(t, pool)
	bad, err := events.NewHostEvent("", pgtest.Payload(1))
	if err != nil {
		t.Fatal(err)
	}
	bad.Payload.Floor = "1.x"
	if err := s.Emit(context.Background(), bad); !errors.As(err, new(*events.FieldError)) || !strings.Contains(err.Error(), "floor") {
		t.Errorf("Emit = %v, want the payload refused naming floor", err)
	}
	if got := pgtest.All(t, pool, schema); len(got) != 0 {
		t.Errorf("%d rows written for a refused event", len(got))
	}
	var zero *pgsink.Sink
	if err := zero.Emit(context.Background(), bad); !errors.Is(err, events.ErrClosed) {
		t.Errorf("nil Sink: Emit = %v, want ErrClosed", err)
	}
}

// The Log reads are tenant-scoped: a run is its run id's tenant's, a host
// event its Tenant's, and an unauthenticated exchange's (Tenant "") no
// one's.
func TestLogReadsByTenant(t *testing.T) {
	pool := pgtest.Connect(t, nil)
	s, _ := newSink(t, pool)
	ctx := context.Background()
	run := "acme/pg-log-0123456789abcdef"
	for i := range 3 {
		e, err := events.NewRunEvent(run, pgtest.Payload(i))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Emit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	host := func(tenant string, i int) events.Event {
		e, err := events.NewHostEvent("", pgtest.Payload(i))
		if err != nil {
			t.Fatal(err)
		}
		e.Tenant = tenant
		if err := s.Emit(ctx, e); err != nil {
			t.Fatal(err)
		}
		return e
	}
	a0, u0, _, a1 := host("acme", 0), host("umbra", 1), host("", 2), host("acme", 3)

	for _, tc := range []struct {
		tenant, run string
		after       int64
		limit       int
		want        int
		last        int64
	}{
		{"acme", run, -1, 10, 3, 2},
		{"acme", run, 0, 10, 2, 2},
		{"acme", run, 0, 1, 1, 2},
		{"acme", run, 2, 10, 0, 2},
		{"acme", run, 9, 10, 0, 2},
		{"umbra", run, -1, 10, 0, -1},
		{"", run, -1, 10, 0, -1},
		{"acme", "acme/pg-none-0123456789abcdef", -1, 10, 0, -1},
	} {
		got, last, err := s.RunEvents(ctx, tc.tenant, tc.run, tc.after, tc.limit)
		if err != nil || len(got) != tc.want || last != tc.last {
			t.Errorf("RunEvents(%q, %q, %d, %d) = %d events, last %d, %v; want %d, %d", tc.tenant, tc.run, tc.after, tc.limit, len(got), last, err, tc.want, tc.last)
		}
		if len(got) > 0 {
			if n := got[0].Sequence; n != tc.after+1 || got[0].Tenant != "acme" {
				t.Errorf("first event %d of tenant %q", n, got[0].Tenant)
			}
		}
	}
	ids := func(es []events.Event) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.ID)
		}
		return out
	}
	for _, tc := range []struct {
		tenant, after string
		limit         int
		want          []string
	}{
		{"acme", "", 10, []string{a0.ID, a1.ID}},
		{"acme", "", 1, []string{a1.ID}},
		{"acme", a0.ID, 10, []string{a1.ID}},
		{"acme", a1.ID, 10, nil},
		{"acme", u0.ID, 10, []string{a0.ID, a1.ID}},
		{"umbra", "", 10, []string{u0.ID}},
		{"", "", 10, nil},
		{"acme", "", 0, nil},
	} {
		got, err := s.HostEvents(ctx, tc.tenant, tc.after, tc.limit)
		if err != nil || fmt.Sprint(ids(got)) != fmt.Sprint(tc.want) {
			t.Errorf("HostEvents(%q, %q, %d) = %v, %v; want %v", tc.tenant, tc.after, tc.limit, ids(got), err, tc.want)
		}
	}
}

// A replica that starts while others write takes no lock on the tables:
// New on a current schema finishes while another transaction holds a lock
// that any of its DDL (ALTER TABLE, CREATE OR REPLACE TRIGGER) would wait
// on — the CI run in which two pgbatch replicas deadlocked in New.
func TestNewOnACurrentSchemaTakesNoTableLock(t *testing.T) {
	pool := pgtest.Connect(t, nil)
	_, schema := newSink(t, pool)
	tx, err := pool.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	for _, table := range []string{"wopneg_run_events", "wopneg_host_events"} {
		if _, err := tx.Exec(context.Background(), "LOCK TABLE "+pgx.Identifier{schema, table}.Sanitize()+" IN ROW EXCLUSIVE MODE"); err != nil {
			t.Fatal(err)
		}
	}
	// The bound only keeps a regression from hanging the suite: with the
	// lock held, DDL would wait for ever.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := pgsink.New(ctx, pool, pgsink.Options{Schema: schema}); err != nil {
		t.Fatalf("New on a current schema while the tables are in use: %v", err)
	}
}
