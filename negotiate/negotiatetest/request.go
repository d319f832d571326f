package negotiatetest

import (
	"errors"
	"fmt"
	"slices"
	"time"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/strictjson"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// DecideFunc has the shape of [negotiate.Decide]; a host that wraps the
// decision (in middleware, say) exposes one to run the vectors against.
type DecideFunc func(*negotiate.Subject, facets.Set, negotiate.Offer, policy.Policy) (negotiate.Outcome, events.NegotiationDecided)

// Compiled is a DecideFunc that compiles the facets with [negotiate.Compile]
// on every call and decides with the Negotiator, so the vectors can check
// that the compiled form gives the answers of the pure one. Facets that do
// not compile have no Negotiator; they are decided by [negotiate.Decide].
func Compiled(subject *negotiate.Subject, set facets.Set, offer negotiate.Offer, p policy.Policy) (negotiate.Outcome, events.NegotiationDecided) {
	n, err := negotiate.Compile(set, p)
	if err != nil {
		return negotiate.Decide(subject, set, offer, p)
	}
	return n.Decide(subject, offer)
}

// PolicySpec is a [policy.Policy] in data form, for vectors and the CLI.
type PolicySpec struct {
	// DenyDowngrade sets Policy.DenyDowngrade.
	DenyDowngrade bool `json:"denyDowngrade,omitzero"`
	// DenyDowngradeTo denies a downgrade to any of these versions, through
	// Policy.DowngradeDenied.
	DenyDowngradeTo []string `json:"denyDowngradeTo,omitzero"`
	// DistrustIssuers demotes Subjects from these issuers to
	// unauthenticated, through Policy.Authenticated.
	DistrustIssuers []string `json:"distrustIssuers,omitzero"`
	// RequireAudit sets Policy.RequireAudit.
	RequireAudit bool `json:"requireAudit,omitzero"`
}

// Policy returns the policy s describes, with a clock stopped at now.
func (s PolicySpec) Policy(now time.Time) policy.Policy {
	p := policy.Policy{
		DenyDowngrade: s.DenyDowngrade,
		RequireAudit:  s.RequireAudit,
		Now:           func() time.Time { return now },
	}
	// Empty lists deny and distrust nothing, so the hooks can always be set.
	deny, distrust := slices.Clone(s.DenyDowngradeTo), slices.Clone(s.DistrustIssuers)
	p.DowngradeDenied = func(d policy.Downgrade) bool { return slices.Contains(deny, d.To) }
	p.Authenticated = func(s *policy.Subject) bool { return !slices.Contains(distrust, s.Issuer) }
	return p
}

// Request is one negotiation in data form: the input of `wopneg decide`,
// and the input half of a decision vector.
type Request struct {
	// Subject is the caller; null for none.
	Subject *negotiate.Subject `json:"subject"`
	// Facet advertises a2a, mcp or both.
	Facet facets.Set `json:"facet"`
	// Offer is what the requesting side put on the table. When its protocol
	// is absent and Facet advertises exactly one protocol, that one is meant.
	Offer negotiate.Offer `json:"offer"`
	// Policy tightens the reference rules.
	Policy PolicySpec `json:"policy"`
	// Now is the decision's clock.
	Now time.Time `json:"now"`
}

// requestJSON is a Request's wire form: an offer that may leave out
// peerVersions, and a clock that may be a date.
type requestJSON struct {
	Subject *negotiate.Subject `json:"subject"`
	Facet   facets.Set         `json:"facet"`
	Offer   offerJSON          `json:"offer"`
	Policy  PolicySpec         `json:"policy"`
	Now     *string            `json:"now"`
}

// offerJSON is negotiate.Offer with peerVersions' absence kept: an absent
// (or null) list makes the request inbound, an empty one is a peer that
// speaks nothing.
type offerJSON struct {
	Protocol     facets.Protocol `json:"protocol"`
	Peer         string          `json:"peer"`
	Requested    string          `json:"requested"`
	PeerVersions *[]string       `json:"peerVersions"`
	CounterOffer bool            `json:"counterOffer"`
}

// DecodeRequest reads a Request through the module's one strict JSON
// reader: keys match exactly (no case folding), every object is closed, a
// repeated key, a second JSON value and nesting past the bound are
// refused, and every error names the JSON path at fault. It checks the
// JSON's shape, not its values; see [Request.Validate].
//
// When offer.protocol is absent and the facet advertises exactly one
// protocol, that one is meant. When offer.peerVersions is absent (or
// null) the request is inbound: the peer speaks what it requested, or the
// preferred version when it requested nothing, as [negotiate.InboundOffer]
// has it; an explicit [] is a peer that speaks nothing. now is an RFC
// 3339 time or a date YYYY-MM-DD (its midnight UTC).
func DecodeRequest(data []byte) (Request, error) {
	var w requestJSON
	if err := strictjson.Decode(data, &w); err != nil {
		return Request{}, fmt.Errorf("request: %w", err)
	}
	r := Request{Subject: w.Subject, Facet: w.Facet, Policy: w.Policy, Offer: negotiate.Offer{
		Protocol: w.Offer.Protocol, Peer: w.Offer.Peer, Requested: w.Offer.Requested, CounterOffer: w.Offer.CounterOffer,
	}}
	if w.Now != nil {
		now, err := parseClock(*w.Now)
		if err != nil {
			return Request{}, fmt.Errorf("request: now: %w", err)
		}
		r.Now = now
	}
	if r.Offer.Protocol == "" {
		if ps := r.Facet.Protocols(); len(ps) == 1 {
			r.Offer.Protocol = ps[0]
		}
	}
	if w.Offer.PeerVersions != nil {
		r.Offer.PeerVersions = *w.Offer.PeerVersions
	} else if adv, ok := r.Facet.Lookup(r.Offer.Protocol); ok {
		r.Offer.PeerVersions = negotiate.InboundOffer(adv, r.Offer.Peer, r.Offer.Requested).PeerVersions
	}
	return r, nil
}

// parseClock reads a date YYYY-MM-DD as its midnight UTC, or an RFC 3339
// time.
func parseClock(s string) (time.Time, error) {
	if d, err := facets.ParseDate(s); err == nil {
		return d, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither a date YYYY-MM-DD nor an RFC 3339 time", s)
	}
	return t, nil
}

// Validate reports what makes r unfit to decide on, each problem under its
// JSON path: an invalid facet, an invalid Subject (a null one is fine: it
// is unauthenticated), an offer for a protocol the facet does not
// advertise, a peer URL with no http(s) or ws(s) origin (its digest is
// what the event records), or no clock.
func (r Request) Validate() error {
	var errs []error
	if err := r.Facet.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("facet: %w", err))
	}
	if r.Subject != nil {
		if err := r.Subject.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if _, ok := r.Facet.Lookup(r.Offer.Protocol); !ok {
		errs = append(errs, fmt.Errorf("offer.protocol: %q is not advertised by the facet", r.Offer.Protocol))
	}
	if r.Offer.Peer != "" {
		if _, err := events.Origin(r.Offer.Peer); err != nil {
			errs = append(errs, fmt.Errorf("offer.peer: %w", err))
		}
	}
	if r.Now.IsZero() {
		errs = append(errs, errors.New("now: required"))
	}
	return errors.Join(errs...)
}

