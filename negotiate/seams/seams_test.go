package seams_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate/seams"
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
		{name: "peerOffersOnly narrows to a downgrade", offers: []string{"1.0", "1.1"}, body: map[string]any{"peerOffersOnly": "1.0"}, status: 200, version: "1.0", reason: "ok", wire: []string{"1.0"}},
		{name: "peerOffersOnly offered nowhere", offers: []string{"1.0", "1.1"}, body: map[string]any{"peerOffersOnly": "2.0"}, status: 400, reason: "below-floor", errCode: "interop_version_unsupported"},
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
				// What the peer offered is said beside what the host serves.
				if offered := fmt.Sprint(d["offered"]); offered != fmt.Sprint(wantOffered(tc.offers, tc.body)) {
					t.Errorf("details.offered %s, want %v", offered, wantOffered(tc.offers, tc.body))
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
		notify  bool // a notification comes first in a stream
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
		{name: "peerOffersOnly over SSE", offers: []string{"2025-11-25", "2026-07-28"}, body: map[string]any{"peerOffersOnly": "2025-11-25"}, sse: true, status: 200, version: "2025-11-25", reason: "ok", calls: 1},
		// The answer peerOffersOnly narrows is the one the adapter reads:
		// of a stream, the response, whatever comes before it.
		{name: "peerOffersOnly over SSE, after a notification", offers: []string{"2025-11-25", "2026-07-28"}, body: map[string]any{"peerOffersOnly": "2026-07-28"}, sse: true, notify: true, status: 200, version: "2026-07-28", reason: "ok", calls: 1},
		{name: "over SSE, after a notification", offers: []string{"2025-11-25", "2026-07-28"}, body: map[string]any{}, sse: true, notify: true, status: 200, version: "2026-07-28", reason: "ok", calls: 1},
		{name: "peerOffersOnly from a -32022", offers: []string{"2025-06-18", "2025-11-25"}, body: map[string]any{"peerOffersOnly": "2025-11-25"}, status: 200, version: "2025-11-25", reason: "ok", calls: 1},
		{name: "peerOffersOnly below the floor", offers: []string{"2025-06-18", "2026-07-28"}, body: map[string]any{"peerOffersOnly": "2025-06-18"}, status: 400, reason: "below-floor", errCode: "interop_version_unsupported"},
		{name: "mrtr within the ceiling", offers: []string{"2026-07-28"}, body: map[string]any{"tool": "needs_input_loop", "arguments": map[string]any{"rounds": 2}, "clientCapabilities": map[string]any{"elicitation": map[string]any{}}, "elicitationAnswer": map[string]any{"name": "Ada"}}, status: 200, version: "2026-07-28", reason: "ok", calls: 3, rounds: 2},
		{name: "mrtr past the ceiling", offers: []string{"2026-07-28"}, body: map[string]any{"tool": "needs_input_loop", "arguments": map[string]any{"rounds": 3}, "elicitationAnswer": map[string]any{"name": "Ada"}}, status: 422, version: "2026-07-28", reason: "ok", errCode: "mcp_mrtr_rounds_exceeded", calls: 3},
		{name: "mrtr declined", offers: []string{"2026-07-28"}, body: map[string]any{"tool": "needs_input_loop", "arguments": map[string]any{"rounds": 1}}, status: 200, version: "2026-07-28", reason: "ok", calls: 2, rounds: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, testFacets())
			server := newFakeMCP(t, tc.offers...)
			server.sse, server.notify = tc.sse, tc.notify
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

// TestPeerOffersOnlyLegacyCard: an A2A 0.3 card names its version at the
// top; peerOffersOnly keeps it (an authenticated downgrade to 0.3, for a
// host that still offers it) or drops it (nothing offered).
func TestPeerOffersOnlyLegacyCard(t *testing.T) {
	set := testFacets()
	set.A2A = &facets.A2A{Versions: []string{"0.3", "1.0"}, PreferredVersion: "1.0", MinimumVersion: "0.3", RefreshedAt: "2026-11-01"}
	for _, tc := range []struct {
		only   string
		status int
		reason string
	}{{"0.3", 200, "ok"}, {"1.0", 400, "below-floor"}} {
		peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				_, _ = w.Write([]byte(`{"protocolVersion":"0.3.0","url":"http://` + r.Host + `/rpc"}`))
				return
			}
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
		}))
		r := newRig(t, set)
		status, body := r.call(t, "a2a", "acme", map[string]any{"peerUrl": peer.URL, "peerOffersOnly": tc.only})
		peer.Close()
		if status != tc.status {
			t.Errorf("only %s: %d %v", tc.only, status, body)
		}
		if ev := r.lastEvent(t, runOf(body), "acme"); ev["reason"] != tc.reason {
			t.Errorf("only %s: %v", tc.only, ev)
		}
	}
}

