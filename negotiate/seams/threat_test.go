package seams_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/negotiate/seams"
	"github.com/wopneg/wopneg/policy"
)

// TestOffUnlessMounted: a host that does not mount the handler has no
// seam, and the zero Handler serves nothing.
func TestOffUnlessMounted(t *testing.T) {
	srv := httptest.NewServer(http.NewServeMux())
	defer srv.Close()
	resp, err := http.Post(srv.URL+seams.Prefix+"/sample/a2a/invoke", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unmounted seam answered %d", resp.StatusCode)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, seams.Prefix+"/sample/a2a/invoke", strings.NewReader(`{"peerUrl":"http://127.0.0.1:1"}`))
	req.Header.Set("Authorization", "Bearer acme")
	(&seams.Handler{Subject: subjectOf}).ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("a Handler without a Negotiator answered %d", rec.Code)
	}
}

func TestRefusals(t *testing.T) {
	r := newRig(t, testFacets())
	peer := newFakeA2A(t, "1.1")
	big := `{"peerUrl":"` + strings.Repeat("a", 70<<10) + `"}`
	for _, tc := range []struct {
		name, method, path, token, body string
		status                          int
		code                            string
	}{
		{"no caller", "POST", "/sample/a2a/invoke", "", `{"peerUrl":"` + peer.srv.URL + `"}`, 401, "unauthenticated"},
		{"unknown caller", "POST", "/sample/a2a/invoke", "nobody", `{"peerUrl":"` + peer.srv.URL + `"}`, 401, "unauthenticated"},
		{"GET", "GET", "/sample/a2a/invoke", "acme", ``, 405, "method_not_allowed"},
		{"unknown seam", "POST", "/sample/grpc/invoke", "acme", `{}`, 404, "not_found"},
		{"not JSON", "POST", "/sample/a2a/invoke", "acme", `{`, 400, "validation_error"},
		{"unknown field", "POST", "/sample/a2a/invoke", "acme", `{"peerUrl":"` + peer.srv.URL + `","x":1}`, 400, "validation_error"},
		{"repeated field", "POST", "/sample/a2a/invoke", "acme", `{"peerUrl":"` + peer.srv.URL + `","peerUrl":"` + peer.srv.URL + `"}`, 400, "validation_error"},
		{"too large", "POST", "/sample/a2a/invoke", "acme", big, 413, "validation_error"},
		{"no peerUrl", "POST", "/sample/a2a/invoke", "acme", `{}`, 400, "validation_error"},
		{"no serverUrl", "POST", "/sample/mcp/invoke", "acme", `{}`, 400, "validation_error"},
		{"file URL", "POST", "/sample/a2a/invoke", "acme", `{"peerUrl":"file:///etc/passwd"}`, 400, "validation_error"},
		{"gopher URL", "POST", "/sample/mcp/invoke", "acme", `{"serverUrl":"gopher://127.0.0.1:70/"}`, 400, "validation_error"},
		{"relative URL", "POST", "/sample/a2a/invoke", "acme", `{"peerUrl":"/a2a"}`, 400, "validation_error"},
		{"userinfo", "POST", "/sample/a2a/invoke", "acme", `{"peerUrl":"http://u:p@127.0.0.1:1"}`, 400, "validation_error"},
		{"bad port", "POST", "/sample/a2a/invoke", "acme", `{"peerUrl":"http://127.0.0.1:99999"}`, 400, "validation_error"},
		{"other seam's URL", "POST", "/sample/a2a/invoke", "acme", `{"peerUrl":"` + peer.srv.URL + `","serverUrl":"` + peer.srv.URL + `"}`, 400, "validation_error"},
		{"mcp field on a2a", "POST", "/sample/a2a/invoke", "acme", `{"peerUrl":"` + peer.srv.URL + `","tool":"echo"}`, 400, "validation_error"},
		{"unknown scenario", "POST", "/sample/a2a/invoke", "acme", `{"peerUrl":"` + peer.srv.URL + `","scenario":"x"}`, 400, "validation_error"},
		{"scenario on mcp", "POST", "/sample/mcp/invoke", "acme", `{"serverUrl":"` + peer.srv.URL + `","scenario":"peer-asserts-authority"}`, 400, "validation_error"},
		{"arguments not an object", "POST", "/sample/mcp/invoke", "acme", `{"serverUrl":"` + peer.srv.URL + `","arguments":[1]}`, 400, "validation_error"},
		{"capabilities not an object", "POST", "/sample/mcp/invoke", "acme", `{"serverUrl":"` + peer.srv.URL + `","clientCapabilities":"x"}`, 400, "validation_error"},
		{"answer not an object", "POST", "/sample/mcp/invoke", "acme", `{"serverUrl":"` + peer.srv.URL + `","elicitationAnswer":1}`, 400, "validation_error"},
		{"tool too long", "POST", "/sample/mcp/invoke", "acme", `{"serverUrl":"` + peer.srv.URL + `","tool":"` + strings.Repeat("t", 129) + `"}`, 400, "validation_error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := r.do(t, tc.method, seams.Prefix+tc.path, tc.token, []byte(tc.body))
			if status != tc.status || body["error"] != tc.code {
				t.Errorf("%d %v, want %d %s", status, body, tc.status, tc.code)
			}
			if msg, _ := body["message"].(string); msg == "" {
				t.Errorf("no message: %v", body)
			}
		})
	}
	if got := peer.calls(); len(got) != 0 {
		t.Errorf("a refused request reached the peer: %v", got)
	}
}

