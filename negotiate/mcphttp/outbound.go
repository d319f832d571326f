package mcphttp

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/egress"
	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/internal/rpcerr"
	"github.com/wopneg/wopneg/internal/tracectx"
	"github.com/wopneg/wopneg/negotiate"
)

// ErrNoOffers is wrapped by the error of a [Negotiate] whose
// server/discover yielded no list of revisions (the server answered
// something that is not definitive evidence of the 2026-07-28 era) and
// that could not fall back to initialize, because no handshake revision
// is one the host may offer: the refusal recorded then says why.
var ErrNoOffers = errors.New("mcphttp: the server offers no revision")

// discovered is what an MCP server's server/discover said about the
// revisions it serves.
type discovered struct {
	// versions are the revisions the server lists, as it listed them.
	versions []string
	// refused is true when versions came from the data.supported of a
	// -32022 refusal of the revision asked for, rather than from the
	// result's supportedVersions.
	refused bool
	// reason is the data.reason of that refusal, when it gave one.
	reason string
}

// discoverError says why a server/discover that was answered yielded no
// list of revisions: a legacy signal, after which the handshake is tried.
// It wraps ErrNoOffers and the underlying failure.
type discoverError struct {
	// status is the HTTP status of the answer; 0 when there was none.
	status int
	// code is the JSON-RPC error code of the answer, when it was one. Its
	// message is not kept: the error is logged, and what a peer writes
	// must not fill a log (see exchange.PeerRefusal).
	code int
	// err is the underlying failure, when there is one.
	err error
}

// Error says what the answer was, as far as there was one.
func (e *discoverError) Error() string {
	s := "mcphttp: server/discover"
	if e.status != 0 {
		s += ": HTTP " + strconv.Itoa(e.status)
	}
	if e.code != 0 {
		s += ": json-rpc error " + strconv.Itoa(e.code)
	}
	if e.err != nil {
		s += ": " + e.err.Error()
	}
	return s
}

// Unwrap returns ErrNoOffers and the underlying failure.
func (e *discoverError) Unwrap() []error { return []error{ErrNoOffers, e.err} }

const (
	methodDiscover    = "server/discover"
	methodInitialized = "notifications/initialized"
)

// clientInfo is how the host names itself in initialize.
var clientInfo = map[string]any{"name": "wopneg", "version": "2"}

// askID is the id of the request askRevision makes.
const askID = "1"

