package seams_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wopneg/wopneg/events"
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
// holds the acceptance and then the runtime refusal, for the same peer:
// below-floor when every version the refusal lists is below the floor
// (what is no version, a number among them, passed over, as
// exchange.RefusalOffer passes over a string that is none), unsupported
// otherwise, at both seams as at every Transport; the answer says the
// recorded reason.
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
	const unsupported, belowFloor = "unsupported", "below-floor"
	for _, tc := range []struct {
		proto, version string
		peer           http.HandlerFunc
		reason         string
	}{
		{"a2a", "1.1", a2aPeer(`{"jsonrpc":"2.0","id":1,"error":{"code":-32009,"message":"no"}}`), unsupported},
		{"a2a", "1.1", a2aPeer(`{"jsonrpc":"2.0","id":1,"error":{"code":-32009.0,"message":"no"}}`), unsupported},
		{"a2a", "1.1", a2aPeer(`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED"}]}}`), unsupported},
		{"a2a", "1.1", a2aPeer(`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no","data":{"reason":"VERSION_NOT_SUPPORTED"}}}`), unsupported},
		{"mcp", "2026-07-28", mcpPeer(`{"jsonrpc":"2.0","id":2,"error":{"code":-32022,"message":"unsupported","data":{"supported":["2025-11-25"],"requested":"2026-07-28"}}}`), unsupported},
		{"mcp", "2026-07-28", mcpPeer(`{"jsonrpc":"2.0","id":2,"error":{"code":-32022.0,"message":"unsupported"}}`), unsupported},
		{"mcp", "2026-07-28", mcpPeer(`{"error":"interop_version_unsupported","message":"no"}`), unsupported},
		// As a lenient client reads it, as every Transport does: a key in
		// another case, a repeated key the strict reading refuses.
		{"mcp", "2026-07-28", mcpPeer(`{"jsonrpc":"2.0","id":2,"error":{"CODE":-32022,"message":"unsupported"}}`), unsupported},
		{"mcp", "2026-07-28", mcpPeer(`{"jsonrpc":"2.0","id":2,"error":{"code":-32022},"error":{"code":1}}`), unsupported},
		{"mcp", "2026-07-28", mcpPeer(`{"jsonrpc":"2.0","id":2,"error":{"code":-32022,"message":"unsupported","data":{"supported":["2024-11-05","2025-06-18"],"requested":"2026-07-28"}}}`), belowFloor},
		{"mcp", "2026-07-28", mcpPeer(`{"jsonrpc":"2.0","id":2,"error":{"code":-32022,"message":"unsupported","data":{"supported":["2024-11-05",7],"requested":"2026-07-28"}}}`), belowFloor},
		{"a2a", "1.1", a2aPeer(`{"jsonrpc":"2.0","id":1,"error":{"code":-32009,"message":"no","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED","metadata":{"supportedVersions":"0.3"}}]}}`), belowFloor},
	} {
		peer := httptest.NewServer(tc.peer)
		r := newRig(t, testFacets())
		key := map[string]string{"a2a": "peerUrl", "mcp": "serverUrl"}[tc.proto]
		status, body := r.call(t, tc.proto, "acme", map[string]any{key: peer.URL})
		peer.Close()
		if status != 400 || body["error"] != "interop_version_unsupported" || reasonOf(body) != tc.reason {
			t.Fatalf("%s: %d %v", tc.proto, status, body)
		}
		evs := r.runEvents(t, runOf(body))
		if len(evs) != 2 || evs[0]["outcome"] != "accepted" || evs[0]["version"] != tc.version ||
			evs[1]["outcome"] != "refused" || evs[1]["reason"] != tc.reason || evs[1]["requested"] != tc.version || evs[1]["peerDigest"] != evs[0]["peerDigest"] {
			t.Errorf("%s: run %v, want accepted %s then refused %s %s", tc.proto, evs, tc.version, tc.version, tc.reason)
		}
	}
}

