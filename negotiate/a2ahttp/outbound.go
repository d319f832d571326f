package a2ahttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/strictjson"
	"github.com/wopneg/wopneg/negotiate"
)

// DefaultMaxCardBytes bounds the agent card [Outbound] reads from a peer.
const DefaultMaxCardBytes = 1 << 20

// Outbound negotiates the A2A version a host speaks to a peer it calls, as
// the reference host does before it sends anything: it fetches the peer's
// agent card, takes the versions the card offers, decides with the host's
// own outbound Subject and records the event. The zero value is not
// usable: Negotiator and Sink are required, and Negotiate says so.
type Outbound struct {
	// Negotiator decides; it must advertise a2a.
	Negotiator *negotiate.Negotiator
	// Sink records the negotiation.decided event of every negotiation.
	Sink events.Sink
	// Destination is where the event goes: the run the call is part of, or
	// the zero Destination for a durable host event.
	Destination negotiate.Destination
	// Subject is the host's own identity towards the peer. Nil is an
	// unauthenticated exchange, which never settles below the preferred
	// version.
	Subject *negotiate.Subject
	// Client fetches the agent card; nil means http.DefaultClient. The
	// context given to Negotiate bounds the fetch.
	Client *http.Client
	// Requested is the version to ask for; empty means the preferred one.
	// A version above what the peer offers settles lower only as the
	// decision allows (an authenticated caller, above the floor).
	Requested string
	// MaxCardBytes bounds the card; zero means DefaultMaxCardBytes. A
	// larger card is not read, and offers nothing.
	MaxCardBytes int64
}

// Peer is the result of one outbound negotiation.
type Peer struct {
	// URL is the peer URL as given.
	URL string
	// Offers are the versions its agent card offers (see [CardOffers]);
	// empty when the card could not be read.
	Offers []string
	// Outcome is the decision, after recording: refused with internal_error
	// when the policy requires the audit and the event was not recorded.
	Outcome negotiate.Outcome
	// CardErr is why the card yielded no offers, if it did not; the
	// negotiation then went ahead with none, which refuses it.
	CardErr error
}

// Transport returns a [Transport] over base for the negotiated version, or
// an error when the negotiation was refused.
func (p Peer) Transport(base http.RoundTripper) (*Transport, error) {
	return NewTransport(base, p.Outcome)
}

// CardError says why a peer's agent card yielded no offers.
type CardError struct {
	// URL is the card's URL, with any password redacted.
	URL string
	// StatusCode is the HTTP status of a response other than 200; zero
	// when the failure was something else.
	StatusCode int
	// Err is the failure: the request's, the body's, or the card's content.
	Err error
}

// Error names the card and what went wrong with it; the URL is redacted, so
// the message is safe to log.
func (e *CardError) Error() string {
	if e.StatusCode != 0 {
		return fmt.Sprintf("a2ahttp: agent card %s: HTTP status %d", e.URL, e.StatusCode)
	}
	return fmt.Sprintf("a2ahttp: agent card %s: %v", e.URL, e.Err)
}

// Unwrap returns Err.
func (e *CardError) Unwrap() error { return e.Err }

// ErrNoOffers is the Err of a [CardError] for a card that names no A2A
// version the way [CardOffers] reads them.
var ErrNoOffers = errors.New("the card offers no A2A version: no supportedInterfaces[].protocolVersion is major.minor, and it has no protocolVersion to fall back on")

