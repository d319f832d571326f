package events_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/policy"
)

var (
	acmeCaller  = policy.Subject{Issuer: "urn:test:idp", SubjectID: "alice", Tenant: "acme", Lane: policy.LaneAPIKey, Kind: policy.KindUser}
	umbraCaller = policy.Subject{Issuer: "urn:test:idp", SubjectID: "bob", Tenant: "umbra", Lane: policy.LaneAPIKey, Kind: policy.KindUser}
	anonCaller  = policy.Subject{Issuer: "urn:test:anon", SubjectID: "x", Tenant: "acme", Lane: policy.LaneAnonymous, Kind: policy.KindAnonymous}
)

func callerOf(r *http.Request) *policy.Subject {
	var s policy.Subject
	switch r.Header.Get("Authorization") {
	case "Bearer acme":
		s = acmeCaller
	case "Bearer umbra":
		s = umbraCaller
	case "Bearer anon":
		s = anonCaller
	default:
		return nil
	}
	return &s
}

func get(t *testing.T, h http.Handler, method, target, token string) (int, map[string]any, http.Header) {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var body map[string]any
	if rec.Body.Len() > 0 {
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("%s %s: %d, not JSON: %q", method, target, rec.Code, rec.Body)
		}
	}
	return rec.Code, body, rec.Header()
}

func TestLogHandlerPoll(t *testing.T) {
	l := events.NewMemoryLog(0, 0)
	r := run("acme", 1)
	emitAll(t, l, runEvent(t, r, 0), runEvent(t, r, 1), runEvent(t, r, 2))
	h := &events.LogHandler{Log: l, Subject: callerOf, MaxEvents: 2}

	status, body, header := get(t, h, "GET", "/runs/"+r+"/events/poll", "acme")
	if status != 200 || header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %v", status, body)
	}
	keys := []string{}
	for k := range body {
		keys = append(keys, k)
	}
	if len(keys) != 5 || body["runId"] != r || body["lastSequence"] != 2.0 || body["status"] != "completed" || body["isTerminal"] != true {
		t.Errorf("poll body %v", body)
	}
	evs := body["events"].([]any)
	if len(evs) != 2 {
		t.Fatalf("MaxEvents 2, got %d", len(evs))
	}
	first := evs[0].(map[string]any)
	if first["sequence"] != 0.0 || first["runId"] != r || first["type"] != "negotiation.decided" || first["schemaVersion"] != 1.0 {
		t.Errorf("event %v", first)
	}
	if _, has := first["tenant"]; has {
		t.Errorf("the tenant was serialized: %v", first)
	}

	for _, tc := range []struct {
		name, target, token string
		status              int
		code                string
		events              int
	}{
		{"after", "/runs/" + r + "/events/poll?afterSequence=1", "acme", 200, "", 1},
		{"past the end", "/runs/" + r + "/events/poll?afterSequence=7", "acme", 200, "", 0},
		{"after 0 and timeout", "/runs/" + r + "/events/poll?afterSequence=0&timeout=60", "acme", 200, "", 2},
		{"percent-encoded", "/runs/acme%2Frun0000000000000001/events/poll", "acme", 200, "", 2},
		{"projected", "/runs/acme~2Frun0000000000000001/events/poll", "acme", 200, "", 2},
		{"other tenant", "/runs/" + r + "/events/poll", "umbra", 404, "not_found", 0},
		{"missing run", "/runs/" + run("umbra", 5) + "/events/poll", "umbra", 404, "not_found", 0},
		{"no caller", "/runs/" + r + "/events/poll", "", 401, "unauthenticated", 0},
		{"anonymous caller", "/runs/" + r + "/events/poll", "anon", 401, "unauthenticated", 0},
		{"negative after", "/runs/" + r + "/events/poll?afterSequence=-1", "acme", 400, "validation_error", 0},
		{"signed after", "/runs/" + r + "/events/poll?afterSequence=+1", "acme", 400, "validation_error", 0},
		{"huge after", "/runs/" + r + "/events/poll?afterSequence=9999999999999999999", "acme", 400, "validation_error", 0},
		{"empty after", "/runs/" + r + "/events/poll?afterSequence=", "acme", 400, "validation_error", 0},
		{"timeout 0", "/runs/" + r + "/events/poll?timeout=0", "acme", 400, "validation_error", 0},
		{"timeout 61", "/runs/" + r + "/events/poll?timeout=61", "acme", 400, "validation_error", 0},
		{"timeout 1", "/runs/" + r + "/events/poll?timeout=1", "acme", 200, "", 2},
		{"repeated", "/runs/" + r + "/events/poll?afterSequence=1&afterSequence=2", "acme", 400, "validation_error", 0},
		{"lastSequence", "/runs/" + r + "/events/poll?lastSequence=1", "acme", 400, "validation_error", 0},
		{"since", "/runs/" + r + "/events/poll?since=1", "acme", 400, "validation_error", 0},
		{"bad query", "/runs/" + r + "/events/poll?%zz", "acme", 400, "validation_error", 0},
		{"bad run id", "/runs/acme/short/events/poll", "acme", 400, "validation_error", 0},
		{"no run id", "/runs//events/poll", "acme", 400, "validation_error", 0},
		{"other path", "/runs/" + r + "/events", "acme", 404, "not_found", 0},
		{"root", "/", "acme", 404, "not_found", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, _ := get(t, h, "GET", tc.target, tc.token)
			if status != tc.status || (tc.code != "" && body["error"] != tc.code) {
				t.Fatalf("%d %v, want %d %s", status, body, tc.status, tc.code)
			}
			if tc.code == "" {
				if evs, _ := body["events"].([]any); len(evs) != tc.events {
					t.Errorf("%d events, want %d", len(evs), tc.events)
				}
			} else if msg, _ := body["message"].(string); msg == "" {
				t.Errorf("no message: %v", body)
			}
		})
	}
	if status, _, header := get(t, h, "POST", "/runs/"+r+"/events/poll", "acme"); status != 405 || header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d %v", status, header)
	}
	var zero events.LogHandler
	if status, _, _ := get(t, &zero, "GET", "/runs/"+r+"/events/poll", "acme"); status != 401 {
		t.Errorf("the zero LogHandler answered %d", status)
	}
	if status, _, _ := get(t, &events.LogHandler{Subject: callerOf}, "GET", "/runs/"+r+"/events/poll", "acme"); status != 401 {
		t.Errorf("a LogHandler without a Log answered %d", status)
	}
}

