package negotiate

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/policy"
)

// errNotAdvertised is the Cause of a refusal for a protocol the host does
// not advertise.
var errNotAdvertised = errors.New("protocol not advertised")

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
func Decide(subject *Subject, advertised facets.Set, offer Offer, p policy.Policy) (o Outcome, e events.NegotiationDecided) {
	now := p.Time()
	adv, ok := advertised.Lookup(offer.Protocol)
	if !ok {
		return refuseInput(offer, nil, nil, fmt.Errorf("%w: %q", errNotAdvertised, offer.Protocol), now)
	}
	f, err := compileFacet(adv)
	if err != nil {
		// A facet the decision cannot rely on says nothing about what
		// this caller could be served.
		return refuseInput(offer, &adv, nil, err, now)
	}
	digest, err := peerDigest(offer.Peer)
	if err != nil {
		return refuseInput(offer, &adv, f.servable(subject, &p), err, now)
	}
	f.decide(subject, &offer, &p, digest, now, &o, &e)
	return o, e
}

func peerDigest(peer string) (string, error) {
	if peer == "" {
		return "", nil
	}
	return events.PeerDigest(peer)
}

// facet is an advertised facet ready to decide with: every version parsed,
// the offered ones sorted newest first, and where preferred and the floor
// sit among them. Valid versions are canonical (no leading zeros,
// fixed-width dates), so two of them are equal exactly when their strings
// are: the hot path compares strings and indexes, and never parses an
// offered version.
type facet struct {
	adv       facets.Advertised
	preferred facets.Version
	floor     facets.Version
	// newest holds the offered versions, newest first, and texts their
	// spellings; a version is newer than another when its index is lower.
	// slices.Index(texts, s) is the index of the version spelled s, -1
	// when the host does not offer it.
	newest []facets.Version
	texts  []string
	// pref and low are the indexes of preferred and the floor in newest.
	pref, low int
}

// compileFacet parses the decision view of a facet and checks what the
// decision relies on.
func compileFacet(a facets.Advertised) (facet, error) {
	f := facet{adv: a, newest: make([]facets.Version, 0, len(a.Versions))}
	if len(a.Versions) == 0 {
		return facet{}, fmt.Errorf("%s facet offers no versions", a.Protocol)
	}
	for i, s := range a.Versions {
		v, err := facets.ParseVersion(a.Protocol, s)
		if err != nil {
			return facet{}, fmt.Errorf("%s facet, offered version %d: %w", a.Protocol, i, err)
		}
		if slices.Contains(a.Versions[:i], s) {
			return facet{}, fmt.Errorf("%s facet offers %q twice", a.Protocol, s)
		}
		f.newest = append(f.newest, v)
	}
	slices.SortFunc(f.newest, func(a, b facets.Version) int { return b.Compare(a) })
	f.texts = make([]string, len(f.newest))
	for i, v := range f.newest {
		f.texts[i] = v.String()
	}
	var err error
	if f.preferred, err = facets.ParseVersion(a.Protocol, a.Preferred); err != nil {
		return facet{}, fmt.Errorf("%s facet, preferred version: %w", a.Protocol, err)
	}
	if f.floor, err = facets.ParseVersion(a.Protocol, a.Floor); err != nil {
		return facet{}, fmt.Errorf("%s facet, floor: %w", a.Protocol, err)
	}
	f.pref, f.low = slices.Index(f.texts, a.Preferred), slices.Index(f.texts, a.Floor)
	if f.pref < 0 {
		return facet{}, fmt.Errorf("%s facet does not offer its preferred version %q", a.Protocol, a.Preferred)
	}
	if f.low < 0 {
		return facet{}, fmt.Errorf("%s facet does not offer its floor %q", a.Protocol, a.Floor)
	}
	if f.low < f.pref {
		return facet{}, fmt.Errorf("%s facet floor %q is above its preferred version %q", a.Protocol, a.Floor, a.Preferred)
	}
	return f, nil
}

// candidate applies rule 1: the candidate is the version the requesting
// side named, or preferred. It returns the candidate's index in newest, or
// -1 when the host does not offer it; named reports a well-formed request
// (the only kind the event records), and below a well-formed one that the
// host does not offer and that lies below the floor.
func (f *facet) candidate(requested string) (i int, named, below bool) {
	if requested == "" {
		return f.pref, false, false
	}
	if i = slices.Index(f.texts, requested); i >= 0 {
		return i, true, false
	}
	v, err := facets.ParseVersion(f.adv.Protocol, requested)
	return -1, err == nil, err == nil && v.Compare(f.floor) < 0
}

