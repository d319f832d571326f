// Package a2ahttp negotiates the A2A protocol version over HTTP, in both
// directions, with a compiled [negotiate.Negotiator]: inbound as net/http
// middleware in front of any handler that serves A2A, outbound as a card
// fetch that decides the version to speak to a peer and an
// [http.RoundTripper] that stamps it on every later request.
//
// # Inbound
//
// [New] returns a [Middleware] whose [Middleware.Wrap] has the shape of any
// net/http middleware. For every request it reads the version the caller
// names, decides it with the caller's Subject, records the
// negotiation.decided event as a durable host event (RFC 0242 §B: no run
// exists for an inbound exchange) and then either serves the request or
// refuses it:
//
//   - The version is the A2A-Version header, matched in any case (Go
//     clients send A2a-Version), or on the HTTP+JSON binding the
//     ?A2A-Version= query parameter. More than one value (two header lines,
//     a comma-separated list, a header and a query parameter) or a value
//     that is not major.minor is refused with a message that says so: the
//     middleware never picks one of several values, and never reads a
//     malformed one as something it is not.
//   - Absent or empty means two things. On the agent card it is the
//     preferred version, the v2 card rule (RFC 0175 §C.3), so that a client
//     that knows nothing yet learns the current card. On every other
//     request, on both bindings, it is a request for 0.3, because A2A
//     §3.6.2 says "Agents MUST interpret empty value as 0.3 version" and a
//     client that sends no header (an @a2a-js/sdk 0.3 client) speaks 0.3:
//     serving it as the preferred version would answer method names it
//     never sent. Such a request is decided, answered and recorded exactly
//     as one that names 0.3 (requested "0.3" in the event): served at 0.3
//     where the host offers it and the caller may have it, refused
//     otherwise. v2 states only the card rule; this is the stricter
//     reading of the two texts together.
//   - The Subject comes from Options.Subject. One that breaks the v2
//     Subject schema is logged as "wopneg: invalid Subject: <violations>"
//     and the request is decided as unauthenticated; with
//     Options.StrictSubject it is refused instead, as an internal error,
//     before anything is decided.
//   - A refusal on the JSON-RPC binding is HTTP 200 with the request's
//     JSON-RPC id and error -32009 (VersionNotSupportedError) whose data is
//     the A2A 1.0 error details: a google.rpc.ErrorInfo with reason
//     VERSION_NOT_SUPPORTED, domain a2a-protocol.org and metadata
//     supportedVersions, which is what current A2A SDK clients read
//     (Options.OmitErrorData drops it for clients that predate it). On the
//     HTTP+JSON binding, and for the agent card, it is HTTP 400 with a
//     google.rpc.Status body: code 400, status FAILED_PRECONDITION (as
//     a2a-go maps VersionNotSupported) and the same ErrorInfo in details.
//   - Every response, refusals included, carries A2A-Version with the
//     version served: the decided one, or the preferred one on a refusal.
//   - The agent card path answers with the card of the decided version,
//     which is the preferred one when the request names none; the card
//     comes from Options.Card or, when that is nil, from the wrapped
//     handler. Every answer on it, refusals included, carries
//     Vary: A2A-Version, so that a cache never hands one version's card
//     to a client of another.
//   - An accepted request reaches the wrapped handler untouched (its body is
//     never read), with the decided version and [negotiate.Outcome] in its
//     context: see [Version] and [Outcome].
//   - When the event cannot be recorded and the policy requires the audit
//     (policy.Policy.RequireAudit), the request is refused as an internal
//     error: JSON-RPC -32603 on HTTP 200, or HTTP 500 with a
//     google.rpc.Status INTERNAL body. Without that policy the request is
//     served and the failure is logged, never swallowed.
//
// # Outbound
//
// [Negotiate] fetches a peer's agent card (GET
// <peer>/.well-known/agent-card.json with A2A-Version set to the preferred
// version), takes the peer's offers from supportedInterfaces[].protocolVersion
// (see [ErrNoOffers]), decides with the host's own outbound Subject and
// records the event; OutboundOptions.Requested names another version to
// ask for than the preferred one. Only an accepted outcome yields a
// [Transport] (see [NewTransport]), so a
// request at a version below the floor, or at a version an unauthenticated
// exchange was refused, cannot be sent through it; the Transport stamps
// the negotiated version on every request and refuses, sending nothing, a
// request that names another.
package a2ahttp