// TestLogHandlerPollWaits: a poll on a run that is not terminal waits for
// its next event.
func TestLogHandlerPollWaits(t *testing.T) {
	l := events.NewMemoryLog(0, 0)
	r := run("acme", 1)
	emitAll(t, l, runEvent(t, r, 0))
	h := &events.LogHandler{Log: l, Subject: callerOf, PollInterval: time.Millisecond,
		RunStatus: func(context.Context, string) (string, bool) { return "running", false }}
	done := make(chan map[string]any)
	go func() {
		_, body, _ := get(t, h, "GET", "/runs/"+r+"/events/poll?afterSequence=0&timeout=60", "acme")
		done <- body
	}()
	emitAll(t, l, runEvent(t, r, 1))
	body := <-done
	if evs, _ := body["events"].([]any); len(evs) != 1 || body["status"] != "running" || body["isTerminal"] != false {
		t.Errorf("%v", body)
	}
}

type failingLog struct{ events.Log }

func (failingLog) RunEvents(context.Context, string, string, int64, int) ([]events.Event, int64, error) {
	return nil, -1, io.ErrUnexpectedEOF
}

func (failingLog) HostEvents(context.Context, string, string, int) ([]events.Event, error) {
	return nil, io.ErrUnexpectedEOF
}

func TestLogHandlerLogFails(t *testing.T) {
	h := &events.LogHandler{Log: failingLog{}, Subject: callerOf}
	if status, body, _ := get(t, h, "GET", "/runs/"+run("acme", 1)+"/events/poll", "acme"); status != 500 || body["error"] != "internal_error" {
		t.Errorf("%d %v", status, body)
	}
	if status, body, _ := get(t, h, "GET", "/host/events", "acme"); status != 500 || body["error"] != "internal_error" {
		t.Errorf("%d %v", status, body)
	}
	req := httptest.NewRequest("GET", "/host/events", nil)
	req.Header.Set("Authorization", "Bearer acme")
	req.Header.Set("Last-Event-ID", "abcdefabcdefabcdef")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 500 {
		t.Errorf("%d", rec.Code)
	}
}

// stream opens /host/events as token and returns a reader of its frames.
func stream(t *testing.T, srv *httptest.Server, token, lastID string) (*bufio.Reader, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/host/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return bufio.NewReader(resp.Body), func() { cancel(); resp.Body.Close() }
}

