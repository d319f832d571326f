package negotiate

import (
	"errors"
	"fmt"
	"slices"
	"time"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/policy"
)

// ErrNotAdvertised is the Cause of a refusal for a protocol the host does
// not advertise.
var ErrNotAdvertised = errors.New("protocol not advertised")

// Decide negotiates one exchange: the caller's Subject (nil when none was
// resolved), the facets the host advertises, the offer on the table and the
// host's policy. It does no I/O and reads no clock but p's.
//
// It applies the seven rules of the decision in order (see the package
// documentation) and returns the Outcome together with the
// negotiation.decided payload that records it. Every call yields exactly one
// payload, refusals included.
//
// Decide checks the part of the facet it decides with (every offered version
// parses, none twice; preferred and floor offered; floor ≤ preferred) and
// refuses with [RuleInput] otherwise; [Compile] validates the whole facet.
func Decide(subject *Subject, advertised facets.Set, offer Offer, p policy.Policy) (Outcome, events.NegotiationDecided) {
	now := p.Time()
	adv, ok := advertised.Lookup(offer.Protocol)
	if !ok {
		return refuseInput(offer, nil, fmt.Errorf("%w: %q", ErrNotAdvertised, offer.Protocol), now)
	}
	var buf [16]facets.Version
	f, err := compileFacet(adv, buf[:0])
	if err != nil {
		return refuseInput(offer, &adv, err, now)
	}
	digest, err := peerDigest(offer.Peer)
	if err != nil {
		return refuseInput(offer, &adv, err, now)
	}
	return f.decide(subject, offer, &p, digest, now)
}

func peerDigest(peer string) (string, error) {
	if peer == "" {
		return "", nil
	}
	return events.PeerDigest(peer)
}

// facet is an advertised facet ready to decide with: every version parsed.
type facet struct {
	adv       facets.Advertised
	offered   []facets.Version
	preferred facets.Version
	floor     facets.Version
}

// compileFacet parses the decision view of a facet, appending the offered
// versions to buf, and checks what the decision relies on.
func compileFacet(a facets.Advertised, buf []facets.Version) (facet, error) {
	f := facet{adv: a, offered: buf}
	if len(a.Versions) == 0 {
		return facet{}, fmt.Errorf("%s facet offers no versions", a.Protocol)
	}
	for i, s := range a.Versions {
		v, err := facets.ParseVersion(a.Protocol, s)
		if err != nil {
			return facet{}, fmt.Errorf("%s facet, offered version %d: %w", a.Protocol, i, err)
		}
		if f.offers(v) {
			return facet{}, fmt.Errorf("%s facet offers %q twice", a.Protocol, s)
		}
		f.offered = append(f.offered, v)
	}
	var err error
	if f.preferred, err = facets.ParseVersion(a.Protocol, a.Preferred); err != nil {
		return facet{}, fmt.Errorf("%s facet, preferred version: %w", a.Protocol, err)
	}
	if f.floor, err = facets.ParseVersion(a.Protocol, a.Floor); err != nil {
		return facet{}, fmt.Errorf("%s facet, floor: %w", a.Protocol, err)
	}
	switch {
	case !f.offers(f.preferred):
		return facet{}, fmt.Errorf("%s facet does not offer its preferred version %q", a.Protocol, a.Preferred)
	case !f.offers(f.floor):
		return facet{}, fmt.Errorf("%s facet does not offer its floor %q", a.Protocol, a.Floor)
	case f.floor.Compare(f.preferred) > 0:
		return facet{}, fmt.Errorf("%s facet floor %q is above its preferred version %q", a.Protocol, a.Floor, a.Preferred)
	}
	return f, nil
}

func (f *facet) offers(v facets.Version) bool {
	for _, o := range f.offered {
		if o.Compare(v) == 0 {
			return true
		}
	}
	return false
}

