package pgsink_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/examples/pgsink"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
)

// defaultURL is the loopback database that .ci/run and examples/README.md
// set up.
const defaultURL = "postgres://wopneg:wopneg@127.0.0.1:5432/wopneg?sslmode=disable&connect_timeout=5"

// connect returns a pool on WOPNEG_PG_URL (or the loopback default). With
// no server there, the test is skipped, unless CI is set: CI installs and
// starts one, so a missing server there is a broken pipeline, not a reason
// to skip the only test of the database sink.
func connect(t *testing.T) *pgxpool.Pool {
	t.Helper()
	return connectWith(t, nil)
}

// connectWith is connect with a PrepareConn hook, through which a test
// makes every query fail with an error of its choosing.
func connectWith(t *testing.T, prepare func(context.Context, *pgx.Conn) (bool, error)) *pgxpool.Pool {
	t.Helper()
	url := os.Getenv("WOPNEG_PG_URL")
	if url == "" {
		url = defaultURL
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatalf("WOPNEG_PG_URL: %v", err)
	}
	cfg.MaxConns = 16
	cfg.PrepareConn = prepare
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err == nil {
		err = pool.Ping(ctx)
	}
	if err != nil {
		if pool != nil {
			pool.Close()
		}
		where := fmt.Sprintf("%s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
		if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
			t.Fatalf("CI is set but PostgreSQL at %s is not reachable: %v", where, err)
		}
		t.Skipf("no PostgreSQL at %s (%v): set WOPNEG_PG_URL, or start one as examples/README.md shows", where, err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// newSink returns a Sink in a schema of its own, dropped when the test
// ends, so that tests neither see nor leave each other's rows.
func newSink(t *testing.T, pool *pgxpool.Pool) (*pgsink.Sink, string) {
	t.Helper()
	schema := "wopneg_test_" + strings.ToLower(events.NewEventID())
	ctx := context.Background()
	t.Cleanup(func() {
		if _, err := pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("dropping %s: %v", schema, err)
		}
	})
	s, err := pgsink.New(ctx, pool, pgsink.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	return s, schema
}

// all reads back every event in the sink's schema: each run through Poll,
// page by page, and the host events.
func all(t *testing.T, pool *pgxpool.Pool, s *pgsink.Sink, schema string) []events.Event {
	t.Helper()
	ctx := context.Background()
	rows, err := pool.Query(ctx, "SELECT DISTINCT run_id FROM "+pgx.Identifier{schema, "wopneg_run_events"}.Sanitize())
	if err != nil {
		t.Fatal(err)
	}
	runs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	var out []events.Event
	for _, run := range runs {
		for from := int64(0); ; {
			page, err := s.Poll(ctx, run, from, 100)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, page...)
			if len(page) < 100 {
				break
			}
			last, _ := page[len(page)-1].Sequence()
			from = last + 1
		}
	}
	for after := int64(0); ; {
		page, next, err := s.HostEvents(ctx, after, 100)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page...)
		if len(page) < 100 {
			break
		}
		after = next
	}
	return out
}

func payload(i int) events.NegotiationDecided {
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Millisecond)
	if i%3 == 0 {
		return events.NegotiationDecided{Protocol: facets.ProtocolMCP, Outcome: events.Refused, Requested: "2025-06-18",
			Reason: events.ReasonBelowFloor, Floor: "2025-11-25", At: at}
	}
	return events.NegotiationDecided{Protocol: facets.ProtocolA2A, Outcome: events.Accepted, Version: "1.1", Requested: "1.2",
		Reason: events.ReasonOK, Floor: "1.1", PeerDigest: strings.Repeat("ab", 32), At: at}
}

// TestConcurrentWritersNumberEachRunWithoutGaps is the database's half of
// the sequence guarantee: 8 writers × 1,000 events on 10 runs, and each
// run comes back numbered 0…n−1 with every event once.
func TestConcurrentWritersNumberEachRunWithoutGaps(t *testing.T) {
	const writers, perWriter, runs = 8, 1000, 10
	pool := connect(t)
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
				e, err := events.NewRunEvent(runIDs[(w*perWriter+i)%runs], payload(i))
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

	got := all(t, pool, s, schema)
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
			if n, ok := e.Sequence(); !ok || n != int64(i) {
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
	pool := connect(t)
	negotiatetest.TestSink(t, func(t *testing.T, fault error) (events.Sink, func() []events.Event) {
		if fault != nil {
			// The tables are made on a healthy connection, then every
			// query fails as a lost database would.
			var failing atomic.Bool
			faulty := connectWith(t, func(context.Context, *pgx.Conn) (bool, error) {
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
		return s, func() []events.Event { return all(t, pool, s, schema) }
	})
}

// A failed insert rolls its sequence back with it.
func TestFailedInsertLeavesNoGap(t *testing.T) {
	pool := connect(t)
	s, _ := newSink(t, pool)
	ctx := context.Background()
	run := "acme/pg-gap-0123456789abcdef"
	first, err := events.NewRunEvent(run, payload(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Emit(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := s.Emit(ctx, first); err == nil {
		t.Fatal("recording the same event id twice succeeded")
	}
	second, err := events.NewRunEvent(run, payload(2))
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
	if n, _ := got[1].Sequence(); n != 1 {
		t.Errorf("the event after a failed insert is sequence %d, want 1", n)
	}
	// Poll pages from a sequence on.
	if page, err := s.Poll(ctx, run, 1, 10); err != nil || len(page) != 1 || page[0].ID != second.ID {
		t.Errorf("Poll from 1 = %v (%v), want the second event alone", page, err)
	}
}

func TestTablesAreAppendOnly(t *testing.T) {
	pool := connect(t)
	s, schema := newSink(t, pool)
	ctx := context.Background()
	e, err := events.NewRunEvent("acme/pg-append-0123456789ab", payload(1))
	if err != nil {
		t.Fatal(err)
	}
	h, err := events.NewHostEvent("ws", payload(2))
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
	if got := all(t, pool, s, schema); len(got) != 2 {
		t.Errorf("%d events after the refused edits, want 2", len(got))
	}
}

// New is idempotent, and hosts starting together do not race on it.
func TestNewIsIdempotent(t *testing.T) {
	pool := connect(t)
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
	h, err := events.NewHostEvent("", payload(0))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Emit(context.Background(), h); err != nil {
		t.Fatal(err)
	}
}

func TestEmitRefusesInvalidEvents(t *testing.T) {
	pool := connect(t)
	s, schema := newSink(t, pool)
	bad, err := events.NewHostEvent("", payload(1))
	if err != nil {
		t.Fatal(err)
	}
	bad.Payload.Floor = "1.x"
	if err := s.Emit(context.Background(), bad); !errors.Is(err, events.ErrInvalidPayload) || !strings.Contains(err.Error(), "floor") {
		t.Errorf("Emit = %v, want the payload refused naming floor", err)
	}
	if got := all(t, pool, s, schema); len(got) != 0 {
		t.Errorf("%d rows written for a refused event", len(got))
	}
	var zero *pgsink.Sink
	if err := zero.Emit(context.Background(), bad); !errors.Is(err, events.ErrNoSink) {
		t.Errorf("nil Sink: Emit = %v, want ErrNoSink", err)
	}
}