// Negotiate fetches the agent card of peerURL, decides the version to
// speak to it and records the decision. It always records one event when
// o is configured, even when the card cannot be fetched (the peer then
// offers nothing, which is refused below-floor, as the reference host
// does).
//
// The error is nil only when the outcome is accepted and recorded. When
// the outcome is refused it is the refusal (an interop_version_unsupported
// or, under a required audit, internal_error *errors.Error), joined with
// the CardError and the *negotiate.AuditError when there are any; when the
// outcome is accepted but its event was not recorded and the policy does
// not require it, it is the *negotiate.AuditError alone, and the caller
// decides whether to proceed.
func (o *Outbound) Negotiate(ctx context.Context, peerURL string) (Peer, error) {
	if o.Negotiator == nil {
		return Peer{URL: peerURL}, ErrNoNegotiator
	}
	if o.Sink == nil {
		return Peer{URL: peerURL}, ErrSinkRequired
	}
	if o.MaxCardBytes < 0 {
		return Peer{URL: peerURL}, fmt.Errorf("a2ahttp: Outbound.MaxCardBytes %d is negative", o.MaxCardBytes)
	}
	adv, ok := o.Negotiator.Facets().Lookup(facets.ProtocolA2A)
	if !ok {
		return Peer{URL: peerURL}, ErrNoA2A
	}
	requested := o.Requested
	if requested == "" {
		// RFC 0242: outbound, requested is what the host asks the peer
		// for, and absent a choice that is its preferred version.
		requested = adv.Preferred
	}
	p := Peer{URL: peerURL}
	var body []byte
	body, p.CardErr = o.fetchCard(ctx, peerURL, adv.Preferred)
	if p.CardErr == nil {
		var err error
		if p.Offers, err = CardOffers(body); err != nil {
			p.CardErr = &CardError{URL: cardURLForError(peerURL), Err: err}
		}
	}
	offer := negotiate.Offer{Protocol: facets.ProtocolA2A, Peer: peerURL, Requested: requested, PeerVersions: p.Offers}
	outcome, auditErr := o.Negotiator.DecideAndRecord(ctx, o.Sink, o.Destination, o.Subject, offer)
	p.Outcome = outcome
	if outcome.Err() == nil {
		if auditErr != nil {
			return p, auditErr
		}
		return p, nil
	}
	return p, errors.Join(outcome.Err(), p.CardErr, auditErr)
}

