package negotiatetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
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

// DecodeRequest reads a Request strictly: every object is closed, so an
// unknown key is an error naming it. It checks the JSON's shape, not its
// values; see [Request.Validate].
func DecodeRequest(data []byte) (Request, error) {
	var r Request
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Request{}, fmt.Errorf("request: %w", err)
	}
	if dec.More() {
		return Request{}, errors.New("request: more than one JSON value")
	}
	if r.Offer.Protocol == "" {
		if ps := r.Facet.Protocols(); len(ps) == 1 {
			r.Offer.Protocol = ps[0]
		}
	}
	return r, nil
}

// Validate reports what makes r unfit to decide on: an invalid facet, an
// invalid Subject (a null one is fine: it is unauthenticated), an offer
// for a protocol the facet does not advertise, or no clock.
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
		errs = append(errs, fmt.Errorf("offer: protocol %q is not advertised by the facet", r.Offer.Protocol))
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
		Rule:           o.Rule.String(),
		CounterOffered: o.CounterOffered,
		Event:          e,
	}
	if !o.Accepted() {
		a.Version = ""
		err := o.Err()
		var we *wperrors.Error
		if errors.As(err, &we) {
			a.Error = we
			a.Status = we.HTTPStatus()
		}
	}
	return a, o
}