// decide applies the rules to a facet that compileFacet accepted.
func (f *facet) decide(subject *Subject, offer Offer, p *policy.Policy, digest string, now time.Time) (Outcome, events.NegotiationDecided) {
	d := decision{f: f, offer: offer, digest: digest, now: now}

	// Rule 1: the candidate is what the requesting side named, or
	// preferred. A malformed request is a version the host does not speak.
	candidate, named := f.preferred, false
	malformed := false
	if offer.Requested != "" {
		v, err := facets.ParseVersion(f.adv.Protocol, offer.Requested)
		candidate, named, malformed = v, err == nil, err != nil
	}
	d.namedRequested = named

	// Rule 2: never below the floor, counter-offer or not.
	if !malformed && candidate.Compare(f.floor) < 0 {
		return d.refuse(RuleFloor, events.ReasonBelowFloor)
	}
	// Rule 3: the host must speak the candidate.
	if malformed || !f.offers(candidate) {
		return d.refuseOrCounter(RuleOffered, events.ReasonUnsupported)
	}
	// Rule 4: the highest version both sides speak, between the floor and
	// the candidate.
	var pbuf [16]facets.Version
	peer := pbuf[:0]
	for _, s := range offer.PeerVersions {
		if v, err := facets.ParseVersion(f.adv.Protocol, s); err == nil {
			peer = append(peer, v)
		}
	}
	chosen, found := facets.Version{}, false
	for _, v := range f.offered {
		if v.Compare(f.floor) < 0 || v.Compare(candidate) > 0 || !slices.ContainsFunc(peer, v.Equal) {
			continue
		}
		if !found || v.Compare(chosen) > 0 {
			chosen, found = v, true
		}
	}
	if !found {
		for _, v := range peer {
			if v.Compare(f.floor) >= 0 {
				return d.refuse(RuleCommon, events.ReasonUnsupported)
			}
		}
		return d.refuse(RuleCommon, events.ReasonBelowFloor)
	}
	downgrade := chosen.Compare(f.preferred) < 0
	// Rule 5: an unauthenticated exchange never settles below preferred.
	if downgrade && !p.IsAuthenticated(subject) {
		return d.refuseOrCounter(RuleAuthenticated, events.ReasonUnauthenticated)
	}
	// Rule 6: the host may deny a downgrade an authenticated caller could have.
	if downgrade && p.DeniesDowngrade(policy.Downgrade{Subject: subject, Protocol: f.adv.Protocol, From: f.adv.Preferred, To: chosen.String()}) {
		return d.refuseOrCounter(RulePolicy, events.ReasonUnsupported)
	}
	// Rule 7.
	kind := Accepted
	if downgrade {
		kind = Downgraded
	}
	return d.accept(kind, RuleAccept, chosen.String(), false)
}

// decision carries what every branch of decide records.
type decision struct {
	f              *facet
	offer          Offer
	digest         string
	now            time.Time
	namedRequested bool
}

func (d *decision) event(outcome events.Outcome, version string, reason events.Reason) events.NegotiationDecided {
	e := events.NegotiationDecided{
		Protocol:   d.f.adv.Protocol,
		Outcome:    outcome,
		Version:    version,
		Reason:     reason,
		Floor:      d.f.adv.Floor,
		PeerDigest: d.digest,
		At:         d.now,
	}
	if d.namedRequested {
		e.Requested = d.offer.Requested
	}
	return e
}

func (d *decision) accept(kind Kind, rule Rule, version string, counter bool) (Outcome, events.NegotiationDecided) {
	o := Outcome{
		Kind:           kind,
		Protocol:       d.f.adv.Protocol,
		Version:        version,
		Requested:      d.offer.Requested,
		Reason:         events.ReasonOK,
		Rule:           rule,
		CounterOffered: counter,
	}
	return o, d.event(events.Accepted, version, events.ReasonOK)
}

// refuseOrCounter refuses, unless the protocol lets the host answer with
// its preferred version instead.
func (d *decision) refuseOrCounter(rule Rule, reason events.Reason) (Outcome, events.NegotiationDecided) {
	if d.offer.CounterOffer {
		return d.accept(Accepted, rule, d.f.adv.Preferred, true)
	}
	return d.refuse(rule, reason)
}

func (d *decision) refuse(rule Rule, reason events.Reason) (Outcome, events.NegotiationDecided) {
	o := Outcome{
		Kind:      Refused,
		Protocol:  d.f.adv.Protocol,
		Requested: d.offer.Requested,
		Reason:    reason,
		Rule:      rule,
		Error:     refusalError(d.f.adv.Protocol, d.offer.Requested, &d.f.adv, reason),
	}
	return o, d.event(events.Refused, "", reason)
}

// refusalError is the interop_version_unsupported error the reference host
// answers a refusal with.
func refusalError(protocol facets.Protocol, requested string, adv *facets.Advertised, reason events.Reason) *wperrors.Error {
	supported := []string{}
	if adv != nil {
		if requested == "" {
			requested = adv.Preferred
		}
		supported = slices.Clone(adv.Versions)
	}
	return &wperrors.Error{
		Code:    wperrors.InteropVersionUnsupported,
		Message: fmt.Sprintf("%s negotiation refused: %s", protocol, reason),
		Details: map[string]any{
			"protocol":  string(protocol),
			"requested": requested,
			"supported": supported,
			"reason":    string(reason),
		},
	}
}

// refuseInput refuses an exchange whose inputs could not be decided on.
// adv is nil when the protocol is not advertised.
func refuseInput(offer Offer, adv *facets.Advertised, cause error, now time.Time) (Outcome, events.NegotiationDecided) {
	reason := events.ReasonUnsupported
	o := Outcome{
		Kind:      Refused,
		Protocol:  offer.Protocol,
		Requested: offer.Requested,
		Reason:    reason,
		Rule:      RuleInput,
		Error:     refusalError(offer.Protocol, offer.Requested, adv, reason),
		Cause:     cause,
	}
	e := events.NegotiationDecided{Protocol: offer.Protocol, Outcome: events.Refused, Reason: reason, At: now}
	if _, err := facets.ParseVersion(offer.Protocol, offer.Requested); err == nil {
		e.Requested = offer.Requested
	}
	if adv != nil {
		if _, err := facets.ParseVersion(adv.Protocol, adv.Floor); err == nil {
			e.Floor = adv.Floor
		}
	}
	if d, err := peerDigest(offer.Peer); err == nil {
		e.PeerDigest = d
	}
	return o, e
}
