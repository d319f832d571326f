package events_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/policy"
)

// tryStream opens /host/events as token on srv and returns the answer's
// status, a reader of its frames when it is 200, and what ends it.
func tryStream(t *testing.T, srv *httptest.Server, token string) (int, *bufio.Reader, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/host/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := srv.Client().Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	end := func() { cancel(); resp.Body.Close() }
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		end()
		return resp.StatusCode, nil, func() {}
	}
	return resp.StatusCode, bufio.NewReader(resp.Body), end
}

// Tenant acme opens host-event streams, with the handler's default
// bounds, until it is refused, and reads none of them. umbra's first
// stream is still served, and carries umbra's events. (Before streams were
// counted per tenant, acme held all 64 and umbra was answered 429.) When
// everything is closed, no goroutine of the handler is left.
func TestLogHandlerATenantAtItsCapDoesNotShutAnotherOut(t *testing.T) {
	defer events.VerifyNoLeak(t)
	l := events.NewMemoryLog(0, 0)
	srv := httptest.NewServer(&events.LogHandler{Log: l, Subject: callerOf, PollInterval: time.Millisecond})
	defer srv.Close()
	var opened int
	for {
		status, _, end := tryStream(t, srv, "acme")
		defer end()
		if status == http.StatusTooManyRequests {
			break
		}
		if status != http.StatusOK || opened > 64 {
			t.Fatalf("acme's stream %d: %d", opened+1, status)
		}
		opened++
	}
	if opened != 8 {
		t.Errorf("acme opened %d streams, want its share, 8", opened)
	}
	status, r, end := tryStream(t, srv, "umbra")
	defer end()
	if status != http.StatusOK {
		t.Fatalf("umbra's first stream, with acme at its cap: %d, want 200", status)
	}
	want := hostEvent(t, "umbra", 1)
	emitAll(t, l, hostEvent(t, "acme", 1), want)
	if _, id, _ := frame(t, r); id != want.ID {
		t.Errorf("umbra's stream sent %s, want %s", id, want.ID)
	}
}

// A client that sends its request and never reads a byte of the answer
// still loses its stream when the stream's lifetime is over, and the
// handler's goroutine ends.
func TestLogHandlerStreamOfAClientThatNeverReadsEnds(t *testing.T) {
	defer events.VerifyNoLeak(t)
	done := make(chan struct{})
	h := &events.LogHandler{Log: events.NewMemoryLog(0, 0), Subject: callerOf, StreamLifetime: time.Millisecond}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "GET /host/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer acme\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	<-done
}

// tenantCaller is the caller "Bearer <tenant>" names: an authenticated
// user of that tenant.
func tenantCaller(r *http.Request) *policy.Subject {
	tenant, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return nil
	}
	return &policy.Subject{Issuer: "urn:test:idp", SubjectID: "user-" + tenant, Tenant: tenant, Lane: policy.LaneAPIKey, Kind: policy.KindUser}
}

// slowWriter is a ResponseWriter over a connection whose reader takes
// each write after takes: one that stopped reading takes none. A write
// not taken by the write deadline fails at the deadline, as a net.Conn's
// does; a write with no deadline fails at once, so that a handler that
// sets none is seen.
type slowWriter struct {
	header    http.Header
	takes     time.Duration
	mu        sync.Mutex
	status    int
	deadline  time.Time
	deadlines []time.Time
	body      strings.Builder
}

// stopped is a writer whose reader stopped reading after the headers.
const stopped = time.Duration(1 << 62)

func newSlowWriter(takes time.Duration) *slowWriter {
	return &slowWriter{header: http.Header{}, takes: takes}
}

func (w *slowWriter) Header() http.Header { return w.header }

func (w *slowWriter) WriteHeader(status int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.status = status
}

func (w *slowWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	deadline := w.deadline
	w.mu.Unlock()
	if deadline.IsZero() {
		return 0, errors.New("a write with no deadline")
	}
	if left := time.Until(deadline); w.takes > left {
		time.Sleep(left)
		return 0, os.ErrDeadlineExceeded
	}
	time.Sleep(w.takes)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(p)
}

func (w *slowWriter) FlushError() error { return nil }

func (w *slowWriter) SetWriteDeadline(d time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deadline = d
	w.deadlines = append(w.deadlines, d)
	return nil
}

// written is what the reader took, and the last deadline set.
func (w *slowWriter) written() (string, time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.body.String(), w.deadline
}

// served is one request's end: when, by the bubble's clock.
type served struct {
	w    *slowWriter
	done chan struct{}
	took time.Duration
	stop context.CancelFunc
}

