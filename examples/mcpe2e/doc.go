// Package mcpe2e proves the outbound side of negotiate/mcphttp
// (mcphttp.Connect and its Transport) against real MCP servers, end to end
// on loopback. It has no code of its own: the tests stand up each server,
// connect to it as a host would, and check, with an authenticated host
// identity and without one, what is decided, what negotiation.decided
// records, what went over the wire (captured by a recording proxy in front
// of the server), and that a real tools/call through the Transport works
// at the revision decided.
//
// The servers: the TypeScript MCP SDK 1.32.2 streamable-HTTP server
// (@modelcontextprotocol/sdk, the most deployed MCP server; initialize
// only, and HTTP 400 "No valid session ID provided" to server/discover),
// wired as its examples/server/simpleStreamableHttp in testdata/tsserver
// and run through node (npm ci from its pinned lockfile; without node the
// test is skipped, except in CI, CI set, where it fails); the go-sdk
// v1.8.0 streamable handler, stateful (its default: it answers
// server/discover listing only the handshake revisions) and stateless (it
// serves 2026-07-28); and mcp-go v1.2.1's StreamableHTTPServer, which
// serves both eras on one endpoint.
//
// The host offers MCP 2025-11-25 and 2026-07-28, prefers 2026-07-28 and
// has its floor at 2025-11-25, so that a downgrade is possible and only an
// authenticated host identity can get it.
package mcpe2e