// TestPeerOffersOnlyReadsTheCardAsTheAdapterDoes (issue 18 item 1): the
// tap narrows a card the adapter can read, whatever encoding/json made of
// it. A card with a number beyond float64 ("n":1e400) is read by the
// strict reader; before this change the tap read it with encoding/json,
// failed, and passed it on unnarrowed, so peerOffersOnly was silently not
// applied and 1.1 was decided instead of 1.0.
func TestPeerOffersOnlyReadsTheCardAsTheAdapterDoes(t *testing.T) {
	var wire []string
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			_, _ = w.Write([]byte(`{"n":1e400,"name":"big","supportedInterfaces":[` +
				`{"url":"http://` + r.Host + `/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.1"},` +
				`{"url":"http://` + r.Host + `/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`))
			return
		}
		wire = append(wire, r.Header.Get("A2A-Version"))
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	}))
	defer peer.Close()
	r := newRig(t, testFacets())
	status, body := r.call(t, "a2a", "acme", map[string]any{"peerUrl": peer.URL, "peerOffersOnly": "1.0"})
	if status != 200 || body["negotiatedVersion"] != "1.0" || strings.Join(wire, ",") != "1.0" {
		t.Fatalf("status %d, body %v, the peer saw %v; want 200 at 1.0, as narrowed", status, body, wire)
	}
	if ev := r.lastEvent(t, runOf(body), "acme"); ev["version"] != "1.0" || ev["outcome"] != "accepted" {
		t.Errorf("event %v, want accepted at 1.0", ev)
	}
}

// TestMRTRRetries: each retry is a new JSON-RPC id and answers every input
// request (accept with the answer, decline without one); a result without
// requestState is retried without one.
func TestMRTRRetries(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer any
		action string
	}{
		{"accept", map[string]any{"name": "Ada"}, "accept"},
		{"decline", nil, "decline"},
		{"null is no answer", "null", "decline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, testFacets())
			server := newFakeMCP(t, "2026-07-28")
			body := map[string]any{"serverUrl": server.srv.URL, "tool": "needs_input_loop", "arguments": map[string]any{"stateless": true}}
			if tc.answer != nil {
				body["elicitationAnswer"] = tc.answer
			}
			raw, _ := json.Marshal(body)
			if tc.answer == "null" {
				raw = []byte(strings.Replace(string(raw), `"elicitationAnswer":"null"`, `"elicitationAnswer":null`, 1))
			}
			status, out := r.do(t, http.MethodPost, seams.Prefix+"/sample/mcp/invoke", "acme", raw)
			if status != 200 {
				t.Fatalf("%d %v", status, out)
			}
			m := out["mrtr"].(map[string]any)
			if m["requestStateEchoed"] != false || m["rounds"] != 1.0 || m["retried"] != true || m["inputRequiredSeen"] != true {
				t.Errorf("mrtr %v", m)
			}
			calls := server.log()
			first, retry := calls[len(calls)-2], calls[len(calls)-1]
			if first.id != "2" || retry.id != "3" || strings.Contains(string(retry.body), "requestState") {
				t.Errorf("retry id %s after %s; body %s", retry.id, first.id, retry.body)
			}
			if len(retry.responses) != 2 {
				t.Fatalf("the retry answers %v, want a and b", retry.responses)
			}
			for key, v := range retry.responses {
				resp := v.(map[string]any)
				if resp["action"] != tc.action {
					t.Errorf("%s: %v, want %s", key, resp, tc.action)
				}
				if _, has := resp["content"]; has != (tc.action == "accept") {
					t.Errorf("%s: %v", key, resp)
				}
			}
		})
	}
}

// TestToolNameBound: a tool name of 128 bytes is a tool name.
func TestToolNameBound(t *testing.T) {
	r := newRig(t, testFacets())
	server := newFakeMCP(t, "2026-07-28")
	if status, body := r.call(t, "mcp", "acme", map[string]any{"serverUrl": server.srv.URL, "tool": strings.Repeat("t", 128), "arguments": map[string]any{}}); status != 200 {
		t.Errorf("%d %v", status, body)
	}
}

