// Package wopnegotel puts wopneg's version negotiations into OpenTelemetry:
// each negotiation.decided decision on the span of the request it settled,
// a decision counter, the outbound negotiation as a client span, and the
// W3C trace context an outbound call carries. It is a module of its own
// (github.com/wopneg/wopneg/otel), so that the core module never imports
// OpenTelemetry.
//
// A host adds it in one line, as a sink beside its audit sink:
//
//	tel, err := wopnegotel.New(wopnegotel.Options{}) // the global providers
//	sink := events.NewFanout(audit, tel)             // Options.Sink of the adapters
//
// [Telemetry.Emit] reads the span with trace.SpanFromContext from the
// context the decision is recorded with. Inbound, that is the request's
// context, so the span is the host's HTTP server span (otelhttp.NewHandler
// around the adapter's middleware, or any span the host starts). Outbound,
// it is the context given to mcphttp.Negotiate or a2ahttp.Negotiate, so
// start the client span first with [Telemetry.StartServerDiscover] or
// [Telemetry.StartAgentCardFetch]. Put the Telemetry in the fan-out before
// any events.Async: an asynchronous sink emits from a goroutine of its own,
// where no span is. One span holds one decision: when a host decides
// twice within one span, the span shows the last, and the counter counts
// both.
//
// # The openwop.negotiation namespace
//
// No OpenTelemetry convention covers a version negotiation itself. This
// package sets these attributes, and is their reference:
//
//	attribute                         value                                          set
//	openwop.negotiation.protocol      "mcp" or "a2a"                                 always
//	openwop.negotiation.outcome       "accepted" or "refused"                        always
//	openwop.negotiation.requested     the version the requesting side named          when it named a well-formed one
//	openwop.negotiation.negotiated    the version decided                            on an acceptance
//	openwop.negotiation.reason        "ok", "below-floor", "unauthenticated",        when the record has one
//	                                  "unsupported"
//	openwop.negotiation.floor         the advertised minimum version                 when the record has one
//	openwop.negotiation.peer_digest   SHA-256 of the peer's origin, lowercase hex    outbound
//	openwop.negotiation.rule          the rule that settled it: "input", "floor",    by Observe
//	                                  "offered", "common", "authenticated",
//	                                  "policy", "accept", "audit"
//	openwop.event.id                  the eventId of the negotiation.decided record  always
//
// Every value but the rule is the record's field of the same meaning
// (events.NegotiationDecided), in the record's words: a downgrade is an
// acceptance whose negotiated version differs from the requested one, as
// the record says it. openwop.event.id joins a span to its audit record.
// Nothing else goes on a span: no tenant, Subject, peer URL or content.
//
// The semantic-convention attributes set beside them (MCP and A2A
// conventions, status Development):
//
//   - mcp.protocol.version or a2a.protocol.version: the negotiated
//     version, on an acceptance (the version the exchange used; there is
//     none on a refusal);
//   - error.type and the status Error on a refusal; see below;
//   - by [Telemetry.Observe]: mcp.method.name or a2a.method.name, and
//     rpc.response.status_code when the answer carried a JSON-RPC error;
//   - on the outbound client spans: mcp.method.name server/discover, or
//     http.request.method GET, with server.address and server.port.
//
// mcp.session.id is never set: the record has no session, and the MCP
// convention forbids it from 2026-07-28 on.
//
// Every attribute is bounded: a method the protocol's convention does not
// name (the request's method is the caller's to choose) is set as
// _OTHER, as the conventions do, and so is any string value longer than
// 255 bytes or not UTF-8 (a server.address from a host's URL, say).
//
// The decision counter is openwop.negotiation.decisions, an Int64Counter
// in {decision}, one per negotiation.decided event, with the attributes
// openwop.negotiation.protocol, openwop.negotiation.outcome and
// openwop.negotiation.reason (absent when the record has none): the
// decision yields eight series, each protocol accepted ok and refused for
// each of three reasons.
//
// # Stricter readings
//
//   - error.type is the registered OpenWOP code, interop_version_unsupported
//     (internal_error when a required audit failed, which only Observe
//     learns), not the JSON-RPC code the MCP and A2A conventions suggest:
//     one refusal is -32022, -32602 (a legacy initialize), -32009 or an
//     HTTP 400 envelope depending on the binding, and one value across
//     them is what a query wants. The JSON-RPC code goes in
//     rpc.response.status_code.
//   - Every refusal sets the status Error, including a legacy initialize
//     refused with -32602, which the MCP server convention would not count
//     as an error: the record cannot tell the bindings apart, and a refused
//     negotiation is a failed operation.
//   - The sink sees the decision, not the answer: under a policy that
//     requires the audit, a decision whose audit record failed is answered
//     internal_error, while the span keeps the decision's attributes.
//     Observe, called with the outcome as answered, then sets error.type
//     internal_error and the status Error, so the span never reads as a
//     success the peer did not get.
//
// # The hooks of the core
//
// The record is content-free, so what only the adapter knows of a request
// (its method, the outcome as answered, the JSON-RPC code) reaches the span
// through a hook of the core adapters: set mcphttp.Options.Observe and
// a2ahttp.Options.Observe to [Telemetry.Observe], which the adapters call
// once per decided request with a negotiate.Exchange.
//
// Outbound, [Propagate] is the core's negotiate.TraceContext hook: a host
// sets TraceContext: wopnegotel.Propagate in mcphttp.OutboundOptions and
// a2ahttp.OutboundOptions, and every request of the negotiation and of
// Connect's Transport carries the W3C trace context of the span in its
// context, in its traceparent and tracestate headers and in the message
// (MCP params._meta, A2A Message.metadata.openwop; RFC 0207). That span
// is the parent the peer sees: the negotiation's client span when the
// context given to Negotiate or Connect is the one
// [Telemetry.StartServerDiscover] or [Telemetry.StartAgentCardFetch]
// returned, so the peer's spans are children of that client span in the
// caller's trace; for a call, the span in the call's context (the client
// span of otelhttp.NewTransport when the host wraps the Transport in it,
// whose own traceparent header the Transport then keeps). The adapters
// check what Propagate hands and drop a malformed value; trace context
// confers no authority and never enters the record.
package wopnegotel
