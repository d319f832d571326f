package mcphttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// blockedBody is a request body whose bytes never come: Read waits until
// the body is released, and counts the readers waiting.
type blockedBody struct {
	waiting *sync.WaitGroup
	release chan struct{}
	once    sync.Once
}

func (b *blockedBody) Read([]byte) (int, error) {
	b.once.Do(b.waiting.Done)
	<-b.release
	return 0, io.ErrUnexpectedEOF
}

func (*blockedBody) Close() error { return nil }

// TestDeclaredLengthIsNotAllocated holds 100 requests that declare a body
// of DefaultMaxBodyBytes and send none, and measures how much the heap grew
// while they wait (the figure of issue 8 item 2; the goal is 8 MiB). A
// buffer sized by the declaration would hold 400 MiB.
func TestDeclaredLengthIsNotAllocated(t *testing.T) {
	r := newRig(t, wideFacets(), policy.Policy{}, false, nil)
	const conns = 100
	var waiting, done sync.WaitGroup
	release := make(chan struct{})
	waiting.Add(conns)
	done.Add(conns)
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range conns {
		req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		req.Header = http.Header{mcphttp.HeaderProtocolVersion: {"2026-07-28"}}
		body := &blockedBody{waiting: &waiting, release: release}
		req.Body = body
		req.ContentLength = mcphttp.DefaultMaxBodyBytes
		go func() {
			defer done.Done()
			r.h.ServeHTTP(httptest.NewRecorder(), req)
			body.once.Do(waiting.Done) // answered without reading: not waiting either
		}()
	}
	waiting.Wait()
	var during runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&during)
	close(release)
	done.Wait()
	grown := int64(during.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("heap growth with %d bodiless %d-byte declarations waiting: %.2f MiB", conns, mcphttp.DefaultMaxBodyBytes, float64(grown)/(1<<20))
	if grown > 32<<20 {
		t.Errorf("the heap grew %d bytes for bodies that never came", grown)
	}
}

