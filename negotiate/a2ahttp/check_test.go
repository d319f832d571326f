package a2ahttp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// asked keeps the one request a checked server was given.
type asked struct {
	next    http.Handler
	calls   int
	method  string
	target  string
	header  http.Header
	body    string
	outcome negotiate.Outcome
}

func (a *asked) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	a.calls++
	a.method, a.target, a.header, a.body = r.Method, r.URL.Path, r.Header.Clone(), string(body)
	a.outcome, _ = a2ahttp.Outcome(r.Context())
	a.next.ServeHTTP(w, r)
}

// TestCheck: Check asks the server, in process, at the preferred version,
// and fails only on a version refusal; nothing is recorded or observed.
func TestCheck(t *testing.T) {
	const refusal = `{"jsonrpc":"2.0","id":"wopneg-startup-check","error":{"code":-32009,"message":"no"}}`
	const notFound = `{"jsonrpc":"2.0","id":"wopneg-startup-check","error":{"code":-32001,"message":"task not found"}}`
	fail := "a2ahttp: the server does not serve the preferred version 1.2 the a2a facet advertises: its GetTask at A2A-Version 1.2 was refused as VersionNotSupported; serve 1.2 there (a host that serves several versions dispatches on a2ahttp.Version), or advertise only the versions the server serves"
	cases := []struct {
		name     string
		set      facets.Set
		opts     a2ahttp.Options
		server   http.Handler
		want     string // the error; "" when Check passes
		method   string // the HTTP method asked
		target   string
		rpc      string // the JSON-RPC method asked, when on JSON-RPC
		preferrd string
	}{
		{name: "a task not found", set: wideA2A(), server: answering(200, "application/json", notFound), method: "POST", target: "/", rpc: "GetTask", preferrd: "1.2"},
		{name: "-32009", set: wideA2A(), server: answering(200, "application/json", refusal), want: fail, method: "POST", target: "/", rpc: "GetTask", preferrd: "1.2"},
		{name: "-32009 in an event stream", set: wideA2A(), server: answering(200, "text/event-stream", "data: "+refusal+"\n\n"), want: fail, method: "POST", target: "/", rpc: "GetTask", preferrd: "1.2"},
		{name: "a stream that serves", set: wideA2A(), server: answering(200, "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"), method: "POST", target: "/", rpc: "GetTask", preferrd: "1.2"},
		{name: "a refusal past the bound", set: wideA2A(), opts: a2ahttp.Options{MaxAnswerBytes: 8}, server: answering(200, "application/json", notFound), method: "POST", target: "/", rpc: "GetTask", preferrd: "1.2",
			want: "a2ahttp: the server's answer to GetTask at A2A-Version 1.2 is longer than Options.MaxAnswerBytes (8 bytes), so whether it serves the preferred version could not be read"},
		{name: "an answer at the bound", set: wideA2A(), opts: a2ahttp.Options{MaxAnswerBytes: int64(len(notFound))}, server: answering(200, "application/json", notFound), method: "POST", target: "/", rpc: "GetTask", preferrd: "1.2"},
		{name: "0.3 preferred", set: facets.Set{A2A: &facets.A2A{Versions: []string{"0.3"}, PreferredVersion: "0.3", MinimumVersion: "0.3", RefreshedAt: "2026-11-01"}},
			server: answering(200, "application/json", refusal), method: "POST", target: "/", rpc: "tasks/get", preferrd: "0.3",
			want: "its tasks/get at A2A-Version 0.3 was refused"},
		{name: "HTTP+JSON", set: wideA2A(), opts: a2ahttp.Options{HTTPJSON: true},
			server: answering(400, "application/json", `{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"no","details":[{"reason":"VERSION_NOT_SUPPORTED"}]}}`),
			want:   "its GET /tasks/wopneg-startup-check at A2A-Version 1.2 was refused", method: "GET", target: "/tasks/wopneg-startup-check", preferrd: "1.2"},
		{name: "a path not served", set: wideA2A(), opts: a2ahttp.Options{HTTPJSON: true}, server: http.NotFoundHandler(), method: "GET", target: "/tasks/wopneg-startup-check", preferrd: "1.2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := &negotiatetest.Recorder{}
			observed := 0
			c.opts.Sink = rec
			c.opts.Observe = func(context.Context, negotiate.Exchange) { observed++ }
			m, err := a2ahttp.New(compile(t, c.set, policy.Policy{}), c.opts)
			if err != nil {
				t.Fatal(err)
			}
			a := &asked{next: c.server}
			err = m.Check(context.Background(), a)
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("Check = %v, want %q", err, c.want)
			}
			if n := len(rec.Events()); n != 0 || observed != 0 {
				t.Errorf("Check recorded %d events and observed %d exchanges, want none", n, observed)
			}
			if a.calls != 1 || a.method != c.method || a.target != c.target || a.header.Get("A2A-Version") != c.preferrd ||
				a.outcome.Version != c.preferrd || a.outcome.Kind != negotiate.Accepted {
				t.Errorf("the server was asked %d× %s %s at %q with outcome %+v; want %s %s at %s, accepted", a.calls, a.method, a.target, a.header.Get("A2A-Version"), a.outcome, c.method, c.target, c.preferrd)
			}
			if c.rpc != "" && a.body != `{"jsonrpc":"2.0","id":"wopneg-startup-check","method":"`+c.rpc+`","params":{"id":"wopneg-startup-check"}}` {
				t.Errorf("the server was asked %s, want a %s of the check's task", a.body, c.rpc)
			}
		})
	}
}