// askRevision is the POST to serverURL of the JSON-RPC request (id 1)
// that asks a server about revision, with the headers a client sends with
// it: a server/discover, whose params._meta declares revision and empty
// client capabilities beside meta, and whose headers name the revision and
// the method; or an initialize of revision by client, with meta (when not
// nil) as its params._meta. meta is the caller's to give: it is changed.
func askRevision(ctx context.Context, serverURL, method, revision string, meta map[string]any, client any) (*http.Request, error) {
	params := map[string]any{"protocolVersion": revision, "capabilities": map[string]any{}, "clientInfo": client}
	if method == methodDiscover {
		params = map[string]any{}
		if meta == nil {
			meta = make(map[string]any, 2)
		}
		meta[metaProtocolVersion] = revision
		meta["io.modelcontextprotocol/clientCapabilities"] = map[string]any{}
	}
	if meta != nil {
		params["_meta"] = meta
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": jsontext.Value(askID), "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, serverURL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	if method == methodDiscover {
		req.Header[headerProtocolVersion] = []string{revision}
		req.Header[headerMethod] = []string{methodDiscover}
	}
	return req, nil
}

// post asks the server at serverURL about revision with method
// (askRevision), with c through egress.Do, carrying the trace context of
// hook in its headers and params._meta, and reads the JSON-RPC response of
// the answer (readAnswerBody). The answer's
// head comes back whenever there was one, its body closed. An error is an
// *egress.Error when no answer was read (the peer could not be reached,
// hung up, timed out, answered a 5xx or too much), and errNoResponse
// (wrapped) when the answer holds no JSON-RPC response.
func post(ctx context.Context, c *http.Client, serverURL, method, revision string, hook negotiate.TraceContext) (*http.Response, []byte, error) {
	tc := tracectx.From(ctx, hook)
	req, err := askRevision(ctx, serverURL, method, revision, tc.Map(), clientInfo)
	if err != nil {
		return nil, nil, &egress.Error{Kind: egress.Denied, Err: err}
	}
	tc.SetHeader(req.Header)
	resp, err := egress.Do(c, req, defaultMaxBodyBytes)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := readAnswerBody(resp)
	return resp, data, err
}

// discover asks the MCP server at serverURL which revisions it serves: it
// POSTs server/discover at revision (header and _meta), and returns the
// result's supportedVersions, or the data.supported of a -32022 refusal
// (MCP 2026-07-28). The answer may be JSON or a stream of server-sent
// events, and is read up to defaultMaxBodyBytes. An answer that lists no
// revisions is a *discoverError; no answer at all is an *egress.Error.
// client nil means egress.Do's default client. The trace context of hook
// goes in the headers and in _meta.
func discover(ctx context.Context, client *http.Client, serverURL, revision string, hook negotiate.TraceContext) (discovered, error) {
	resp, data, err := post(ctx, client, serverURL, methodDiscover, revision, hook)
	if resp == nil || err != nil && !errors.Is(err, errNoResponse) {
		return discovered{}, err
	}
	if err != nil {
		return discovered{}, &discoverError{status: resp.StatusCode, err: err}
	}
	rep, err := readReply(data)
	if err != nil {
		return discovered{}, &discoverError{status: resp.StatusCode, err: fmt.Errorf("the answer is not a JSON-RPC response: %w", err)}
	}
	if rep.result {
		if rep.versions == nil {
			return discovered{}, &discoverError{status: resp.StatusCode, err: errors.New(`the result: no member "supportedVersions"`)}
		}
		return discovered{versions: rep.versions}, nil
	}
	if rep.code == rpcerr.RPCMCPUnsupportedProtocolVersion && rep.supported != nil {
		return discovered{versions: rep.supported, refused: true, reason: rep.reason}, nil
	}
	return discovered{}, &discoverError{status: resp.StatusCode, code: int(rep.code)}
}

// errNoResponse is an answer that holds no JSON-RPC response.
var errNoResponse = errors.New("the event stream holds no JSON-RPC response")

// readAnswerBody reads the JSON-RPC response in an answer with the
// engine's one reader, up to defaultMaxBodyBytes: the body itself, or the
// data of the first server-sent event that is the response to it (its
// id), decoded as clients decode it. An event stream is read only as far as that event, so a server that keeps
// its stream open does not hold the caller; one that ends before it is
// errNoResponse. An answer over the bound or in a coding clients do not
// decode is an *egress.Error (TooLarge, NotAnAnswer), and a read that
// fails one of its kind.
func readAnswerBody(resp *http.Response) (data []byte, err error) {
	sse := exchange.IsEventStream(resp.Header.Get("Content-Type"))
	v, err := exchange.Read(resp, defaultMaxBodyBytes, func(msg []byte, complete bool) exchange.Verdict {
		if !complete {
			return exchange.Undecided
		}
		if sse {
			if rep, err := readReply(msg); err != nil || !exchange.Answers(rep.id, jsontext.Value(askID)) {
				return exchange.Undecided // an event that is no response to the request
			}
		}
		data = msg
		return exchange.Served
	}, nil)
	if err == nil && v != exchange.Served {
		// An event the stream's end cuts off is read for a refusal alone.
		return nil, errNoResponse
	}
	return data, err
}

// handshake is what a server answered to initialize.
type handshake struct {
	// version is the result's protocolVersion; "" when the server refused.
	version string
	// supported and reason are the error.data.supported and
	// error.data.reason of a refusal.
	supported []string
	reason    string
	// session is the Mcp-Session-Id the server assigned, if any.
	session string
}

// initialize opens a legacy session at revision: it POSTs initialize and
// returns the server's protocolVersion, or the data.supported of its
// refusal (an error that lists revisions is the lifecycle's refusal of the
// one asked for). Any other answer, or none, is an *egress.Error; the
// session the server assigned comes back even then, to be closed. The
// trace context of hook goes in the headers and in params._meta, which
// then holds nothing else: a handshake revision is never in _meta.
func initialize(ctx context.Context, client *http.Client, serverURL, revision string, hook negotiate.TraceContext) (handshake, error) {
	resp, data, err := post(ctx, client, serverURL, methodInitialize, revision, hook)
	var h handshake
	if resp == nil {
		return h, err
	}
	if vs := resp.Header[headerSessionID]; len(vs) == 1 {
		h.session = vs[0]
	}
	if err != nil && !errors.Is(err, errNoResponse) {
		return h, err
	}
	rep, rerr := readReply(data)
	switch {
	case err != nil:
	case rerr != nil:
		err = fmt.Errorf("the answer is not a JSON-RPC response: %w", rerr)
	case rep.result && rep.protocolVersion != "":
		h.version = rep.protocolVersion
		return h, nil
	case rep.isError && len(rep.supported) > 0:
		h.supported, h.reason = rep.supported, rep.reason
		return h, nil
	default:
		err = errors.New("the answer is neither a protocolVersion nor a refusal listing the supported revisions")
	}
	return h, egress.NotAnswer(resp, fmt.Errorf("initialize: %w", err))
}

// OutboundOptions configures [Negotiate] and [Connect]. Only Sink is
// required; the zero value of every other field is the safe default.
type OutboundOptions struct {
	// Sink records the negotiation.decided event. It is required.
	Sink events.Sink
	// Subject is the host's own outbound identity, on whose behalf it calls
	// the server; nil is unauthenticated, which is never downgraded.
	Subject *negotiate.Subject
	// Destination says where the event is recorded; the zero Destination
	// is a durable host event.
	Destination negotiate.Destination
	// Client sends the negotiation's requests (server/discover,
	// initialize, and the DELETE that ends a session Negotiate opened).
	// Nil means the egress client of the package doc ("Outbound"): the
	// address policy of AllowLoopback and AllowPrivate, 20 s a fetch, no
	// redirect to another origin. A host's own client is used as it is,
	// under the same redirect rule: the address policy, the host spelling
	// and the time bounds are then the host's. The context given to
	// Negotiate bounds the call either way.
	Client *http.Client
	// AllowLoopback lets the nil Client (and [Connect]'s Transport over
	// it) reach 127.0.0.0/8 and ::1; AllowPrivate the private ranges
	// (10/8, 172.16/12, 192.168/16, fc00::/7...). Link-local and cloud
	// metadata addresses are refused whatever they say. They do nothing
	// when Client is set.
	AllowLoopback, AllowPrivate bool
	// Requested is the revision the host asks for; empty means its
	// preferred one. server/discover is always sent at the preferred
	// revision, so that nothing below the floor reaches the server; the
	// decision then weighs Requested against what the server lists, and a
	// revision the host does not offer, or one below its floor, is refused
	// (this is how a conformance seam forces an unsupported revision).
	Requested string
	// ErrorLog receives the one line an attempt that reached no decision
	// leaves ("negotiation reached no decision", at slog.LevelWarn). When
	// nil, slog.Default() is used.
	ErrorLog *slog.Logger
	// TraceContext, when set, gives the W3C trace context that every
	// request of the negotiation (server/discover, initialize, the DELETE
	// that ends a session) and every request of [Connect]'s Transport
	// carries, in its traceparent and tracestate headers and, on a
	// JSON-RPC request or notification, in params._meta (see "Trace
	// context" in the package doc). Nil stamps none.
	TraceContext negotiate.TraceContext
}

// egressOf is how opts reaches the server.
func egressOf(opts OutboundOptions) exchange.Egress {
	return exchange.Egress{Client: opts.Client, AllowLoopback: opts.AllowLoopback, AllowPrivate: opts.AllowPrivate}
}

// negotiation is what an outbound negotiation settled.
type negotiation struct {
	outcome negotiate.Outcome
	offers  []string
	// peerReason is the reason the server gave for refusing the revision
	// asked for, when it refused with one.
	peerReason string
	// session is the Mcp-Session-Id of the legacy session the handshake
	// opened; handshaken is true when there was a handshake at all.
	session    string
	handshaken bool
	client     *http.Client
	rec        *exchange.Recorder
}

// Negotiate settles the revision a host speaks with the MCP server at
// serverURL, and records the decision once (see "Outbound" in the package
// doc for the whole table): it calls server/discover at the host's
// preferred revision, takes the result's supportedVersions (or a
// -32022's data.supported) as the server's offers, and decides with n for
// opts.Subject. When the server gave no definitive answer of the
// 2026-07-28 era, the revision is settled through initialize instead, and
// the server's protocolVersion is its offer; the session that opens is
// closed again (HTTP DELETE) before Negotiate returns. [Connect] keeps it
// open for a [Transport].
//
// It returns the outcome, the revisions the server offered, and an error
// that is nil exactly when the outcome is accepted and recorded. When the
// outcome is refused the error is the refusal (an
// interop_version_unsupported or, under a required audit, internal_error
// *errors.Error; the former says what the server offered, in its message
// and in details.offered, the reason the server's own refusal gave in
// details.peerReason, and the fix when the caller's identity refused it),
// joined with the *negotiate.AuditError when the event was
// not recorded; when the outcome is accepted but its event was not
// recorded and the policy does not require it, it is the
// *negotiate.AuditError alone, and the caller decides whether to proceed.
//
// A server that could not be asked (a URL the egress policy does not
// reach, unreachable, timed out, hung up, answered a 5xx, too much, or no
// negotiation answer at all) refused
// nothing: Negotiate then records nothing, logs one line to
// opts.ErrorLog, and returns the zero Outcome with an error that unwraps
// to an internal_error *errors.Error whose details.reason says which
// failure it was. Nothing is sent at a refused revision: only an accepted
// outcome makes a [Transport].
func Negotiate(ctx context.Context, n *negotiate.Negotiator, serverURL string, opts OutboundOptions) (negotiate.Outcome, []string, error) {
	r, err := settle(ctx, n, serverURL, opts, false)
	if r.session != "" {
		// The session is Connect's to keep; Negotiate leaves none open.
		_ = endSession(ctx, r.client.Transport, serverURL, r.session, r.outcome.Version, opts.TraceContext)
	}
	return r.outcome, r.offers, err
}

// Connect is [Negotiate] that keeps what it settled for the calls that
// follow: it returns the outcome and, when it is accepted, a [Transport]
// that stamps its revision, carries the legacy session the handshake
// opened (until [Transport.Close] ends it), and records a runtime refusal
// of its revision (-32022) through opts.Sink. Unlike Negotiate, it settles
// a handshake revision that the server's server/discover list yields
// through initialize too (the go-sdk's stateful server lists those, and
// serves them only on a session), and records the server's answer there. The Transport sends through
// opts.Client's Transport, or, when Client is nil, through the egress
// transport of opts's address policy.
func Connect(ctx context.Context, n *negotiate.Negotiator, serverURL string, opts OutboundOptions) (*Transport, negotiate.Outcome, error) {
	r, err := settle(ctx, n, serverURL, opts, true)
	if r.outcome.Err() != nil {
		return nil, r.outcome, err
	}
	t, _ := NewTransport(r.outcome, egressOf(opts).Base())
	t.session, t.needInitialized = r.session, r.handshaken
	t.peer, t.trace = serverURL, opts.TraceContext
	t.rec = &exchange.Peer{Recorder: exchange.Recorder{Pkg: "mcphttp", N: n, Sink: opts.Sink, Log: opts.ErrorLog}, URL: serverURL, Subject: opts.Subject, Dest: opts.Destination}
	return t, r.outcome, err
}

// settle is the negotiation of Negotiate and Connect; open says whether
// a handshake revision the server's list settles is settled through
// initialize (Connect, whose Transport needs the session), or is the
// outcome (Negotiate).
func settle(ctx context.Context, n *negotiate.Negotiator, serverURL string, opts OutboundOptions, open bool) (negotiation, error) {
	adv, err := exchange.Check("mcphttp", n, opts.Sink, facets.ProtocolMCP)
	if err != nil {
		return negotiation{}, err
	}
	r := negotiation{client: egressOf(opts).Fetcher(), rec: &exchange.Recorder{Pkg: "mcphttp", N: n, Sink: opts.Sink, Log: opts.ErrorLog}}
	// RFC 0242: outbound, requested is what the host asks the peer for,
	// and absent a choice that is its preferred revision.
	requested := cmp.Or(opts.Requested, adv.Preferred)
	offer := negotiate.Offer{Protocol: facets.ProtocolMCP, Peer: serverURL, Requested: requested}
	// A URL the egress policy does not reach (no http(s) origin among
	// them) is asked nothing, and so reaches no decision, as A2A's.
	d, err := discover(ctx, r.client, serverURL, adv.Preferred, opts.TraceContext)
	var legacy *discoverError
	switch {
	case errors.As(err, &legacy):
		// No definitive answer of the 2026-07-28 era: the handshake
		// settles it, at the newest revision the host may offer.
		revision, ok := handshakeRevision(n, adv, opts.Subject, offer)
		if !ok {
			// Nothing the host may offer: refused for the host's reason
			// (anonymous, the policy, the floor), and nothing sent.
			offer.PeerVersions = handshakeRevisions(adv, requested)
			return r.record(ctx, opts, offer, err)
		}
		return r.viaInitialize(ctx, n, opts, offer, revision)
	case err != nil:
		return r, r.rec.NoDecision(ctx, facets.ProtocolMCP, serverURL, err)
	}
	r.offers, r.peerReason = d.versions, d.reason
	offer.PeerVersions = d.versions
	if o, _ := n.Decide(opts.Subject, offer); open && o.Err() == nil && !isStateless(o.Version) {
		// A handshake revision, for a Transport: only initialize opens
		// the session a stateful server serves it on, and the server's
		// answer there is the record.
		return r.viaInitialize(ctx, n, opts, offer, o.Version)
	}
	return r.record(ctx, opts, offer, nil)
}

// record decides offer, records it and returns r with the outcome; a
// refusal says what the server offered (exchange.PeerRefusal), and cause
// is joined to it.
func (r negotiation) record(ctx context.Context, opts OutboundOptions, offer negotiate.Offer, cause error) (negotiation, error) {
	o, aerr := r.rec.DecideAndRecord(ctx, opts.Destination, opts.Subject, offer)
	r.outcome = o
	var refusal error
	if o.Err() != nil {
		refusal = errors.Join(exchange.PeerRefusal(o, r.offers, r.peerReason), cause)
	}
	return r, errors.Join(refusal, aerr)
}

// viaInitialize settles the revision through initialize at revision: the
// server's protocolVersion is its offer, decided as offer and recorded
// once. A refused outcome ends the session, as the lifecycle requires of a
// client that cannot speak the server's revision; so does an initialize
// whose answer reached no decision.
func (r negotiation) viaInitialize(ctx context.Context, n *negotiate.Negotiator, opts OutboundOptions, offer negotiate.Offer, revision string) (negotiation, error) {
	h, err := initialize(ctx, r.client, offer.Peer, revision, opts.TraceContext)
	r.session, r.handshaken = h.session, true
	switch {
	case err != nil:
		err = r.rec.NoDecision(ctx, facets.ProtocolMCP, offer.Peer, err)
	case h.version != "":
		r.offers = []string{h.version}
		offer.PeerVersions = r.offers
		if _, err := facets.ParseVersion(facets.ProtocolMCP, h.version); err != nil || isStateless(h.version) {
			// A revision no handshake settles is not one to speak on
			// this session.
			offer.PeerVersions = []string{exchange.Unserved(facets.ProtocolMCP)}
		}
	default:
		r.offers, r.peerReason = h.supported, h.reason
		offer = exchange.RefusalOffer(n, opts.Subject, offer, h.supported)
	}
	if err == nil {
		r, err = r.record(ctx, opts, offer, nil)
	}
	// No decision (the zero outcome) ends the session as a refusal does.
	if r.outcome.Err() != nil && r.session != "" {
		_ = endSession(ctx, r.client.Transport, offer.Peer, r.session, revision, opts.TraceContext)
		r.session = ""
	}
	return r, err
}

// handshakeRevisions are the revisions of adv a handshake could settle
// for requested: from the floor to requested, before statelessRevision,
// newest first.
func handshakeRevisions(adv facets.Advertised, requested string) []string {
	ceiling, err := facets.ParseVersion(facets.ProtocolMCP, requested)
	floor, ferr := facets.ParseVersion(facets.ProtocolMCP, adv.Floor)
	var out []string
	if err != nil || ferr != nil {
		return out
	}
	for i := len(adv.Versions) - 1; i >= 0; i-- {
		v, err := facets.ParseVersion(facets.ProtocolMCP, adv.Versions[i])
		if err == nil && v.Compare(floor) >= 0 && v.Compare(ceiling) <= 0 && v.Compare(statelessParsed) < 0 {
			out = append(out, adv.Versions[i])
		}
	}
	return out
}

// handshakeRevision is the newest handshake revision the decision accepts
// for subject, were the server to answer it: the one initialize offers.
func handshakeRevision(n *negotiate.Negotiator, adv facets.Advertised, subject *negotiate.Subject, offer negotiate.Offer) (string, bool) {
	for _, v := range handshakeRevisions(adv, offer.Requested) {
		offer.PeerVersions = []string{v}
		if o, _ := n.Decide(subject, offer); o.Err() == nil {
			return v, true
		}
	}
	return "", false
}

// endSession sends the DELETE that ends a legacy session, through rt (nil:
// http.DefaultTransport), with the trace context of hook. A server that
// does not let clients end sessions answers 405, which ends nothing, and
// is not an error.
func endSession(ctx context.Context, rt http.RoundTripper, serverURL, session, revision string, hook negotiate.TraceContext) error {
	if rt == nil {
		rt = http.DefaultTransport
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, serverURL, nil)
	if err != nil {
		return err
	}
	req.Header = http.Header{headerSessionID: {session}, headerProtocolVersion: {revision}}
	tracectx.From(ctx, hook).SetHeader(req.Header)
	resp, err := egress.RoundTrip(rt, req)
	if err != nil {
		return fmt.Errorf("mcphttp: ending session: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode > 299 && resp.StatusCode != http.StatusMethodNotAllowed && resp.StatusCode != http.StatusNotFound {
		return fmt.Errorf("mcphttp: ending session: HTTP %d", resp.StatusCode)
	}
	return nil
}

// ErrVersionConflict is wrapped by the error of every request a
// [Transport] refuses to send: it names a revision other than the
// negotiated one, or cannot be stamped with it. Nothing of it was sent.
var ErrVersionConflict = errors.New("mcphttp: request does not carry the negotiated revision; nothing was sent")

// revisionError is a request a Transport refused to send, and why.
type revisionError struct {
	// Where names what is wrong: the header, a message's _meta, an
	// initialize's protocolVersion, or the body.
	Where string
	// Want is the negotiated revision; Got what the request carries, when
	// it carries one.
	Want, Got string
}

// Error says which part of the request names which revision.
func (e *revisionError) Error() string {
	if e.Got == "" {
		return fmt.Sprintf("mcphttp: %s: cannot carry the negotiated revision %q", e.Where, e.Want)
	}
	return fmt.Sprintf("mcphttp: %s names revision %q, not the negotiated %q", e.Where, e.Got, e.Want)
}

// Unwrap returns ErrVersionConflict.
func (e *revisionError) Unwrap() error { return ErrVersionConflict }

// Transport is an http.RoundTripper for a host's requests to one MCP
// server after [Negotiate] or [Connect]: it stamps every request with the
// negotiated revision, and refuses (sends nothing, returns an error
// wrapping [ErrVersionConflict]) a request that names another, under any
// spelling of the header's key. So a client library that would retry at a
// revision of its own choosing, or an initialize that asks for another,
// never reaches the server.
//
// At a revision from 2026-07-28 (the first without initialize) on, the revision goes in the
// MCP-Protocol-Version header and in params._meta of every JSON-RPC
// request in the body, as MCP requires of each request. At an earlier
// revision it goes in the header only: those revisions settle it at
// initialize, and a stateful server refuses a request that declares one in
// _meta (the go-sdk's does, with -32022).
//
// A Transport from [Connect] reads the answer to a POST that holds a
// request, up to 4 MiB (an event stream as far as its first response),
// before it hands it back, for the server's runtime refusal of the
// revision: an answer a JSON-RPC client reads as -32022 (as the inbound
// side reads one) is recorded as a refused negotiation.decided of that
// exchange and returned as an error carrying interop_version_unsupported
// instead; a longer answer is an error too, since it was not read. One
// from [NewTransport] has no sink: it hands every answer back as it came,
// for its caller to read (and record) a refusal in it.
//
// A Transport from [Connect] whose revision initialize settled carries
// the session: it sends notifications/initialized before the first
// request, puts the session's Mcp-Session-Id on every request (refusing
// one that names another session, or a second initialize), and ends it
// with [Transport.Close].
//
// A Transport from [Connect] with OutboundOptions.TraceContext set also
// carries the trace context in the headers and params._meta of every
// request (see "Trace context" in the package doc).
//
// Bodies are read whole, up to 4 MiB; a larger or non-JSON POST body is
// refused, because it cannot be checked. The zero Transport stamps no
// revision: it sends nothing and refuses every request.
type Transport struct {
	base      http.RoundTripper
	revision  string
	stateless bool

	// Set by Connect: the server, the session its initialize opened
	// ("" when none) and where a runtime refusal is recorded (nil: it is
	// not).
	peer, session string
	rec           *exchange.Peer
	// trace is OutboundOptions.TraceContext (nil: none stamped).
	trace negotiate.TraceContext

	mu              sync.Mutex
	needInitialized bool // notifications/initialized is still to send
	closed          bool
}

// NewTransport returns a Transport for an accepted MCP outcome o, that
// stamps o's revision on every request and sends it through base. A nil
// base is the egress transport of the zero policy (see "Outbound" in the
// package doc): public addresses only, so a host whose server is on
// loopback or a private address passes its own base, or uses [Connect]
// with OutboundOptions.AllowLoopback or AllowPrivate. It refuses a refused outcome: nothing is ever sent at a version the
// decision refused, below the floor or downgraded for an unauthenticated
// caller.
func NewTransport(o negotiate.Outcome, base http.RoundTripper) (*Transport, error) {
	if err := exchange.Sendable("mcphttp", o, facets.ProtocolMCP); err != nil {
		return nil, err
	}
	if base == nil {
		base = exchange.Egress{}.Base()
	}
	return &Transport{base: base, revision: o.Version, stateless: isStateless(o.Version)}, nil
}

// Version returns the revision t stamps.
func (t *Transport) Version() string { return t.revision }

// errNoTransport is a request through a zero Transport.
var errNoTransport = exchange.Unmade("mcphttp", "Transport", "NewTransport or Connect")

// errClosed is a request through a Transport whose session was closed.
var errClosed = errors.New("mcphttp: the Transport's session is closed; nothing was sent")

// Close ends the session [Connect] opened, with an HTTP DELETE that
// carries its Mcp-Session-Id, bounded by ctx; later requests through t
// are refused. Without a session it does nothing. A server that does not
// let clients end sessions (405) is not an error.
func (t *Transport) Close(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.session == "" || t.closed {
		return nil
	}
	t.closed = true
	return endSession(ctx, t.base, t.peer, t.session, t.revision, t.trace)
}

// RoundTrip stamps req with the negotiated revision and sends it, or
// refuses it. It does not change req: it sends a copy.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.base == nil { // the zero Transport: no revision to stamp
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, errNoTransport
	}
	out, asks, asked, err := t.stamp(req)
	if err == nil {
		err = t.opened(out)
	}
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	resp, err := t.rec.Send(t.base, out)
	if err != nil || asks == "" || t.rec == nil {
		return resp, err
	}
	return t.follow(out, resp, asks, asked)
}

