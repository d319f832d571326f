// Command mcpaudit is a go-sdk MCP server behind wopneg, past the
// defaults: its decisions go to its own audit log as JSON lines, each
// synced to disk before its request goes on (events.NewJSONLinesFile, a
// durable sink, the only kind a required audit accepts), and its policy
// requires every record to be written before a request is served.
// Its wopneg lines end in "// wopneg"; a test counts them.
package main

import (
	"context"
	"log"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopneg/wopneg/events"            // wopneg
	"github.com/wopneg/wopneg/facets"            // wopneg
	"github.com/wopneg/wopneg/negotiate"         // wopneg
	"github.com/wopneg/wopneg/negotiate/mcphttp" // wopneg
	"github.com/wopneg/wopneg/policy"            // wopneg
)

func main() {
	audit, err := os.OpenFile("audit.jsonl", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		log.Fatal(err)
	}
	handler, err := host(audit)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	log.Fatal(http.ListenAndServe("localhost:8080", mux))
}

func host(audit *os.File) (http.Handler, error) {
	facet := &facets.MCP{Revisions: []string{"2025-11-25", "2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-11-25"} // wopneg
	server := mcp.NewServer(&mcp.Implementation{Name: "mcpaudit", Version: "1.0.0"}, &mcp.ServerOptions{
		SupportedProtocolVersions: facet.Revisions, // wopneg
	})
	mcp.AddTool(server, &mcp.Tool{Name: "hello", Description: "Says hello."}, hello)
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true})
	return mcphttp.Handler(facet, caller, sdk, mcphttp.HandlerOptions{ // wopneg
		Options: mcphttp.Options{Sink: events.NewJSONLinesFile(audit)}, // wopneg
		Policy:  policy.Policy{RequireAudit: true},                     // wopneg
	}) // wopneg
}

// caller says who is calling: whoever shows the demo token is a signed-in
// user, anyone else is anonymous.
func caller(r *http.Request) *negotiate.Subject {
	if r.Header.Get("Authorization") != "Bearer demo" {
		return nil
	}
	return &negotiate.Subject{Issuer: "https://idp.example", SubjectID: "user-1", Tenant: "demo", Lane: "oidc", Kind: "user"}
}

func hello(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}, nil, nil
}
