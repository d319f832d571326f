// Package tenline holds small hosts and the tests that keep them honest:
// a go-sdk MCP server (mcphost) and an a2a-go v2 agent (a2ahost) that take
// the defaults, and two past them — an MCP server with its own audit log
// and RequireAudit (mcpaudit), and an agent recording to its own audit
// log and to OpenTelemetry, with Observe (a2aotel). Each is run with a
// real client by its own TestHost, its wopneg lines are counted against
// what README.md or examples/README.md says, and the start-up check they
// rely on is run against the real SDKs.
package tenline