// opened puts the session on out and, before its first request, sends
// notifications/initialized, as the lifecycle requires once initialize
// has been answered. Without a session there is nothing to do.
func (t *Transport) opened(out *http.Request) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return errClosed
	}
	if t.session != "" {
		if vs := exchange.HeaderValues(out.Header, headerSessionID); len(vs) > 1 || len(vs) == 1 && vs[0] != t.session {
			return fmt.Errorf("mcphttp: the %s header names another session than the one Connect opened: %w", headerSessionID, ErrVersionConflict)
		}
		out.Header[headerSessionID] = []string{t.session}
	}
	if !t.needInitialized || out.Method == http.MethodDelete {
		return nil
	}
	tc := tracectx.From(out.Context(), t.trace)
	params := ""
	if m := tc.Members(); m != "" {
		params = `,"params":{"_meta":{` + m + `}}`
	}
	req, _ := http.NewRequestWithContext(out.Context(), http.MethodPost, t.peer, strings.NewReader(`{"jsonrpc":"2.0","method":"`+methodInitialized+`"`+params+`}`))
	req.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}, headerProtocolVersion: {t.revision}}
	tc.SetHeader(req.Header)
	if t.session != "" {
		req.Header[headerSessionID] = []string{t.session}
	}
	resp, err := egress.RoundTrip(t.base, req)
	if err != nil {
		return fmt.Errorf("mcphttp: %s: %w", methodInitialized, err)
	}
	resp.Body.Close()
	if resp.StatusCode > 299 {
		return fmt.Errorf("mcphttp: %s: %w", methodInitialized, egress.NotAnswer(resp, errors.New("the server did not accept it")))
	}
	t.needInitialized = false
	return nil
}

