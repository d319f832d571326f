// Package egress is the one way the outbound adapters (negotiate/a2ahttp,
// negotiate/mcphttp, negotiate/seams) reach a peer: an *http.Client for the
// negotiation fetches (the agent card, server/discover, initialize), a
// RoundTripper for the calls stamped with the negotiated version, and
// [Do], which turns everything that is not a peer's answer into an
// [*Error] that says which failure it was. A transport failure is never a
// refusal: an attempt that fails here reached no decision, and the
// adapters record none.
//
// # Address policy
//
// The policy is checked at dial time, on the address actually dialled
// (net.Dialer.ControlContext), so a name that resolves to a refused
// address is refused whatever it resolved to earlier (DNS rebinding), and
// a redirect is checked like the first request. IPv4-mapped IPv6
// addresses (::ffff:a.b.c.d) are unwrapped first, and so is the IPv4
// address inside a NAT64 (64:ff9b::/96) or 6to4 (2002::/16) address,
// which reaches that IPv4 address through a translator. The classes, most
// specific first:
//
//   - Always refused, whatever the options: the cloud metadata, credential
//     and platform addresses of one table (metadata.go), IPv4 and IPv6
//     alike, each with the cloud's documentation of it (169.254.169.254,
//     169.254.170.2 and 169.254.170.23, link-local anyway; AWS's
//     fd00:ec2::254 and fd00:ec2::23, GCP's fd20:ce::254, OCI's
//     fd00:c1::a9fe:a9fe and Scaleway's fd00:42::42, inside fc00::/7;
//     100.100.100.200, Alibaba's; 168.63.129.16, Azure's WireServer, a
//     public address; 192.0.0.192, Oracle's legacy one), and a local
//     NAT64 address (64:ff9b:1::/48) that reaches one at any RFC 6052
//     prefix length; link-local (169.254.0.0/16, fe80::/10),
//     "this network" and unspecified (0.0.0.0/8, ::, which Linux connects
//     to the host itself), IETF protocol assignments (192.0.0.0/24),
//     multicast (224.0.0.0/4, ff00::/8), reserved and broadcast
//     (240.0.0.0/4, 255.255.255.255), and the other deprecated
//     IPv4-compatible IPv6 addresses (::/96).
//   - Loopback (127.0.0.0/8, ::1): refused unless Options.AllowLoopback.
//     The examples, the seams on loopback and the tests allow it.
//   - Private (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7 and the
//     deprecated site-local fec0::/10; 100.64.0.0/10, the carrier-grade
//     NAT range that clouds and overlay networks use inside; 198.18.0.0/15,
//     benchmarking; 64:ff9b:1::/48, local NAT64): refused unless
//     Options.AllowPrivate. The stricter reading: an address that is not
//     public is not reached by default.
//   - Everything else is public and allowed.
//
// There is no list of host names: "localhost", "metadata.google.internal"
// and "instance-data" are refused for the addresses they resolve to. The
// transport uses no proxy (HTTP_PROXY is ignored), because through a proxy
// the address dialled is the proxy's, and the policy would check the
// wrong one.
//
// # Host spelling
//
// The record names a peer by [events.PeerDigest], the digest of its origin
// as the WHATWG URL Standard reads the URL. Go's resolver reads some hosts
// otherwise: "0x7f000001", "0177.0.0.1", "127.1" and "2130706433" are all
// 127.0.0.1 to the URL Standard, and names to look up in DNS to Go. The
// transport takes the stricter of the two consistent choices: it dials
// exactly the host [events.Origin] names, and sends that host in the Host
// header and as the TLS server name, so the origin dialled is always the
// origin recorded. A URL with no such origin (a zone in an IPv6 literal, a
// forbidden code point, a scheme other than http and https) is refused
// with kind [Denied] before anything is sent.
//
// # Redirects
//
// A negotiation fetch follows a redirect only to the same origin (compared
// as [events.Origin] serializes it, so "HTTP://Peer:80" is "http://peer"),
// and at most Options.MaxRedirects of them (3 by default): the answer then
// is still the recorded peer's. A redirect to another origin, https to http
// included, is refused with kind [RedirectRefused]: its answer would be
// another peer's, decided and recorded under the first one's digest. [Do]
// enforces the same rule on any *http.Client it is handed, and treats a 3xx
// the client did not follow as a refused redirect too. The address policy
// and the host spelling are the transport's, though: a client whose
// Transport is not [NewClient]'s or [NewTransport]'s has neither, and an
// adapter that takes a host's client says so.
//
// # Bounds
//
// Each bound is an Options field or a [Do] argument whose zero value is
// the default:
//
//   - Options.Timeout: the whole fetch, redirects and the reading of the
//     body included, 20 s, as the OpenWOP reference host's.
//   - Options.HeaderTimeout: from the request written to the answer's
//     headers, 10 s. Only the negotiation client has it: a stamped call
//     (a tool that takes its time) is bounded by its caller's context.
//   - Options.MaxRedirects: 3 same-origin redirects.
//   - The body: [Do] and [ReadBody] read at most their bound (1 MiB by
//     default, the reference host's maxResponseBodyBytes); one byte more is
//     an [*Error] of kind [TooLarge] wrapping an *http.MaxBytesError.
//   - Fixed, as the standard library's DefaultTransport has them: 30 s to
//     connect, 10 s for the TLS handshake, 1 s for a 100-continue; and
//     64 KiB of response headers.
//
// # What an attempt that reached no decision leaves behind
//
// The adapters follow this; it is the proposal for the whole outbound side.
//
//   - The error. mcphttp.Negotiate, a2ahttp.Negotiate and their transports return the [*Error]
//     (wrapped), never a refused Outcome. errors.Is(err, egress.Timeout)
//     (or any kind) tells the failure inside the module; a caller outside
//     it reads the same through the v2 envelope the error unwraps to:
//     errors.As(err, &e) with e a *wperrors.Error gives code internal_error
//     (HTTP 500, retriable in the registry) and details.reason, the kind's
//     name ("unreachable", "timeout", "hang-up", "not-an-answer",
//     "too-large", "egress-denied", "redirect-refused", "canceled"), and
//     details.status when the peer sent one. The registry has no closer
//     row (no upstream_unavailable; webhook_url_rejected is a webhook
//     registration's), and internal_error says what is true: the host
//     failed to complete the exchange; the peer refused nothing. The seams
//     answer it as that envelope, so the conformance suite reads it as the
//     host's. The registry's retriable flag holds for every kind but
//     egress-denied and redirect-refused, which the same request meets
//     again; the reason says which.
//   - No event. negotiation.decided records decisions, and there was none;
//     a record of a refusal the peer did not give is what this package
//     exists to prevent.
//   - One log line, at slog.LevelWarn, "negotiation reached no decision",
//     with protocol, peerDigest (the origin is never logged in clear, as
//     in the record) and the error as slog.Any("err", err): [*Error] is a
//     slog.LogValuer whose group is reason, url (the origin at most, [Where]),
//     status and cause.
//   - A metric is not the core module's (it has no OpenTelemetry): the
//     telemetry module counts the attempts by details.reason, and sets it
//     as error.type on the mcp.client or a2a client span.
package egress