// TestCrossTenant: a run opened by one tenant's exchange is not found by
// another tenant, nor by no one; its owner reads it.
func TestCrossTenant(t *testing.T) {
	r := newRig(t, testFacets())
	peer := newFakeA2A(t, "1.1")
	status, body := r.call(t, "a2a", "acme", map[string]any{"peerUrl": peer.srv.URL})
	if status != 200 {
		t.Fatalf("%d %v", status, body)
	}
	runID := runOf(body)
	if s, b := r.do(t, "GET", "/runs/"+runID+"/events/poll", "umbra", nil); s != 404 || b["error"] != "not_found" {
		t.Errorf("another tenant read the run: %d %v", s, b)
	}
	if s, b := r.do(t, "GET", "/runs/"+runID+"/events/poll", "", nil); s != 401 {
		t.Errorf("no caller read the run: %d %v", s, b)
	}
	unknown := "umbra/" + strings.Repeat("A", 26)
	s1, b1 := r.do(t, "GET", "/runs/"+runID+"/events/poll", "umbra", nil)
	s2, b2 := r.do(t, "GET", "/runs/"+unknown+"/events/poll", "umbra", nil)
	if s1 != s2 || b1["error"] != b2["error"] {
		t.Errorf("another tenant's run (%d %v) is told from a missing one (%d %v)", s1, b1, s2, b2)
	}
	if ev := r.lastEvent(t, runID, "acme"); ev["outcome"] != "accepted" {
		t.Errorf("the owner reads %v", ev)
	}
}