// fetchCard GETs the peer's agent card, asking for version, within the
// bound.
func (o *Outbound) fetchCard(ctx context.Context, peerURL, version string) ([]byte, error) {
	u, err := url.Parse(peerURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &CardError{URL: cardURLForError(peerURL), Err: fmt.Errorf("peer URL is not an absolute http(s) URL")}
	}
	cardURL := u.JoinPath(DefaultCardPath)
	fail := func(status int, err error) error {
		return &CardError{URL: cardURL.Redacted(), StatusCode: status, Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cardURL.String(), nil)
	if err != nil {
		return nil, fail(0, err)
	}
	req.Header.Set(HeaderName, version)
	req.Header.Set("Accept", "application/json")
	client := o.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fail(0, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fail(resp.StatusCode, nil)
	}
	max := o.MaxCardBytes
	if max == 0 {
		max = DefaultMaxCardBytes
	}
	body, err := readBounded(resp.Body, max)
	if err != nil {
		return nil, fail(0, err)
	}
	return body, nil
}

// cardURLForError names the card of a peer URL that may not parse.
func cardURLForError(peerURL string) string {
	if u, err := url.Parse(peerURL); err == nil {
		return u.JoinPath(DefaultCardPath).Redacted()
	}
	return "of a peer URL that does not parse"
}

// CardOffers returns the A2A versions an agent card offers: every
// supportedInterfaces[].protocolVersion that is major.minor, in the card's
// order, each once. A card with none (an A2A 0.3 card) offers its
// top-level protocolVersion cut to major.minor ("0.3.0" offers "0.3").
// That is how the reference host reads a card; versions in any other form
// ("1.0.1", "v1") are not offers. A card that is not a JSON object, or
// that offers nothing, is an error.
func CardOffers(card []byte) ([]string, error) {
	var offers []string
	var fallback string
	r := strictjson.NewReader(card, 0)
	err := r.Object(func(key string) error {
		switch key {
		case "supportedInterfaces":
			if k, err := r.Next(); err != nil || k == strictjson.Null {
				return err
			}
			return r.Array(func(int) error {
				return r.Object(func(key string) error {
					if v, ok := stringValue(r, key, "protocolVersion"); ok && isMajorMinor(v) && !slices.Contains(offers, v) {
						offers = append(offers, v)
					}
					return nil
				})
			})
		case "protocolVersion":
			fallback, _ = stringValue(r, key, "protocolVersion")
		}
		return nil
	})
	if err == nil {
		err = r.End()
	}
	if err != nil {
		return nil, fmt.Errorf("the card is not a JSON agent card: %w", err)
	}
	if len(offers) > 0 {
		return offers, nil
	}
	if major, rest, ok := strings.Cut(fallback, "."); ok {
		minor, _, _ := strings.Cut(rest, ".")
		if mm := major + "." + minor; isMajorMinor(mm) {
			return []string{mm}, nil
		}
	}
	return nil, ErrNoOffers
}

// stringValue reads the value of member key when key is want and the
// value is a string; anything else (a number, null) is not a version, and
// is left for the reader to skip.
func stringValue(r *strictjson.Reader, key, want string) (string, bool) {
	if key != want {
		return "", false
	}
	if k, err := r.Next(); err != nil || k != strictjson.String {
		return "", false
	}
	s, err := r.String()
	return s, err == nil
}

// isMajorMinor matches the facet pattern ^[0-9]+\.[0-9]+$.
func isMajorMinor(s string) bool {
	major, minor, ok := strings.Cut(s, ".")
	return ok && allDigits(major) && allDigits(minor)
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Transport is an [http.RoundTripper] for calls to a peer at a negotiated
// version: it stamps A2A-Version with that version on every request, and
// refuses, sending nothing, a request that names another one in its header
// (in any case, or as a comma-separated list) or its ?A2A-Version= query
// parameter. An SDK client that stamps its own version (a2a-go does) can
// use it as its http.Client's Transport: if the SDK picked another version
// than the one negotiated, nothing reaches the peer.
type Transport struct {
	base    http.RoundTripper
	version string
}

// NewTransport returns a Transport over base (nil means
// http.DefaultTransport) for an accepted A2A outcome. A refused outcome,
// another protocol's, or one without a well-formed version is an error:
// there is nothing a request may be sent at.
func NewTransport(base http.RoundTripper, o negotiate.Outcome) (*Transport, error) {
	if o.Err() != nil {
		return nil, fmt.Errorf("a2ahttp: no transport for a refused negotiation: %w", o.Err())
	}
	if o.Protocol != facets.ProtocolA2A {
		return nil, fmt.Errorf("a2ahttp: no transport for a %q negotiation", o.Protocol)
	}
	if _, err := facets.ParseVersion(facets.ProtocolA2A, o.Version); err != nil {
		return nil, fmt.Errorf("a2ahttp: no transport for the outcome: %w", err)
	}
	if base == nil {
		base = http.DefaultTransport
	}
	return &Transport{base: base, version: o.Version}, nil
}

// Version returns the version t stamps.
func (t *Transport) Version() string { return t.version }

// VersionConflictError is the error of a request [Transport] refused: it
// named a version other than the negotiated one.
type VersionConflictError struct {
	// Negotiated is the version the Transport stamps.
	Negotiated string
	// Sent are the values the request named, header lines before query
	// parameters.
	Sent []string
}

// Error says what the request named and what was negotiated, and that
// nothing was sent, so that the caller knows the peer saw nothing.
func (e *VersionConflictError) Error() string {
	return fmt.Sprintf("a2ahttp: the request names %s %s, but %s was negotiated with this peer; nothing was sent",
		HeaderName, quoteList(e.Sent), e.Negotiated)
}

// RoundTrip sends req with A2A-Version set to the negotiated version, or
// refuses it with a [*VersionConflictError] when it names another. As the
// RoundTripper contract requires, req is not modified (a copy is sent when
// its header must change) and its body is closed even on a refusal.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	lines := req.Header[canonicalHeader]
	other := otherSpellings(req.Header)
	var params []string
	if req.URL != nil && req.URL.RawQuery != "" {
		params = queryValues(req.URL.RawQuery)
	}
	if len(lines) == 1 && lines[0] == t.version && other == nil && params == nil {
		return t.base.RoundTrip(req) // already stamped, the common case.
	}
	sent := slices.Concat(lines, other, params)
	for _, v := range sent {
		for elem := range strings.SplitSeq(v, ",") {
			if e := trimOWS(elem); e != "" && e != t.version {
				if req.Body != nil {
					req.Body.Close()
				}
				return nil, &VersionConflictError{Negotiated: t.version, Sent: sent}
			}
		}
	}
	if len(lines) == 1 && lines[0] == t.version && other == nil {
		return t.base.RoundTrip(req) // a matching query parameter needs no change.
	}
	r2 := req.Clone(req.Context())
	if r2.Header == nil {
		r2.Header = make(http.Header, 1)
	}
	for k := range r2.Header {
		if strings.EqualFold(k, HeaderName) {
			delete(r2.Header, k)
		}
	}
	r2.Header.Set(HeaderName, t.version)
	return t.base.RoundTrip(r2)
}
