// Command mcphost is a go-sdk MCP server behind wopneg; README.md shows it, a test counts it.
package main

import (
	"context"
	"log"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopneg/wopneg/facets"            // wopneg
	"github.com/wopneg/wopneg/negotiate"         // wopneg
	"github.com/wopneg/wopneg/negotiate/mcphttp" // wopneg
)

func main() {
	log.Fatal(http.ListenAndServe("localhost:8080", host()))
}

func host() http.Handler {
	facet := &facets.MCP{Revisions: []string{"2025-11-25", "2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-11-25"}            // wopneg
	server := mcp.NewServer(&mcp.Implementation{Name: "mcphost", Version: "1.0.0"}, &mcp.ServerOptions{SupportedProtocolVersions: facet.Revisions}) // wopneg
	mcp.AddTool(server, &mcp.Tool{Name: "hello", Description: "Says hello."}, hello)
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true})
	handler, err := mcphttp.Handler(facet, caller, sdk) // wopneg
	if err != nil {                                     // wopneg
		log.Fatal(err) // wopneg
	} // wopneg
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	return mux
}

// caller is the demo token's signed-in user, or nil: anonymous.
func caller(r *http.Request) *negotiate.Subject {
	if r.Header.Get("Authorization") != "Bearer demo" {
		return nil
	}
	return &negotiate.Subject{Issuer: "https://idp.example", SubjectID: "user-1", Tenant: "demo", Lane: "oidc", Kind: "user"}
}

func hello(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}, nil, nil
}