func TestCheckNil(t *testing.T) {
	m, err := a2ahttp.New(compile(t, wideA2A(), policy.Policy{}), a2ahttp.Options{Sink: &negotiatetest.Recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Check(context.Background(), nil); err == nil || err.Error() != "a2ahttp: Check of a nil handler" {
		t.Errorf("Check(nil) = %v", err)
	}
}

// TestHandler: the one-call constructor starts only a server that passes
// the check, and then serves behind the negotiation, for the caller the
// host's function names.
func TestHandler(t *testing.T) {
	f := wideA2A().A2A
	if h, err := a2ahttp.Handler(nil, subjectOf, http.NotFoundHandler()); err == nil || h != nil || err.Error() != "a2ahttp: the a2a facet is nil" {
		t.Errorf("Handler(nil facet) = %v, %v", h, err)
	}
	refusing := answering(200, "application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32009,"message":"no"}}`)
	if h, err := a2ahttp.Handler(f, subjectOf, refusing, a2ahttp.HandlerOptions{Policy: clock(policy.Policy{})}); err == nil || h != nil || !strings.Contains(err.Error(), "does not serve the preferred version 1.2") {
		t.Errorf("Handler(refusing server) = %v, %v; want the check's error", h, err)
	}
	bad := *f
	bad.PreferredVersion = "2.0"
	if h, err := a2ahttp.Handler(&bad, subjectOf, http.NotFoundHandler(), a2ahttp.HandlerOptions{Policy: clock(policy.Policy{})}); err == nil || h != nil || !strings.HasPrefix(err.Error(), "a2ahttp: ") {
		t.Errorf("Handler(invalid facet) = %v, %v", h, err)
	}
	server := &asked{next: answering(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{}}`)}
	h, err := a2ahttp.Handler(f, subjectOf, server, a2ahttp.HandlerOptions{Policy: clock(policy.Policy{})})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, post("/a2a", rpcBody("1"), "A2A-Version", "1.1", "Authorization", bearer))
	if server.calls != 2 || server.outcome.Kind != negotiate.Downgraded || server.outcome.Version != "1.1" {
		t.Errorf("served %d× with %+v; want the check, then the peer's downgrade to 1.1", server.calls, server.outcome)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, post("/a2a", rpcBody("1"), "A2A-Version", "1.1"))
	if server.calls != 2 || !strings.Contains(w.Body.String(), "-32009") {
		t.Errorf("an anonymous caller at 1.1: served %d×, answered %s; want the refusal", server.calls, w.Body)
	}
}
