// Package mcphttp puts MCP version negotiation (RFC 0175 §D, the mcp facet)
// on net/http, for both directions: [Middleware] is the inbound side, over
// any MCP streamable-HTTP handler, and [Negotiate] with [Transport] is the
// outbound side, for a host calling an MCP server.
//
// # Inbound
//
// [New] checks the configuration once; [Middleware.Wrap] puts an MCP
// handler behind it, and has the shape routers chain
// (func(http.Handler) http.Handler), as in a2ahttp. Every request is decided by a compiled
// [negotiate.Negotiator] for the caller's Subject (Options.Subject), and
// every decision is recorded through Options.Sink before any answer
// leaves (a durable host event unless Options.Destination names a run):
// a refusal before the request would go on, an acceptance once the
// wrapped server has answered, as it answered (see "The record follows
// the server" below). The
// wrapped handler finds the revision it serves with [Version], and the
// whole outcome with [Outcome]. A request is one of:
//
//   - A legacy initialize: params.protocolVersion is decided with a
//     counter-offer (rules 3 and 5 of the decision, in the README): the host may answer with its
//     preferred revision instead of refusing. Below the floor it is
//     refused with JSON-RPC -32602, data {supported, requested, reason},
//     on HTTP 200, the one shape the MCP SDK clients surface with its
//     data. When the answer names a session (Mcp-Session-Id) and serves
//     the revision decided (its result names it), the session's revision
//     is pinned, in a bounded store; the session of an initialize the
//     record says refused is never pinned, and so never served.
//   - A request on a session (one with Mcp-Session-Id, whatever revision
//     it names: a server that keeps sessions serves it on the session): it
//     is only ever served at the session's pin, under the acceptance its
//     initialize recorded; its answer is read as any other's, and the
//     server's refusal of the revision is recorded in an event of its
//     own. MCP-Protocol-Version must
//     name it, or the request is refused (HTTP 400, -32022, data.supported
//     holding that one revision). A caller other than the one that
//     negotiated the session is decided afresh, at that revision. A
//     session whose pin the store does not hold (it was evicted, or made
//     elsewhere) is refused with HTTP 404, which tells an MCP client to
//     initialize again; a DELETE of it is decided and passed on, so that
//     the server can end it. The store evicts the least recently used pin,
//     but an anonymous session only ever evicts an anonymous one, and is
//     not pinned when the store is full of identified callers' sessions
//     (as the zero policy.Policy counts it): anonymous traffic cannot push out an
//     authenticated pin.
//   - Any other request, 2026-07-28-era or legacy: first the headers must
//     agree with the body (MCP-Protocol-Version with every
//     params._meta["io.modelcontextprotocol/protocolVersion"], Mcp-Method
//     with method, Mcp-Name with the name it mirrors), else HTTP 400
//     -32020, before any version is looked at; then the revision the
//     header names is decided, and refused with HTTP 400 -32022, data
//     {supported, requested, reason}. A request without the header is
//     read as 2025-03-26 (the MCP rule), refused unless
//     the host offers it; its answer and its record both name 2025-03-26
//     as requested (the reference server answers null; the stricter
//     reading keeps the answer and the record in agreement).
//
// A refusal says why: its message names the rule (below the minimum
// revision, below the preferred one for an unauthenticated caller, denied
// by the host's policy, not served), since the go-sdk client shows the
// message alone, and data.reason carries it in the negotiation.decided
// vocabulary. data.supported lists the revisions this caller could be
// served, as the decision would accept them: never one below the floor,
// and for an anonymous caller never one below the preferred revision.
//
// Before anything else, a request that arrived on a loopback address
// (127.0.0.1, [::1]) whose Host, or Origin when it has one, names a host
// that is not a loopback one is answered 403, unread: the go-sdk
// streamable handler's DNS-rebinding protection for the Host, which the
// middleware applies first so that such a request never gets a
// negotiation answer, and the same for the Origin (stricter than the
// go-sdk). Options.DisableLocalhostProtection turns it off. Then the
// caller's Subject is resolved once; an invalid one is logged through
// Options.ErrorLog and taken as unauthenticated, or with
// Options.StrictSubject refused (-32603, HTTP 500).
//
// POST carries the messages; GET (a legacy session's event stream) and
// DELETE (its end) are checked by their header alone, and a DELETE the
// wrapped handler accepts forgets the session; OPTIONS (a CORS preflight)
// passes untouched; any other method is answered 405.
//
// The body reaches the wrapped handler byte for byte. It is read whole,
// up to Options.MaxBodyBytes (a larger one is answered 413 and nothing is
// forwarded), into a buffer that grows as bytes arrive, never to a size a
// Content-Length merely declares; then it is read once, by JSON v2's
// tokenizer (jsontext), into one view of each message that every check,
// the decision, the record and the forwarding use, so that a request
// costs a small constant times the bound and no more. A body that is not
// JSON (-32700), or is not a message or batch, repeats a key in any
// object, holds a string that is not UTF-8, nests deeper than 64 levels,
// or spells a key the middleware reads in another case (-32600: servers
// with case-folding or last-key-wins parsers would read it otherwise)
// never reaches the wrapped handler. Batches exist only at MCP 2025-03-26
// (2025-06-18 removed them): a batch at a later revision is refused
// (-32600, recorded), and a batch of more than Options.MaxBatchMembers
// messages (100 by default) is refused at the first member past the
// bound, unread. So is a message, params or _meta object of more than
// 1024 members; values the middleware does not read, tool arguments among
// them, are checked by those rules and otherwise skipped.
//
// The one deliberate change to a body is the counter-offer: the go-sdk and
// mcp-go servers answer initialize with the revision they are asked for
// when they support it, so when the host counter-offers, the middleware
// rewrites params.protocolVersion (those bytes only) to the revision it
// decided, and the server answers with it. Options.ByteExact forbids the
// rewrite; initialize is then decided without a counter-offer.
//
// # Stricter readings
//
//   - The handshake cannot settle a revision from 2026-07-28 on
//     (it removed initialize, and both SDK servers answer it with at
//     most 2025-11-25), so a host whose preferred revision is a stateless
//     one makes no counter-offer at initialize: what would have been
//     counter-offered is refused (-32602), and a client that wants the
//     preferred revision asks for it through server/discover. An
//     initialize that asks for a stateless revision is refused the same
//     way without a decision, since no answer of the server could carry
//     the decided revision.
//   - Every refusal of a request that names a revision is recorded as
//     negotiation.decided, whatever refused it: header/body disagreements
//     (-32020, recorded as a refusal of the header's revision, reason
//     unsupported, with the Outcome's Rule negotiate.RuleInput: it was
//     refused before any revision was weighed), an
//     initialize at a stateless revision, a request on a session at
//     another revision than its pin or on a session whose pin is gone.
//     A refusal's data.reason is the reason recorded.
//     Requests that name none, and requests whose body is no message the
//     middleware can read, whatever their header names, are not
//     negotiations and are not recorded: a body over the bound (413) or
//     unreadable, a body that is not JSON (-32700) or not a JSON-RPC
//     message by the rules above (-32600: a repeated key, a key a server
//     may fold into a member's name, invalid UTF-8, nesting past the
//     bound), an initialize without a string
//     params.protocolVersion, a request refused by the DNS-rebinding
//     protection (unread), and one refused for an invalid Subject under
//     StrictSubject (before any negotiation).
//   - More than one MCP-Protocol-Version, Mcp-Method or Mcp-Session-Id
//     value, or a list in one, is refused (-32020), never guessed between;
//     values are gathered under every spelling of the header's key, which
//     a hand-built http.Header can hold beside the canonical one.
//   - The wrapped server must itself answer with the revision decided. It
//     does when it serves the facet's revisions; when it does not, the
//     record says so (see below), and the session's next request, which
//     carries the server's revision, is refused. The failure is closed.
//
// # Start-up, the one-call host, and observing
//
// [Middleware.Check] asks the handler the host is about to wrap, in
// process and around the middleware (nothing is recorded), whether it
// serves the preferred revision, and names the fix when it does not:
// the go-sdk's stateful handler behind a facet that prefers 2026-07-28 fails it, naming Stateless: true. [Handler] is the wiring of a host in one call, the check included:
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
// An acceptance is recorded only once the wrapped server's answer shows
// that it served the revision decided, and before any byte of that answer
// leaves; the answer then goes through byte for byte. A server/discover
// must be answered with a result whose supportedVersions lists the
// revision, and an initialize with a result whose protocolVersion is the
// revision; anything else (an error, another list or revision, an answer
// that is not JSON-RPC, none at all) is recorded refused, reason
// unsupported, with the revision requested. For any other request the
// acceptance stands unless the server's answer is one a JSON-RPC client
// would read as a -32022 refusal (of any member of a batch). The answer is
// read by the module's one answer reader (internal/exchange), as clients
// read it: its Content-Encoding decoded (gzip and deflate; any other
// coding cannot be read, so it is never an acceptance: it is handled as
// an answer past the bound, below), a leading byte-order mark skipped,
// and as the most lenient client reads it: whatever its Content-Type
// (none, application/json-rpc and text/plain included) as JSON, except
// text/event-stream, read event by event (an event the stream's end cuts
// off, or one of another type than message, for a refusal alone); any
// JSON number equal to -32022 as a float64 (-3.2022e4, -32022.0) is the
// code; keys match in any case and a repeated key counts under each of
// its values; a refusal counts once read, whatever bytes follow it. To
// read this much, the middleware holds the head of the answer and its
// bytes until the handler returns, or, of an event stream, until each
// request in the body has its response, a message event whose id is
// written as the request wrote it, as MCP clients match one
// (notifications the server sends first are held with them); an event
// stream that answers no request (a session's GET) is recorded at its
// head and streams unheld. What is held is bounded by
// Options.MaxAnswerBytes (4 MiB, more than any discover or initialize
// result holds): an answer longer than that is not one the middleware
// read, so it is neither let through nor recorded accepted. It is
// recorded refused, reason unsupported, and the client gets -32603 on
// HTTP 502 naming the bound instead; the handler's writes then fail. An
// encoded answer (a compression middleware inside Wrap) is read once the
// handler returns, since a compressed stream is read whole. As
// net/http requires, the wrapped handler must not use the ResponseWriter
// once it has returned: the state that follows an answer, and the buffer
// it holds the answer in, serve the next request.
//
// Under policy.Policy.RequireAudit nothing may act unrecorded, and every
// request but discover and initialize may act (a tools/call runs a tool):
// such a request is recorded when it is decided, before the wrapped
// handler sees it, and refused there (-32603 on HTTP 500) when its record
// cannot be written. Its answer is still read: a -32022 the server answers
// afterwards is recorded in a second event, the refusal, as a2ahttp
// records it (and when that record cannot be written, the answer is
// replaced by the same -32603). For discover and initialize, an
// acceptance whose record cannot be written replaces the server's answer
// with the same -32603. Every record is written with the request's
// context values but never its cancellation: a client that hangs up while
// the host resolves its Subject leaves the record all the same.
//
// Which server settings serve 2026-07-28: the go-sdk's streamable handler
// serves it only with mcp.StreamableHTTPOptions{Stateless: true}; its
// default, stateful handler answers server/discover without it, and such a
// discover is recorded refused. mcp-go's server.StreamableHTTPServer
// serves both eras on one endpoint unless
// server.WithStreamableHTTPProtocolVersions leaves 2026-07-28 out. Either
// way, restrict the server to the facet's revisions (go-sdk:
// ServerOptions.SupportedProtocolVersions), so that its discover result
// lists what the host advertises.
//
// # Outbound
//
// [Negotiate] settles the revision a host speaks with an MCP server and
// records the decision once; [Connect] does the same and keeps what it
// settled in a [Transport], the http.RoundTripper that stamps the
// revision on every later request and refuses any that names another, so
// nothing is ever sent below the floor or at a downgrade an
// unauthenticated caller could not have. [NewTransport] makes a Transport
// from an outcome alone (for a client library that runs its own
// handshake); OutboundOptions.Requested names another revision to ask for
// than the preferred one.
//
// First, server/discover at the host's preferred revision. Its answer is
// read as the TypeScript SDK v2 client's versionNegotiation "auto" reads
// it (packages/client/src/client/probeClassifier.ts in
// modelcontextprotocol/typescript-sdk): only what positively shows the
// 2026-07-28 era counts as its answer, anything else the server answered
// is a legacy server, and a network failure is neither.
//
//	server/discover answered with             is read as
//	result with supportedVersions (a list)    the server's offer: decided on it
//	-32022 with data.supported (a list)       the server's offer: decided on it
//	any other JSON-RPC error, on any status   legacy: initialize
//	  (-32601; -32000 "No valid session ID",
//	  the TS SDK 1.32.2's HTTP 400; -32022
//	  without data)
//	a result without supportedVersions        legacy: initialize
//	a 4xx or 2xx that is not JSON-RPC, an     legacy: initialize
//	  event stream without a response
//	no connection, a timeout, a hang-up,      no decision (below)
//	  a 5xx, an answer over 4 MiB
//
// A decision on the server's list is the outcome of Negotiate. Connect
// settles one that lands on a handshake revision (a go-sdk stateful
// server lists only those) through initialize at that revision instead,
// since only the handshake opens the session such a server serves it on,
// and its Transport needs that session. A legacy answer falls back to initialize at the newest
// revision of the host's between the floor and Requested (or preferred),
// before 2026-07-28, that the decision would accept for the Subject and
// the policy: a 2026 revision never appears in a handshake, nothing below
// the floor is ever sent, and when there is no such revision (an
// anonymous host, whose every handshake revision is a downgrade; a policy
// that denies downgrades; a floor from 2026-07-28 on) nothing is sent:
// the refusal is recorded with the host's reason (unauthenticated,
// unsupported, below-floor), and the error wraps [ErrNoOffers]. The
// stricter reading than the go-sdk client's (which falls back on any
// failure of discover, so that anyone on the path can force a downgrade):
// the fallback stays inside the decision.
//
//	initialize answered with                  recorded
//	result.protocolVersion P                  P decided as the server's offer:
//	                                          accepted when the rules allow it
//	  P from 2026-07-28 on, or not a revision refused, unsupported
//	an error with data.supported (the         refused: below-floor when every
//	  lifecycle's refusal)                    one listed is below the floor,
//	                                          else unsupported; no retry
//	anything else, or nothing                 no decision (below)
//
// The record is written once per negotiation, its requested the revision
// the host asked for (Requested or preferred), so that a downgrade through
// initialize reads as version < requested. A refused outcome ends the
// session initialize opened (HTTP DELETE with its Mcp-Session-Id), as the
// lifecycle requires of a client that cannot speak the server's revision;
// so does Negotiate always, since it hands no Transport back. Connect
// keeps an accepted session: its Transport sends
// notifications/initialized before its first request (again on the next
// request if the server did not accept it), puts the Mcp-Session-Id on
// every request, refuses one that names another session or a second
// initialize, and ends the session with [Transport.Close]. At a
// handshake revision the revision goes in the MCP-Protocol-Version header
// only, never in _meta.
//
// # What an attempt that reached no decision leaves behind
//
// A server that could not be reached, timed out, hung up, answered a 5xx
// (a 502 gateway), an answer over 4 MiB, or an initialize answer that is
// neither a protocolVersion nor a refusal, refused nothing, and none of
// it is recorded: negotiation.decided records decisions, and there was
// none. What is left:
//
//   - The error. Negotiate and Connect return the zero Outcome and an
//     error that unwraps to a *errors.Error of code internal_error (the
//     host failed to complete the exchange), whose details.reason names
//     the failure ("unreachable", "timeout", "hang-up", "not-an-answer",
//     "too-large", "egress-denied", "redirect-refused", "canceled") and
//     details.status the server's HTTP status when it sent one. A refusal
//     is always interop_version_unsupported, so errors.Is(err,
//     errors.InteropVersionUnsupported) tells the two apart.
//   - One log line, to OutboundOptions.ErrorLog (slog.Default() when
//     nil), at slog.LevelWarn: "negotiation reached no decision", with
//     protocol, peerDigest (the origin never in clear, as in the record)
//     and err, the failure as a group (reason, url with any password
//     redacted, status, cause).
//   - No metric: the core module has none, and the otel module counts
//     decisions; a host that counts these attempts counts them by
//     details.reason from the error (left to the otel module, not done
//     here).
//
// # Trace context
//
// With OutboundOptions.TraceContext set (the otel module's Propagate is
// one), every request of the negotiation (server/discover, initialize,
// the DELETE that ends a session) and every request of [Connect]'s
// Transport (notifications/initialized included) carries the W3C trace
// context the hook hands for the request's context, as the OpenWOP
// reference host does (RFC 0207): in the traceparent and tracestate
// headers, and in params._meta of every JSON-RPC request and notification
// under the unprefixed keys traceparent and tracestate, the keys MCP
// 2026-07-28 reserves for it (SEP-414), at every revision (a handshake
// revision still never goes in _meta). A response the host sends carries
// none. [NewTransport]'s Transport has no hook, and stamps none.
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
// the caller's; a _meta holding either key keeps that
// message's _meta the caller's, while the other messages of a batch are
// stamped. A params or _meta that is not an object gets none. Trace
// context is correlation only: it confers no authority, is never read as
// identity, and never enters the negotiation.decided record.
//
// # Egress
//
// With a nil OutboundOptions.Client the negotiation's requests go through
// the module's egress client: the address is checked when it is dialled
// (so DNS rebinding does not pass), link-local and cloud metadata
// addresses (169.254.169.254 and the like) are always refused, loopback
// only with OutboundOptions.AllowLoopback and private ranges (10/8,
// 172.16/12, 192.168/16, fc00::/7, 100.64/10) only with AllowPrivate; a
// host spelled in a way the URL Standard reads as an address
// ("0x7f000001", "0177.0.0.1", "127.1") is dialled as that address, the
// one the record's digest names; no proxy; a redirect is followed only to
// the same origin, at most 3 times; 20 s a request, 10 s to the answer's
// headers; an answer read up to 4 MiB. A host's own Client is used as it
// is, under the same redirect rule (a 3xx it hands back is refused too):
// the address policy and the time bounds are then the host's.
//
// A Transport sends through its base: NewTransport's nil base is the
// egress transport of the zero policy (public addresses only, the
// stricter reading), so a host whose server is on loopback or a private
// address passes its own base, or uses Connect with AllowLoopback or
// AllowPrivate, whose Transport sends through the egress transport of
// that policy (or the host Client's Transport). A stamped call is bounded
// by its caller's context.
//
// # The record follows the server's runtime answer
//
// A Connect Transport reads the answer to a stamped POST that holds a
// request, up to 4 MiB (an event stream as far as its first response; a
// longer answer is an error of kind too-large, since it was not read), as
// the inbound side reads an answer for a refusal: any JSON number equal to
// -32022, keys in any case. A refusal is not handed back: it is recorded
// as a refused negotiation.decided of that exchange, requested the
// Transport's revision, beside the negotiation's acceptance (below-floor
// when the server's data.supported lists only revisions below the floor,
// unsupported otherwise: never an acceptance, the server refused), and
// the caller gets an error carrying interop_version_unsupported, joined
// with the *negotiate.AuditError when the record failed; the record does
// not depend on the caller's context, so a caller whose deadline ends as
// the refusal arrives leaves it all the same. Any other answer is handed
// back byte for byte. The answer is read as clients read it (gzip,
// deflate, a byte-order mark). A Connect Transport sends only to the
// origin it negotiated with: a call a redirect took elsewhere (a 307 that
// the host's own http.Client followed) is refused unsent, with an error of
// kind redirect-refused, so no other origin's answer is recorded under
// this server's digest. A NewTransport Transport has no sink: it
// reads no answer, and a caller that uses one (the conformance seams do)
// reads and records a refusal itself.
package mcphttp