// TestTransportChecksEverySpelling sends requests whose MCP-Protocol-Version
// is set under a key other than the canonical one, which net/http would
// put on the wire beside the canonical key.
func TestTransportChecksEverySpelling(t *testing.T) {
	cases := []struct {
		name   string
		header http.Header
		err    string // "" when sent
	}{
		{"another revision, another spelling", http.Header{"MCP-Protocol-Version": {"2025-06-18"}}, `mcphttp: the Mcp-Protocol-Version header names revision "2025-06-18", not the negotiated "2026-07-28"`},
		{"the revision, another spelling", http.Header{"MCP-Protocol-Version": {"2026-07-28"}}, ""},
		{"two spellings", http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "mcp-protocol-version": {"2025-06-18"}}, `names revision "[2026-07-28 2025-06-18]", not the negotiated "2026-07-28"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, got, err := sendThrough(t, "2026-07-28", http.MethodGet, "", c.header)
			if refusedToSend(t, err, got, c.err) {
				return
			}
			if len(got) != 1 || len(got[0].header.Values(mcphttp.HeaderProtocolVersion)) != 1 {
				t.Errorf("the peer read %+v, want one revision", got)
			}
		})
	}

	// Inbound, a hand-built header of another spelling is read too.
	r := newRig(t, wideFacets(), policy.Policy{}, false, nil)
	req := httptest.NewRequest(http.MethodGet, "/mcp", nil)
	req.Header = http.Header{"MCP-Protocol-Version": {"2025-06-18"}}
	w := httptest.NewRecorder()
	r.h.ServeHTTP(w, req)
	if got := payloads(t, r.events); w.Code != 400 || len(got) != 1 || got[0].Requested != "2025-06-18" {
		t.Errorf("%d %s, recorded %+v; want 2025-06-18 refused", w.Code, w.Body, got)
	}
}

// sendThrough sends a request with body and header to a test peer through
// a Transport at revision, and returns the request, what the peer got and
// the error.
func sendThrough(t *testing.T, revision, method, body string, header http.Header) (*http.Request, []seen, error) {
	t.Helper()
	p := newPeer(t, jsonAnswer(200, `{}`))
	tr, err := mcphttp.NewTransport(accepted(revision), p.Client().Transport)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(method, p.URL, strings.NewReader(body))
	req.Header = header
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if resp != nil {
		resp.Body.Close()
	}
	return req, p.seen(), err
}

// refusedToSend checks a Transport's refusal when want names one (the end
// of its message), and otherwise that it sent; it reports whether the
// request was to be refused.
func refusedToSend(t *testing.T, err error, got []seen, want string) bool {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatal(err)
		}
		return false
	}
	if !errors.Is(err, mcphttp.ErrVersionConflict) || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
	if len(got) != 0 {
		t.Errorf("sent %+v", got)
	}
	return true
}

// TestTransportBodyBound refuses a body over DefaultMaxBodyBytes, which
// it cannot check, and one it cannot read, sending nothing.
func TestTransportBodyBound(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + strings.Repeat(" ", mcphttp.DefaultMaxBodyBytes-45)
	_, got, err := sendThrough(t, "2026-07-28", http.MethodPost, big, http.Header{})
	refusedToSend(t, err, got, `mcphttp: a body over 4194304 bytes: cannot carry the negotiated revision "2026-07-28"`)
	_, got, err = sendThrough(t, "2026-07-28", http.MethodPost, big[:len(big)-1], http.Header{})
	if err != nil || len(got) != 1 {
		t.Errorf("a body of exactly the bound: %v, sent %d", err, len(got))
	}

	tr, err := mcphttp.NewTransport(accepted("2026-07-28"), http.DefaultTransport)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:1/", nil)
	req.Body = readerOnly{iotest.ErrReader(errors.New("connection reset"))}
	if _, err := tr.RoundTrip(req); err == nil || err.Error() != "mcphttp: reading the request body: connection reset" {
		t.Errorf("a failed read: %v", err)
	}
}

// initializeOn initializes a session for auth and returns its id.
func initializeOn(t *testing.T, r *rig, rev, auth string) string {
	t.Helper()
	a := r.do(call{body: initialize(rev), headers: hdr("Authorization", auth)})
	sid := a.header.Get(mcphttp.HeaderSessionID)
	if a.status != 200 || sid == "" {
		t.Fatalf("initialize %s: %d %s", rev, a.status, a.body)
	}
	return sid
}

// onSession is a tools/list on session sid at revision rev for auth.
func onSession(sid, rev, auth string) call {
	return call{body: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, headers: hdr(mcphttp.HeaderSessionID, sid, mcphttp.HeaderProtocolVersion, rev, "Authorization", auth)}
}

// TestAnonymousCannotEvictAuthenticatedPins replays issue 8 item 11: with
// MaxSessions 50, 60 anonymous initializes must not remove an
// authenticated session's pin, and the session is never served at another
// revision than its pin.
func TestAnonymousCannotEvictAuthenticatedPins(t *testing.T) {
	r := newRig(t, legacyFacets(), policy.Policy{}, true, func(o *mcphttp.Options) { o.MaxSessions = 50 })
	sid := initializeOn(t, r, "2025-06-18", "Bearer user") // downgraded, pinned at 2025-06-18
	for range 60 {
		initializeOn(t, r, "2025-11-25", "")
	}
	if got := mcphttp.Sessions(r.h); got != 50 {
		t.Errorf("%d sessions, want the bound 50", got)
	}
	if a := r.do(onSession(sid, "2025-11-25", "Bearer user")); a.status != 400 || !strings.Contains(a.body, `"supported":["2025-06-18"]`) {
		t.Errorf("the session at another revision: %d %s, want refused", a.status, a.body)
	}
	before := len(r.events.Events())
	if a := r.do(onSession(sid, "2025-06-18", "Bearer user")); a.status != 200 {
		t.Errorf("the session at its pin: %d %s", a.status, a.body)
	}
	if n := len(r.events.Events()); n != before {
		t.Errorf("%d events for the caller that negotiated the session, want none: it is served at the pin", n-before)
	}
	// Another caller, anonymous, is decided at the pin: a downgrade it
	// cannot have.
	if a := r.do(onSession(sid, "2025-06-18", "")); a.status != 400 || !strings.Contains(a.body, "authenticated caller") {
		t.Errorf("an anonymous caller on the session: %d %s", a.status, a.body)
	}
	// An identified caller's new session evicts an anonymous one, not the
	// identified pin.
	initializeOn(t, r, "2025-06-18", "Bearer other")
	if a := r.do(onSession(sid, "2025-06-18", "Bearer user")); a.status != 200 {
		t.Errorf("the session after another identified one: %d %s", a.status, a.body)
	}
	_, outcomes := r.server.received()
	for i, o := range outcomes[61:] {
		if o.Version != "2025-06-18" {
			t.Errorf("request %d on the session was served at %s", i, o.Version)
		}
	}
	// A request that names a session is served only at the session's pin,
	// whatever revision it names: a server that keeps sessions serves it
	// on the session. At a stateless revision it is refused as any other:
	// the session unknown (its initialize refused, or its pin gone), or
	// pinned at another revision.
	c := stateless("2026-07-28", "2026-07-28")
	c.headers[mcphttp.HeaderSessionID] = "unknown"
	if a := r.do(c); a.status != http.StatusNotFound {
		t.Errorf("a request at a stateless revision on an unknown session: %d %s, want 404", a.status, a.body)
	}
	c.headers[mcphttp.HeaderSessionID] = sid
	if a := r.do(c); a.status != http.StatusBadRequest || !strings.Contains(a.body, `"supported":["2025-06-18"]`) {
		t.Errorf("a request at a stateless revision on the session: %d %s, want refused", a.status, a.body)
	}
}

// TestInvalidSubjectDefaultLog logs an invalid Subject through
// slog.Default() when Options.ErrorLog is nil.
func TestInvalidSubjectDefaultLog(t *testing.T) {
	var log bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{ReplaceAttr: dropTime})))
	r := newRig(t, wideFacets(), policy.Policy{}, false, func(o *mcphttp.Options) {
		o.Subject = func(*http.Request) *negotiate.Subject { return &negotiate.Subject{} }
	})
	r.do(stateless("2026-07-28", "2026-07-28"))
	if !strings.HasPrefix(log.String(), `level=ERROR msg="wopneg: invalid Subject: subject.issuer:`) {
		t.Errorf("default log %q", log.String())
	}
}