// Answer is a decision in data form: the output of `wopneg decide`.
type Answer struct {
	// Outcome is accepted, downgraded or refused.
	Outcome string `json:"outcome"`
	// Version is set when not refused.
	Version string `json:"version,omitzero"`
	// Reason is the audit reason.
	Reason events.Reason `json:"reason"`
	// Rule names the decision rule that settled it.
	Rule string `json:"rule"`
	// CounterOffered is true when the host answered with its own version.
	CounterOffered bool `json:"counterOffered,omitzero"`
	// Status is the HTTP status of the refusal; 0 when accepted.
	Status int `json:"status,omitzero"`
	// Error is the v2 error envelope of the refusal.
	Error *wperrors.Error `json:"error,omitzero"`
	// Event is the negotiation.decided payload.
	Event events.NegotiationDecided `json:"event"`
}

// Decide runs r through decide (nil means [negotiate.Decide]).
func (r Request) Decide(decide DecideFunc) (Answer, negotiate.Outcome) {
	if decide == nil {
		decide = negotiate.Decide
	}
	o, e := decide(r.Subject, r.Facet, r.Offer, r.Policy.Policy(r.Now))
	a := Answer{
		Outcome:        o.Kind.String(),
		Version:        o.Version,
		Reason:         o.Reason,
		Rule:           string(o.Rule),
		CounterOffered: o.CounterOffered,
		Event:          e,
	}
	if o.Err() != nil {
		a.Version = ""
		err := o.Err()
		var we *wperrors.Error
		if errors.As(err, &we) {
			a.Error = we
			a.Status = we.Code.HTTPStatus()
		}
	}
	return a, o
}
