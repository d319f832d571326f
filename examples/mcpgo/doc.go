// Package mcpgo compares wopneg's MCP revision negotiation with the one in
// github.com/mark3labs/mcp-go v1.2.1, for the same situation: a peer that
// asks for the host's preferred revision.
//
// It holds only tests and benchmarks:
//
//	go test -run X -bench . -benchmem ./mcpgo
//
// bench_test.go says exactly what is compared. In short: mcp-go picks a
// revision with
// [github.com/mark3labs/mcp-go/mcp.NegotiateMutuallySupportedVersion] (the
// highest of the SDK's own revisions that the other side also lists), and
// its streamable HTTP server accepts a requested revision with
// [github.com/mark3labs/mcp-go/server.StreamableHTTPServer.SupportsProtocolVersion];
// wopneg decides with [github.com/wopneg/wopneg/negotiate.Negotiator.Decide],
// which also applies the floor, the authentication rule and the host's
// policy, and yields the negotiation.decided event. The answers agree
// wherever those extra rules do not bite (TestSameAnswer) and differ where
// they do (TestWhereTheyDiffer).
package mcpgo