// TestInitializeWithItsRevisionInMeta accepts an initialize whose _meta
// names the revision its protocolVersion does.
func TestInitializeWithItsRevisionInMeta(t *testing.T) {
	r := newRig(t, legacyFacets(), policy.Policy{}, false, nil)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}`
	if a := r.do(call{body: body}); a.status != 200 || strings.Contains(a.body, "error") {
		t.Errorf("%d %s", a.status, a.body)
	}
}

// TestRecordRequiredForEveryRefusal fails closed (500) when a refusal that
// the middleware records for something other than the decision cannot be
// recorded under RequireAudit.
func TestRecordRequiredForEveryRefusal(t *testing.T) {
	r := newRig(t, wideFacets(), policy.Policy{RequireAudit: true}, false, nil)
	r.events.Fail(errors.New("event store down"))
	a := r.do(stateless("2026-07-28", "2025-06-18"))
	want := `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"the negotiation could not be recorded; retry"}}`
	if a.status != 500 || compact(t, a.body) != want {
		t.Errorf("%d %s, want 500 %s", a.status, a.body, want)
	}
}

// TestForgottenPinIsRefused checks that a session whose pin an identified
// caller's sessions pushed out is refused at any revision (404, initialize
// again), and that anonymous sessions are not remembered when every pin
// is an identified caller's.
func TestForgottenPinIsRefused(t *testing.T) {
	r := newRig(t, legacyFacets(), policy.Policy{}, true, func(o *mcphttp.Options) { o.MaxSessions = 1 })
	first := initializeOn(t, r, "2025-06-18", "Bearer user")
	second := initializeOn(t, r, "2025-11-25", "Bearer other")
	for _, rev := range []string{"2025-06-18", "2025-11-25"} {
		if a := r.do(onSession(first, rev, "Bearer user")); a.status != 404 || !strings.Contains(a.body, "initialize a new session") {
			t.Errorf("evicted session at %s: %d %s", rev, a.status, a.body)
		}
	}
	anonymous := initializeOn(t, r, "2025-11-25", "")
	if a := r.do(onSession(anonymous, "2025-11-25", "")); a.status != 404 {
		t.Errorf("an anonymous session over a full store of identified ones: %d %s", a.status, a.body)
	}
	if a := r.do(onSession(second, "2025-11-25", "Bearer other")); a.status != 200 {
		t.Errorf("the identified session: %d %s", a.status, a.body)
	}
	// GET on a forgotten session is refused too; DELETE is decided and
	// passed on, so that the server can end it.
	if a := r.do(call{method: http.MethodGet, headers: hdr(mcphttp.HeaderSessionID, first, mcphttp.HeaderProtocolVersion, "2025-11-25")}); a.status != 404 {
		t.Errorf("GET: %d %s", a.status, a.body)
	}
	if a := r.do(call{method: http.MethodDelete, headers: hdr(mcphttp.HeaderSessionID, first, mcphttp.HeaderProtocolVersion, "2025-11-25")}); a.status != http.StatusNoContent {
		t.Errorf("DELETE: %d %s", a.status, a.body)
	}
}

// TestLocalhostProtection mirrors the go-sdk v1.8.0 streamable handler's
// DNS-rebinding rule (mcp/streamable.go: a request that arrived on a
// loopback address with a Host that is not loopback is answered 403) and
// adds the Origin, which the go-sdk leaves to CrossOriginProtection. A
// refused request gets no negotiation answer and no record.
func TestLocalhostProtection(t *testing.T) {
	loop4 := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	loop6 := &net.TCPAddr{IP: net.IPv6loopback, Port: 8080}
	lan := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 8080}
	cases := []struct {
		name      string
		local     net.Addr
		host      string
		origin    string
		disabled  bool
		forbidden bool
	}{
		{"go-sdk: the conformance probe", loop4, "evil.example.com", "http://evil.example.com", false, true},
		{"go-sdk: a foreign Host on loopback", loop4, "evil.example.com:8080", "", false, true},
		{"go-sdk: a foreign Host on IPv6 loopback", loop6, "evil.example.com", "", false, true},
		{"go-sdk: a name that only starts with localhost", loop4, "localhost.evil.example.com", "", false, true},
		{"go-sdk: 127.0.0.1", loop4, "127.0.0.1:8080", "", false, false},
		{"go-sdk: localhost", loop4, "localhost:8080", "", false, false},
		{"go-sdk: [::1]", loop6, "[::1]:8080", "", false, false},
		{"go-sdk: the loopback range", loop4, "127.1.2.3", "", false, false},
		{"go-sdk: not a loopback listener", lan, "evil.example.com", "http://evil.example.com", false, false},
		{"go-sdk: no listener known", nil, "evil.example.com", "", false, false},
		{"go-sdk: disabled", loop4, "evil.example.com", "http://evil.example.com", true, false},
		{"stricter: a foreign Origin with a loopback Host", loop4, "127.0.0.1:8080", "http://evil.example.com", false, true},
		{"stricter: Origin null", loop4, "127.0.0.1:8080", "null", false, true},
		{"stricter: a loopback Origin", loop4, "localhost:8080", "http://localhost:3000", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, wideFacets(), policy.Policy{}, false, func(o *mcphttp.Options) { o.DisableLocalhostProtection = c.disabled })
			req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(initialize("2025-11-25")))
			req.Host = c.host
			if c.origin != "" {
				req.Header.Set("Origin", c.origin)
			}
			if c.local != nil {
				req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, c.local))
			}
			w := httptest.NewRecorder()
			r.h.ServeHTTP(w, req)
			if got := w.Code == http.StatusForbidden; got != c.forbidden {
				t.Fatalf("%d %s, want forbidden %t", w.Code, w.Body, c.forbidden)
			}
			if !c.forbidden {
				return
			}
			if !strings.Contains(w.Body.String(), "DNS-rebinding protection") {
				t.Errorf("answer %s", w.Body)
			}
			if bodies, _ := r.server.received(); len(bodies) != 0 || len(r.events.Events()) != 0 {
				t.Errorf("forwarded %q, recorded %d", bodies, len(r.events.Events()))
			}
		})
	}

	// Over a real listener on 127.0.0.1, as the conformance suite drives it.
	r := newRig(t, wideFacets(), policy.Policy{}, false, nil)
	srv := httptest.NewServer(r.h)
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(initialize("2025-11-25")))
	req.Host = "evil.example.com"
	req.Header.Set("Origin", "http://evil.example.com")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("over 127.0.0.1: %d", resp.StatusCode)
	}
}

// rpcAnswer is a JSON-RPC error answer, decoded.
type rpcAnswer struct {
	Error struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    struct {
			Supported []string `json:"supported"`
			Requested *string  `json:"requested"`
			Reason    string   `json:"reason"`
		} `json:"data"`
	} `json:"error"`
}

func decodeAnswer(t *testing.T, body string) rpcAnswer {
	t.Helper()
	var a rpcAnswer
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return a
}

// TestNamedRefusalsAreRecorded checks issue 9 item 3: a refusal of a
// request that names a revision is recorded, whatever refused it, and the
// answer names the same revision as the record (a request without the
// header names ImpliedRevision in both).
func TestNamedRefusalsAreRecorded(t *testing.T) {
	cases := []struct {
		name      string
		call      call
		requested string
	}{
		{"initialize at a stateless revision", call{body: initialize("2026-07-28")}, "2026-07-28"},
		{"header and _meta disagree", stateless("2026-07-28", "2025-06-18"), "2026-07-28"},
		{"no header", call{body: `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`}, "2025-03-26"},
		{"two header values", call{body: `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, headers: hdr(mcphttp.HeaderProtocolVersion, "2026-07-28, 2025-06-18")}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, wideFacets(), policy.Policy{}, false, nil)
			a := r.do(c.call)
			got := payloads(t, r.events)
			if len(got) != 1 || got[0].Outcome != "refused" || got[0].Requested != c.requested {
				t.Fatalf("recorded %+v, want the refusal of %q", got, c.requested)
			}
			if d := decodeAnswer(t, a.body).Error.Data; d.Requested != nil && *d.Requested != c.requested {
				t.Errorf("the answer names %q, the record %q", *d.Requested, c.requested)
			}
		})
	}
}

