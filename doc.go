// Package wopneg negotiates the A2A and MCP protocol versions an OpenWOP v2
// host speaks with its peers, safely and with a record of every decision
// (RFC 0175, spec/v2/core/interop.md). This package holds no code; it is
// the tour of the module.
//
// A host advertises an a2a and/or mcp facet: the versions it offers, the
// one it prefers, and a floor. Every negotiation is then decided by the
// same seven rules: nothing below the floor, ever; nothing below the
// preferred version for a caller that is not authenticated; a downgrade
// only where the host's policy allows it. Every outcome, refusals included,
// yields one content-free negotiation.decided event that names the peer
// only by the SHA-256 digest of its origin.
//
// The packages, in the order they build on each other:
//
//   - [github.com/wopneg/wopneg/errors]: the registered error codes
//     (interop_version_unsupported, mcp_mrtr_rounds_exceeded,
//     internal_error), a typed *Error for errors.Is and errors.As, and the
//     v2 error envelope.
//   - [github.com/wopneg/wopneg/facets]: the a2a and mcp facets, the v2
//     discovery document and the http.Handler that serves it at
//     /.well-known/openwop, Lint, strict JSON, validation that reports
//     every violation with its JSON path, version ordering, and the 90-day
//     refresh SLA with the Refresher that keeps refreshedAt honest.
//   - [github.com/wopneg/wopneg/policy]: what a host may tighten (deny
//     downgrades, who counts as authenticated, require the audit) and the
//     v2 Subject; the zero Policy is the reference behaviour.
//   - [github.com/wopneg/wopneg/negotiate]: Decide, the pure decision; the
//     compiled Negotiator for hot paths.
//   - [github.com/wopneg/wopneg/negotiate/mrtr]: MCP multi-round-trip
//     requests bounded by mcp.mrtr.maxRounds: the client's round Guard,
//     and the server's Sealer of bound, single-use requestStates.
//   - [github.com/wopneg/wopneg/events]: the negotiation.decided payload
//     and the peer origin digest.
//   - [github.com/wopneg/wopneg/negotiate/negotiatetest]: RunWire, which
//     checks a host's own HTTP handler against the wire vectors; Run, the
//     decision vectors against any host's decision; TestSink, for sinks.
//   - cmd/wopneg: `wopneg decide`, `wopneg demo` and `wopneg vectors`.
//
// Where the specification is ambiguous, each package takes the stricter
// reading and says so in its documentation.
package wopneg
