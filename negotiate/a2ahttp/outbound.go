package a2ahttp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/a2acard"
	"github.com/wopneg/wopneg/internal/a2aversion"
	"github.com/wopneg/wopneg/internal/egress"
	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/internal/tracectx"
	"github.com/wopneg/wopneg/negotiate"
)

// defaultMaxCardBytes bounds the agent card Negotiate reads from a peer
// when OutboundOptions.MaxCardBytes is zero.
const defaultMaxCardBytes = 1 << 20

// OutboundOptions configures [Negotiate] and [Connect]. Only
// Sink is required; the zero value of every other field is the safe
// default.
type OutboundOptions struct {
	// Sink records the negotiation.decided event. It is required.
	Sink events.Sink
	// Subject is the host's own identity towards the peer. Nil is an
	// unauthenticated exchange, which never settles below the preferred
	// version.
	Subject *negotiate.Subject
	// Destination is where the event goes: the run the call is part of, or
	// the zero Destination for a durable host event.
	Destination negotiate.Destination
	// Client fetches the agent card. Nil means the module's egress client:
	// the address policy below checked on every address dialled, the host
	// dialled as the URL Standard reads it (the origin the record names),
	// no proxy, a redirect followed only to the same origin (at most 3),
	// 20 s for the whole fetch and 10 s to the answer's headers. A host's
	// own Client keeps its transport, so the address policy is then the
	// host's, and AllowLoopback and AllowPrivate do nothing; it still
	// follows no redirect to another origin, and a redirect it hands back
	// is not followed. The context given to Negotiate bounds the fetch
	// either way.
	Client *http.Client
	// AllowLoopback lets the egress client (a nil Client) reach loopback
	// addresses (127.0.0.0/8, ::1); without it they are refused.
	AllowLoopback bool
	// AllowPrivate lets the egress client reach private addresses (10/8,
	// 172.16/12, 192.168/16, 100.64/10, fc00::/7...); without it they are
	// refused. Link-local and cloud metadata addresses (169.254.169.254)
	// are refused whatever the options.
	AllowPrivate bool
	// MaxCardBytes bounds the card; zero means 1 MiB. A larger card is not
	// read, and the negotiation reaches no decision.
	MaxCardBytes int64
	// MaxAnswerBytes bounds how much of a peer's answer [Connect]'s
	// Transport holds while it reads whether the peer refused the version;
	// zero means 64 KiB.
	MaxAnswerBytes int64
	// ErrorLog receives the one line of a negotiation that reached no
	// decision ("negotiation reached no decision", at slog.LevelWarn); nil
	// means slog.Default().
	ErrorLog *slog.Logger
	// Requested is the version the host asks for; empty means its
	// preferred one. The card is always fetched at the preferred version;
	// the decision then weighs Requested against what the card offers: a
	// version above what the peer offers settles lower only as the
	// decision allows (an authenticated caller, above the floor), and one
	// the host does not offer, or one below its floor, is refused.
	Requested string
	// TraceContext, when set, gives the W3C trace context that every card
	// fetch of the negotiation (the retry naming no version included) and
	// every request of [Connect]'s Transport carries, in its traceparent
	// and tracestate headers and, on a SendMessage or
	// SendStreamingMessage, in Message.metadata.openwop (see "Trace
	// context" in the package doc). Nil stamps none.
	TraceContext negotiate.TraceContext
}