// TestRefusalsSayWhy checks issue 9 item 4: the message and data.reason
// say why a revision was refused, and data.supported lists only what this
// caller could be served: nothing below the floor, and for an anonymous
// caller not the revision it was just refused.
func TestRefusalsSayWhy(t *testing.T) {
	denied := policy.Policy{DenyDowngrade: true}
	cases := []struct {
		name      string
		p         policy.Policy
		call      call
		code      int
		message   string
		reason    string
		supported []string
	}{
		{"below the floor", policy.Policy{}, stateless("2025-06-18", "2025-06-18"), -32022, "is below the minimum revision 2025-11-25", "below-floor", []string{"2026-07-28"}},
		{"below the floor, authenticated", policy.Policy{}, call{body: `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, headers: hdr(mcphttp.HeaderProtocolVersion, "2025-06-18", "Authorization", "Bearer user")}, -32022, "is below the minimum revision 2025-11-25", "below-floor", []string{"2025-11-25", "2026-07-28"}},
		{"anonymous downgrade", policy.Policy{}, call{body: `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, headers: hdr(mcphttp.HeaderProtocolVersion, "2025-11-25")}, -32022, "is served only to an authenticated caller", "unauthenticated", []string{"2026-07-28"}},
		{"anonymous initialize", policy.Policy{}, call{body: initialize("2025-11-25")}, -32602, "Unsupported protocol version: initialize's params.protocolVersion \"2025-11-25\" is below the preferred revision 2026-07-28 and is served only to an authenticated caller", "unauthenticated", []string{"2026-07-28"}},
		{"denied by policy", denied, call{body: `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, headers: hdr(mcphttp.HeaderProtocolVersion, "2025-11-25", "Authorization", "Bearer user")}, -32022, "is not served to this caller by the host's policy", "unsupported", []string{"2026-07-28"}},
		{"unknown", policy.Policy{}, stateless("2099-01-01", "2099-01-01"), -32022, "is not a revision this server serves", "unsupported", []string{"2026-07-28"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, wideFacets(), c.p, false, nil)
			a := decodeAnswer(t, r.do(c.call).body)
			if a.Error.Code != c.code || !strings.Contains(a.Error.Message, c.message) || a.Error.Data.Reason != c.reason ||
				strings.Join(a.Error.Data.Supported, ",") != strings.Join(c.supported, ",") {
				t.Errorf("answer %+v\nwant %d %q reason %s supported %v", a.Error, c.code, c.message, c.reason, c.supported)
			}
		})
	}
}

// TestInvalidSubject checks issue 9 item 6: an invalid Subject is logged
// through ErrorLog and decided as unauthenticated, or with StrictSubject
// refused (-32603, HTTP 500) before any negotiation.
func TestInvalidSubject(t *testing.T) {
	bad := &negotiate.Subject{Issuer: "https://idp.example", SubjectID: "users/42", Tenant: "Acme Corp", Lane: policy.LaneOIDC, Kind: policy.KindUser}
	const violation = `subject.subjectId: "users/42" contains whitespace or '/'; subject.tenant: "Acme Corp" may hold only A-Z a-z 0-9 . _ ~ -`
	for _, strict := range []bool{false, true} {
		var log bytes.Buffer
		r := newRig(t, wideFacets(), policy.Policy{}, false, func(o *mcphttp.Options) {
			o.Subject = func(*http.Request) *negotiate.Subject { return bad }
			o.StrictSubject = strict
			o.ErrorLog = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{ReplaceAttr: dropTime}))
		})
		a := r.do(call{body: `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, headers: hdr(mcphttp.HeaderProtocolVersion, "2025-11-25")})
		if want := "level=ERROR msg=\"wopneg: invalid Subject: " + strings.ReplaceAll(violation, `"`, `\"`) + "\" refused=" + strconv.FormatBool(strict) + "\n"; log.String() != want {
			t.Errorf("strict %t: log %q\nwant %q", strict, log.String(), want)
		}
		got := payloads(t, r.events)
		if strict {
			want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"invalid Subject: ` + strings.ReplaceAll(violation, `"`, `\"`) + `"}}`
			if a.status != 500 || compact(t, a.body) != want || len(got) != 0 {
				t.Errorf("strict: %d %s, recorded %+v\nwant 500 %s", a.status, a.body, got, want)
			}
			continue
		}
		if a.status != 400 || len(got) != 1 || got[0].Reason != events.ReasonUnauthenticated {
			t.Errorf("not strict: %d %s, recorded %+v; want refused as unauthenticated", a.status, a.body, got)
		}
	}
}

// hostileBatch is issue 8 item 1's body: a batch of empty objects filling
// DefaultMaxBodyBytes (about 1.4 million members).
func hostileBatch() string {
	n := (mcphttp.DefaultMaxBodyBytes - 2) / 3
	return "[" + strings.Repeat("{},", n-1) + "{}]"
}

// peakHeap serves req through h while sampling the live heap, and returns
// how far it rose above where it stood before.
func peakHeap(h http.Handler, req *http.Request) (peak uint64, w *httptest.ResponseRecorder) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	runtime.GC()
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	stop := make(chan struct{})
	done := make(chan uint64)
	go func() {
		var high uint64
		for {
			metrics.Read(sample)
			high = max(high, sample[0].Value.Uint64())
			select {
			case <-stop:
				done <- high
				return
			default:
				runtime.Gosched()
			}
		}
	}()
	w = httptest.NewRecorder()
	h.ServeHTTP(w, req)
	close(stop)
	high := <-done
	if high < base {
		return 0, w
	}
	return high - base, w
}

// TestBatchPeakHeap measures the peak heap of the middleware on issue 8
// item 1's 4 MiB batch of empty objects (the goal is 2 × MaxBodyBytes),
// with the default member bound, which refuses it at member 101. With
// MCPHTTP_SCAN_WHOLE set it measures too under a bound the batch never
// reaches, so that the whole body is scanned (seconds of CPU).
func TestBatchPeakHeap(t *testing.T) {
	body := hostileBatch()
	bounds := []int{0}
	if os.Getenv("MCPHTTP_SCAN_WHOLE") != "" {
		bounds = append(bounds, 1<<21)
	}
	for _, bound := range bounds {
		r := newRig(t, wideFacets(), policy.Policy{}, false, func(o *mcphttp.Options) { o.MaxBatchMembers = bound })
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set(mcphttp.HeaderProtocolVersion, "2025-03-26")
		peak, w := peakHeap(r.h, req)
		t.Logf("MaxBatchMembers %d: %d-byte batch answered %d; peak heap %.2f MiB (%.2f × the body)", bound, len(body), w.Code, float64(peak)/(1<<20), float64(peak)/float64(len(body)))
		if want := "the batch has more than 100 members"; w.Code != http.StatusBadRequest || bound == 0 && !strings.Contains(w.Body.String(), want) {
			t.Errorf("answered %d %s, want 400 (%q by default)", w.Code, w.Body, want)
		}
		if peak > 8*mcphttp.DefaultMaxBodyBytes {
			t.Errorf("the heap rose %d bytes for a %d-byte body", peak, len(body))
		}
	}
}

// BenchmarkHostileBatch is the middleware's cost on issue 8 item 1's body:
// refused at the default member bound, and scanned whole under a bound it
// never reaches.
func BenchmarkHostileBatch(b *testing.B) {
	body := hostileBatch()
	for _, bound := range []int{0, 1 << 21} {
		b.Run("bound="+strconv.Itoa(bound), func(b *testing.B) {
			r := newRig(b, wideFacets(), policy.Policy{}, false, func(o *mcphttp.Options) { o.MaxBatchMembers = bound })
			req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			req.Header.Set(mcphttp.HeaderProtocolVersion, "2025-03-26")
			rd := strings.NewReader(body)
			w := &nopWriter{h: http.Header{}}
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				rd.Reset(body)
				req.Body = io.NopCloser(rd)
				req.ContentLength = int64(len(body))
				r.h.ServeHTTP(w, req)
			}
		})
	}
}

// TestRecorderStatuses pins a session only on a successful answer to its
// initialize that names the revision decided (informational answers come
// first and settle nothing; an answer that confirms nothing, or another
// revision, is recorded refused, and its session is never served), and
// forgets one only when its DELETE succeeds or the server no longer knows
// it.
func TestRecorderStatuses(t *testing.T) {
	const result = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`
	answer := func(body string, statuses ...int) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set(mcphttp.HeaderSessionID, "s")
			for _, s := range statuses {
				w.WriteHeader(s)
			}
			_, _ = io.WriteString(w, body)
		})
	}
	cases := []struct {
		name     string
		body     string
		statuses []int
		pinned   bool
	}{
		{"200", result, []int{200}, true},
		{"299", result, []int{299}, true},
		{"300", result, []int{300}, false},
		{"103 then 200", result, []int{103, 200}, true},
		{"199 then 400", result, []int{199, 400}, false},
		{"the result alone", result, nil, true},
		{"200 without the result", "", []int{200}, false},
		{"nothing written", "", nil, false},
		{"another revision", strings.Replace(result, "2025-11-25", "2025-06-18", 1), []int{200}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := mcphttp.New(compile(t, legacyFacets(), policy.Policy{}), mcphttp.Options{Sink: &negotiatetest.Recorder{}})
			if err != nil {
				t.Fatal(err)
			}
			h := m.Wrap(answer(c.body, c.statuses...))
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(initialize("2025-11-25"))))
			if got := mcphttp.Sessions(h) == 1; got != c.pinned {
				t.Errorf("pinned %t, want %t", got, c.pinned)
			}
		})
	}
	// 0: the handler writes nothing, net/http's 200.
	for status, forgotten := range map[int]bool{0: true, 200: true, 204: true, 299: true, 300: false, 403: false, 404: true, 500: false} {
		m, _ := mcphttp.New(compile(t, legacyFacets(), policy.Policy{}), mcphttp.Options{Sink: &negotiatetest.Recorder{}})
		h := m.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodDelete {
				if status != 0 {
					w.WriteHeader(status)
				}
				return
			}
			w.Header().Set(mcphttp.HeaderSessionID, "s")
			_, _ = io.WriteString(w, result)
		}))
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(initialize("2025-11-25"))))
		req := httptest.NewRequest(http.MethodDelete, "/mcp", nil)
		req.Header = http.Header{mcphttp.HeaderSessionID: {"s"}, mcphttp.HeaderProtocolVersion: {"2025-11-25"}}
		h.ServeHTTP(httptest.NewRecorder(), req)
		if got := mcphttp.Sessions(h) == 0; got != forgotten {
			t.Errorf("DELETE answered %d: forgotten %t, want %t", status, got, forgotten)
		}
	}
}

