package pgbatch_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/examples/internal/pgtest"
	"github.com/wopneg/wopneg/examples/pgbatch"
)

// emitted is what one Emit of a load returned, and when it ran.
type emitted struct {
	id         string
	start, end time.Time
	err        error
}

// load emits fresh host events into a from workers goroutines, each
// pausing pause between two Emits, until stop is closed, and returns
// every Emit's result once they have all returned.
func load(t *testing.T, a *events.Async, workers int, pause time.Duration, stop <-chan struct{}) func() []emitted {
	var (
		mu  sync.Mutex
		all []emitted
		wg  sync.WaitGroup
	)
	for w := range workers {
		wg.Go(func() {
			var mine []emitted
			for i := 0; ; i++ {
				select {
				case <-stop:
					mu.Lock()
					all = append(all, mine...)
					mu.Unlock()
					return
				default:
				}
				e, err := events.NewHostEvent("", pgtest.Payload(w*1_000_000+i))
				if err != nil {
					t.Error(err)
					continue
				}
				r := emitted{id: e.ID, start: time.Now()}
				r.err = a.Emit(context.Background(), e)
				r.end = time.Now()
				mine = append(mine, r)
				time.Sleep(pause)
			}
		})
	}
	return func() []emitted {
		wg.Wait()
		return all
	}
}

// written is the set of host event ids in schema.
func written(t *testing.T, pool *pgxpool.Pool, schema string) map[string]bool {
	t.Helper()
	rows, err := pool.Query(context.Background(), "SELECT event_id FROM "+pgx.Identifier{schema, "wopneg_host_events"}.Sanitize())
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	set := make(map[string]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	return set
}

// outage runs a bounded load on a Writer behind an Async made with opts,
// on a server of the test's own, which it stops for about 1.5 s in the
// middle; it returns every Emit's result, the outage, the Async (closed)
// and what the database holds.
func outage(t *testing.T, opts events.AsyncOptions, workers int, pause time.Duration) ([]emitted, time.Time, time.Time, *events.Async, map[string]bool) {
	srv := pgtest.NewServer(t)
	pool := srv.Connect()
	schema := pgtest.Schema(t, pool)
	w := newWriter(t, pool, pgbatch.Options{Schema: schema})
	a := events.NewAsync(w, opts)
	stop := make(chan struct{})
	results := load(t, a, workers, pause, stop)
	stopped, restarted := srv.Outage(500*time.Millisecond, 1500*time.Millisecond)
	time.Sleep(500 * time.Millisecond)
	close(stop)
	all := results()
	if err := a.Close(); err != nil {
		t.Errorf("Close = %v, want everything accepted written once the database was back", err)
	}
	t.Logf("%d emits, %+v; database down from %v to %v", len(all), a.Stats(), stopped.Format(time.StampMilli), restarted.Format(time.StampMilli))
	return all, stopped, restarted, a, written(t, pool, schema)
}

// In the asynchronous mode, the Async rides out a database restart that
// its buffer can hold: every event it accepted is written once the
// database is back, and none is dropped.
func TestOutageAsynchronousLosesNothingTheBufferHolds(t *testing.T) {
	all, _, _, a, db := outage(t, events.AsyncOptions{Buffer: 50_000, Backoff: 100 * time.Millisecond, CloseWait: 30 * time.Second}, 4, time.Millisecond)
	lost := 0
	for _, r := range all {
		if r.err != nil {
			t.Errorf("Emit = %v, want every event accepted into a buffer that holds the outage", r.err)
		} else if !db[r.id] {
			lost++
		}
	}
	if lost != 0 {
		t.Errorf("%d of %d accepted events are not in the database", lost, len(all))
	}
	if s := a.Stats(); s.Dropped != 0 || s.Retries == 0 || s.Recorded != uint64(len(all)) {
		t.Errorf("Stats = %+v, want nothing dropped, writes tried again, all %d recorded", s, len(all))
	}
}

// In the acknowledged mode, no Emit that returned nil lacks its event, and
// every Emit that returned an error ran while the database was down.
func TestOutageAcknowledgedAnswersNothingUnwritten(t *testing.T) {
	all, stopped, restarted, a, db := outage(t, events.AsyncOptions{Acknowledge: 500 * time.Millisecond, Backoff: 50 * time.Millisecond, CloseWait: 30 * time.Second}, 8, 0)
	var failed int
	for _, r := range all {
		switch {
		case r.err == nil && !db[r.id]:
			t.Errorf("an acknowledged event (%v to %v) is not in the database", r.start.Format(time.StampMilli), r.end.Format(time.StampMilli))
		case r.err == nil:
		case !errors.Is(r.err, events.ErrUnavailable):
			t.Errorf("Emit = %v, want an error wrapping events.ErrUnavailable", r.err)
		case !r.start.Before(restarted) || !r.end.After(stopped):
			t.Errorf("Emit from %v to %v failed (%v), outside the outage", r.start.Format(time.StampMilli), r.end.Format(time.StampMilli), r.err)
		default:
			failed++
		}
	}
	if failed == 0 {
		t.Error("no Emit failed: the database was not taken away for longer than the bound")
	}
	if s := a.Stats(); s.Unacknowledged != uint64(failed) || s.Dropped != 0 {
		t.Errorf("Stats = %+v, want %d unacknowledged, none dropped", s, failed)
	}
}