// serveAsync serves a GET of target as token to w, in a goroutine; stop
// is the client going away.
func serveAsync(h http.Handler, target, token string, w *slowWriter) *served {
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{w: w, done: make(chan struct{}), stop: cancel}
	req := httptest.NewRequestWithContext(ctx, "GET", target, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	start := time.Now()
	go func() {
		defer close(s.done)
		h.ServeHTTP(w, req)
		s.took = time.Since(start)
	}()
	return s
}

// ended reports whether s's handler has returned, once every goroutine
// of the bubble waits.
func (s *served) ended() bool {
	synctest.Wait()
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// A stream whose reader stops reading is dropped at the first write the
// reader does not take within WriteTimeout: with nothing to send, the
// first keep-alive, KeepAlive after the stream opened (15 s + 10 s with
// the defaults); with an event, the frame that carries it. A stream
// whose reader keeps reading ends when its lifetime is over (10 minutes
// by default). No write is ever given a deadline past StreamLifetime +
// WriteTimeout after the stream opened, so that even a write that
// outlasts the lifetime leaves the connection by then.
func TestLogHandlerDropsAReaderThatStopsReading(t *testing.T) {
	for _, tc := range []struct {
		name         string
		h            *events.LogHandler
		takes        time.Duration
		emitAt       time.Duration // when an event of the tenant is recorded; 0 for never
		took         time.Duration // when the handler returns
		keepAlives   int
		frames       int
		lastDeadline time.Duration // after the start
	}{
		{"stopped, defaults", &events.LogHandler{}, stopped, 0, 25 * time.Second, 0, 0, 25 * time.Second},
		{"stopped, 1 s keep-alive, 2 s write timeout", &events.LogHandler{KeepAlive: time.Second, WriteTimeout: 2 * time.Second}, stopped, 0, 3 * time.Second, 0, 0, 3 * time.Second},
		{"stopped, an event", &events.LogHandler{PollInterval: time.Second}, stopped, 4500 * time.Millisecond, 15 * time.Second, 0, 0, 15 * time.Second},
		{"reading, defaults", &events.LogHandler{}, 0, 0, 10 * time.Minute, 39, 0, 10*time.Minute + 10*time.Second},
		{"reading, an event", &events.LogHandler{PollInterval: time.Second, StreamLifetime: 100 * time.Second}, 0, 4500 * time.Millisecond, 100 * time.Second, 6, 1, 110 * time.Second},
		{"a write outlasts the lifetime", &events.LogHandler{KeepAlive: 98 * time.Second, StreamLifetime: 100 * time.Second}, 5 * time.Second, 0, 103 * time.Second, 1, 0, 110 * time.Second},
	} {
		synctest.Test(t, func(t *testing.T) {
			l := events.NewMemoryLog(0, 0)
			h := tc.h
			h.Log, h.Subject = l, callerOf
			start := time.Now()
			s := serveAsync(h, "/host/events", "acme", newSlowWriter(tc.takes))
			if tc.emitAt > 0 {
				time.Sleep(tc.emitAt)
				emitAll(t, l, hostEvent(t, "acme", 1))
			}
			<-s.done
			body, last := s.w.written()
			if s.w.status != http.StatusOK || s.took != tc.took {
				t.Errorf("%s: %d, ended after %v, want 200 after %v", tc.name, s.w.status, s.took, tc.took)
			}
			// The last keep-alive and the end of the lifetime can come
			// together; either may be served first.
			if got := strings.Count(body, ": keep-alive\n\n"); got != tc.keepAlives && (tc.keepAlives != 39 || got != 40) {
				t.Errorf("%s: %d keep-alives, want %d", tc.name, got, tc.keepAlives)
			}
			if got := strings.Count(body, "event: negotiation.decided\n"); got != tc.frames {
				t.Errorf("%s: %d frames, want %d", tc.name, got, tc.frames)
			}
			if got := last.Sub(start); got != tc.lastDeadline {
				t.Errorf("%s: last write deadline %v after the start, want %v", tc.name, got, tc.lastDeadline)
			}
		})
	}
}

// When every stream is held, a tenant takes the oldest stream of the
// tenant holding the most, as long as that one holds two more than the
// newcomer will: four tenants end up with one of four streams each, and
// a fifth is refused until one is closed. A tenant at its share is
// refused whatever room is left. A stream ended for another tenant has
// its end given a write deadline, as any write.
func TestLogHandlerStreamsAreSharedEvenly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &events.LogHandler{Log: events.NewMemoryLog(0, 0), Subject: tenantCaller, MaxStreams: 4}
		open := func(tenant string) *served {
			t.Helper()
			s := serveAsync(h, "/host/events", tenant, newSlowWriter(0))
			t.Cleanup(func() { s.stop(); <-s.done })
			if s.ended() {
				t.Fatalf("%s's stream: %d %s, want it open", tenant, s.w.status, s.w.body.String())
			}
			return s
		}
		refused := func(tenant string) {
			t.Helper()
			s := serveAsync(h, "/host/events", tenant, newSlowWriter(0))
			if !s.ended() || s.w.status != http.StatusTooManyRequests || s.w.Header().Get("Retry-After") != "1" {
				t.Fatalf("%s's stream: %d %s, want 429 with Retry-After", tenant, s.w.status, s.w.body.String())
			}
		}
		var a []*served
		for range 4 {
			a = append(a, open("a"))
		}
		refused("a") // its share is MaxStreams here: 8 is more
		time.Sleep(time.Second)
		var others []*served
		for i, tenant := range []string{"b", "c", "d"} {
			others = append(others, open(tenant))
			for j, s := range a {
				if s.ended() != (j <= i) {
					t.Fatalf("%s opened: a's stream %d ended %t", tenant, j, s.ended())
				}
			}
			if _, last := a[i].w.written(); time.Until(last) != 10*time.Second {
				t.Errorf("a's stream %d ended with a write deadline %v ahead, want 10 s", i, time.Until(last))
			}
		}
		refused("e")
		refused("b")
		others[2].stop()
		<-others[2].done
		open("e")
	})
}