// follow reads the answer to a POST whose first request is the method
// asks, with the engine's one reader, for the server's runtime refusal of
// the revision, and hands it back as it came when there is none. An event
// stream is read until it answers each request whose id asked holds.
func (t *Transport) follow(req *http.Request, resp *http.Response, asks string, asked []jsontext.Value) (*http.Response, error) {
	var refusal exchange.Reading
	sse := exchange.IsEventStream(resp.Header.Get("Content-Type"))
	v, err := exchange.Read(resp, defaultMaxBodyBytes, func(msg []byte, complete bool) exchange.Verdict {
		if !complete {
			return exchange.Undecided
		}
		read := versionRefusal.Read(msg, true)
		if read.Verdict == exchange.Refused {
			refusal = read
			return exchange.Refused
		}
		if asked = exchange.Answered(asked, read.IDs); sse && len(asked) > 0 {
			return exchange.Undecided // a notification, or another request's answer: its response is still to come
		}
		return exchange.Served
	}, nil) // nil: an MCP client ends its call at the response to it (go-sdk's processStream), so what follows answers nothing of the call
	if err != nil {
		return nil, err
	}
	if v == exchange.Refused {
		return nil, t.refused(req, asks, refusal)
	}
	return resp, nil
}

// refused is the error of a runtime refusal (-32022) of the revision,
// recorded as a refused negotiation.decided of the exchange: the revision
// requested, the server's data.supported as its offer, reason below-floor
// when every one of them is below the floor, unsupported otherwise.
func (t *Transport) refused(req *http.Request, method string, refusal exchange.Reading) error {
	what := fmt.Sprintf("mcphttp: the server refused %s at the negotiated revision %q (-32022)", method, t.revision)
	o, aerr := t.rec.Refused(req.Context(), facets.ProtocolMCP, t.revision, refusal.Listed)
	return errors.Join(fmt.Errorf("%s: %w", what, exchange.PeerRefusal(o, refusal.Listed, refusal.Reason)), aerr)
}