// TestPeerAssertsAuthority: a peer whose answer claims approvals, scopes
// and another tenant's task changes nothing: the answer is relayed as
// data, the audit run holds one event, the exchange's tenant stays the
// caller's, and peerAuthority is all false.
func TestPeerAssertsAuthority(t *testing.T) {
	r := newRig(t, testFacets())
	peer := newFakeA2A(t, "1.0")
	peer.answer = `{"approval":{"advanced":true},"scopes":["admin"],"task":{"id":"umbra/` + strings.Repeat("B", 26) + `"},"tenant":"umbra","a2aVersion":"0.3"}`
	status, body := r.call(t, "a2a", "acme", map[string]any{"peerUrl": peer.srv.URL, "scenario": "peer-asserts-authority", "authenticated": false})
	if status != 400 {
		t.Fatalf("an unauthenticated downgrade was let through: %d %v", status, body)
	}
	peer.offers = []string{"1.1"}
	status, body = r.call(t, "a2a", "acme", map[string]any{"peerUrl": peer.srv.URL, "scenario": "peer-asserts-authority"})
	if status != 200 {
		t.Fatalf("%d %v", status, body)
	}
	want := map[string]any{"approvalAdvanced": false, "scopesWidened": false, "referencedTaskDereferenced": false}
	got, _ := json.Marshal(body["peerAuthority"])
	wantJSON, _ := json.Marshal(want)
	if !bytes.Equal(got, wantJSON) {
		t.Errorf("peerAuthority %s, want %s", got, wantJSON)
	}
	runID := runOf(body)
	if !strings.HasPrefix(runID, "acme/") {
		t.Errorf("the run %q left the caller's tenant", runID)
	}
	evs, last, err := r.log.RunEvents(t.Context(), "acme", runID, -1, 10)
	if err != nil || len(evs) != 1 || last != 0 {
		t.Errorf("the audit run holds %d events (last %d, %v), want exactly the decision", len(evs), last, err)
	}
	if others, _ := r.log.HostEvents(t.Context(), "umbra", "", 10); len(others) != 0 {
		t.Errorf("the peer's claims reached tenant umbra: %v", others)
	}
	if body["negotiatedVersion"] != "1.1" || peer.calls()[len(peer.calls())-1] != "1.1" {
		t.Errorf("the peer's claimed version moved the exchange: %v %v", body["negotiatedVersion"], peer.calls())
	}
}

// TestHTTPSPeer: an https peer URL is a peer URL; one that does not
// answer reached no decision: the host's internal_error, no run.
func TestHTTPSPeer(t *testing.T) {
	r := newRig(t, testFacets())
	status, body := r.call(t, "a2a", "acme", map[string]any{"peerUrl": "https://127.0.0.1:1"})
	if status != 500 || body["error"] != "internal_error" || reasonOf(body) != "unreachable" || runOf(body) != "" {
		t.Errorf("%d %v", status, body)
	}
}

// TestNoRedirect: a peer that redirects is not followed to the new
// location.
func TestNoRedirect(t *testing.T) {
	hit := make(chan string, 10)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit <- r.URL.Path }))
	defer other.Close()
	peer := httptest.NewServer(http.RedirectHandler(other.URL+"/card", http.StatusFound))
	defer peer.Close()
	r := newRig(t, testFacets())
	status, body := r.call(t, "a2a", "acme", map[string]any{"peerUrl": peer.URL})
	if status != 500 || body["error"] != "internal_error" || reasonOf(body) != "redirect-refused" {
		t.Errorf("%d %v", status, body)
	}
	select {
	case p := <-hit:
		t.Errorf("the redirect was followed to %s", p)
	default:
	}
}

// TestCardInterfaceOnOwnOrigin: a card naming an interface on another
// origin does not send the host there.
func TestCardInterfaceOnOwnOrigin(t *testing.T) {
	hit := make(chan string, 10)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit <- r.URL.Path }))
	defer other.Close()
	var own []string
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			_, _ = w.Write([]byte(`{"supportedInterfaces":[{"url":"` + other.URL + `/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.1"}]}`))
			return
		}
		own = append(own, r.URL.Path)
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	}))
	defer peer.Close()
	r := newRig(t, testFacets())
	status, body := r.call(t, "a2a", "acme", map[string]any{"peerUrl": peer.URL})
	if status != 200 {
		t.Fatalf("%d %v", status, body)
	}
	if len(own) != 1 || own[0] != "/a2a/jsonrpc" {
		t.Errorf("the peer saw %v", own)
	}
	select {
	case p := <-hit:
		t.Errorf("the card sent the host to another origin: %s", p)
	default:
	}
}

