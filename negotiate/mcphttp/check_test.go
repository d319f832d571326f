package mcphttp_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// asked keeps the requests a checked server was given.
type asked struct {
	next     http.Handler
	methods  []string
	headers  []http.Header
	bodies   []string
	outcomes []negotiate.Outcome
}

func (a *asked) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	o, _ := mcphttp.Outcome(r.Context())
	a.methods, a.headers, a.bodies, a.outcomes = append(a.methods, r.Method), append(a.headers, r.Header.Clone()), append(a.bodies, string(body)), append(a.outcomes, o)
	r.Body = io.NopCloser(strings.NewReader(string(body)))
	a.next.ServeHTTP(w, r)
}

// TestCheck: Check asks the server, in process, for the preferred
// revision, and says what it answered and the fix when it cannot serve it;
// nothing is recorded or observed.
func TestCheck(t *testing.T) {
	const stateless = "Stateless: true"
	cases := []struct {
		name   string
		set    facets.Set
		server http.Handler
		maxAns int64
		want   []string // in the error; none: Check passes
		not    string   // never in the error
	}{
		{name: "discover lists the preferred revision", set: wideFacets(), server: scripted{header: map[string]string{"Content-Type": jsonCT}, chunks: []string{discoverAll}}},
		{name: "discover in an event stream", set: wideFacets(), server: scripted{header: map[string]string{"Content-Type": sseCT}, chunks: []string{"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n", "data: " + strings.Replace(discoverAll, `"id":3`, `"id":1`, 1) + "\n\n"}}}, // the response to its request's id
		{name: "the go-sdk's stateful discover", set: wideFacets(), server: scripted{header: map[string]string{"Content-Type": jsonCT}, chunks: []string{discoverLegacy}},
			want: []string{`mcphttp: the server does not serve the preferred revision 2026-07-28 the mcp facet advertises: its server/discover at 2026-07-28 answered supportedVersions [2025-06-18, 2025-11-25]; a go-sdk server serves 2026-07-28 and later only stateless: mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{Stateless: true}); otherwise list the facet's revisions`}},
		{name: "discover refused", set: wideFacets(), server: scripted{header: map[string]string{"Content-Type": jsonCT}, chunks: []string{refused32022}},
			want: []string{`answered error -32022 "protocol version \"2026-07-28\" is not supported by this server"`, stateless}},
		{name: "no JSON-RPC answer", set: wideFacets(), server: http.NotFoundHandler(),
			want: []string{"answered HTTP 404 with no JSON-RPC response", stateless}},
		{name: "a result without the list", set: wideFacets(), server: scripted{header: map[string]string{"Content-Type": jsonCT}, chunks: []string{`{"jsonrpc":"2.0","id":1,"result":{}}`}},
			want: []string{"answered supportedVersions []"}},
		{name: "an answer past the bound", set: wideFacets(), maxAns: 16, server: scripted{header: map[string]string{"Content-Type": jsonCT}, chunks: []string{discoverAll}},
			want: []string{"answered more than 16 bytes (Options.MaxAnswerBytes)"}},
		{name: "initialize names the preferred revision", set: legacyFacets(), server: &fakeServer{revisions: legacyFacets().MCP.Revisions, stateful: true}},
		{name: "initialize names another revision", set: legacyFacets(), server: &fakeServer{revisions: []string{"2025-06-18"}},
			want: []string{`its initialize at 2025-11-25 answered protocolVersion "2025-06-18"; list the facet's revisions in the server's supported versions (go-sdk: ServerOptions.SupportedProtocolVersions`}, not: stateless},
		{name: "initialize refused", set: legacyFacets(), server: scripted{header: map[string]string{"Content-Type": jsonCT}, chunks: []string{`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"no"}}`}},
			want: []string{`its initialize at 2025-11-25 answered error -32602 "no"`}, not: stateless},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := &negotiatetest.Recorder{}
			observed := 0
			m, err := mcphttp.New(compile(t, c.set, policy.Policy{}), mcphttp.Options{Sink: rec, MaxAnswerBytes: c.maxAns,
				Observe: func(context.Context, negotiate.Exchange) { observed++ }})
			if err != nil {
				t.Fatal(err)
			}
			a := &asked{next: c.server}
			err = m.Check(context.Background(), a)
			if len(c.want) == 0 && err != nil {
				t.Fatalf("Check = %v, want nil", err)
			}
			for _, w := range c.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("Check = %v, want it to say %q", err, w)
				}
			}
			if c.not != "" && err != nil && strings.Contains(err.Error(), c.not) {
				t.Errorf("Check = %v, which should not say %q", err, c.not)
			}
			if n := len(rec.Events()); n != 0 || observed != 0 {
				t.Errorf("Check recorded %d events and observed %d exchanges, want none", n, observed)
			}
			adv, _ := c.set.Lookup(facets.ProtocolMCP)
			if len(a.outcomes) == 0 || a.outcomes[0].Version != adv.Preferred || a.outcomes[0].Kind != negotiate.Accepted {
				t.Fatalf("the server saw outcomes %+v, want the preferred revision accepted", a.outcomes)
			}
			h := a.headers[0]
			if adv.Preferred == mcphttp.StatelessRevision {
				if h.Get(mcphttp.HeaderProtocolVersion) != adv.Preferred || h.Get(mcphttp.HeaderMethod) != "server/discover" ||
					!strings.Contains(a.bodies[0], `"method":"server/discover"`) || !strings.Contains(a.bodies[0], `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`) {
					t.Errorf("the check asked %v %s, want a server/discover at 2026-07-28", h, a.bodies[0])
				}
			} else if h.Get(mcphttp.HeaderProtocolVersion) != "" || !strings.Contains(a.bodies[0], `"protocolVersion":"`+adv.Preferred+`"`) {
				t.Errorf("the check asked %v %s, want an initialize of %s", h, a.bodies[0], adv.Preferred)
			}
			if h.Get("Accept") != "application/json, text/event-stream" || h.Get("Content-Type") != "application/json" {
				t.Errorf("the check's Accept %q and Content-Type %q, want a streamable-HTTP client's", h.Get("Accept"), h.Get("Content-Type"))
			}
		})
	}
}