// A poll that would wait takes a waiter slot: a tenant holds at most 16
// (MaxTenantPollWaiters) and its next waiting poll is refused 429 at once,
// while another tenant's poll still waits and is answered by its event.
// When the waits end, their slots are given back.
func TestLogHandlerPollWaitersPerTenant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := events.NewMemoryLog(0, 0)
		mine, theirs := run("acme", 1), run("umbra", 1)
		emitAll(t, l, runEvent(t, mine, 0), runEvent(t, theirs, 0))
		h := &events.LogHandler{Log: l, Subject: callerOf, RunStatus: running}
		var waiting []<-chan polled
		for range 16 {
			waiting = append(waiting, pollAsync(t, h, "/runs/"+mine+"/events/poll?afterSequence=0&timeout=60"))
		}
		synctest.Wait()
		over := <-pollAsync(t, h, "/runs/"+mine+"/events/poll?afterSequence=0&timeout=60")
		if over.status != http.StatusTooManyRequests || over.body["error"] != "rate_limited" || over.took != 0 {
			t.Fatalf("acme's 17th waiting poll: %d %v after %v, want 429 rate_limited at once", over.status, over.body, over.took)
		}
		other := pollAs(t, h, "/runs/"+theirs+"/events/poll?afterSequence=0&timeout=60", "umbra")
		time.Sleep(time.Second)
		emitAll(t, l, runEvent(t, theirs, 1), runEvent(t, mine, 1))
		if got := <-other; got.status != http.StatusOK || len(got.body["events"].([]any)) != 1 {
			t.Errorf("umbra's poll: %d %v, want its event", got.status, got.body)
		}
		for _, w := range waiting {
			if got := <-w; got.status != http.StatusOK || len(got.body["events"].([]any)) != 1 {
				t.Errorf("acme's waiting poll: %d %v, want its event", got.status, got.body)
			}
		}
		if got := <-pollAsync(t, h, "/runs/"+mine+"/events/poll?afterSequence=1&timeout=1"); got.status != http.StatusOK || got.took != time.Second {
			t.Errorf("a poll after the waits: %d %v after %v, want 200 after its timeout", got.status, got.body, got.took)
		}
	})
}

// When every waiter slot is held, a tenant's poll ends the oldest wait of
// the tenant holding the most, which is answered at once with what the
// log holds, as at its timeout.
func TestLogHandlerPollWaitersAreSharedEvenly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := events.NewMemoryLog(0, 0)
		ra, rb, rc := run("a", 1), run("b", 1), run("c", 1)
		emitAll(t, l, runEvent(t, ra, 0), runEvent(t, rb, 0), runEvent(t, rc, 0))
		h := &events.LogHandler{Log: l, Subject: tenantCaller, RunStatus: running, MaxPollWaiters: 2}
		first := pollAs(t, h, "/runs/"+ra+"/events/poll?afterSequence=0&timeout=60", "a")
		synctest.Wait()
		second := pollAs(t, h, "/runs/"+ra+"/events/poll?afterSequence=0&timeout=60", "a")
		synctest.Wait()
		if got := <-pollAs(t, h, "/runs/"+ra+"/events/poll?afterSequence=0&timeout=60", "a"); got.status != http.StatusTooManyRequests {
			t.Fatalf("a's third waiting poll: %d %v, want 429", got.status, got.body)
		}
		b := pollAs(t, h, "/runs/"+rb+"/events/poll?afterSequence=0&timeout=60", "b")
		got := <-first
		if evs, _ := got.body["events"].([]any); got.status != http.StatusOK || len(evs) != 0 || got.body["lastSequence"] != 0.0 || got.took != 0 {
			t.Errorf("a's first poll, its slot taken by b: %d %v after %v, want 200 with no event at once", got.status, got.body, got.took)
		}
		if got := <-pollAs(t, h, "/runs/"+rc+"/events/poll?afterSequence=0&timeout=60", "c"); got.status != http.StatusTooManyRequests {
			t.Errorf("c's poll, a and b holding one each: %d %v, want 429", got.status, got.body)
		}
		for _, w := range []<-chan polled{second, b} {
			if got := <-w; got.status != http.StatusOK || got.took != time.Minute {
				t.Errorf("a waiting poll: %d %v after %v, want 200 after its timeout", got.status, got.body, got.took)
			}
		}
	})
}

