package seams_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/wopneg/wopneg/negotiate/seams"
)

// reasonOf is details.reason of an answer.
func reasonOf(body map[string]any) string {
	d, _ := body["details"].(map[string]any)
	r, _ := d["reason"].(string)
	return r
}

// runEvents polls the run as acme and returns its events' payloads.
func (r *rig) runEvents(t *testing.T, runID string) []map[string]any {
	t.Helper()
	status, body := r.do(t, http.MethodGet, "/runs/"+runID+"/events/poll", "acme", nil)
	if status != http.StatusOK {
		t.Fatalf("poll %s: %d %v", runID, status, body)
	}
	var out []map[string]any
	evs, _ := body["events"].([]any)
	for _, e := range evs {
		out = append(out, e.(map[string]any)["payload"].(map[string]any))
	}
	return out
}

// TestA2ANoDecision (issue 19 item 2): a peer that cannot be reached,
// hangs up, or answers no card is answered with the host's internal_error,
// whose details.reason says which failure it was, and no run: nothing was
// decided, so nothing is recorded.
func TestA2ANoDecision(t *testing.T) {
	crashed := httptest.NewServer(http.NotFoundHandler())
	crashed.Close()
	for _, tc := range []struct {
		name    string
		url     string
		handler http.HandlerFunc
		reason  string
	}{
		{"crashed peer", crashed.URL, nil, "unreachable"},
		{"hang-up", "", func(w http.ResponseWriter, _ *http.Request) {
			if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
				c.Close()
			}
		}, "hang-up"},
		{"502 gateway", "", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) }, "not-an-answer"},
		{"no card", "", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, "not-an-answer"},
		{"not a card", "", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `{"name":"x"}`) }, "not-an-answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.url
			if tc.handler != nil {
				peer := httptest.NewServer(tc.handler)
				defer peer.Close()
				url = peer.URL
			}
			r := newRig(t, testFacets())
			status, body := r.call(t, "a2a", "acme", map[string]any{"peerUrl": url})
			if status != 500 || body["error"] != "internal_error" || reasonOf(body) != tc.reason || runOf(body) != "" {
				t.Errorf("%d %v, want 500 internal_error, reason %s, no run", status, body, tc.reason)
			}
			if n := r.emitted.Load(); n != 0 {
				t.Errorf("%d events recorded", n)
			}
		})
	}
}

// TestSeamsEgress (issue 19 item 4): the seams reach loopback only when
// the Handler allows it, and a metadata address never.
func TestSeamsEgress(t *testing.T) {
	peer := newFakeA2A(t, "1.1")
	for _, tc := range []struct {
		name     string
		url      string
		loopback bool
		status   int
	}{
		{"loopback refused by default", peer.srv.URL, false, 500},
		{"loopback allowed", peer.srv.URL, true, 200},
		{"metadata refused", "http://169.254.169.254", true, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRigWith(t, testFacets(), func(h *seams.Handler) { h.AllowLoopback, h.AllowPrivate = tc.loopback, true })
			status, body := r.call(t, "a2a", "acme", map[string]any{"peerUrl": tc.url})
			if status != tc.status || (status == 500 && reasonOf(body) != "egress-denied") {
				t.Errorf("%d %v", status, body)
			}
		})
	}
}

// TestRuntimeDrift (issue 19 item 3): the card offers 1.1 and the peer
// refuses SendMessage at 1.1 (-32009, in any spelling, or an ErrorInfo
// VERSION_NOT_SUPPORTED in either shape); server/discover offers
// 2026-07-28 and tools/call is refused at it (-32022, in any spelling, or
// a v2 envelope). The caller gets interop_version_unsupported, and the run
// holds the acceptance and then the runtime refusal, for the same peer.
func TestRuntimeDrift(t *testing.T) {
	mcpPeer := func(answer string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			if r.Header.Get("Mcp-Method") == "server/discover" {
				_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"]}}`)
				return
			}
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, answer)
		}
	}
	for _, tc := range []struct {
		proto, version string
		peer           http.HandlerFunc
	}{
		{"a2a", "1.1", a2aPeer(`{"jsonrpc":"2.0","id":1,"error":{"code":-32009,"message":"no"}}`)},
		{"a2a", "1.1", a2aPeer(`{"jsonrpc":"2.0","id":1,"error":{"code":-32009.0,"message":"no"}}`)},
		{"a2a", "1.1", a2aPeer(`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED"}]}}`)},
		{"a2a", "1.1", a2aPeer(`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no","data":{"reason":"VERSION_NOT_SUPPORTED"}}}`)},
		{"mcp", "2026-07-28", mcpPeer(`{"jsonrpc":"2.0","id":2,"error":{"code":-32022,"message":"unsupported","data":{"supported":["2025-11-25"],"requested":"2026-07-28"}}}`)},
		{"mcp", "2026-07-28", mcpPeer(`{"jsonrpc":"2.0","id":2,"error":{"code":-32022.0,"message":"unsupported"}}`)},
		{"mcp", "2026-07-28", mcpPeer(`{"error":"interop_version_unsupported","message":"no"}`)},
	} {
		peer := httptest.NewServer(tc.peer)
		r := newRig(t, testFacets())
		key := map[string]string{"a2a": "peerUrl", "mcp": "serverUrl"}[tc.proto]
		status, body := r.call(t, tc.proto, "acme", map[string]any{key: peer.URL})
		peer.Close()
		if status != 400 || body["error"] != "interop_version_unsupported" || reasonOf(body) != "unsupported" {
			t.Fatalf("%s: %d %v", tc.proto, status, body)
		}
		evs := r.runEvents(t, runOf(body))
		if len(evs) != 2 || evs[0]["outcome"] != "accepted" || evs[0]["version"] != tc.version ||
			evs[1]["outcome"] != "refused" || evs[1]["reason"] != "unsupported" || evs[1]["requested"] != tc.version || evs[1]["peerDigest"] != evs[0]["peerDigest"] {
			t.Errorf("%s: run %v, want accepted %s then refused %s unsupported", tc.proto, evs, tc.version, tc.version)
		}
	}
}
