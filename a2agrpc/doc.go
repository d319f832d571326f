// Package a2agrpc negotiates the A2A protocol version over A2A's gRPC
// binding, in both directions, with a compiled [negotiate.Negotiator], on
// the same engine as negotiate/a2ahttp: the same reading of a call's
// version, the same decision, the same record. It is a module of its own,
// so that the core module never imports gRPC. What it adds is gRPC's
// facts: where the version is (the a2a-version metadata), how a refusal is
// written (as a2a-go's gRPC server writes one), and which answers refuse.
//
// # Inbound
//
// [New] returns an [Interceptor]; [Interceptor.ServerOptions] puts its
// unary and streaming interceptors in front of a grpc.Server's handlers
// ([NewServer] does all of it in one call, and checks the server). For
// every call of an A2A service (A2A 1.0's lf.a2a.v1.A2AService, 0.3's
// a2a.v1.A2AService; other services pass untouched) it reads the version
// the caller names, resolves the caller with Options.Subject from the
// call's context and metadata, decides, records the negotiation.decided
// event as a durable host event, and serves or refuses the call:
//
//   - The version is every value of the a2a-version metadata (in any
//     case). More than one value, or one that is not major.minor, is
//     refused with a message that says so. None means 0.3, as A2A §3.6.2
//     says for every binding ("Agents MUST interpret empty value as 0.3
//     version"): such a call is decided exactly as one that names 0.3.
//   - A refusal is the status a2a-go's gRPC server writes for
//     a2a.ErrVersionNotSupported, which its client surfaces as that error:
//     FAILED_PRECONDITION, with a google.rpc.ErrorInfo whose reason is
//     VERSION_NOT_SUPPORTED, domain a2a-protocol.org, and metadata
//     supportedVersions listing what this caller could be served. A call
//     that cannot be recorded under policy.Policy.RequireAudit is refused
//     as INTERNAL, with the ErrorInfo reason INTERNAL_ERROR, before the
//     handler runs.
//   - The header metadata carries a2a-version: the version served, or on
//     the interceptor's own refusals the preferred one; none on an answer
//     in which the handler refused the version.
//   - An accepted call reaches the handler with the decided version in its
//     context: see [Version].
//
// # The record follows the server
//
// An accepted decision is recorded as the handler answered it. A unary
// call is recorded once the handler has returned, before its answer
// leaves; a streaming call (SendStreamingMessage, SubscribeToTask) is
// decided once, when it opens, and recorded once, when its first message
// leaves or, if it sends none, when it ends. A handler whose status is a
// version refusal (FAILED_PRECONDITION with the reason
// VERSION_NOT_SUPPORTED, as a2a-go writes a2a.ErrVersionNotSupported) is
// recorded as the refusal: the decision changed to a refusal, reason
// unsupported. Under RequireAudit the acceptance is recorded before the
// handler runs, as nothing may act unrecorded, and the handler's refusal
// follows it as a second event; a stream that sent messages and then
// refuses the version has both on record too.
//
// # Outbound
//
// [Negotiate] and [Connect] take a2ahttp's OutboundOptions and fetch the
// peer's agent card as a2ahttp.Negotiate does (through the egress policy,
// within the bound, with the trace context); the versions offered are
// those of the card's gRPC interfaces. [Connect] returns the dial options
// of a connection to the peer: every A2A call is stamped with the
// negotiated version and the trace context (traceparent and tracestate
// metadata), a call that names another version is refused unsent, and a
// call the peer refuses for its version is recorded as the refusal.
//
// # Observing
//
// Options.Observe is called once per decided call with the gRPC method
// and the outcome as answered; with wopnegotel's Telemetry.Observe, the
// exchange goes on the call's span, which an instrumented server (an
// OpenTelemetry stats handler, rpc.system grpc) has made, and the
// decision metrics come from the sink as for the other bindings.
package a2agrpc