// TestForwardedLength checks what the wrapped handler is told of the body
// it gets: its length, in the header too when the client sent one or the
// body was rewritten, and a GetBody that gives it again.
func TestForwardedLength(t *testing.T) {
	type seenReq struct {
		header   string
		length   int64
		body     string
		again    string
		hasAgain bool
	}
	var got seenReq
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = seenReq{header: r.Header.Get("Content-Length"), length: r.ContentLength, body: string(b)}
		if r.GetBody != nil {
			rc, _ := r.GetBody()
			again, _ := io.ReadAll(rc)
			got.again, got.hasAgain = string(again), true
		}
	})
	m, err := mcphttp.New(compile(t, legacyFacets(), policy.Policy{}), mcphttp.Options{Sink: &negotiatetest.Recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	h := m.Wrap(next)
	rewritten := initialize("2025-11-25")
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	cases := []struct {
		name, body, header string
		want               seenReq
	}{
		{"counter-offered: rewritten", initialize("2025-06-18"), "", seenReq{strconv.Itoa(len(rewritten)), int64(len(rewritten)), rewritten, rewritten, true}},
		{"a client's Content-Length", list, strconv.Itoa(len(list)), seenReq{strconv.Itoa(len(list)), int64(len(list)), list, list, true}},
		{"no Content-Length header", list, "", seenReq{"", int64(len(list)), list, list, true}},
	}
	for _, c := range cases {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(c.body))
		req.Header.Set(mcphttp.HeaderProtocolVersion, "2025-11-25")
		if c.header != "" {
			req.Header.Set("Content-Length", c.header)
		}
		got = seenReq{}
		h.ServeHTTP(httptest.NewRecorder(), req)
		if got != c.want {
			t.Errorf("%s: the handler saw %+v, want %+v", c.name, got, c.want)
		}
	}
}

