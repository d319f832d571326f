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
//   - A response carries A2A-Version with the version served: the decided
//     one once the wrapped handler's answer shows it served it (unless the
//     handler set the header itself, which then stands), the
//     preferred one on the middleware's own refusals, and none on an
//     answer in which the wrapped handler refused the version (see "The
//     record follows the server").
//   - The agent card path answers with the card of the decided version,
//     which is the preferred one when the request names none; the card
//     comes from Options.Card or, when that is nil, from the wrapped
//     handler. Every answer on it, refusals included, carries
//     Vary: A2A-Version, so that a cache never hands one version's card
//     to a client of another.
//   - An accepted request reaches the wrapped handler untouched (its body is
//     never read), with the decided version and [negotiate.Outcome] in its
//     context: see [Version] and [Outcome]. A request is read once: its
//     version, Subject and the decision's offer are taken from it once and
//     used by the decision, the record and the refusal alike; a refused
//     JSON-RPC request's body is read once, within Options.MaxBodyBytes, for
//     its id, by JSON v2's tokenizer (github.com/go-json-experiment/json,
//     encoding/json/v2 under Go 1.27) with this module's rules: member
//     names matched exactly, none repeated, valid UTF-8, nesting at most 64
//     deep, nothing after the object.
//   - When the event cannot be recorded and the policy requires the audit
//     (policy.Policy.RequireAudit), the request is refused as an internal
//     error: JSON-RPC -32603 on HTTP 200, or HTTP 500 with a
//     google.rpc.Status INTERNAL body. Without that policy the request is
//     served and the failure is logged, never swallowed.
//
// # Start-up, the one-call host, and observing
//
// [Middleware.Check] asks the handler the host is about to wrap, in
// process and around the middleware (nothing is recorded), whether it
// serves the preferred version, and names the fix when it does not:
// a handler that answers the preferred version with VersionNotSupported fails it. [Handler] is the wiring of a host in one call, the check included:
// the defaults (the zero policy, slog.Default() as the record, refreshedAt
// dated by the module's release list), or, with [HandlerOptions], the
// host's own sink, Observe, bounds and policy; a host that
// cannot serve what its facet advertises does not start. Options.Observe
// hands the host a [negotiate.Exchange] for each request decided (its
// method, the outcome as answered, the JSON-RPC code of the answer),
// which the record, content-free, does not hold; the otel module's
// Telemetry.Observe puts it on the request's span.
//
// # The record follows the server
//
// The wrapped handler may refuse a version the middleware accepted (an A2A
// server answers -32009 VersionNotSupportedError for a version it cannot
// serve), and the record says what happened on the wire. So an
// acceptance is recorded only once the handler's answer shows whether it
// served the version, and before any byte of that answer leaves; the
// answer then goes through byte for byte. An answer is a refusal of the
// version when a client of the binding would read it as one:
//
//   - On the JSON-RPC binding, whatever the status and Content-Type, a
//     response (or a member of a batch, or the first event of an event
//     stream that holds a response: a request or notification the server
//     sends before it decides nothing) whose error has the code -32009 in
//     any spelling of that number (-32009.0, -3.2009e4), or whose
//     error.data holds an ErrorInfo with reason VERSION_NOT_SUPPORTED
//     (A2A 1.0.1's array of details, or the one bare object of older
//     servers). Member names match in any
//     case, as encoding/json clients match them, and a repeated member is
//     a refusal when any of its values is, and so is an error beside a
//     result, which a2a-go's client takes over the result. Only a
//     response whose result comes first and that outgrows
//     Options.MaxAnswerBytes is settled as served there: JSON-RPC forbids
//     an error beside a result, and a result is not held past the bound to
//     look for one.
//   - On HTTP+JSON and on the card path, an answer of any status but
//     200 (a2a-go's REST client reads every other as an error, 201 to 299
//     included, and so does this module's card fetch) or the first event
//     of an event stream that holds a response, whose body is an error
//     object with such an ErrorInfo in its details (or a -32009 code); a
//     200 is no error for any client to read. An HTTP+JSON stream's event
//     is a StreamResponse, no JSON-RPC response: one that holds a
//     message, a task, a status or an artifact update (not null) serves
//     the version, as a result does, and releases the stream.
//   - A stream released at a first event that serves the version is
//     followed as it passes: a2a-go yields a stream's events one by one,
//     so its caller is given a refusal that comes after a result, and the
//     first such refusal is recorded then, in a second event after the
//     acceptance (exchange.Follower). Only the line and the event being
//     read are kept, within Options.MaxAnswerBytes: a line or an event
//     longer than that is read as far as the bound, for a refusal alone,
//     as an answer past its bound is (its error object must end within
//     the bound), and the rest of the event is passed over unread, alike
//     whether it comes whole or in pieces.
//
// A refusal is recorded refused, reason unsupported, with the version
// requested, and its answer carries no A2A-Version (the server served no
// version the middleware can name). Any other answer, an error for
// another cause included, is recorded accepted and carries the decided
// version. To read this much the middleware holds the head of the answer
// and its first bytes, up to Options.MaxAnswerBytes (64 KiB), until they
// show one or the other; an answer that has not within the bound is
// replaced by an internal error (-32603, or HTTP 500 INTERNAL) and
// recorded refused: an acceptance the middleware did not see is never
// recorded. A Flush of an answer still held sends nothing. The answer is
// read as it is held, once in the common case: an answer whose bytes
// cannot spell a refusal (no 32009, no VERSION_NOT_SUPPORTED, no escape)
// is settled without a parse, and any other is read with JSON v2's
// tokenizer, leniently as a client reads it, by the module's one lenient
// reader (exchange.Refusal.Read, the same for MCP): a refusal counts once
// its error has been read, whatever follows it (a refusal cut short is
// still one), and a batch serves only once it has ended, however its
// writes or flushes split it. It is read by the module's one answer
// reader (internal/exchange), as clients read it: its Content-Encoding
// decoded (gzip, deflate; an answer in another coding cannot be read and
// is refused and replaced as one past the bound, and an encoded answer is
// read once the handler returns), and a leading byte-order mark skipped.
// As net/http requires, the wrapped handler must not use the
// ResponseWriter once it has returned: the state that follows an answer,
// and the buffer it holds the answer in, serve the next request.
//
// Under policy.Policy.RequireAudit nothing may act unrecorded, and every
// request but the card's may act (a SendMessage runs the agent): such a
// request is recorded accepted before the handler sees it, and refused
// as an internal error when that record cannot be written. When its
// answer then refuses the version, a second event records the refusal,
// so that the audit never shows an acceptance alone for an exchange the
// server refused: of the two events of one request, the later one says
// what the server did. The card's request does not act, and is recorded
// as its answer shows, as without the policy. Under the policy an answer
// whose record cannot be written is replaced by the internal error, and
// nothing is logged: the refusal is the record (Options.ErrorLog). Every
// record is written with the request's context values but never its
// cancellation: a client that hangs up while the host resolves its
// Subject leaves the record all the same.
//
// # Outbound
//
// [Negotiate] fetches a peer's agent card (GET
// <peer>/.well-known/agent-card.json with A2A-Version set to the preferred
// version), takes the peer's offers from supportedInterfaces[].protocolVersion
// (or a 0.3 card's protocolVersion), decides with the host's own outbound
// Subject and records the event. A peer whose card request is refused for
// that version (as this module's inbound side refuses a version it does
// not serve, with a VERSION_NOT_SUPPORTED ErrorInfo) is asked again naming
// no version, which gets its preferred version's card (the v2 card rule):
// a host that prefers 1.0 still reaches a peer that serves only 0.3, at
// 0.3, when its Subject is authenticated; OutboundOptions.Requested names another
// version to ask for than the preferred one. Only an accepted outcome
// yields a [Transport] (see [NewTransport], and [Connect], which
// negotiates and returns the Transport that records the peer's runtime
// refusal), so
// a request at a version below the floor, or at a version an
// unauthenticated exchange was refused, cannot be sent through it; the
// Transport stamps the negotiated version on every request and refuses,
// sending nothing, a request that names another.
//
// # Trace context
//
// With OutboundOptions.TraceContext set (the otel module's Propagate is
// one), every card fetch of the negotiation (the retry naming no version
// included) and every request of [Connect]'s Transport carries the W3C
// trace context the hook hands for the request's context, as the OpenWOP
// reference host does (RFC 0207): in the traceparent and tracestate
// headers, and, on a POST of SendMessage or SendStreamingMessage
// (JSON-RPC params.message under the 1.0 or 0.3 method names, or the
// HTTP+JSON binding's message of a path ending in /message:send or
// /message:stream), in the Message's metadata.openwop.traceparent and
// .tracestate, strings, on the Message rather than the request's
// metadata, so that they stay with it in the task's history. The body is
// read for this up to 4 MiB; a longer one goes as it came, with the
// headers only. [NewTransport]'s Transport has no hook, and stamps none.
//
// Checked before anything is sent (internal/tracectx): a traceparent that
// is not 55 bytes of lowercase hex version-trace-id-parent-id-flags, the
// version not ff and neither id all zeros, is dropped with its
// tracestate; a tracestate over 512 bytes or 32 list members, or not
// key=value by the W3C grammar (a key twice included), is dropped alone.
// The stricter readings: a future version's longer traceparent is not
// forwarded (what follows the flags cannot be checked), and a malformed
// value is never repaired, only dropped; it never fails the request. A
// carrier the caller filled is the caller's and stays byte for byte: a
// traceparent or tracestate header under any spelling keeps both headers
// the caller's; a metadata.openwop holding either key
// keeps the message's carrier the caller's. A message, metadata or
// metadata.openwop that is no object, and a body that is not such a
// message (or not JSON), go unchanged. Trace context is correlation only:
// it confers no authority, is never read as identity, and never enters
// the negotiation.decided record.
//
// # Egress
//
// With a nil OutboundOptions.Client the card is fetched by the module's
// egress client, and the Transport of a nil-Client [Connect] sends
// through the same policy:
//
//   - Addresses are checked on every address dialled, after resolution
//     (so a name that resolves to a refused address is refused, DNS
//     rebinding included): link-local (169.254.0.0/16, fe80::/10) and the
//     cloud metadata addresses, IPv4 and IPv6 (169.254.169.254,
//     fd00:ec2::254, fd20:ce::254, 100.100.100.200, 168.63.129.16 and the
//     rest of the egress package's table) are always refused; loopback only
//     with OutboundOptions.AllowLoopback, private ranges (10/8,
//     172.16/12, 192.168/16, 100.64/10, fc00::/7) only with
//     AllowPrivate. The stricter reading: an address that is not public
//     is not reached by default. The seams on loopback, the tests and the
//     examples allow loopback.
//   - The host is dialled as the WHATWG URL Standard reads it, the reading
//     the record's peerDigest is taken from: http://0x7f000001/,
//     http://0177.0.0.1/ and http://2130706433/ are 127.0.0.1 (refused as
//     loopback unless allowed), never names looked up in DNS. No proxy is
//     used: through one, the address dialled would be the proxy's.
//   - A redirect is followed only to the same origin, at most 3 times; one
//     to another origin (https to http included) is refused, since its
//     card would be another peer's recorded under the first one's digest.
//   - A fetch takes at most 20 s in all, 10 s to the answer's headers, and
//     reads at most OutboundOptions.MaxCardBytes (1 MiB).
//
// A host's own Client keeps its transport, and with it its own address
// policy (AllowLoopback and AllowPrivate then do nothing); the redirect
// rule still holds on it: a redirect to another origin is refused, and one
// the Client hands back unfollowed is not followed. [NewTransport] with a
// nil base sends through the egress transport of the zero policy (public
// addresses only); a host calling a peer on loopback or a private address
// uses [Connect], or its own base and its own policy.
//
// # An attempt that reached no decision
//
// The card is the peer's answer. A card that offers no version the host
// can accept (none in common, only versions in another form, an empty
// supportedInterfaces) is decided and recorded, refused as the decision
// says. An attempt that gets no card is not the peer's answer, and is
// never recorded as a refusal the peer did not give: the peer could not
// be reached, timed out, hung up, its address was refused, it redirected
// to another origin, or it answered something that is not a card (a status
// other than 200, a 502 from a gateway included; a body that is not a
// JSON object or that names neither supportedInterfaces nor
// protocolVersion; a card larger than its bound). Such an attempt leaves:
//
//   - the error: Negotiate and Connect return the zero Outcome and an
//     error that unwraps to a v2 envelope (*errors.Error) of code
//     internal_error (HTTP 500, retriable in the registry) whose
//     details.reason names the failure ("unreachable", "timeout",
//     "hang-up", "not-an-answer", "too-large", "egress-denied",
//     "redirect-refused", "canceled") and details.status the peer's HTTP
//     status when it sent one. internal_error says what is true: the host
//     did not complete the exchange; the peer refused nothing. A refusal
//     unwraps to interop_version_unsupported instead, so that
//     errors.Is(err, errors.InteropVersionUnsupported) tells the two
//     apart.
//   - no event: negotiation.decided records decisions, and there was
//     none.
//   - one log line on OutboundOptions.ErrorLog (slog.Default()), at
//     slog.LevelWarn: "negotiation reached no decision", with protocol,
//     peerDigest (never the origin in clear) and err, a group of reason,
//     url (the peer's origin at most: never its path, query or
//     credentials), status and cause.
//
// A metric is not this module's to keep (it has no OpenTelemetry): count
// the log line, or details.reason of the error.
//
// # The record follows the peer
//
// A peer's card may offer a version its runtime then refuses (threat
// model §F.1, card/runtime drift). A [Transport] reads each answer as far
// as it must to see whether the peer refused the stamped version, exactly
// as the inbound side reads a wrapped server's answer (see "The record
// follows the server"; the same reader): a JSON-RPC error -32009 in any
// spelling of the number, or an ErrorInfo with reason
// VERSION_NOT_SUPPORTED in error.data or details (the A2A 1.0.1 array or
// the bare object of older servers), in a plain answer of any status or
// in the first event of an event stream that holds a response. Such an
// answer is not handed back: RoundTrip returns an error that is an
// interop_version_unsupported *errors.Error (through an http.Client,
// inside its *url.Error). A Transport of [Connect] first records the
// refusal: a refused negotiation.decided, requested the stamped version,
// reason below-floor when every version the ErrorInfo's
// metadata.supportedVersions lists is below the floor and unsupported
// otherwise (exchange.RefusalOffer), for the same peer, Subject and
// Destination as the card's acceptance, so that the audit shows both and
// the later says what the peer did. Under a required audit whose record
// cannot be written the error is internal_error, joined with the
// *negotiate.AuditError. An answer is held, up to
// OutboundOptions.MaxAnswerBytes (64 KiB), until it shows one or the
// other (read whole, or a result first at the bound); one that has not
// within the bound is not handed back either (an error whose
// details.reason is "too-large"), and records nothing, since the peer
// refused nothing that was seen; nor is one whose connection broke before
// it showed either (an error whose details.reason is "hang-up", as MCP's
// Transport answers it). Every other answer comes back byte for byte, the
// rest of a stream as it arrives; a stream is followed as the caller
// reads it, and a Transport of Connect records the first refusal after
// its result when the caller reads it, as the inbound side does (a2a-go
// gives its caller that refusal as an error after the result). The
// refusal's record does not
// depend on the caller's context. A Transport of Connect sends only to
// the origin of the card it negotiated on: a call a redirect took to
// another origin (a 307 the host's own http.Client followed) is refused
// unsent, with an error of kind redirect-refused.
package a2ahttp
