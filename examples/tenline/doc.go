// Package tenline holds the two hosts of the README's "A host in ten
// lines", a go-sdk MCP server (mcphost) and an a2a-go v2 agent (a2ahost),
// and the tests that keep them honest: each is run by its own TestHost,
// its wopneg lines are counted against what the README says, and the
// start-up check they rely on is run against the real SDKs.
package tenline
