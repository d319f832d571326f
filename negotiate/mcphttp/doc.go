// Package mcphttp puts MCP version negotiation (RFC 0175 §D, the mcp facet)
// on net/http, for both directions: [Middleware] is the inbound side, over
// any MCP streamable-HTTP handler, and [Negotiate] with [Transport] is the
// outbound side, for a host calling an MCP server.
//
// # Inbound
//
// [New] checks the configuration once; [Middleware.Wrap] puts an MCP
// handler behind it. Every request is decided by a compiled
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
//     counter-offer (DESIGN rules 3 and 5): the host may answer with its
//     preferred revision instead of refusing. Below the floor it is
//     refused with JSON-RPC -32602, data {supported, requested}, on HTTP
//     200, the one shape the MCP SDK clients surface with its data. When
//     the answer names a session (Mcp-Session-Id), the session's revision
//     is remembered, in a bounded store.
//   - A request on a session it remembers: MCP-Protocol-Version must name
//     the session's revision, or the request is refused (HTTP 400, -32022,
//     data.supported holding that one revision). A caller other than the
//     one that negotiated the session is decided afresh.
//   - Any other request, 2026-07-28-era or legacy: first the headers must
//     agree with the body (MCP-Protocol-Version with every
//     params._meta["io.modelcontextprotocol/protocolVersion"], Mcp-Method
//     with method, Mcp-Name with the name it mirrors), else HTTP 400
//     -32020, before any version is looked at; then the revision the
//     header names is decided, and refused with HTTP 400 -32022, data
//     {supported, requested}. A request without the header is read as
//     2025-03-26 ([ImpliedRevision], the MCP rule), refused unless the
//     host offers it; its error names requested as null, as the reference
//     server does.
//
// POST carries the messages; GET (a legacy session's event stream) and
// DELETE (its end) are checked by their header alone, and a DELETE the
// wrapped handler accepts forgets the session; OPTIONS (a CORS preflight)
// passes untouched; any other method is answered 405.
//
// The body reaches the wrapped handler byte for byte. It is read whole,
// up to Options.MaxBodyBytes (a larger one is answered 413 and nothing is
// forwarded), and checked: a body that is not JSON (-32700), not a message
// or batch, or that spells a key the middleware reads twice or in another
// case (-32600: servers with case-folding or last-key-wins parsers would
// read it otherwise) never reaches the wrapped handler.
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
//   - The handshake cannot settle a revision from [StatelessRevision] on
//     (2026-07-28 removed initialize, and both SDK servers answer it with at
//     most 2025-11-25), so a host whose preferred revision is a stateless
//     one makes no counter-offer at initialize: what would have been
//     counter-offered is refused (-32602), and a client that wants the
//     preferred revision asks for it through server/discover. An
//     initialize that asks for a stateless revision is refused the same
//     way without a decision, since no answer of the server could carry
//     the decided revision.
//   - Header/body disagreements, malformed bodies and bodies over the
//     bound are refused before any decision and are not negotiations, so
//     they are not recorded as negotiation.decided.
//   - More than one MCP-Protocol-Version, Mcp-Method or Mcp-Session-Id
//     value, or a list in one, is refused (-32020), never guessed between.
//   - The wrapped server must itself answer with the revision decided. It
//     does when it serves the facet's revisions; when it does not, the
//     record says so (see below), and the session's next request, which
//     carries the server's revision, is refused. The failure is closed.
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
// acceptance stands unless the server answers a JSON-RPC -32022 (to any
// member of a batch). To read this much, the middleware holds the head of
// a JSON answer, and its bytes up to 64 KiB (up to Options.MaxBodyBytes
// for discover and initialize) until the handler returns; of an event
// stream answering discover or initialize, it holds the events up to the
// first JSON-RPC response (bounded the same way). Every other answer,
// event streams included, is recorded at its head and streams unheld.
// Under policy.Policy.RequireAudit an acceptance whose record cannot be
// written replaces the server's answer with JSON-RPC -32603 on HTTP 500;
// the wrapped handler has then already run.
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
// [Negotiate] calls the server's server/discover at the host's preferred
// revision ([Discover]), takes the result's supportedVersions or a
// -32022's data.supported as the server's offer, decides for the host's
// outbound Subject and records it. Only an accepted outcome makes a
// [Transport], the http.RoundTripper that stamps the revision on every
// later request and refuses any that names another, so nothing is ever
// sent below the floor or at a downgrade an unauthenticated caller could
// not have.
package mcphttp
