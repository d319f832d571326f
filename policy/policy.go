// Package policy says what a host may tighten in a version negotiation, and
// who the caller is.
//
// The zero [Policy] is the reference host's behaviour and is safe to use as
// it is: an authenticated caller may be downgraded to any version between
// the floor and the preferred one; an unauthenticated caller never goes
// below preferred; nothing ever goes below the floor. No field can loosen
// those rules: every hook only narrows what the zero value allows, the way
// crypto/tls lets a Config raise MinVersion but never accept SSL 3.
//
// Who counts as authenticated is decided from the caller's [Subject]: it
// must be present, valid against the v2 Subject schema, and neither it nor
// any actor in its chain may be anonymous by kind or by lane. An anonymous
// end user forwarded by an authenticated peer is still anonymous; a peer
// gains no authority the caller's Subject does not hold.
//
// # How deep a Subject nests
//
// A Subject holds at most four actors below it: the v2 Subject schema
// spells the chain out as actor1..actor4 and has no fifth level.
// [Subject.UnmarshalJSON] reads the chain once, from the front, and reads
// one actor more than that — a fifth, so that [Subject.Validate] reports it
// at its path ("subject.actor.actor.actor.actor.actor") as it does for a
// Subject built in Go. An actor below the fifth is refused while reading,
// before any of its bytes are looked at: a chain of any length costs at
// most six objects of reading, where each level used to re-read the rest
// of the chain. The stricter reading of a schema that simply stops is that
// a deeper actor is an unknown key, so it is an error rather than dropped.
// A chain built in Go is walked at most as far: [Policy.IsAuthenticated]
// counts a chain that goes on beyond it (a cycle, say) as anonymous, and
// Validate reports it as too deep, so no walk over a Subject loops and
// none fails open.
package policy

import (
	"time"

	"github.com/wopneg/wopneg/facets"
)

// Policy tightens the reference decision rules. The zero value is the
// reference behaviour.
type Policy struct {
	// DenyDowngrade refuses every downgrade below the preferred version,
	// authenticated or not.
	DenyDowngrade bool `json:"denyDowngrade,omitzero"`

	// DowngradeDenied, when set, is asked about each downgrade that the
	// other rules would allow; returning true refuses it. It cannot allow a
	// downgrade that DenyDowngrade or the authentication rule refuses. A
	// refusal asks it too, about each version below preferred that the
	// refusal could list as one the caller can be served.
	DowngradeDenied func(Downgrade) bool `json:"-"`

	// Authenticated, when set, narrows who counts as authenticated: it is
	// asked only about Subjects that the zero Policy counts as
	// authenticated, so it can demote a caller (say, an issuer the host does not trust for
	// negotiation) but never promote an anonymous or invalid one.
	Authenticated func(*Subject) bool `json:"-"`

	// RequireAudit makes recording the negotiation.decided event part of
	// the outcome: when the event cannot be recorded the outcome is refused
	// with internal_error, failing closed.
	RequireAudit bool `json:"requireAudit,omitzero"`

	// Now is the clock the decision is stamped with. When nil, the wall
	// clock is read, as crypto/tls falls back to time.Now for Config.Time:
	// on linux/amd64 alone and to the microsecond (time.Now also reads the
	// monotonic clock, which a UTC stamp drops), elsewhere with time.Now.
	Now func() time.Time `json:"-"`
}

// Downgrade describes a negotiation that would settle below the preferred
// version, for [Policy.DowngradeDenied].
type Downgrade struct {
	// Subject is the caller; nil when none was resolved.
	Subject *Subject
	// Protocol is the protocol being negotiated, a2a or mcp.
	Protocol facets.Protocol
	// From is the preferred version; To is the version that would be chosen.
	From, To string
}

// IsAuthenticated reports whether s counts as authenticated under p. Under
// the zero Policy (policy.Policy{}.IsAuthenticated) that is: present,
// valid, and anonymous nowhere in its actor chain; p.Authenticated may only
// narrow it.
func (p Policy) IsAuthenticated(s *Subject) bool {
	if s == nil || s.anonymous() || !s.valid() {
		return false
	}
	return p.Authenticated == nil || p.Authenticated(s)
}

// DeniesDowngrade reports whether p refuses the downgrade d.
func (p Policy) DeniesDowngrade(d Downgrade) bool {
	return p.DenyDowngrade || p.DowngradeDenied != nil && p.DowngradeDenied(d)
}

// Time returns the current time from p's clock, in UTC.
func (p Policy) Time() time.Time {
	if p.Now == nil {
		return wallClock()
	}
	return p.Now().UTC()
}