// Negotiate settles the A2A version a host speaks to the peer at peerURL,
// as the reference host does before it sends anything: it fetches the
// peer's agent card (GET <peer>/.well-known/agent-card.json, A2A-Version set
// to the preferred version), takes the versions the card offers, decides
// with n for opts.Subject and records the decision. A peer that refuses
// that version on its card (an error answer carrying -32009 or an
// ErrorInfo VERSION_NOT_SUPPORTED, as this module's inbound side answers
// for a version it does not serve) is asked again for the card naming no
// version, which is its preferred version's card (the v2 card rule), and
// that card is decided. It returns the
// outcome, the versions the card offered, and an error that is nil exactly
// when the outcome is accepted and recorded.
//
// A card is the peer's answer, and is decided and recorded even when it
// offers no version the host accepts (a card whose versions are all in
// another form offers nothing, which is refused below-floor, as the
// reference host reads it). An attempt that gets no card is not: it
// records nothing, logs one line, and returns the zero Outcome and an
// error that unwraps to an internal_error *errors.Error whose
// details.reason names the failure (see "An attempt that reached no
// decision" in the package doc). When the outcome is refused the error is
// the refusal (an interop_version_unsupported or, under a required audit,
// internal_error *errors.Error; the former says what the card offered, in
// its message and in details.offered, and the fix when the host's missing
// Subject refused it), joined with the *negotiate.AuditError
// when the event was not recorded; when the outcome is accepted but its
// event was not recorded and the policy does not require it, it is the
// *negotiate.AuditError alone, and the caller decides whether to proceed.
// Nothing is sent at a refused version: only an accepted outcome makes a
// [Transport].
func Negotiate(ctx context.Context, n *negotiate.Negotiator, peerURL string, opts OutboundOptions) (negotiate.Outcome, []string, error) {
	adv, err := exchange.Check("a2ahttp", n, opts.Sink, facets.ProtocolA2A)
	if err != nil {
		return negotiate.Outcome{}, nil, err
	}
	if opts.MaxCardBytes < 0 {
		return negotiate.Outcome{}, nil, fmt.Errorf("a2ahttp: OutboundOptions.MaxCardBytes %d is negative", opts.MaxCardBytes)
	}
	if opts.MaxAnswerBytes < 0 {
		return negotiate.Outcome{}, nil, fmt.Errorf("a2ahttp: OutboundOptions.MaxAnswerBytes %d is negative", opts.MaxAnswerBytes)
	}
	// RFC 0242: outbound, requested is what the host asks the peer for,
	// and absent a choice that is its preferred version.
	requested := cmp.Or(opts.Requested, adv.Preferred)
	rec := exchange.Recorder{Pkg: "a2ahttp", N: n, Sink: opts.Sink, Log: opts.ErrorLog}
	// The card, asked for at the preferred version within the bounds (and
	// again naming none when the peer refuses that version); the error of
	// an attempt that got no card is an *egress.Error.
	card := a2acard.Fetch{Client: egressOf(&opts).Fetcher(), Max: cmp.Or(opts.MaxCardBytes, defaultMaxCardBytes), Trace: opts.TraceContext}
	offers, err := card.Offers(ctx, peerURL, adv.Preferred)
	if err != nil {
		return negotiate.Outcome{}, nil, rec.NoDecision(ctx, facets.ProtocolA2A, peerURL, err)
	}
	offer := negotiate.Offer{Protocol: facets.ProtocolA2A, Peer: peerURL, Requested: requested, PeerVersions: offers}
	outcome, auditErr := rec.DecideAndRecord(ctx, opts.Destination, opts.Subject, offer)
	if outcome.Err() == nil {
		return outcome, offers, auditErr
	}
	return outcome, offers, errors.Join(exchange.PeerRefusal(outcome, offers, ""), auditErr)
}

// egressOf is how o reaches the peer.
func egressOf(o *OutboundOptions) exchange.Egress {
	return exchange.Egress{Client: o.Client, AllowLoopback: o.AllowLoopback, AllowPrivate: o.AllowPrivate}
}

// init hands package a2acard the one reader of A2A answers, for a card
// request's refusal.
func init() {
	a2acard.Refuses = func(body []byte) bool {
		return read(body, true, false).Verdict == exchange.Refused
	}
}

// Transport is an [http.RoundTripper] for calls to a peer at a negotiated
// version: it stamps A2A-Version with that version on every request, and
// refuses, sending nothing, a request that names another one in its header
// (in any case, or as a comma-separated list) or its ?A2A-Version= query
// parameter. The version goes once, in the header: the copy it sends
// holds no query parameter of that name, which a peer would read as a
// second value beside the header. An SDK client that stamps its own
// version (a2a-go does) can use it as its http.Client's Transport: if the
// SDK picked another version than the one negotiated, nothing reaches the
// peer.
//
// It reads each answer as far as it must to see whether the peer refused
// the version after all (see "The record follows the peer" in the package
// doc): such an answer is not handed back; RoundTrip returns an error
// that is an interop_version_unsupported *errors.Error, and a Transport
// of [Connect] has recorded the refusal first.
//
// A Transport from [Connect] with OutboundOptions.TraceContext set also
// carries the trace context in the headers of every request and in the
// message of a SendMessage or SendStreamingMessage (see "Trace context"
// in the package doc). The zero Transport stamps no version: it sends
// nothing and refuses every request.
type Transport struct {
	base      http.RoundTripper
	version   string
	maxAnswer int
	record    *exchange.Peer         // nil: NewTransport's, which records nothing
	trace     negotiate.TraceContext // Connect's OutboundOptions.TraceContext; nil: none
}