// countingTransport is a host's own Transport: http.DefaultTransport,
// counting what it sends.
type countingTransport struct{ sent atomic.Int64 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.sent.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

// TestSeamsHostTransport: a host's own Transport sends every request to
// the peer, with its own address policy: loopback is reached without
// AllowLoopback.
func TestSeamsHostTransport(t *testing.T) {
	peer := newFakeA2A(t, "1.1")
	host := &countingTransport{}
	r := newRigWith(t, testFacets(), func(h *seams.Handler) { h.Transport, h.AllowLoopback = host, false })
	status, body := r.call(t, "a2a", "acme", map[string]any{"peerUrl": peer.srv.URL})
	if status != 200 || host.sent.Load() != 2 {
		t.Errorf("%d %v; the host's Transport sent %d requests, want the card and the call", status, body, host.sent.Load())
	}
}

// failAfterFirst makes the Handler's sink fail every event after its
// first.
func failAfterFirst(h *seams.Handler) {
	sink := h.Sink
	var n atomic.Int64
	h.Sink = events.SinkFunc(func(ctx context.Context, e events.Event) error {
		if n.Add(1) > 1 {
			return errors.New("event store down")
		}
		return sink.Emit(ctx, e)
	})
}

// TestRuntimeDriftUnrecorded: a runtime refusal whose record cannot be
// written is answered as the host's failure to record, naming the run,
// for both protocols.
func TestRuntimeDriftUnrecorded(t *testing.T) {
	for _, tc := range []struct {
		proto, key string
		peer       http.HandlerFunc
	}{
		{"a2a", "peerUrl", a2aPeer(`{"jsonrpc":"2.0","id":1,"error":{"code":-32009,"message":"no"}}`)},
		{"mcp", "serverUrl", func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Mcp-Method") == "server/discover" {
				_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"]}}`)
				return
			}
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":2,"error":{"code":-32022,"message":"unsupported"}}`)
		}},
	} {
		peer := httptest.NewServer(tc.peer)
		r := newRigWith(t, testFacets(), failAfterFirst)
		status, body := r.call(t, tc.proto, "acme", map[string]any{tc.key: peer.URL})
		peer.Close()
		if status != 500 || body["error"] != "internal_error" || body["message"] != "the negotiation could not be recorded; retry" || runOf(body) == "" {
			t.Errorf("%s: %d %v", tc.proto, status, body)
		}
	}
}

// TestCallFailureIsTheHosts: a call at the decided version that fails on
// the way (a 502, an answer over the bound) is the host's internal_error,
// naming the failure and the run, whose record is the acceptance.
func TestCallFailureIsTheHosts(t *testing.T) {
	for _, tc := range []struct {
		name, reason string
		answer       func(w http.ResponseWriter)
	}{
		{"502", "not-an-answer", func(w http.ResponseWriter) { w.WriteHeader(http.StatusBadGateway) }},
		{"over the bound", "too-large", func(w http.ResponseWriter) {
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":"`+strings.Repeat("x", 1<<20)+`"}`)
		}},
	} {
		peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				a2aPeer("")(w, r)
				return
			}
			tc.answer(w)
		}))
		r := newRig(t, testFacets())
		status, body := r.call(t, "a2a", "acme", map[string]any{"peerUrl": peer.URL})
		peer.Close()
		if status != 500 || body["error"] != "internal_error" || reasonOf(body) != tc.reason || runOf(body) == "" {
			t.Errorf("%s: %d %v", tc.name, status, body)
			continue
		}
		if ev := r.lastEvent(t, runOf(body), "acme"); ev["outcome"] != "accepted" {
			t.Errorf("%s: last event %v", tc.name, ev)
		}
	}
}

// TestPeerOffersOnlyUnionCard: narrowing a 0.3/1.x union card to 1.0 keeps
// its 1.0 interface (and drops the 0.3 top-level version), so 1.0 is
// decided.
func TestPeerOffersOnlyUnionCard(t *testing.T) {
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			_, _ = io.WriteString(w, `{"protocolVersion":"0.3.0","url":"http://`+r.Host+`/rpc","supportedInterfaces":[`+
				`{"url":"http://`+r.Host+`/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.1"},`+
				`{"url":"http://`+r.Host+`/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`)
			return
		}
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	defer peer.Close()
	r := newRig(t, testFacets())
	status, body := r.call(t, "a2a", "acme", map[string]any{"peerUrl": peer.URL, "peerOffersOnly": "1.0"})
	if status != 200 || body["negotiatedVersion"] != "1.0" {
		t.Errorf("%d %v", status, body)
	}
}