// TestEventStreamAnswers: a response split over several data lines, with
// CRLF line ends, after an event that is not a response, is read whole.
func TestEventStreamAnswers(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if r.Header.Get("Mcp-Method") == "server/discover" {
			_, _ = w.Write([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":1,\r\ndata: \"result\":{\"supportedVersions\":[\"2026-07-28\"]}}\r\n\r\ndata: {\"note\":2}\r\n\r\n"))
			return
		}
		_, _ = w.Write([]byte("data: {\"note\":1}\n\ndata:{\"jsonrpc\":\"2.0\",\"id\":2,\ndata: \"result\":{\"resultType\":\"complete\"}}\n\ndata: {\"note\":3}\n\n"))
	}))
	defer server.Close()
	r := newRig(t, testFacets())
	status, body := r.call(t, "mcp", "acme", map[string]any{"serverUrl": server.URL})
	if status != 200 || body["negotiatedVersion"] != "2026-07-28" {
		t.Errorf("%d %v", status, body)
	}
}

// The seams continue the seam request's trace (RFC 0207 §A): every request
// to the peer carries its trace id, flags and tracestate under a parent id
// of its own, in the headers and in the message (_meta, metadata.openwop);
// a seam request without one well-formed traceparent sends none.
func TestTraceContinued(t *testing.T) {
	const suite = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, tc := range []struct {
		name    string
		parents []string
		want    bool
	}{
		{"continued", []string{suite}, true},
		{"none", nil, false},
		{"malformed", []string{strings.ToUpper(suite)}, false},
		{"two lines", []string{suite, suite}, false},
	} {
		for _, proto := range []string{"a2a", "mcp"} {
			t.Run(tc.name+"/"+proto, func(t *testing.T) {
				r := newRig(t, testFacets())
				var seen func() []seenRequest
				body := map[string]any{}
				if proto == "a2a" {
					peer := newFakeA2A(t, "1.0")
					body["peerUrl"], seen = peer.srv.URL, func() []seenRequest { peer.mu.Lock(); defer peer.mu.Unlock(); return peer.seen }
				} else {
					peer := newFakeMCP(t, "2026-07-28")
					body["serverUrl"], seen = peer.srv.URL, func() []seenRequest { peer.mu.Lock(); defer peer.mu.Unlock(); return peer.seen }
				}
				raw, _ := json.Marshal(body)
				req, _ := http.NewRequest(http.MethodPost, r.srv.URL+seams.Prefix+"/sample/"+proto+"/invoke", bytes.NewReader(raw))
				req.Header.Set("Authorization", "Bearer acme")
				req.Header["Traceparent"] = tc.parents
				req.Header["Tracestate"] = []string{"vendor=x", "other=y"}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d", resp.StatusCode)
				}
				requests, parentIDs := seen(), map[string]bool{}
				if len(requests) < 2 {
					t.Fatalf("the peer saw %d requests, want the negotiation and a call", len(requests))
				}
				for i, s := range requests {
					got := s.header.Get("Traceparent")
					if !tc.want {
						if got != "" || s.header.Get("Tracestate") != "" || bytes.Contains(s.body, []byte("trace")) {
							t.Errorf("request %d (%s) carries trace context: %q %s", i, s.method, got, s.body)
						}
						continue
					}
					if len(got) != len(suite) || got[:36] != suite[:36] || got[52:] != suite[52:] || got[36:52] == suite[36:52] || parentIDs[got] {
						t.Errorf("request %d (%s) traceparent %q: want the suite's trace id and flags under a parent id of its own", i, s.method, got)
					}
					parentIDs[got] = true
					if st := s.header.Get("Tracestate"); st != "vendor=x,other=y" {
						t.Errorf("request %d (%s) tracestate %q", i, s.method, st)
					}
					if s.method == http.MethodPost && !bytes.Contains(s.body, []byte(`"traceparent":"`+got+`","tracestate":"vendor=x,other=y"`)) {
						t.Errorf("request %d: the message does not carry its traceparent %s: %s", i, got, s.body)
					}
				}
			})
		}
	}
}

// wantOffered is what a seam's refusal says the fake peer offered: its
// versions, or the one peerOffersOnly narrows them to when it offers it.
func wantOffered(offers []string, body map[string]any) []any {
	out := []any{}
	for _, v := range offers {
		if only, ok := body["peerOffersOnly"]; !ok || only == v {
			out = append(out, v)
		}
	}
	return out
}