// closeCounter is a request body that counts its Close calls.
type closeCounter struct {
	io.Reader
	closed int
}

func (c *closeCounter) Close() error { c.closed++; return nil }

// TestTransportClosesARefusedBody: a request the Transport refuses to
// send has its body closed all the same, as http.RoundTripper requires,
// and a refused request without a body is refused just as well.
func TestTransportClosesARefusedBody(t *testing.T) {
	tr, err := mcphttp.NewTransport(accepted("2026-07-28"), http.DefaultTransport)
	if err != nil {
		t.Fatal(err)
	}
	body := &closeCounter{Reader: strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)}
	for _, b := range []io.ReadCloser{body, nil} {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:1/", nil)
		req.Body = b
		req.Header.Set(mcphttp.HeaderProtocolVersion, "2025-06-18")
		if _, err := tr.RoundTrip(req); !errors.Is(err, mcphttp.ErrVersionConflict) {
			t.Errorf("body %v: error %v, want a version conflict", b, err)
		}
	}
	if body.closed != 1 {
		t.Errorf("the refused body was closed %d times, want once", body.closed)
	}
}

// breaksAfter is a body that gives its text and a read error in one Read,
// as a connection that breaks right behind the answer does, and says the
// error once: io.Reader does not promise to repeat it.
type breaksAfter struct {
	text string
	err  error
}