// rules applies rules 2 to 7 to a facet that compileFacet accepted, given
// rule 1's candidate, and writes what they settle in o: its Kind, Rule,
// Reason, Version and CounterOffered, which must be zero.
func (f *facet) rules(subject *Subject, offer *Offer, p *policy.Policy, candidate int, below bool, o *Outcome) {
	if candidate < 0 {
		// Not offered. A malformed request is a version the host does not
		// speak: it skips rule 2 and meets rule 3.
		if below {
			o.Rule, o.Reason = RuleFloor, events.ReasonBelowFloor
			return
		}
		f.refuseOrCounter(offer, RuleOffered, events.ReasonUnsupported, o)
		return
	}
	// Rule 2: never below the floor, counter-offer or not.
	if candidate > f.low {
		o.Rule, o.Reason = RuleFloor, events.ReasonBelowFloor
		return
	}
	// Rule 4: the newest version both sides speak, between the floor and
	// the candidate (rule 3 holds: the candidate is offered).
	// Newest first from the candidate, so an inbound offer (the peer speaks
	// what it requested) is settled by the first comparison.
	chosen := -1
	for i := candidate; i <= f.low; i++ {
		if slices.Contains(offer.PeerVersions, f.texts[i]) {
			chosen = i
			break
		}
	}
	if chosen < 0 {
		for _, s := range offer.PeerVersions {
			if v, err := facets.ParseVersion(f.adv.Protocol, s); err == nil && v.Compare(f.floor) >= 0 {
				o.Rule, o.Reason = RuleCommon, events.ReasonUnsupported
				return
			}
		}
		o.Rule, o.Reason = RuleCommon, events.ReasonBelowFloor
		return
	}
	if chosen <= f.pref {
		o.Kind, o.Rule, o.Reason, o.Version = Accepted, RuleAccept, events.ReasonOK, f.texts[chosen]
		return
	}
	// Rule 5: an unauthenticated exchange never settles below preferred.
	if !p.IsAuthenticated(subject) {
		f.refuseOrCounter(offer, RuleAuthenticated, events.ReasonUnauthenticated, o)
		return
	}
	// Rule 6: the host may deny a downgrade an authenticated caller could have.
	if p.DeniesDowngrade(policy.Downgrade{Subject: subject, Protocol: f.adv.Protocol, From: f.adv.Preferred, To: f.texts[chosen]}) {
		f.refuseOrCounter(offer, RulePolicy, events.ReasonUnsupported, o)
		return
	}
	// Rule 7.
	o.Kind, o.Rule, o.Reason, o.Version = Downgraded, RuleAccept, events.ReasonOK, f.texts[chosen]
}

// refuseOrCounter refuses, unless the protocol lets the host answer with
// its preferred version instead.
func (f *facet) refuseOrCounter(offer *Offer, rule Rule, reason string, o *Outcome) {
	if offer.CounterOffer {
		o.Kind, o.Rule, o.Reason, o.Version, o.CounterOffered = Accepted, rule, events.ReasonOK, f.adv.Preferred, true
		return
	}
	o.Rule, o.Reason = rule, reason
}

// decide applies the rules and writes up the Outcome and its event in o
// and e, which must be zero.
func (f *facet) decide(subject *Subject, offer *Offer, p *policy.Policy, digest string, now time.Time, o *Outcome, e *events.NegotiationDecided) {
	candidate, named, below := f.candidate(offer.Requested)
	f.rules(subject, offer, p, candidate, below, o)
	o.Protocol, o.Requested = f.adv.Protocol, offer.Requested
	e.Protocol, e.Outcome, e.Version, e.Reason = f.adv.Protocol, "accepted", o.Version, o.Reason
	e.Floor, e.PeerDigest, e.At = f.adv.Floor, digest, now
	if o.Kind == Refused {
		e.Outcome = "refused"
		o.Error = refusalError(f.adv.Protocol, offer.Requested, f.adv.Preferred, f.servable(subject, p), o.Reason)
	}
	if named {
		e.Requested = offer.Requested
	}
}

// servable returns the offered versions subject could be served at, in
// the facet's order: the ones the decision accepts when subject asks for
// them by name. None is below the floor, and none is below preferred
// unless subject is authenticated and p allows that downgrade, so that a
// caller who believes a refusal's list never retries into another refusal.
func (f *facet) servable(subject *Subject, p *policy.Policy) []string {
	out := make([]string, 0, len(f.adv.Versions))
	for _, s := range f.adv.Versions {
		i := slices.Index(f.texts, s)
		if i > f.low || i > f.pref && (!p.IsAuthenticated(subject) ||
			p.DeniesDowngrade(policy.Downgrade{Subject: subject, Protocol: f.adv.Protocol, From: f.adv.Preferred, To: s})) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// refusalError is the interop_version_unsupported error the reference host
// answers a refusal with: requested is what was asked for, or preferred.
func refusalError(protocol facets.Protocol, requested, preferred string, supported []string, reason string) *wperrors.Error {
	return &wperrors.Error{
		Code:    wperrors.InteropVersionUnsupported,
		Message: fmt.Sprintf("%s negotiation refused: %s", protocol, reason),
		Details: map[string]any{
			"protocol":  string(protocol),
			"requested": cmp.Or(requested, preferred),
			"supported": append([]string{}, supported...),
			"reason":    string(reason),
		},
	}
}

// refuseInput refuses an exchange whose inputs could not be decided on.
// adv is nil when the protocol is not advertised.
func refuseInput(offer Offer, adv *facets.Advertised, supported []string, cause error, now time.Time) (Outcome, events.NegotiationDecided) {
	reason := events.ReasonUnsupported
	e := events.NegotiationDecided{Protocol: offer.Protocol, Outcome: "refused", Reason: reason, At: now}
	var preferred string
	if adv != nil {
		preferred = adv.Preferred
		if _, err := facets.ParseVersion(adv.Protocol, adv.Floor); err == nil {
			e.Floor = adv.Floor
		}
	}
	o := Outcome{
		Kind:      Refused,
		Protocol:  offer.Protocol,
		Requested: offer.Requested,
		Reason:    reason,
		Rule:      RuleInput,
		Error:     refusalError(offer.Protocol, offer.Requested, preferred, supported, reason),
		Cause:     cause,
	}
	if _, err := facets.ParseVersion(offer.Protocol, offer.Requested); err == nil {
		e.Requested = offer.Requested
	}
	if d, err := peerDigest(offer.Peer); err == nil {
		e.PeerDigest = d
	}
	return o, e
}