// stamp returns the copy of req to send, the method of the first request
// its body holds ("" when it holds none), and the ids of its requests.
func (t *Transport) stamp(req *http.Request) (*http.Request, string, []jsontext.Value, error) {
	// Every spelling of the key: a hand-built header can hold
	// "MCP-Protocol-Version" beside the canonical key, and the peer would
	// read both.
	vs := exchange.HeaderValues(req.Header, headerProtocolVersion)
	if len(vs) > 1 {
		return nil, "", nil, &revisionError{Where: "the " + headerProtocolVersion + " header", Want: t.revision, Got: fmt.Sprint(vs)}
	}
	if len(vs) == 1 && vs[0] != t.revision {
		return nil, "", nil, &revisionError{Where: "the " + headerProtocolVersion + " header", Want: t.revision, Got: vs[0]}
	}
	out := req.Clone(req.Context())
	out.Header = exchange.SetHeader(out.Header, headerProtocolVersion, t.revision)
	tc := tracectx.From(req.Context(), t.trace)
	tc.SetHeader(out.Header)
	if req.Body == nil || req.Body == http.NoBody || req.Method != http.MethodPost {
		return out, "", nil, nil
	}
	raw, err := readGrowing(req.Body, req.ContentLength, defaultMaxBodyBytes)
	req.Body.Close()
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, "", nil, &revisionError{Where: "a body over " + strconv.Itoa(defaultMaxBodyBytes) + " bytes", Want: t.revision}
	}
	if err != nil {
		return nil, "", nil, fmt.Errorf("mcphttp: reading the request body: %w", err)
	}
	stamped, asks, asked, err := t.stampBody(raw, tc)
	if err != nil {
		return nil, "", nil, err
	}
	out.Body = io.NopCloser(bytes.NewReader(stamped))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(stamped)), nil }
	out.ContentLength = int64(len(stamped))
	return out, asks, asked, nil
}

