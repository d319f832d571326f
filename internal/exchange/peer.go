package exchange

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/egress"
	"github.com/wopneg/wopneg/negotiate"
)

// Peer is what an outbound Transport from Connect keeps of the peer it
// negotiated with: where its calls may go, and how the peer's refusal at
// runtime is recorded. Both rules are here once for every Transport:
//
//   - a call goes only to the peer's origin: a redirect to another origin,
//     followed by whatever http.Client the host wraps the Transport in,
//     reaches the Transport as a new call, and is refused unsent, so that
//     no stamped call reaches another origin and no other origin's
//     refusal is recorded under this peer's digest;
//   - the runtime refusal is recorded with a context that outlives the
//     caller (see [Recorder]).
type Peer struct {
	Recorder
	// URL is the peer's URL as Connect was given it.
	URL string
	// Subject and Dest are the negotiation's.
	Subject *negotiate.Subject
	Dest    negotiate.Destination
}

// errOtherOrigin is a call a Transport refused because it goes to another
// origin than the peer's.
var errOtherOrigin = errors.New("the call goes to another origin than the peer the Transport negotiated with (a redirect its client followed); nothing was sent")

// Send sends req through rt, when it goes to the peer's origin; a nil p
// (a Transport that knows no peer) sends anything. Failures are typed as
// egress.RoundTrip types them.
func (p *Peer) Send(rt http.RoundTripper, req *http.Request) (*http.Response, error) {
	if p != nil {
		want, err := events.Origin(p.URL)
		if got, _ := events.Origin(req.URL.String()); err != nil || got != want {
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, &egress.Error{Kind: egress.RedirectRefused, Err: errOtherOrigin}
		}
	}
	return egress.RoundTrip(rt, req)
}

// Refused records the peer's refusal, at runtime, of requested, the
// version the Transport stamps, whose refusal listed listed: the decision
// on that listing, by [RefusalOffer]. The peer is p's.
func (p *Peer) Refused(ctx context.Context, proto facets.Protocol, requested string, listed []string) (negotiate.Outcome, error) {
	offer := RefusalOffer(p.N, p.Subject, negotiate.Offer{Protocol: proto, Peer: p.URL, Requested: requested}, listed)
	return p.DecideAndRecord(ctx, p.Dest, p.Subject, offer)
}

// RefusalOffer returns offer as the record of a peer's refusal of the
// version offer requests, a refusal that listed listed: refused
// below-floor when the decision finds every listed version below the
// floor, as an offer of them would have been; otherwise unsupported, the
// offer of a peer that serves none of the host's versions ([Unserved]).
// A listing that holds no version of the protocol (nothing, or only
// strings that are not versions) is not below the floor, though the
// decision, for which every member of an empty set is below it, would
// say so. Never an acceptance: the peer refused.
//
// Every Transport (MCP, A2A over HTTP and over gRPC), the seams and MCP's
// discover and initialize record a peer's refusal by this one rule; the
// protocols supply only what the refusal lists.
func RefusalOffer(n *negotiate.Negotiator, subject *negotiate.Subject, offer negotiate.Offer, listed []string) negotiate.Offer {
	offer.PeerVersions = listed
	isVersion := func(v string) bool {
		_, err := facets.ParseVersion(offer.Protocol, v)
		return err == nil
	}
	if o, _ := n.Decide(subject, offer); o.Reason == events.ReasonBelowFloor && slices.ContainsFunc(listed, isVersion) {
		return offer
	}
	offer.PeerVersions = []string{Unserved(offer.Protocol)}
	return offer
}

// Egress is how an outbound negotiation reaches its peer: the host's own
// client, or the module's egress client of an address policy (public
// addresses only, loopback and private ones where allowed). The module's
// clients and transports are made once per policy and shared by every
// negotiation and Transport of both protocols, so that none leaves idle
// connections of its own behind.
type Egress struct {
	Client                      *http.Client
	AllowLoopback, AllowPrivate bool
}

// sharedEgress holds the clients and transports of the four address
// policies, made once each, keyed by their options.
var sharedEgress = func() map[egress.Options]func() (*http.Client, http.RoundTripper) {
	out := make(map[egress.Options]func() (*http.Client, http.RoundTripper), 4)
	for _, o := range []egress.Options{{}, {AllowLoopback: true}, {AllowPrivate: true}, {AllowLoopback: true, AllowPrivate: true}} {
		out[o] = sync.OnceValues(func() (*http.Client, http.RoundTripper) {
			c, _ := egress.NewClient(o) // the zero bounds are valid
			return c, egress.NewTransport(o)
		})
	}
	return out
}()

func (e Egress) shared() (*http.Client, http.RoundTripper) {
	return sharedEgress[egress.Options{AllowLoopback: e.AllowLoopback, AllowPrivate: e.AllowPrivate}]()
}

// Fetcher is the client a negotiation fetch (a card, server/discover,
// initialize) is sent with.
func (e Egress) Fetcher() *http.Client {
	if e.Client != nil {
		return e.Client
	}
	c, _ := e.shared()
	return c
}

// Base is the RoundTripper a Transport sends through: the host's client's
// (http.DefaultTransport when it names none), or the shared transport of
// the policy.
func (e Egress) Base() http.RoundTripper {
	if e.Client != nil {
		return cmp.Or[http.RoundTripper](e.Client.Transport, http.DefaultTransport)
	}
	_, t := e.shared()
	return t
}
