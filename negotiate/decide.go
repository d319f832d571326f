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
	f, err := compileFacet(adv)
	if err != nil {
		return refuseInput(offer, &adv, err, now)
	}
	digest, err := peerDigest(offer.Peer)
	if err != nil {
		return refuseInput(offer, &adv, err, now)
	}
	return f.decide(subject, &offer, &p, digest, now)
}

func peerDigest(peer string) (string, error) {
	if peer == "" {
		return "", nil
	}
	return events.PeerDigest(peer)
}

// facet is an advertised facet ready to decide with: every version parsed,
// the offered ones sorted newest first.
type facet struct {
	adv       facets.Advertised
	preferred facets.Version
	floor     facets.Version
	newest    []facets.Version
}

// compileFacet parses the decision view of a facet and checks what the
// decision relies on. Valid versions are canonical (no leading zeros,
// fixed-width dates), so two of them are equal exactly when their strings
// are: the hot path compares strings and never parses an offered version.
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
	var err error
	if f.preferred, err = facets.ParseVersion(a.Protocol, a.Preferred); err != nil {
		return facet{}, fmt.Errorf("%s facet, preferred version: %w", a.Protocol, err)
	}
	if f.floor, err = facets.ParseVersion(a.Protocol, a.Floor); err != nil {
		return facet{}, fmt.Errorf("%s facet, floor: %w", a.Protocol, err)
	}
	switch {
	case !slices.Contains(a.Versions, a.Preferred):
		return facet{}, fmt.Errorf("%s facet does not offer its preferred version %q", a.Protocol, a.Preferred)
	case !slices.Contains(a.Versions, a.Floor):
		return facet{}, fmt.Errorf("%s facet does not offer its floor %q", a.Protocol, a.Floor)
	case f.floor.Compare(f.preferred) > 0:
		return facet{}, fmt.Errorf("%s facet floor %q is above its preferred version %q", a.Protocol, a.Floor, a.Preferred)
	}
	return f, nil
}

// offered returns the offered version spelled s.
func (f *facet) offered(s string) (facets.Version, bool) {
	for _, v := range f.newest {
		if v.String() == s {
			return v, true
		}
	}
	return facets.Version{}, false
}

// verdict is what the rules settle, before it is written up.
type verdict struct {
	kind    Kind
	rule    Rule
	reason  string
	version string
	counter bool
}

// candidate applies rule 1: the candidate is the version the requesting
// side named, or preferred. named reports a well-formed request (the only
// kind the event records); offered, that the host speaks the candidate.
func (f *facet) candidate(requested string) (v facets.Version, named, offered bool) {
	if requested == "" {
		return f.preferred, false, true
	}
	if v, ok := f.offered(requested); ok {
		return v, true, true
	}
	v, err := facets.ParseVersion(f.adv.Protocol, requested)
	return v, err == nil, false
}

