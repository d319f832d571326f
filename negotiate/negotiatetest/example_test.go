package negotiatetest_test

import (
	"net/http"
	"testing"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// ExampleRunWire checks a host's handler on the wire. The function below
// is a test: put it in a _test.go file of the host, and build the handler
// as the host deploys it — here a mux with both adapters over stand-in
// servers, and a bearer check standing for the host's authentication.
func ExampleRunWire() {
	TestNegotiationOnTheWire := func(t *testing.T) {
		negotiatetest.RunWire(t, func(set facets.Set, p policy.Policy, sink events.Sink) (http.Handler, error) {
			n, err := negotiate.Compile(set, p)
			if err != nil {
				return nil, err
			}
			// The host's authentication, told to trust the kit's token.
			subject := func(r *http.Request) *negotiate.Subject {
				if r.Header.Get("Authorization") != "Bearer negotiatetest" {
					return nil
				}
				return &negotiate.Subject{Issuer: "https://idp.example", SubjectID: "kit-user", Tenant: "acme",
					Lane: policy.LaneOIDC, Kind: policy.KindUser}
			}
			a, err := a2ahttp.New(n, a2ahttp.Options{Sink: sink, Subject: subject})
			if err != nil {
				return nil, err
			}
			m, err := mcphttp.New(n, mcphttp.Options{Sink: sink, Subject: subject})
			if err != nil {
				return nil, err
			}
			mux := http.NewServeMux()
			mux.Handle("/a2a", a.Wrap(a2aServer)) // the host's A2A SDK handler
			mux.Handle("/mcp", m.Wrap(mcpServer)) // the host's MCP SDK handler
			return mux, nil
		})
	}
	_ = TestNegotiationOnTheWire
}

var a2aServer, mcpServer http.Handler = rpcServer, rpcServer

// ExampleWireOptions checks a host that serves MCP alone, at /v1/mcp, and
// authenticates its own test token: the kit runs the MCP vectors only,
// there, with that token, and builds the host from facets advertising MCP
// alone.
func ExampleWireOptions() {
	TestMCPOnTheWire := func(t *testing.T) {
		negotiatetest.RunWire(t, func(set facets.Set, p policy.Policy, sink events.Sink) (http.Handler, error) {
			n, err := negotiate.Compile(set, p)
			if err != nil {
				return nil, err
			}
			m, err := mcphttp.New(n, mcphttp.Options{Sink: sink, Subject: bearerAuth("test-token")})
			if err != nil {
				return nil, err
			}
			mux := http.NewServeMux()
			mux.Handle("/v1/mcp", m.Wrap(mcpServer))
			return mux, nil
		}, negotiatetest.WireOptions{
			Endpoints: map[facets.Protocol]string{facets.ProtocolMCP: "/v1/mcp"},
			Bearer:    "test-token",
		})
	}
	_ = TestMCPOnTheWire
}

// ExampleRun runs every decision vector against a host's own decision.
// The function below is a test: put it in a _test.go file of the host and
// pass the host's wrapper of negotiate.Decide (here the library's own).
func ExampleRun() {
	TestNegotiationVectors := func(t *testing.T) {
		negotiatetest.Run(t, negotiate.Decide)
	}
	_ = TestNegotiationVectors
}
