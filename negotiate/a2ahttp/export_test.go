package a2ahttp

import (
	"context"
	"errors"
	"net/http"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/internal/a2acard"
	"github.com/wopneg/wopneg/internal/egress"
	"github.com/wopneg/wopneg/negotiate"
)

// The names the tests use for the protocol facts and bounds the package
// keeps unexported: they are not part of the API.
const (
	HeaderName          = headerName
	DefaultCardPath     = defaultCardPath
	DefaultMaxBodyBytes = defaultMaxBodyBytes
)

// ErrNoVersion is the failure of an object that names no A2A version at
// all, for the tests.
var ErrNoVersion = a2acard.ErrNoVersion

// CardOffers returns the A2A versions an agent card offers, over every
// binding, for the tests.
func CardOffers(card []byte) ([]string, error) { return a2acard.Offers(card, "") }

// VersionConflictError names the unexported error type for errors.As in
// the tests.
type VersionConflictError = versionConflictError

// Outbound keeps the tests' tables in one value per negotiation: its
// Negotiate calls the package's Negotiate with these fields.
type Outbound struct {
	Negotiator   *negotiate.Negotiator
	Sink         events.Sink
	Destination  negotiate.Destination
	Subject      *negotiate.Subject
	Client       *http.Client
	Requested    string
	MaxCardBytes int64
	// AllowLoopback is OutboundOptions.AllowLoopback.
	AllowLoopback bool
}

// Peer is what the tests read of one outbound negotiation.
type Peer struct {
	URL     string
	Offers  []string
	Outcome negotiate.Outcome
	CardErr error
}

// Negotiate calls Negotiate.
func (o *Outbound) Negotiate(ctx context.Context, peerURL string) (Peer, error) {
	outcome, offers, err := Negotiate(ctx, o.Negotiator, peerURL, OutboundOptions{
		Sink: o.Sink, Destination: o.Destination, Subject: o.Subject, Client: o.Client, Requested: o.Requested, MaxCardBytes: o.MaxCardBytes,
		AllowLoopback: o.AllowLoopback,
	})
	p := Peer{URL: peerURL, Offers: offers, Outcome: outcome}
	if e := (*egress.Error)(nil); errors.As(err, &e) {
		p.CardErr = err
	}
	return p, err
}

// Transport calls NewTransport for p's outcome.
func (p Peer) Transport(base http.RoundTripper) (*Transport, error) {
	return NewTransport(p.Outcome, base)
}

// RecordingTransport is the Transport Connect makes for o, an accepted
// outcome, without negotiating it first.
func RecordingTransport(n *negotiate.Negotiator, peerURL string, o negotiate.Outcome, opts OutboundOptions) *Transport {
	return recordingTransport(n, peerURL, o, &opts)
}