// TestPeerFailures: a peer that answers nothing usable is a refusal or a
// validation_error naming the run, never a 200.
func TestPeerFailures(t *testing.T) {
	for _, tc := range []struct {
		name, proto string
		handler     http.HandlerFunc
		status      int
		code        string
	}{
		{"a2a rpc error", "a2a", a2aPeer(`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no"}}`), 400, "validation_error"},
		{"a2a version refused in ErrorInfo", "a2a", a2aPeer(`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED"}]}}`), 400, "interop_version_unsupported"},
		{"a2a version refused in bare data", "a2a", a2aPeer(`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no","data":{"reason":"VERSION_NOT_SUPPORTED"}}}`), 400, "interop_version_unsupported"},
		{"a2a version refused by code", "a2a", a2aPeer(`{"jsonrpc":"2.0","id":1,"error":{"code":-32009,"message":"no"}}`), 400, "interop_version_unsupported"},
		{"a2a HTTP 400 with a result", "a2a", func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				a2aPeer("")(w, r)
				return
			}
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
		}, 400, "validation_error"},
		{"a2a other ErrorInfo", "a2a", a2aPeer(`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no","data":[{"reason":"OTHER"}]}}`), 400, "validation_error"},
		{"a2a not JSON", "a2a", a2aPeer(`<html>`), 400, "validation_error"},
		{"a2a too large", "a2a", a2aPeer(`{"jsonrpc":"2.0","id":1,"result":"` + strings.Repeat("x", 1<<20) + `"}`), 500, "internal_error"},
		{"a2a 502 on the call", "a2a", func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				a2aPeer("")(w, r)
				return
			}
			w.WriteHeader(http.StatusBadGateway)
		}, 500, "internal_error"},
		{"mcp tools/call error", "mcp", mcpPeer(`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}`), 400, "validation_error"},
		{"mcp bad result", "mcp", mcpPeer(`{"jsonrpc":"2.0","id":2,"result":{"resultType":null}}`), 400, "validation_error"},
		{"mcp empty stream", "mcp", func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Mcp-Method") == "server/discover" {
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"]}}`))
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte("data: {\"x\":1}\n\n: nothing\n"))
		}, 400, "validation_error"},
		{"mcp event the stream ends inside", "mcp", func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Mcp-Method") == "server/discover" {
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"]}}`))
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"resultType\":\"complete\"}}\n"))
		}, 400, "validation_error"},
		// A 503 is no negotiation answer (issue 19): the host's failure,
		// with no run, since nothing was decided or recorded.
		{"mcp unreachable discover", "mcp", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", http.StatusServiceUnavailable) }, 500, "internal_error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			peer := httptest.NewServer(tc.handler)
			defer peer.Close()
			r := newRig(t, testFacets())
			key := "peerUrl"
			if tc.proto == "mcp" {
				key = "serverUrl"
			}
			status, body := r.call(t, tc.proto, "acme", map[string]any{key: peer.URL})
			if msg, _ := body["message"].(string); tc.name == "mcp empty stream" && !strings.Contains(msg, "no JSON-RPC answer") {
				t.Errorf("message %q", msg)
			}
			// A failure after the card's acceptance names the run that
			// holds it; a discover that failed decided nothing.
			decided := tc.name != "mcp unreachable discover"
			if status != tc.status || body["error"] != tc.code || (runOf(body) != "") != decided {
				t.Errorf("%d %v, want %d %s, with a runId: %v", status, body, tc.status, tc.code, decided)
			}
		})
	}
}

