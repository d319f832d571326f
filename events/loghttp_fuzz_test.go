package events_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/events"
)

// FuzzLogHandlerPoll sends any path and query to the poll route: the
// answer is 200 with the poll shape for the caller's own run, or an
// envelope with 400, 404 or 401 — never a panic, never another tenant's
// run.
func FuzzLogHandlerPoll(f *testing.F) {
	l := events.NewMemoryLog(0, 0)
	r := run("acme", 1)
	emitAll(f, l, runEvent(f, r, 0), runEvent(f, r, 1))
	emitAll(f, l, runEvent(f, run("umbra", 1), 2))
	h := &events.LogHandler{Log: l, Subject: callerOf}
	for _, seed := range []string{r + "/events/poll", r + "/events/poll?afterSequence=0", "acme~2Frun0000000000000001/events/poll?timeout=1",
		run("umbra", 1) + "/events/poll", "x/events/poll?afterSequence=-1", r + "/events/poll?since=1&since=2", "%zz"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, rest string) {
		req := httptest.NewRequest("GET", "/", nil)
		req.URL.Path, req.URL.RawQuery, _ = strings.Cut("/runs/"+rest, "?")
		req.Header.Set("Authorization", "Bearer acme")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var body map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("%d, not JSON: %q", rec.Code, rec.Body)
		}
		switch rec.Code {
		case 200:
			if id, _ := body["runId"].(string); !strings.HasPrefix(id, "acme/") {
				t.Fatalf("acme read %v", body)
			}
		case 400, 404:
			if body["error"] == nil || body["message"] == "" {
				t.Fatalf("%d %v", rec.Code, body)
			}
		default:
			t.Fatalf("status %d: %v", rec.Code, body)
		}
	})
}
