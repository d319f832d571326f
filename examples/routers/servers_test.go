package routers

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/policy"
)

// compiled is the host's facets, compiled: MCP with its floor below the
// preferred revision, A2A 1.0 (the one non-legacy A2A version).
func compiled() *negotiate.Negotiator {
	n, err := negotiate.Compile(facets.Set{
		MCP: &facets.MCP{Revisions: []string{"2025-11-25", "2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-11-25"},
		A2A: &facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0"},
	}, policy.Policy{})
	if err != nil {
		panic(err)
	}
	return n
}

// mcpServer is the go-sdk's stateless streamable handler with one tool,
// echo, which answers its text and the revision it was served at.
func mcpServer() http.Handler {
	return goSDKServer([]string{"2025-11-25", "2026-07-28"}, true)
}

// goSDKServer is the go-sdk's streamable handler serving revisions, with
// echo: stateless (it serves 2026-07-28) or with sessions, the go-sdk's
// default (the legacy handshake only).
func goSDKServer(revisions []string, stateless bool) http.Handler {
	server := mcp.NewServer(&mcp.Implementation{Name: "routers", Version: "0.1.0"}, &mcp.ServerOptions{
		SupportedProtocolVersions: revisions,
	})
	server.AddTool(&mcp.Tool{
		Name:        "echo",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Text string }
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		rev, _ := mcphttp.Version(ctx)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text + " at " + rev}}}, nil
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: stateless, JSONResponse: true})
}

// a2aServer is a2a-go's JSON-RPC handler with an agent that echoes the
// text of a message and the version it was served at: its 0.3
// compatibility handler for a request decided at 0.3, its 1.0 handler
// otherwise.
func a2aServer() http.Handler {
	v10 := a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(echoAgent{}))
	v03 := a2av0.NewJSONRPCHandler(a2asrv.NewHandler(echoAgent{}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v, _ := a2ahttp.Version(r.Context()); v == "0.3" {
			v03.ServeHTTP(w, r)
			return
		}
		v10.ServeHTTP(w, r)
	})
}

type echoAgent struct{}

func (echoAgent) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		var text string
		for _, p := range ec.Message.Parts {
			text += p.Text()
		}
		v, _ := a2ahttp.Version(ctx)
		yield(a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(text+" at "+v)), nil)
	}
}

func (echoAgent) Cancel(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(func(a2a.Event, error) bool) {}
}

// The requests the examples and benchmarks send: a 2026-07-28 tools/call
// of echo as the go-sdk client sends it, and an A2A 1.0 SendMessage.
const (
	mcpCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"REVISION","io.modelcontextprotocol/clientCapabilities":{}}}}`
	a2aCall = `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`
)

// mcpRequest and a2aRequest build those requests for path.
func mcpRequest(path, revision string) *http.Request {
	r := newRequest(path, strings.Replace(mcpCall, "REVISION", revision, 1))
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Protocol-Version", revision)
	r.Header.Set("Mcp-Method", "tools/call")
	r.Header.Set("Mcp-Name", "echo")
	return r
}

func a2aRequest(path, version string) *http.Request {
	r := newRequest(path, a2aCall)
	r.Header.Set("A2A-Version", version)
	return r
}