// frame reads the next frame: its event, id and data lines.
func frame(t *testing.T, r *bufio.Reader) (event, id, data string) {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" && event != "" {
			return
		}
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			event = v
		} else if v, ok := strings.CutPrefix(line, "id: "); ok {
			id = v
		} else if v, ok := strings.CutPrefix(line, "data: "); ok {
			data = v
		}
	}
}

// TestLogHandlerHostEvents: a stream carries its tenant's host events
// recorded after it opened, and no one else's; an unauthenticated
// exchange's event reaches no stream; Last-Event-ID resumes after it.
func TestLogHandlerHostEvents(t *testing.T) {
	l := events.NewMemoryLog(0, 0)
	old := hostEvent(t, "acme", 0)
	emitAll(t, l, old)
	srv := httptest.NewServer(&events.LogHandler{Log: l, Subject: callerOf, PollInterval: time.Millisecond})
	defer srv.Close()

	r, closeStream := stream(t, srv, "acme", "")
	defer closeStream()
	// The stream has opened (its headers came), so these are after it.
	mine1, theirs, anon, mine2 := hostEvent(t, "acme", 1), hostEvent(t, "umbra", 1), hostEvent(t, "", 1), hostEvent(t, "acme", 2)
	emitAll(t, l, theirs, anon, runEvent(t, run("acme", 1), 1), mine1, mine2)
	for _, want := range []events.Event{mine1, mine2} {
		event, id, data := frame(t, r)
		if event != "negotiation.decided" || id != want.ID {
			t.Fatalf("frame %s %s, want %s", event, id, want.ID)
		}
		var env map[string]any
		if err := json.Unmarshal([]byte(data), &env); err != nil {
			t.Fatal(err)
		}
		_, hasRun := env["runId"]
		_, hasSeq := env["sequence"]
		_, hasTenant := env["tenant"]
		if env["eventId"] != want.ID || env["delivery"] != "durable" || hasRun || hasSeq || hasTenant {
			t.Errorf("envelope %v", env)
		}
	}

	// Resuming after the old event replays what came after it.
	r2, close2 := stream(t, srv, "acme", old.ID)
	defer close2()
	for _, want := range []events.Event{mine1, mine2} {
		if _, id, _ := frame(t, r2); id != want.ID {
			t.Fatalf("resumed at %s, want %s", id, want.ID)
		}
	}

	// umbra's stream, opened after everything, sees only its own new one.
	r3, close3 := stream(t, srv, "umbra", "")
	defer close3()
	later := hostEvent(t, "umbra", 3)
	emitAll(t, l, hostEvent(t, "acme", 3), hostEvent(t, "", 3), later)
	if _, id, _ := frame(t, r3); id != later.ID {
		t.Fatalf("umbra got %s, want %s", id, later.ID)
	}
}

func TestLogHandlerHostEventsRefusals(t *testing.T) {
	l := events.NewMemoryLog(0, 0)
	h := &events.LogHandler{Log: l, Subject: callerOf, MaxStreams: 1}
	for _, tc := range []struct {
		name, target, token, lastID string
		status                      int
		code                        string
	}{
		{"no caller", "/host/events", "", "", 401, "unauthenticated"},
		{"anonymous", "/host/events", "anon", "", 401, "unauthenticated"},
		{"query", "/host/events?x=1", "acme", "", 400, "validation_error"},
		{"bad Last-Event-ID", "/host/events", "acme", "not an id\n", 400, "validation_error"},
		{"long Last-Event-ID", "/host/events", "acme", strings.Repeat("a", 129), 400, "validation_error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", tc.target, nil)
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			if tc.lastID != "" {
				req.Header["Last-Event-Id"] = []string{tc.lastID}
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			var body map[string]any
			_ = json.Unmarshal(rec.Body.Bytes(), &body)
			if rec.Code != tc.status || body["error"] != tc.code {
				t.Errorf("%d %v, want %d %s", rec.Code, body, tc.status, tc.code)
			}
		})
	}
	// HEAD answers the stream's headers and ends.
	if status, _, header := get(t, h, "HEAD", "/host/events", "acme"); status != 200 || header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("HEAD: %d %v", status, header)
	}
	// One stream open: the second is refused 429 with Retry-After.
	srv := httptest.NewServer(h)
	defer srv.Close()
	_, closeStream := stream(t, srv, "acme", "")
	defer closeStream()
	status, body, header := get(t, h, "GET", "/host/events", "acme")
	if status != 429 || body["error"] != "rate_limited" || header.Get("Retry-After") == "" {
		t.Errorf("a stream over MaxStreams: %d %v %v", status, body, header)
	}
}
