// Command mcphost is a go-sdk MCP server behind wopneg. Its wopneg lines
// end in "// wopneg"; README.md shows this file, and a test counts them.
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
	facet := &facets.MCP{Revisions: []string{"2025-11-25", "2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-11-25"} // wopneg
	server := mcp.NewServer(&mcp.Implementation{Name: "mcphost", Version: "1.0.0"}, &mcp.ServerOptions{
		SupportedProtocolVersions: facet.Revisions, // wopneg
	})
	mcp.AddTool(server, &mcp.Tool{Name: "hello", Description: "Says hello."}, hello)
	handler, err := mcphttp.Handler(facet, caller, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true})) // wopneg

	if err != nil { // wopneg
		log.Fatal(err) // wopneg
	} // wopneg
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	return mux
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
