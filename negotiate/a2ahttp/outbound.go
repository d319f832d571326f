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
	"github.com/wopneg/wopneg/internal/adapter"
	"github.com/wopneg/wopneg/internal/strictjson"
	"github.com/wopneg/wopneg/negotiate"
)

// defaultMaxCardBytes bounds the agent card Negotiate reads from a peer
// when OutboundOptions.MaxCardBytes is zero.
const defaultMaxCardBytes = 1 << 20

// OutboundOptions configures [Negotiate]. Only Sink is required.
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
	// Client fetches the agent card; nil means http.DefaultClient. The
	// context given to Negotiate bounds the fetch.
	Client *http.Client
	// MaxCardBytes bounds the card; zero means 1 MiB. A larger card is not
	// read, and offers nothing.
	MaxCardBytes int64
	// Requested is the version the host asks for; empty means its
	// preferred one. The card is always fetched at the preferred version;
	// the decision then weighs Requested against what the card offers: a
	// version above what the peer offers settles lower only as the
	// decision allows (an authenticated caller, above the floor), and one
	// the host does not offer, or one below its floor, is refused.
	Requested string
}

// ErrNoOffers is wrapped by the error of a [Negotiate] whose peer's agent
// card yielded no A2A version: it could not be fetched, is not a JSON agent
// card, or names no version the way the reference host reads one (every
// supportedInterfaces[].protocolVersion that is major.minor; with none, the
// top-level protocolVersion of an A2A 0.3 card cut to major.minor). The
// peer then offers nothing, which the decision refuses.
var ErrNoOffers = errors.New("a2ahttp: the peer's agent card offers no A2A version")

// cardError says why a peer's agent card yielded no offers. It wraps
// ErrNoOffers and the underlying failure.
type cardError struct {
	url    string // the card's URL, with any password redacted
	status int    // the HTTP status of an answer other than 200, else zero
	err    error  // the failure: the request's, the body's, or the card's content
}

// Error names the card and what went wrong with it; the URL is redacted, so
// the message is safe to log.
func (e *cardError) Error() string {
	if e.status != 0 {
		return fmt.Sprintf("a2ahttp: agent card %s: HTTP status %d", e.url, e.status)
	}
	return fmt.Sprintf("a2ahttp: agent card %s: %v", e.url, e.err)
}

// Unwrap returns ErrNoOffers and the underlying failure.
func (e *cardError) Unwrap() []error { return []error{ErrNoOffers, e.err} }

// errNoVersion is the failure of a card that names no A2A version.
var errNoVersion = errors.New("no supportedInterfaces[].protocolVersion is major.minor, and it has no protocolVersion to fall back on")

// Negotiate settles the A2A version a host speaks to the peer at peerURL,
// as the reference host does before it sends anything: it fetches the
// peer's agent card (GET <peer>/.well-known/agent-card.json, A2A-Version set
// to the preferred version), takes the versions the card offers, decides
// with n for opts.Subject and records the decision. It returns the
// outcome, the versions the card offered, and an error that is nil exactly
// when the outcome is accepted and recorded.
//
// It always records one event once n and opts.Sink are usable, even when
// the card cannot be fetched: the peer then offers nothing, which is
// refused below-floor, as the reference host does, and the error also
// wraps [ErrNoOffers]. When the outcome is refused the error is the
// refusal (an interop_version_unsupported or, under a required audit,
// internal_error *errors.Error), joined with the *negotiate.AuditError
// when the event was not recorded; when the outcome is accepted but its
// event was not recorded and the policy does not require it, it is the
// *negotiate.AuditError alone, and the caller decides whether to proceed.
// Nothing is sent at a refused version: only an accepted outcome makes a
// [Transport].
func Negotiate(ctx context.Context, n *negotiate.Negotiator, peerURL string, opts OutboundOptions) (negotiate.Outcome, []string, error) {
	adv, err := adapter.Check("a2ahttp", n, opts.Sink, facets.ProtocolA2A)
	if err != nil {
		return negotiate.Outcome{}, nil, err
	}
	if opts.MaxCardBytes < 0 {
		return negotiate.Outcome{}, nil, fmt.Errorf("a2ahttp: OutboundOptions.MaxCardBytes %d is negative", opts.MaxCardBytes)
	}
	requested := opts.Requested
	if requested == "" {
		// RFC 0242: outbound, requested is what the host asks the peer
		// for, and absent a choice that is its preferred version.
		requested = adv.Preferred
	}
	var offers []string
	body, cardErr := fetchCard(ctx, &opts, peerURL, adv.Preferred)
	if cardErr == nil {
		if offers, err = cardOffers(body); err != nil {
			cardErr = &cardError{url: cardURLForError(peerURL), err: err}
		}
	}
	offer := negotiate.Offer{Protocol: facets.ProtocolA2A, Peer: peerURL, Requested: requested, PeerVersions: offers}
	outcome, auditErr := n.DecideAndRecord(ctx, opts.Sink, opts.Destination, opts.Subject, offer)
	if outcome.Err() == nil {
		return outcome, offers, auditErr
	}
	return outcome, offers, errors.Join(outcome.Err(), cardErr, auditErr)
}

// fetchCard GETs the peer's agent card, asking for version, within the
// bound.
func fetchCard(ctx context.Context, o *OutboundOptions, peerURL, version string) ([]byte, error) {
	u, err := url.Parse(peerURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &cardError{url: cardURLForError(peerURL), err: errors.New("peer URL is not an absolute http(s) URL")}
	}
	cardURL := u.JoinPath(defaultCardPath)
	fail := func(status int, err error) error {
		return &cardError{url: cardURL.Redacted(), status: status, err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cardURL.String(), nil)
	if err != nil {
		return nil, fail(0, err)
	}
	req.Header.Set(headerName, version)
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
		max = defaultMaxCardBytes
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
		return u.JoinPath(defaultCardPath).Redacted()
	}
	return "of a peer URL that does not parse"
}

// cardOffers returns the A2A versions an agent card offers: every
// supportedInterfaces[].protocolVersion that is major.minor, in the card's
// order, each once. A card with none (an A2A 0.3 card) offers its
// top-level protocolVersion cut to major.minor ("0.3.0" offers "0.3").
// That is how the reference host reads a card; versions in any other form
// ("1.0.1", "v1") are not offers. A card that is not a JSON object, or
// that offers nothing, is an error.
func cardOffers(card []byte) ([]string, error) {
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
	return nil, errNoVersion
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

// NewTransport returns a Transport for an accepted A2A outcome o, that
// sends through base (nil means http.DefaultTransport). A refused outcome,
// another protocol's, or one without a well-formed version is an error:
// there is nothing a request may be sent at.
func NewTransport(o negotiate.Outcome, base http.RoundTripper) (*Transport, error) {
	if err := adapter.Sendable("a2ahttp", o, facets.ProtocolA2A); err != nil {
		return nil, err
	}
	if base == nil {
		base = http.DefaultTransport
	}
	return &Transport{base: base, version: o.Version}, nil
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
		headerName, quoteList(e.sent), e.negotiated)
}

// Unwrap returns ErrVersionConflict.
func (e *versionConflictError) Unwrap() error { return ErrVersionConflict }

// RoundTrip sends req with A2A-Version set to the negotiated version, or
// refuses it with an error wrapping [ErrVersionConflict] when it names
// another. As the
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
				return nil, &versionConflictError{negotiated: t.version, sent: sent}
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
		if strings.EqualFold(k, headerName) {
			delete(r2.Header, k)
		}
	}
	r2.Header.Set(headerName, t.version)
	return t.base.RoundTrip(r2)
}