// TestCheckEndsTheSession: a session the server opened for the check's
// initialize is ended with a DELETE naming it.
func TestCheckEndsTheSession(t *testing.T) {
	m, err := mcphttp.New(compile(t, legacyFacets(), policy.Policy{}), mcphttp.Options{Sink: &negotiatetest.Recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	a := &asked{next: &fakeServer{revisions: legacyFacets().MCP.Revisions, stateful: true}}
	if err := m.Check(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if len(a.methods) != 2 || a.methods[1] != http.MethodDelete || a.headers[1].Get(mcphttp.HeaderSessionID) != "session-a" ||
		a.headers[1].Get(mcphttp.HeaderProtocolVersion) != "2025-11-25" {
		t.Errorf("the server was asked %v %v, want the initialize, then a DELETE of session-a at 2025-11-25", a.methods, a.headers)
	}
	a = &asked{next: &fakeServer{revisions: legacyFacets().MCP.Revisions}}
	if err := m.Check(context.Background(), a); err != nil || len(a.methods) != 1 {
		t.Errorf("Check = %v after %v, want one initialize and no DELETE without a session", err, a.methods)
	}
}

func TestCheckNil(t *testing.T) {
	m, err := mcphttp.New(compile(t, wideFacets(), policy.Policy{}), mcphttp.Options{Sink: &negotiatetest.Recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Check(context.Background(), nil); err == nil || err.Error() != "mcphttp: Check of a nil handler" {
		t.Errorf("Check(nil) = %v", err)
	}
}

// TestHandler: the one-call constructor starts only a server that passes
// the check, and then serves behind the negotiation, for the caller the
// host's function names.
func TestHandler(t *testing.T) {
	f := wideFacets().MCP
	if h, err := mcphttp.Handler(nil, subjectOf, http.NotFoundHandler()); err == nil || h != nil || err.Error() != "mcphttp: the mcp facet is nil" {
		t.Errorf("Handler(nil facet) = %v, %v", h, err)
	}
	if h, err := mcphttp.Handler(f, subjectOf, scripted{header: map[string]string{"Content-Type": jsonCT}, chunks: []string{discoverLegacy}}, mcphttp.HandlerOptions{Policy: atNow}); err == nil || h != nil || !strings.Contains(err.Error(), "Stateless: true") {
		t.Errorf("Handler(stateful server) = %v, %v; want the check's error", h, err)
	}
	bad := *f
	bad.PreferredVersion = "2024-11-05"
	if h, err := mcphttp.Handler(&bad, subjectOf, http.NotFoundHandler(), mcphttp.HandlerOptions{Policy: atNow}); err == nil || h != nil || !strings.HasPrefix(err.Error(), "mcphttp: ") {
		t.Errorf("Handler(invalid facet) = %v, %v", h, err)
	}
	server := &asked{next: scripted{header: map[string]string{"Content-Type": jsonCT}, chunks: []string{discoverAll}}}
	h, err := mcphttp.Handler(f, subjectOf, server, mcphttp.HandlerOptions{Policy: atNow})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{h: h}
	if a := r.do(call{body: initialize("2025-11-25"), headers: hdr("Authorization", "Bearer user")}); a.status != http.StatusOK {
		t.Fatalf("initialize by a signed-in user: %d %s", a.status, a.body)
	}
	if a := r.do(call{body: initialize("2025-11-25")}); a.status != http.StatusOK || !strings.Contains(a.body, "-32602") {
		t.Errorf("initialize by an anonymous caller: %d %s, want the -32602 refusal", a.status, a.body)
	}
	if n := len(server.outcomes); n != 2 || server.outcomes[1].Kind != negotiate.Downgraded {
		t.Errorf("the server saw %+v, want the check and the signed-in user's downgrade", server.outcomes)
	}
}