// rules applies rules 2 to 7 to a facet that compileFacet accepted, given
// rule 1's candidate.
func (f *facet) rules(subject *Subject, offer *Offer, p *policy.Policy, candidate facets.Version, named, isOffered bool) verdict {
	// A malformed request is a version the host does not speak: it skips
	// rule 2 and meets rule 3.
	if offer.Requested != "" && !named {
		return f.refuseOrCounter(offer, RuleOffered, events.ReasonUnsupported)
	}
	// Rule 2: never below the floor, counter-offer or not.
	if candidate.Compare(f.floor) < 0 {
		return verdict{rule: RuleFloor, reason: events.ReasonBelowFloor}
	}
	// Rule 3: the host must speak the candidate.
	if !isOffered {
		return f.refuseOrCounter(offer, RuleOffered, events.ReasonUnsupported)
	}
	// Rule 4: the newest version both sides speak, between the floor and
	// the candidate.
	var chosen facets.Version
	found := false
	for _, v := range f.newest {
		if v.Compare(f.floor) < 0 {
			break
		}
		if v.Compare(candidate) <= 0 && slices.Contains(offer.PeerVersions, v.String()) {
			chosen, found = v, true
			break
		}
	}
	if !found {
		for _, s := range offer.PeerVersions {
			if v, err := facets.ParseVersion(f.adv.Protocol, s); err == nil && v.Compare(f.floor) >= 0 {
				return verdict{rule: RuleCommon, reason: events.ReasonUnsupported}
			}
		}
		return verdict{rule: RuleCommon, reason: events.ReasonBelowFloor}
	}
	if chosen.Compare(f.preferred) >= 0 {
		return verdict{kind: Accepted, rule: RuleAccept, reason: events.ReasonOK, version: chosen.String()}
	}
	// Rule 5: an unauthenticated exchange never settles below preferred.
	if !p.IsAuthenticated(subject) {
		return f.refuseOrCounter(offer, RuleAuthenticated, events.ReasonUnauthenticated)
	}
	// Rule 6: the host may deny a downgrade an authenticated caller could have.
	if p.DeniesDowngrade(policy.Downgrade{Subject: subject, Protocol: f.adv.Protocol, From: f.adv.Preferred, To: chosen.String()}) {
		return f.refuseOrCounter(offer, RulePolicy, events.ReasonUnsupported)
	}
	// Rule 7.
	return verdict{kind: Downgraded, rule: RuleAccept, reason: events.ReasonOK, version: chosen.String()}
}

// refuseOrCounter refuses, unless the protocol lets the host answer with
// its preferred version instead.
func (f *facet) refuseOrCounter(offer *Offer, rule Rule, reason string) verdict {
	if offer.CounterOffer {
		return verdict{kind: Accepted, rule: rule, reason: events.ReasonOK, version: f.adv.Preferred, counter: true}
	}
	return verdict{rule: rule, reason: reason}
}

// decide applies the rules and writes up the Outcome and its event.
func (f *facet) decide(subject *Subject, offer *Offer, p *policy.Policy, digest string, now time.Time) (Outcome, events.NegotiationDecided) {
	candidate, named, offered := f.candidate(offer.Requested)
	v := f.rules(subject, offer, p, candidate, named, offered)
	o := Outcome{
		Kind:           v.kind,
		Protocol:       f.adv.Protocol,
		Version:        v.version,
		Requested:      offer.Requested,
		Reason:         v.reason,
		Rule:           v.rule,
		CounterOffered: v.counter,
	}
	e := events.NegotiationDecided{
		Protocol:   f.adv.Protocol,
		Outcome:    "accepted",
		Version:    v.version,
		Reason:     v.reason,
		Floor:      f.adv.Floor,
		PeerDigest: digest,
		At:         now,
	}
	if v.kind == Refused {
		e.Outcome = "refused"
		o.Error = refusalError(f.adv.Protocol, offer.Requested, f.adv.Preferred, f.adv.Versions, v.reason)
	}
	if named {
		e.Requested = offer.Requested
	}
	return o, e
}

// refusalError is the interop_version_unsupported error the reference host
// answers a refusal with: requested is what was asked for, or preferred.
func refusalError(protocol facets.Protocol, requested, preferred string, supported []string, reason string) *wperrors.Error {
	if requested == "" {
		requested = preferred
	}
	return &wperrors.Error{
		Code:    wperrors.InteropVersionUnsupported,
		Message: fmt.Sprintf("%s negotiation refused: %s", protocol, reason),
		Details: map[string]any{
			"protocol":  string(protocol),
			"requested": requested,
			"supported": append([]string{}, supported...),
			"reason":    string(reason),
		},
	}
}

// refuseInput refuses an exchange whose inputs could not be decided on.
// adv is nil when the protocol is not advertised.
func refuseInput(offer Offer, adv *facets.Advertised, cause error, now time.Time) (Outcome, events.NegotiationDecided) {
	reason := events.ReasonUnsupported
	var preferred string
	var supported []string
	if adv != nil {
		preferred, supported = adv.Preferred, adv.Versions
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
	e := events.NegotiationDecided{Protocol: offer.Protocol, Outcome: "refused", Reason: reason, At: now}
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