// NewTransport returns a Transport for an accepted A2A outcome o, that
// sends through base. A nil base is the module's egress transport of the
// zero policy: public addresses only (no loopback, no private, never
// link-local or metadata), the host dialled as the URL Standard reads it,
// no proxy; a host whose peer is on loopback or a private address uses
// [Connect] with AllowLoopback or AllowPrivate, or passes its own base,
// whose address policy is then its own. A refused outcome,
// another protocol's, or one without a well-formed version is an error:
// there is nothing a request may be sent at.
//
// Its Transport records nothing: a peer's runtime refusal of the version
// is returned as an error, and the record of it is the caller's. Use
// [Connect] for the record to follow the peer.
func NewTransport(o negotiate.Outcome, base http.RoundTripper) (*Transport, error) {
	if err := exchange.Sendable("a2ahttp", o, facets.ProtocolA2A); err != nil {
		return nil, err
	}
	if base == nil {
		base = exchange.Egress{}.Base()
	}
	return &Transport{base: base, version: o.Version, maxAnswer: defaultMaxAnswerBytes}, nil
}

// Connect is [Negotiate] that keeps what it settled for the calls that
// follow: it returns the outcome and, when it is accepted, a [Transport]
// that stamps its version and records what the peer does with it: a call
// the peer refuses for its version (-32009 VersionNotSupportedError, or an
// ErrorInfo with reason VERSION_NOT_SUPPORTED) is recorded as a refused
// negotiation.decided, requested the version, reason below-floor when
// every version the refusal lists (its ErrorInfo's supportedVersions) is
// below the floor and unsupported otherwise, as mcphttp's records one, with n
// for opts.Subject at opts.Destination through opts.Sink, so that the
// audit holds the card's acceptance and the runtime refusal, the later of
// which says what the peer did. The Transport sends through
// opts.Client's Transport (http.DefaultTransport when that is nil), or,
// with a nil Client, the egress transport of opts.AllowLoopback and
// opts.AllowPrivate, the policy the card was fetched under. The error is
// Negotiate's; a refused outcome, or none, comes with no Transport.
func Connect(ctx context.Context, n *negotiate.Negotiator, peerURL string, opts OutboundOptions) (*Transport, negotiate.Outcome, error) {
	o, _, err := Negotiate(ctx, n, peerURL, opts)
	if o.Err() != nil {
		return nil, o, err
	}
	return recordingTransport(n, peerURL, o, &opts), o, err
}

// recordingTransport is the Transport of Connect for o, an accepted
// outcome that Negotiate settled with n and opts for peerURL.
func recordingTransport(n *negotiate.Negotiator, peerURL string, o negotiate.Outcome, opts *OutboundOptions) *Transport {
	return &Transport{base: egressOf(opts).Base(), version: o.Version, maxAnswer: int(cmp.Or(opts.MaxAnswerBytes, defaultMaxAnswerBytes)), trace: opts.TraceContext,
		record: &exchange.Peer{Recorder: exchange.Recorder{Pkg: "a2ahttp", N: n, Sink: opts.Sink, Log: opts.ErrorLog}, URL: peerURL, Subject: opts.Subject, Dest: opts.Destination}}
}

// Version returns the version t stamps.
func (t *Transport) Version() string { return t.version }

// ErrVersionConflict is wrapped by the error of every request a
// [Transport] refuses to send: it names a version other than the
// negotiated one. Nothing of it was sent.
var ErrVersionConflict = errors.New("a2ahttp: the request names another version than the negotiated one; nothing was sent")

// versionConflictError is a request Transport refused, and what it named.
type versionConflictError struct {
	// negotiated is the version the Transport stamps.
	negotiated string
	// sent are the values the request named, header lines before query
	// parameters.
	sent []string
}

