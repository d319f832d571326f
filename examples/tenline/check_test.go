package tenline_test

import (
	"context"
	"iter"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// mcpFacet prefers 2026-07-28, which only a stateless go-sdk handler
// serves.
var mcpFacet = facets.MCP{
	Revisions:        []string{"2025-06-18", "2025-11-25", "2026-07-28"},
	PreferredVersion: "2026-07-28",
	MinimumRevision:  "2025-11-25",
	RefreshedAt:      "2026-11-29",
}

func clock() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }

// goSDK is the go-sdk's streamable handler for a server restricted to the
// facet's revisions, stateful (the go-sdk's default) or stateless.
func goSDK(stateless bool) http.Handler {
	server := mcp.NewServer(&mcp.Implementation{Name: "check", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: mcpFacet.Revisions})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: stateless})
}

// TestCheckGoSDK: the start-up check against the real go-sdk fails for
// its default, stateful handler behind a facet that prefers 2026-07-28,
// naming the fix, and passes for the stateless one; it records nothing.
// mcphttp.Handler runs the same check, so such a host does not start.
func TestCheckGoSDK(t *testing.T) {
	for _, c := range []struct {
		name      string
		stateless bool
		want      string
	}{
		{"stateful, the go-sdk's default", false, "mcphttp: the server does not serve the preferred revision 2026-07-28 the mcp facet advertises: its server/discover at 2026-07-28 answered supportedVersions [2025-11-25, 2025-06-18]; a go-sdk server serves 2026-07-28 and later only stateless: mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{Stateless: true})"},
		{"stateless", true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := mcpFacet
			n, err := negotiate.Compile(facets.Set{MCP: &f}, policy.Policy{Now: clock})
			if err != nil {
				t.Fatal(err)
			}
			audit := &negotiatetest.Recorder{}
			m, err := mcphttp.New(n, mcphttp.Options{Sink: audit})
			if err != nil {
				t.Fatal(err)
			}
			err = m.Check(context.Background(), goSDK(c.stateless))
			t.Logf("Check = %v", err)
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)) {
				t.Errorf("Check = %v, want %q", err, c.want)
			}
			if got := audit.Events(); len(got) != 0 {
				t.Errorf("the check recorded %v, want nothing", got)
			}
			h, err := mcphttp.Handler(&f, nil, goSDK(c.stateless), mcphttp.HandlerOptions{Policy: policy.Policy{Now: clock}})
			if (h == nil) != (c.want != "") || c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)) {
				t.Errorf("Handler = %v, %v; want it to start only when Check passes", h, err)
			}
		})
	}
}

// versionedAgent answers every message; served says whether the host's
// dispatch has a handler for the version decided.
type versionedAgent struct{}

func (versionedAgent) Execute(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("hi")), nil)
	}
}

func (versionedAgent) Cancel(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(func(a2a.Event, error) bool) {}
}

// TestCheckA2AGo: the check against a2a-go v2's JSON-RPC handler passes
// at 1.0 (a2a-go answers the check's GetTask with a task not found), and
// fails for a host whose dispatch on the decided version has no handler
// for its preferred one and answers VersionNotSupported.
func TestCheckA2AGo(t *testing.T) {
	v10 := a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(versionedAgent{}))
	only03 := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v, _ := a2ahttp.Version(r.Context()); v != "0.3" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32009,"message":"this version is not supported"}}`))
			return
		}
		v10.ServeHTTP(w, r)
	})
	for _, c := range []struct {
		name   string
		server http.Handler
		want   string
	}{
		{"a2a-go v2 at 1.0", v10, ""},
		{"a dispatch without the preferred version", only03, "a2ahttp: the server does not serve the preferred version 1.0 the a2a facet advertises"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := facets.A2A{Versions: []string{"0.3", "1.0"}, PreferredVersion: "1.0", MinimumVersion: "0.3", RefreshedAt: "2026-11-29"}
			n, err := negotiate.Compile(facets.Set{A2A: &f}, policy.Policy{Now: clock})
			if err != nil {
				t.Fatal(err)
			}
			audit := &negotiatetest.Recorder{}
			m, err := a2ahttp.New(n, a2ahttp.Options{Sink: audit})
			if err != nil {
				t.Fatal(err)
			}
			err = m.Check(context.Background(), c.server)
			t.Logf("Check = %v", err)
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)) {
				t.Errorf("Check = %v, want %q", err, c.want)
			}
			if got := audit.Events(); len(got) != 0 {
				t.Errorf("the check recorded %v, want nothing", got)
			}
		})
	}
}