// A stream is not served to a ResponseWriter that cannot take a write
// deadline (httptest's recorder has none): it would be unbounded.
func TestLogHandlerStreamNeedsAWriteDeadline(t *testing.T) {
	h := &events.LogHandler{Log: events.NewMemoryLog(0, 0), Subject: callerOf}
	status, body, _ := get(t, h, "GET", "/host/events", "acme")
	if msg, _ := body["message"].(string); status != http.StatusInternalServerError || body["error"] != "internal_error" || !strings.Contains(msg, "deadline") {
		t.Errorf("%d %v, want 500 internal_error about the deadline", status, body)
	}
}

// A poll's answer is written with a deadline of WriteTimeout (10 s by
// default), and after its waiter slot is given back: a reader that does
// not take the answer holds no slot another poll of its tenant could use.
func TestLogHandlerPollAnswerHasAWriteDeadline(t *testing.T) {
	for _, tc := range []struct {
		timeout, took time.Duration
	}{{0, 10 * time.Second}, {3 * time.Second, 3 * time.Second}} {
		synctest.Test(t, func(t *testing.T) {
			l := events.NewMemoryLog(0, 0)
			r := run("acme", 1)
			emitAll(t, l, runEvent(t, r, 0))
			h := &events.LogHandler{Log: l, Subject: callerOf, RunStatus: running, WriteTimeout: tc.timeout, MaxTenantPollWaiters: 1}
			stuck := serveAsync(h, "/runs/"+r+"/events/poll?afterSequence=0", "acme", newSlowWriter(stopped))
			synctest.Wait()
			emitAll(t, l, runEvent(t, r, 1))
			time.Sleep(time.Second) // the next read answers the wait; the answer is not taken
			next := pollAsync(t, h, "/runs/"+r+"/events/poll?afterSequence=1&timeout=1")
			if got := <-next; got.status != http.StatusOK || got.took != time.Second {
				t.Errorf("a poll while the answer is stuck: %d %v after %v, want 200 after its timeout", got.status, got.body, got.took)
			}
			<-stuck.done
			if want := 250*time.Millisecond + tc.took; stuck.took != want {
				t.Errorf("the stuck answer ended after %v, want %v", stuck.took, want)
			}
		})
	}
}

// panickingLog panics on its reads once armed.
type panickingLog struct {
	events.Log
	armed atomic.Bool
}

func (p *panickingLog) RunEvents(ctx context.Context, tenant, runID string, after int64, limit int) ([]events.Event, int64, error) {
	if p.armed.Load() {
		panic("store exploded")
	}
	return p.Log.RunEvents(ctx, tenant, runID, after, limit)
}

// A poll whose wait ends in a panic of the log (net/http recovers it)
// still gives its waiter slot back.
func TestLogHandlerPollWaiterSurvivesAPanickingLog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := events.NewMemoryLog(0, 0)
		r := run("acme", 1)
		emitAll(t, l, runEvent(t, r, 0))
		pl := &panickingLog{Log: l}
		h := &events.LogHandler{Log: pl, Subject: callerOf, RunStatus: running, MaxTenantPollWaiters: 1}
		recovered := make(chan any)
		go func() {
			defer func() { recovered <- recover() }()
			req := httptest.NewRequest("GET", "/runs/"+r+"/events/poll?afterSequence=0", nil)
			req.Header.Set("Authorization", "Bearer acme")
			h.ServeHTTP(httptest.NewRecorder(), req)
		}()
		synctest.Wait()
		pl.armed.Store(true)
		if got := <-recovered; got == nil {
			t.Fatal("the log did not panic")
		}
		pl.armed.Store(false)
		if got := <-pollAsync(t, h, "/runs/"+r+"/events/poll?afterSequence=0&timeout=1"); got.status != http.StatusOK || got.took != time.Second {
			t.Errorf("the next waiting poll: %d %v after %v, want 200 after its timeout", got.status, got.body, got.took)
		}
	})
}
