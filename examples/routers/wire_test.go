package routers

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/labstack/echo/v4"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// bearer is a host's authentication: token is its user, anything else
// nobody.
func bearer(token string) func(*http.Request) *negotiate.Subject {
	return func(r *http.Request) *negotiate.Subject {
		if r.Header.Get("Authorization") != "Bearer "+token {
			return nil
		}
		return &negotiate.Subject{Issuer: "https://idp.example", SubjectID: "wire-user", Tenant: "acme",
			Lane: policy.LaneAPIKey, Kind: policy.KindUser}
	}
}

// mcpOnly builds a host that serves MCP alone: the go-sdk's handler
// behind mcphttp in chi, at /v1/mcp, authenticating "mcp-host-token".
func mcpOnly(stateless bool) func(facets.Set, policy.Policy, events.Sink) (http.Handler, error) {
	return func(set facets.Set, p policy.Policy, sink events.Sink) (http.Handler, error) {
		n, err := negotiate.Compile(set, p)
		if err != nil {
			return nil, err
		}
		m, err := mcphttp.New(n, mcphttp.Options{Sink: sink, Subject: bearer("mcp-host-token")})
		if err != nil {
			return nil, err
		}
		r := chi.NewRouter()
		r.With(m.Wrap).Handle("/v1/mcp", goSDKServer(set.MCP.Revisions, stateless))
		return r, nil
	}
}

var mcpOnlyWire = negotiatetest.WireOptions{
	Endpoints: map[facets.Protocol]string{facets.ProtocolMCP: "/v1/mcp"}, Bearer: "mcp-host-token"}

// TestWireMCPOnly is issue 21 item 3 against a real SDK: a host serving
// MCP alone, at its own path and with its own token, passes the wire
// vectors of MCP, told so through WireOptions.
func TestWireMCPOnly(t *testing.T) {
	negotiatetest.RunWire(t, mcpOnly(true), mcpOnlyWire)
}

// TestWireA2AOnly: a host serving A2A alone — a2a-go's JSON-RPC handlers
// behind a2ahttp in echo, at /v1/a2a, authenticating "a2a-host-token" —
// passes the wire vectors of A2A.
func TestWireA2AOnly(t *testing.T) {
	negotiatetest.RunWire(t, func(set facets.Set, p policy.Policy, sink events.Sink) (http.Handler, error) {
		n, err := negotiate.Compile(set, p)
		if err != nil {
			return nil, err
		}
		m, err := a2ahttp.New(n, a2ahttp.Options{Sink: sink, Subject: bearer("a2a-host-token")})
		if err != nil {
			return nil, err
		}
		e := echo.New()
		e.Group("/v1/a2a", echo.WrapMiddleware(m.Wrap)).Any("", echo.WrapHandler(a2aServer()))
		return e, nil
	}, negotiatetest.WireOptions{Endpoints: map[facets.Protocol]string{facets.ProtocolA2A: "/v1/a2a"}, Bearer: "a2a-host-token"})
}

// recordingTB keeps what the kit reports, so that a test can read its
// verdict on a broken host.
type recordingTB struct {
	testing.TB
	errs []string
}

func (*recordingTB) Helper() {}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestWireCatchesTheStatefulGoSDK: the kit still catches a broken host
// told to check MCP alone. The go-sdk's default, stateful handler cannot
// serve 2026-07-28, which the facets prefer; the vectors that reach it
// there fail.
func TestWireCatchesTheStatefulGoSDK(t *testing.T) {
	tb := &recordingTB{}
	negotiatetest.RunWire(tb, mcpOnly(false), mcpOnlyWire)
	var failed []string
	for _, e := range tb.errs {
		name, _, _ := strings.Cut(e, " ")
		failed = append(failed, name)
	}
	if !slices.Contains(failed, "mcp/preferred-accepted") {
		t.Errorf("the kit passed the stateful go-sdk handler at 2026-07-28; it failed %q", failed)
	}
	for _, name := range failed {
		if !strings.HasPrefix(name, "mcp/") {
			t.Errorf("the kit ran %s against a host serving MCP alone", name)
		}
	}
}
