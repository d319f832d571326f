// Package wopneg negotiates the A2A and MCP protocol versions an OpenWOP v2
// host speaks with its peers, safely and with a record of every decision
// (RFC 0175, spec/v2/core/interop.md in openwop/openwop). This package
// holds no code; it is the tour of the module.
//
// A host advertises an a2a and/or mcp facet: the versions it offers, the
// one it prefers, and a floor. Every negotiation is then decided by the
// same seven rules: nothing below the floor, ever; nothing below the
// preferred version for a caller that is not authenticated; a downgrade
// only where the host's policy allows it. Every outcome, refusals included,
// yields one content-free negotiation.decided event that names the peer
// only by the SHA-256 digest of its origin.
//
// # The decision
//
//   - [github.com/wopneg/wopneg/facets]: the a2a and mcp facets (Parse, a
//     Set), version ordering, the 90-day refresh SLA; the v2 discovery
//     document, its http.Handler at /.well-known/openwop with a Refresher
//     that keeps refreshedAt honest, and Lint. One error type, *Violation,
//     names every problem by JSON path.
//   - [github.com/wopneg/wopneg/policy]: what a host may tighten (deny
//     downgrades, who counts as authenticated, require the audit) and the
//     v2 Subject; the zero Policy is the reference behaviour.
//   - [github.com/wopneg/wopneg/negotiate]: the two ways to decide — Decide,
//     the pure function (Subject, facets, offer → Outcome and the
//     negotiation.decided payload), and Compile's *Negotiator, whose Decide
//     allocates nothing and whose DecideAndRecord records before it answers.
//   - [github.com/wopneg/wopneg/errors]: the registered codes
//     (interop_version_unsupported, mcp_mrtr_rounds_exceeded,
//     internal_error), a typed *Error for errors.Is and errors.As, and the
//     v2 error envelope.
//
// # The record
//
//   - [github.com/wopneg/wopneg/events]: the negotiation.decided payload,
//     the peer origin digest, the run-event and host-event envelopes, the
//     Sink interface and its sinks (JSON lines, slog, fan-out, a bounded
//     asynchronous buffer that counts every drop), and the event log: a Log
//     read back tenant by tenant and the LogHandler that serves
//     /runs/{runId}/events/poll and /host/events.
//
// # The wire
//
// Both adapters have one shape: New(n, Options) returns a *Middleware
// whose Wrap is a func(http.Handler) http.Handler (net/http, chi's r.Use);
// Version(ctx) and Outcome(ctx) tell the wrapped handler what was decided;
// Negotiate decides the version to speak with a peer before calling it;
// NewTransport stamps that version on every outbound request.
//
//   - [github.com/wopneg/wopneg/negotiate/a2ahttp]: A2A (A2A-Version, the
//     agent card, JSON-RPC and HTTP+JSON refusals).
//   - [github.com/wopneg/wopneg/negotiate/mcphttp]: MCP streamable HTTP
//     (MCP-Protocol-Version, _meta, server/discover, sessions, batches).
//   - [github.com/wopneg/wopneg/negotiate/mrtr]: MCP multi-round-trip
//     requests bounded by mcp.mrtr.maxRounds: the client's round Guard and
//     the server's Sealer of bound, single-use requestStates.
//   - [github.com/wopneg/wopneg/negotiate/seams]: the conformance invoke
//     seams (a test surface, off unless a host mounts it).
//
// # Checking a host
//
//   - [github.com/wopneg/wopneg/negotiate/negotiatetest]: RunWire drives a
//     host's own http.Handler through the wire vectors, as deployed; Run
//     checks a decision function against the decision vectors; TestSink
//     checks any Sink; Recorder is a Sink for tests.
//   - cmd/wopneg: decide (one JSON request in, the decision out), demo,
//     vectors, digest (the peer digest of a URL), lint and migrate (v2
//     discovery documents), and conform, which runs the v2 interop
//     scenarios against a running host and never reports a pass it did
//     not witness on the wire.
//   - examples/ (a module of its own): an example host serving both
//     protocols with the event log, discovery and seams; end-to-end tests
//     with the real A2A and MCP SDKs; routers; PostgreSQL sinks and nonce
//     store; metrics; replicas.
//
// Where the specification is ambiguous, each package takes the stricter
// reading and says so in its documentation.
package wopneg
