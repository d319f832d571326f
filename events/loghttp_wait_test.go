package events_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/wopneg/wopneg/events"
)

// running reports every run as running: a poll on it waits for an event.
func running(context.Context, string) (string, bool) { return "running", false }

// polled is one poll's answer and how long it took by the bubble's clock.
type polled struct {
	status int
	body   map[string]any
	took   time.Duration
}

// pollAsync starts a poll of target as acme and returns where its answer
// arrives.
func pollAsync(t *testing.T, h *events.LogHandler, target string) <-chan polled {
	t.Helper()
	return pollAs(t, h, target, "acme")
}

// pollAs starts a poll of target as token.
func pollAs(t *testing.T, h *events.LogHandler, target, token string) <-chan polled {
	t.Helper()
	done := make(chan polled, 1)
	start := time.Now()
	go func() {
		status, body, _ := get(t, h, "GET", target, token)
		done <- polled{status, body, time.Since(start)}
	}()
	return done
}

// A poll on a run that is not terminal, with nothing after afterSequence,
// waits: the next event the log receives is answered at the next read,
// one PollInterval later (250 ms when zero); with no event, the poll ends
// after its timeout with what the log holds. In a synctest bubble the
// clock moves only when every goroutine waits, so the durations below are
// exact and take no real time.
func TestLogHandlerPollWaitsForTheNextEvent(t *testing.T) {
	for _, tc := range []struct {
		name     string
		interval time.Duration
		query    string
		emitAt   time.Duration // when the next event arrives; 0 for never
		want     int           // events in the answer
		took     time.Duration
	}{
		{"the event arrives, default interval", 0, "afterSequence=0&timeout=60", 100 * time.Millisecond, 1, 250 * time.Millisecond},
		{"the event arrives, 10 ms interval", 10 * time.Millisecond, "afterSequence=0&timeout=60", 95 * time.Millisecond, 1, 100 * time.Millisecond},
		{"no event before the timeout", 10 * time.Millisecond, "afterSequence=0&timeout=2", 0, 0, 2 * time.Second},
		{"the default timeout is 30 s", time.Second, "afterSequence=0", 0, 0, 30 * time.Second},
	} {
		synctest.Test(t, func(t *testing.T) {
			l := events.NewMemoryLog(0, 0)
			r := run("acme", 1)
			emitAll(t, l, runEvent(t, r, 0))
			h := &events.LogHandler{Log: l, Subject: callerOf, PollInterval: tc.interval, RunStatus: running}
			done := pollAsync(t, h, "/runs/"+r+"/events/poll?"+tc.query)
			if tc.emitAt > 0 {
				time.Sleep(tc.emitAt)
				emitAll(t, l, runEvent(t, r, 1))
			}
			got := <-done
			evs, _ := got.body["events"].([]any)
			if got.status != 200 || len(evs) != tc.want || got.body["status"] != "running" || got.body["isTerminal"] != false {
				t.Errorf("%s: %d %v, want 200 with %d events, running", tc.name, got.status, got.body, tc.want)
			}
			if last := float64(tc.want); got.body["lastSequence"] != last {
				t.Errorf("%s: lastSequence %v, want %v", tc.name, got.body["lastSequence"], last)
			}
			if got.took != tc.took {
				t.Errorf("%s: answered after %v, want %v", tc.name, got.took, tc.took)
			}
		})
	}
}

// A poll answers at once, without waiting, when it has events to give or
// when the run is terminal; a run the log holds nothing of is 404 at once,
// as another tenant's is, and never waited on.
func TestLogHandlerPollAnswersAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status func(context.Context, string) (string, bool)
		emit   int // events of the run in the log
		query  string
		want   int
		last   float64
	}{
		{"events after afterSequence", running, 2, "afterSequence=0&timeout=60", 1, 1},
		{"from the start", running, 1, "timeout=60", 1, 0},
		{"terminal run", nil, 1, "afterSequence=0&timeout=60", 0, 0},
	} {
		synctest.Test(t, func(t *testing.T) {
			l := events.NewMemoryLog(0, 0)
			r := run("acme", 1)
			for i := range tc.emit {
				emitAll(t, l, runEvent(t, r, i))
			}
			h := &events.LogHandler{Log: l, Subject: callerOf, RunStatus: tc.status}
			got := <-pollAsync(t, h, "/runs/"+r+"/events/poll?"+tc.query)
			evs, _ := got.body["events"].([]any)
			if got.status != 200 || len(evs) != tc.want || got.body["lastSequence"] != tc.last {
				t.Errorf("%s: %d %v, want 200 with %d events, lastSequence %v", tc.name, got.status, got.body, tc.want, tc.last)
			}
			if got.took != 0 {
				t.Errorf("%s: answered after %v, want at once", tc.name, got.took)
			}
		})
	}
}

func TestLogHandlerPollOfAnUnknownRunIsNotWaitedOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &events.LogHandler{Log: events.NewMemoryLog(0, 0), Subject: callerOf, RunStatus: running}
		got := <-pollAsync(t, h, "/runs/"+run("acme", 1)+"/events/poll?timeout=60")
		if got.status != 404 || got.took != 0 {
			t.Errorf("%d %v after %v, want 404 at once", got.status, got.body, got.took)
		}
	})
}

// failingOnRead is a log that fails every read after its first n.
type failingOnRead struct {
	events.Log
	n int
}

func (f *failingOnRead) RunEvents(ctx context.Context, tenant, runID string, after int64, limit int) ([]events.Event, int64, error) {
	if f.n == 0 {
		return nil, -1, errors.New("store down")
	}
	f.n--
	return f.Log.RunEvents(ctx, tenant, runID, after, limit)
}

// A read that fails while a poll waits ends the wait with a 500.
func TestLogHandlerPollWaitEndsOnAFailedRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := events.NewMemoryLog(0, 0)
		r := run("acme", 1)
		emitAll(t, l, runEvent(t, r, 0))
		h := &events.LogHandler{Log: &failingOnRead{Log: l, n: 1}, Subject: callerOf, PollInterval: time.Second, RunStatus: running}
		got := <-pollAsync(t, h, "/runs/"+r+"/events/poll?afterSequence=0&timeout=60")
		if got.status != 500 || got.body["error"] != "internal_error" || got.took != time.Second {
			t.Errorf("%d %v after %v, want 500 internal_error after one interval", got.status, got.body, got.took)
		}
	})
}

// afterSequence and timeout are decimal integers of at most 18 digits;
// a longer one is refused rather than risk overflowing.
func TestLogHandlerPollQueryDigits(t *testing.T) {
	l := events.NewMemoryLog(0, 0)
	r := run("acme", 1)
	emitAll(t, l, runEvent(t, r, 0))
	h := &events.LogHandler{Log: l, Subject: callerOf}
	for _, tc := range []struct {
		query string
		want  int
	}{
		{"afterSequence=999999999999999999", 200},
		{"afterSequence=1000000000000000000", 400},
		{"afterSequence=", 400},
		{"timeout=60", 200},
		{"timeout=61", 400},
		{"timeout=0", 400},
	} {
		if status, body, _ := get(t, h, "GET", "/runs/"+r+"/events/poll?"+tc.query, "acme"); status != tc.want {
			t.Errorf("%s: %d %v, want %d", tc.query, status, body, tc.want)
		}
	}
}