// stampBody checks every message of a JSON-RPC body and, at a stateless
// revision, inserts the revision into the _meta of each request that
// lacks it; and inserts the trace context tc into the _meta of each
// request and notification whose _meta holds neither of its keys (one
// that holds either is the caller's, and stays as it is). A params or
// _meta that is not an object gets no trace context: it never makes a
// request fail.
func (t *Transport) stampBody(raw []byte, tc tracectx.Context) (stamped []byte, asks string, asked []jsontext.Value, err error) {
	metaMember := strconv.Quote(metaProtocolVersion) + ":" + strconv.Quote(t.revision)
	trace := tc.Members()
	at := 0 // stamped is raw up to at, with the insertions before it
	insert := func(pos int, text string) {
		stamped = append(append(stamped, raw[at:pos]...), text...)
		at = pos
	}
	_, err = scanBody(raw, 0, func(m *message) error {
		if !m.hasMethod {
			return nil // a response to the server carries no revision
		}
		if m.isRequest() && asks == "" {
			asks = m.method
		}
		if m.isRequest() {
			asked = append(asked, m.id)
		}
		if m.method == methodInitialize && t.session != "" {
			return &revisionError{Where: "initialize, on the session Connect initialized already,", Want: t.revision}
		}
		if m.method == methodInitialize && m.hasProtocolVersion && (!m.protocolVersionStr || m.protocolVersion != t.revision) {
			return &revisionError{Where: "initialize's params.protocolVersion", Want: t.revision, Got: m.protocolVersion}
		}
		if m.hasMetaVersion && (!m.metaVersionStr || m.metaVersion != t.revision) {
			return &revisionError{Where: "params._meta of " + m.method, Want: t.revision, Got: m.metaVersion}
		}
		var members []string
		version := t.stateless && m.isRequest() && !m.hasMetaVersion
		if version {
			members = append(members, metaMember)
		}
		if trace != "" && !m.metaTrace {
			members = append(members, trace)
		}
		// Each message gets one insertion at most, after the last one's.
		switch inner := strings.Join(members, ","); {
		case inner == "":
		case !m.hasParams:
			insert(m.obj.start+1, `"params":{"_meta":{`+inner+`}},`)
		case !m.paramsObject:
			if version {
				return &revisionError{Where: "params of " + m.method + ", which is not an object", Want: t.revision}
			}
		case !m.hasMeta:
			insert(m.params.start+1, exchange.Leading(raw, m.params.start, `"_meta":{`+inner+`}`))
		case !m.metaObject:
			if version {
				return &revisionError{Where: "params._meta of " + m.method + ", which is not an object", Want: t.revision}
			}
		default:
			insert(m.meta.start+1, exchange.Leading(raw, m.meta.start, inner))
		}
		return nil
	}, nil)
	var re *revisionError
	if err != nil && !errors.As(err, &re) {
		err = &revisionError{Where: "a body that is not a JSON-RPC message (" + err.Error() + ")", Want: t.revision}
	}
	if err != nil {
		return nil, "", nil, err
	}
	if stamped == nil {
		return raw, asks, asked, nil
	}
	return append(stamped, raw[at:]...), asks, asked, nil
}