// TestStreamedReply: the call's reply in an event stream is the response
// its client takes: for MCP, the one to the call's id, not an error to
// another request before it; for A2A, whose client takes the first
// response whatever its id, that one.
func TestStreamedReply(t *testing.T) {
	stream := func(events string) func(http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte(events))
		}
	}
	mcp := stream("data: {\"jsonrpc\":\"2.0\",\"id\":99,\"error\":{\"code\":-32601,\"message\":\"no\"}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"resultType\":\"complete\",\"content\":[]}}\n\n")
	a2a := stream("data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"message\":{\"parts\":[{\"text\":\"hi\"}]}}}\n\n")
	for _, tc := range []struct {
		proto, key string
		handler    http.HandlerFunc
	}{
		{"mcp", "serverUrl", func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Mcp-Method") == "server/discover" {
				mcpPeer("")(w, r)
				return
			}
			mcp(w)
		}},
		{"a2a", "peerUrl", func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				a2aPeer("")(w, r)
				return
			}
			a2a(w)
		}},
	} {
		peer := httptest.NewServer(tc.handler)
		r := newRig(t, testFacets())
		if status, body := r.call(t, tc.proto, "acme", map[string]any{tc.key: peer.URL}); status != 200 {
			t.Errorf("%s: %d %v", tc.proto, status, body)
		}
		peer.Close()
	}
}

func a2aPeer(answer string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			_, _ = w.Write([]byte(`{"supportedInterfaces":[{"url":"http://` + r.Host + `/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.1"}]}`))
			return
		}
		_, _ = w.Write([]byte(answer))
	}
}

func mcpPeer(answer string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "server/discover" {
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"]}}`))
			return
		}
		_, _ = w.Write([]byte(answer))
	}
}

// TestNotAdvertised: a host that advertises one protocol has no seam for
// the other, and a host without mrtr runs no rounds.
func TestNotAdvertised(t *testing.T) {
	only := testFacets()
	only.A2A = nil
	only.MCP.MRTR = nil
	r := newRig(t, only)
	peer := newFakeA2A(t, "1.1")
	if status, body := r.call(t, "a2a", "acme", map[string]any{"peerUrl": peer.srv.URL}); status != 404 {
		t.Errorf("%d %v", status, body)
	}
	server := newFakeMCP(t, "2026-07-28")
	status, body := r.call(t, "mcp", "acme", map[string]any{"serverUrl": server.srv.URL, "tool": "needs_input_loop", "arguments": map[string]any{"rounds": 1}})
	if status != 422 || body["error"] != "mcp_mrtr_rounds_exceeded" {
		t.Errorf("%d %v", status, body)
	}
	if n := countOf(server.log(), "tools/call"); n != 1 {
		t.Errorf("the server saw %d tools/call, want 1", n)
	}
	if status, body := r.call(t, "mcp", "acme", map[string]any{"serverUrl": server.srv.URL}); status != 200 {
		t.Errorf("%d %v", status, body)
	}
}

// TestUnrecorded: when the event cannot be recorded the seam says so,
// with the run it would have been on, and sends nothing to the peer.
func TestUnrecorded(t *testing.T) {
	n, err := negotiate.Compile(testFacets(), policy.Policy{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	h := &seams.Handler{Negotiator: n, Sink: closedSink{}, Subject: subjectOf, AllowLoopback: true}
	peer := newFakeA2A(t, "1.1")
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, seams.Prefix+"/sample/a2a/invoke", strings.NewReader(`{"peerUrl":"`+peer.srv.URL+`"}`))
	req.Header.Set("Authorization", "Bearer acme")
	h.ServeHTTP(rec, req)
	var body map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &body)
	if rec.Code != 500 || body["error"] != "internal_error" || runOf(body) == "" {
		t.Errorf("%d %v", rec.Code, body)
	}
	if len(peer.calls()) != 0 {
		t.Errorf("an unrecorded exchange reached the peer: %v", peer.calls())
	}
}

