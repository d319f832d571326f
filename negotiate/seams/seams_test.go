package seams_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/events"
)

func TestA2A(t *testing.T) {
	for _, tc := range []struct {
		name       string
		offers     []string
		body       map[string]any
		status     int
		version    string // negotiatedVersion, or the event's version
		reason     string // the event's reason
		wire       []string
		errCode    string
		authorityQ bool
	}{
		{name: "preferred", offers: []string{"1.0", "1.1"}, body: map[string]any{}, status: 200, version: "1.1", reason: "ok", wire: []string{"1.1"}},
		{name: "authenticated downgrade", offers: []string{"1.0"}, body: map[string]any{}, status: 200, version: "1.0", reason: "ok", wire: []string{"1.0"}},
		{name: "unauthenticated downgrade refused", offers: []string{"1.0"}, body: map[string]any{"authenticated": false}, status: 400, reason: "unauthenticated", errCode: "interop_version_unsupported"},
		{name: "peerOffersOnly below floor", offers: []string{"0.3", "1.0", "1.1"}, body: map[string]any{"peerOffersOnly": "0.3"}, status: 400, reason: "below-floor", errCode: "interop_version_unsupported"},
		{name: "unauthenticated below floor", offers: []string{"0.3"}, body: map[string]any{"authenticated": false, "peerOffersOnly": "0.3"}, status: 400, reason: "below-floor", errCode: "interop_version_unsupported"},
		{name: "requestVersion unsupported", offers: []string{"1.0", "1.1"}, body: map[string]any{"requestVersion": "99.0"}, status: 400, reason: "unsupported", errCode: "interop_version_unsupported"},
		{name: "requestVersion explicit", offers: []string{"1.0", "1.1"}, body: map[string]any{"requestVersion": "1.0"}, status: 200, version: "1.0", reason: "ok", wire: []string{"1.0"}},
		{name: "peer asserts authority", offers: []string{"1.1"}, body: map[string]any{"scenario": "peer-asserts-authority"}, status: 200, version: "1.1", reason: "ok", wire: []string{"1.1"}, authorityQ: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, testFacets())
			peer := newFakeA2A(t, tc.offers...)
			tc.body["peerUrl"] = peer.srv.URL
			status, body := r.call(t, "a2a", "acme", tc.body)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %v", status, tc.status, body)
			}
			runID := runOf(body)
			if !strings.HasPrefix(runID, "acme/") {
				t.Fatalf("runId %q is not in the caller's tenant", runID)
			}
			ev := r.lastEvent(t, runID, "acme")
			if ev["reason"] != tc.reason || ev["protocol"] != "a2a" {
				t.Errorf("event %v, want reason %s", ev, tc.reason)
			}
			if got := peer.calls(); strings.Join(got, ",") != strings.Join(tc.wire, ",") {
				t.Errorf("the peer saw A2A-Version %v, want %v", got, tc.wire)
			}
			if tc.errCode != "" {
				if body["error"] != tc.errCode {
					t.Errorf("error %v, want %s", body["error"], tc.errCode)
				}
				d := body["details"].(map[string]any)
				if d["protocol"] != "a2a" || d["reason"] != tc.reason {
					t.Errorf("details %v", d)
				}
				if ev["outcome"] != "refused" {
					t.Errorf("event %v is not refused", ev)
				}
				return
			}
			if body["negotiatedVersion"] != tc.version || ev["version"] != tc.version || ev["outcome"] != "accepted" {
				t.Errorf("negotiatedVersion %v, event %v, want %s", body["negotiatedVersion"], ev, tc.version)
			}
			digest, _ := events.PeerDigest(peer.srv.URL)
			if body["peerDigest"] != digest || ev["peerDigest"] != digest {
				t.Errorf("peerDigest %v / %v, want %s", body["peerDigest"], ev["peerDigest"], digest)
			}
			_, hasAuthority := body["peerAuthority"]
			if hasAuthority != tc.authorityQ {
				t.Errorf("peerAuthority present %v, want %v", hasAuthority, tc.authorityQ)
			}
		})
	}
}