// Error says what the request named and what was negotiated, and that
// nothing was sent, so that the caller knows the peer saw nothing.
func (e *versionConflictError) Error() string {
	return fmt.Sprintf("a2ahttp: the request names %s %s, but %s was negotiated with this peer; nothing was sent",
		headerName, a2aversion.QuoteList(e.sent), e.negotiated)
}

// Unwrap returns ErrVersionConflict.
func (e *versionConflictError) Unwrap() error { return ErrVersionConflict }

// errNoTransport is a request through a zero Transport.
var errNoTransport = exchange.Unmade("a2ahttp", "Transport", "NewTransport or Connect")

// RoundTrip sends req with A2A-Version set to the negotiated version, or
// refuses it with an error wrapping [ErrVersionConflict] when it names
// another. As the
// RoundTripper contract requires, req is not modified (a copy is sent when
// its header must change) and its body is closed even on a refusal.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.base == nil { // the zero Transport: no version to stamp
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, errNoTransport
	}
	lines := exchange.HeaderValues(req.Header, canonicalHeader)
	var params []string
	if req.URL != nil && req.URL.RawQuery != "" {
		params = queryValues(req.URL.RawQuery)
	}
	tc := tracectx.From(req.Context(), t.trace)
	// stamped: the one line is the version, under the canonical key.
	stamped := len(lines) == 1 && lines[0] == t.version && len(req.Header[canonicalHeader]) == 1 && tc.Parent == ""
	if stamped && params == nil {
		return t.send(req) // the common case.
	}
	sent := slices.Concat(lines, params)
	for _, e := range a2aversion.Listed(strings.Join(sent, ",")) {
		if e != t.version {
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, &versionConflictError{negotiated: t.version, sent: sent}
		}
	}
	r2 := req.Clone(req.Context())
	r2.Header = exchange.SetHeader(r2.Header, canonicalHeader, t.version)
	if params != nil {
		r2.URL.RawQuery = withoutVersion(r2.URL.RawQuery)
	}
	if err := stampTrace(r2, tc); err != nil {
		return nil, err
	}
	return t.send(r2)
}

// send sends req through the base and reads the answer, with the engine's
// one reader, as far as it must to see whether the peer refused the
// version: a refusal is recorded (when t records) and returned as an
// error, any other answer handed back whole, the bytes read included. A
// stream handed back is followed as the caller reads it: a2a-go yields
// its events one by one, so a refusal after its first result reaches the
// caller as an error, and a Transport that records records it then.
func (t *Transport) send(req *http.Request) (*http.Response, error) {
	resp, err := t.record.Send(t.base, req)
	if err != nil {
		return nil, err
	}
	var refusal exchange.Reading
	stream := exchange.IsEventStream(resp.Header.Get("Content-Type"))
	var later func()
	if t.record != nil && stream {
		later = func() { _, _ = t.record.Refused(req.Context(), facets.ProtocolA2A, t.version, refusal.Listed) }
	}
	v, err := exchange.Read(resp, int64(t.maxAnswer), func(b []byte, complete bool) exchange.Verdict {
		refusal = read(b, complete, stream)
		return refusal.Verdict
	}, later)
	if err != nil {
		return nil, err
	}
	if v == exchange.Refused {
		return nil, t.refused(req, refusal.Listed)
	}
	return resp, nil
}

// refused records the peer's runtime refusal of the version, when t
// records, and returns the error the caller gets: the refusal's
// interop_version_unsupported (or, under a required audit that could not
// be written, internal_error), saying what the refusal held offered
// (exchange.PeerRefusal), joined with the AuditError of a record that
// failed. listed is what the refusal lists of the versions the peer
// serves.
func (t *Transport) refused(req *http.Request, listed []string) error {
	where := fmt.Sprintf("a2ahttp: %s refused A2A-Version %s at runtime, after its card offered it", egress.Where(req.URL), t.version)
	if t.record == nil {
		return fmt.Errorf("%s: %w", where, wperrors.New(wperrors.InteropVersionUnsupported, "a2a negotiation refused: unsupported").
			WithDetail("protocol", string(facets.ProtocolA2A)).WithDetail("requested", t.version).WithDetail("reason", events.ReasonUnsupported))
	}
	o, auditErr := t.record.Refused(req.Context(), facets.ProtocolA2A, t.version, listed)
	return errors.Join(fmt.Errorf("%s: %w", where, exchange.PeerRefusal(o, listed, "")), auditErr)
}