// TestRequiredAuditOverAnEphemeralSink: seams whose Negotiator requires
// the audit, over a sink that is not durable (an in-memory log), answer
// every exchange internal_error naming the fix, before calling the peer;
// over a durable sink the exchange goes on to the peer.
func TestRequiredAuditOverAnEphemeralSink(t *testing.T) {
	n, err := negotiate.Compile(testFacets(), policy.Policy{RequireAudit: true, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		http.Error(w, "no", http.StatusNotFound)
	}))
	defer peer.Close()
	for _, c := range []struct {
		name    string
		sink    events.Sink
		refused bool
	}{
		{"an in-memory log", events.NewMemoryLog(0, 0), true},
		{"a durable sink", &negotiatetest.Recorder{}, false},
	} {
		for _, proto := range []string{"a2a", "mcp"} {
			calls.Store(0)
			h := &seams.Handler{Negotiator: n, Sink: c.sink, Subject: subjectOf, AllowLoopback: true}
			rec := httptest.NewRecorder()
			body := `{"peerUrl":"` + peer.URL + `"}`
			if proto == "mcp" {
				body = `{"serverUrl":"` + peer.URL + `","tool":"t"}`
			}
			req := httptest.NewRequest(http.MethodPost, seams.Prefix+"/sample/"+proto+"/invoke", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer acme")
			h.ServeHTTP(rec, req)
			named := rec.Code == http.StatusInternalServerError && strings.Contains(rec.Body.String(), "the Sink is not durable")
			if named != c.refused || (calls.Load() == 0) != c.refused {
				t.Errorf("%s, %s: %d %s after %d peer calls; refused before any call: %v", c.name, proto, rec.Code, rec.Body, calls.Load(), c.refused)
			}
		}
	}
}

// TestCardInterfaceChoice: SendMessage goes to the card's JSON-RPC
// interface at the decided version, else its first JSON-RPC interface,
// never to another binding.
func TestCardInterfaceChoice(t *testing.T) {
	for _, tc := range []struct {
		name, ifaces, want string
	}{
		{"at the decided version", `{"url":"OWN/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.1"},{"url":"OWN/old","protocolBinding":"JSONRPC","protocolVersion":"1.0"},{"url":"OWN/new","protocolBinding":"JSONRPC","protocolVersion":"1.1"}`, "/new"},
		{"the first JSON-RPC one", `{"url":"OWN/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.1"},{"url":"OWN/jr","protocolBinding":"JSONRPC","protocolVersion":"1.0"}`, "/jr"},
		{"the card's url", `{"url":"OWN/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.1"}],"url":"OWN/top","x":[`, "/top"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var paths []string
			peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					_, _ = w.Write([]byte(`{"supportedInterfaces":[` + strings.ReplaceAll(tc.ifaces, "OWN", "http://"+r.Host) + `]}`))
					return
				}
				paths = append(paths, r.URL.Path)
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
			}))
			defer peer.Close()
			r := newRig(t, testFacets())
			if status, body := r.call(t, "a2a", "acme", map[string]any{"peerUrl": peer.URL}); status != 200 {
				t.Fatalf("%d %v", status, body)
			}
			if len(paths) != 1 || paths[0] != tc.want {
				t.Errorf("SendMessage went to %v, want %s", paths, tc.want)
			}
		})
	}
}

// TestA2ALegacyMessage: a host whose facet still offers A2A 0.3 speaks
// 0.3's message/send to a peer it settles at 0.3 with.
func TestA2ALegacyMessage(t *testing.T) {
	set := testFacets()
	set.A2A = &facets.A2A{Versions: []string{"0.3", "1.0"}, PreferredVersion: "1.0", MinimumVersion: "0.3", RefreshedAt: "2026-11-01"}
	r := newRig(t, set)
	for _, tc := range []struct{ offer, method string }{{"0.3", "message/send"}, {"1.0", "SendMessage"}} {
		peer := newFakeA2A(t, tc.offer)
		if status, body := r.call(t, "a2a", "acme", map[string]any{"peerUrl": peer.srv.URL}); status != 200 || body["negotiatedVersion"] != tc.offer {
			t.Fatalf("%d %v", status, body)
		}
		peer.mu.Lock()
		got := peer.methods
		peer.mu.Unlock()
		if len(got) != 1 || got[0] != tc.method {
			t.Errorf("at %s the peer got %v, want %s", tc.offer, got, tc.method)
		}
	}
}