func (b *breaksAfter) Read(p []byte) (int, error) {
	n := copy(p, b.text)
	b.text = b.text[n:]
	if b.text != "" {
		return n, nil
	}
	err := b.err
	b.err = io.EOF
	return n, err
}

// roundTripFunc is a RoundTripper written as a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestTransportKeepsTheBreakAfterAnAnswer: an answer that served the
// revision, read with the error of a connection that broke behind it, is
// handed back with that error after it, never as an answer that ended.
func TestTransportKeepsTheBreakAfterAnAnswer(t *testing.T) {
	const answer = `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`
	broke := errors.New("connection reset by peer")
	base := roundTripFunc(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(&breaksAfter{text: answer, err: broke})}, nil
	})
	tr, err := mcphttp.NewTransport(accepted("2026-07-28"), base)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:1/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	if string(got) != answer || !errors.Is(err, broke) {
		t.Errorf("the body read %q, %v; want the answer, then %v", got, err, broke)
	}
}

// bodyCloses is a request body that says whether it was closed.
type bodyCloses struct {
	io.Reader
	closed bool
}

func (b *bodyCloses) Close() error { b.closed = true; return nil }

// TestZeroValuesRefuse: the zero Middleware and the zero Transport have
// nothing to decide with and no revision to send at, so they fail closed
// and never panic: what the Middleware wraps is never reached and every
// request is answered 500 naming New, as its Check says; the Transport
// sends nothing, closes the request's body and names its constructors.
func TestZeroValuesRefuse(t *testing.T) {
	var m mcphttp.Middleware
	reached := false
	w := httptest.NewRecorder()
	m.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true })).ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(initialize("2025-11-25"))))
	const made = "mcphttp: a zero Middleware decides nothing and sends nothing; make it with New"
	if reached || w.Code != http.StatusInternalServerError || !strings.Contains(w.Body.String(), made) {
		t.Errorf("the zero Middleware answered %d %s (reached the handler: %t)", w.Code, w.Body, reached)
	}
	if err := m.Check(context.Background(), http.NotFoundHandler()); err == nil || err.Error() != made {
		t.Errorf("the zero Middleware's Check: %v", err)
	}
	body := &bodyCloses{Reader: strings.NewReader(initialize("2025-11-25"))}
	resp, err := new(mcphttp.Transport).RoundTrip(httptest.NewRequest(http.MethodPost, "http://127.0.0.1:9/mcp", body))
	if resp != nil || err == nil || err.Error() != "mcphttp: a zero Transport decides nothing and sends nothing; make it with NewTransport or Connect" || !body.closed {
		t.Errorf("the zero Transport: %v, %v, the body closed %t", resp, err, body.closed)
	}
}