func TestMCP(t *testing.T) {
	for _, tc := range []struct {
		name    string
		offers  []string
		body    map[string]any
		sse     bool
		status  int
		version string
		reason  string
		errCode string
		calls   int // tools/call requests the server saw
		rounds  float64
	}{
		{name: "preferred", offers: []string{"2025-11-25", "2026-07-28"}, body: map[string]any{}, status: 200, version: "2026-07-28", reason: "ok", calls: 1},
		{name: "preferred over SSE", offers: []string{"2026-07-28"}, body: map[string]any{}, sse: true, status: 200, version: "2026-07-28", reason: "ok", calls: 1},
		{name: "below floor requested", offers: []string{"2025-06-18"}, body: map[string]any{"requestVersion": "2025-06-18"}, status: 400, reason: "below-floor", errCode: "interop_version_unsupported"},
		{name: "below floor offered, unauthenticated", offers: []string{"2025-06-18"}, body: map[string]any{"authenticated": false}, status: 400, reason: "below-floor", errCode: "interop_version_unsupported"},
		{name: "unauthenticated downgrade refused", offers: []string{"2025-11-25"}, body: map[string]any{"authenticated": false}, status: 400, reason: "unauthenticated", errCode: "interop_version_unsupported"},
		{name: "authenticated downgrade", offers: []string{"2025-11-25"}, body: map[string]any{"peerOffersOnly": "2025-11-25"}, status: 200, version: "2025-11-25", reason: "ok", calls: 1},
		{name: "mrtr within the ceiling", offers: []string{"2026-07-28"}, body: map[string]any{"tool": "needs_input_loop", "arguments": map[string]any{"rounds": 2}, "clientCapabilities": map[string]any{"elicitation": map[string]any{}}, "elicitationAnswer": map[string]any{"name": "Ada"}}, status: 200, version: "2026-07-28", reason: "ok", calls: 3, rounds: 2},
		{name: "mrtr past the ceiling", offers: []string{"2026-07-28"}, body: map[string]any{"tool": "needs_input_loop", "arguments": map[string]any{"rounds": 3}, "elicitationAnswer": map[string]any{"name": "Ada"}}, status: 422, version: "2026-07-28", reason: "ok", errCode: "mcp_mrtr_rounds_exceeded", calls: 3},
		{name: "mrtr declined", offers: []string{"2026-07-28"}, body: map[string]any{"tool": "needs_input_loop", "arguments": map[string]any{"rounds": 1}}, status: 200, version: "2026-07-28", reason: "ok", calls: 2, rounds: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, testFacets())
			server := newFakeMCP(t, tc.offers...)
			server.sse = tc.sse
			tc.body["serverUrl"] = server.srv.URL
			status, body := r.call(t, "mcp", "acme", tc.body)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %v", status, tc.status, body)
			}
			runID := runOf(body)
			ev := r.lastEvent(t, runID, "acme")
			if ev["reason"] != tc.reason || ev["protocol"] != "mcp" {
				t.Errorf("event %v, want reason %s", ev, tc.reason)
			}
			calls := server.log()
			if n := countOf(calls, "tools/call"); n != tc.calls {
				t.Errorf("the server saw %d tools/call, want %d", n, tc.calls)
			}
			for _, c := range calls {
				if c.method == "tools/call" && (c.header != tc.version || c.meta != tc.version) {
					t.Errorf("tools/call at header %q, _meta %q, want %s", c.header, c.meta, tc.version)
				}
				if c.header < "2025-11-25" && c.method != "server/discover" {
					t.Errorf("a call below the floor reached the server: %+v", c)
				}
			}
			if tc.errCode != "" {
				if body["error"] != tc.errCode {
					t.Errorf("error %v, want %s", body["error"], tc.errCode)
				}
				if d, _ := body["details"].(map[string]any); d["runId"] != runID {
					t.Errorf("details %v lack the runId", d)
				}
				return
			}
			if body["negotiatedVersion"] != tc.version || ev["version"] != tc.version {
				t.Errorf("negotiatedVersion %v, event %v, want %s", body["negotiatedVersion"], ev, tc.version)
			}
			m, hasMRTR := body["mrtr"].(map[string]any)
			if hasMRTR != (tc.rounds > 0) {
				t.Fatalf("mrtr %v, want rounds %v", body["mrtr"], tc.rounds)
			}
			if hasMRTR && (m["rounds"] != tc.rounds || m["retried"] != true || m["requestStateEchoed"] != true) {
				t.Errorf("mrtr %v", m)
			}
		})
	}
}

func TestMRTRAnswersAndEchoes(t *testing.T) {
	r := newRig(t, testFacets())
	server := newFakeMCP(t, "2026-07-28")
	status, body := r.call(t, "mcp", "acme", map[string]any{"serverUrl": server.srv.URL, "tool": "needs_input_loop",
		"arguments": map[string]any{"rounds": 1}, "elicitationAnswer": map[string]any{"name": "Ada"}})
	if status != 200 {
		t.Fatalf("%d %v", status, body)
	}
	calls := server.log()
	retry := calls[len(calls)-1]
	if !strings.Contains(string(retry.body), `"inputResponses":{"name-1":{"action":"accept","content":{"name":"Ada"}}}`) {
		t.Errorf("the retry does not answer the input request: %s", retry.body)
	}
	first := calls[len(calls)-2]
	if first.state != "" || retry.state == "" {
		t.Errorf("requestState: first %q, retry %q", first.state, retry.state)
	}
}

// TestReplayedRequestState replays the retry the seam sent, state and
// all: the server opens each state once, so the replay is refused.
func TestReplayedRequestState(t *testing.T) {
	r := newRig(t, testFacets())
	server := newFakeMCP(t, "2026-07-28")
	if status, body := r.call(t, "mcp", "acme", map[string]any{"serverUrl": server.srv.URL, "tool": "needs_input_loop", "arguments": map[string]any{"rounds": 1}}); status != 200 {
		t.Fatalf("%d %v", status, body)
	}
	calls := server.log()
	retry := calls[len(calls)-1]
	req, _ := http.NewRequest(http.MethodPost, server.srv.URL, strings.NewReader(string(retry.body)))
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := jsonDecode(resp, &out); err != nil || out.Error == nil || out.Error.Code != -32602 {
		t.Fatalf("the replayed requestState was not refused: %+v %v", out, err)
	}
}
