package negotiate_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

func a2aOffer(requested string, peer ...string) negotiate.Offer {
	return negotiate.Offer{Protocol: facets.ProtocolA2A, Peer: peerURL, Requested: requested, PeerVersions: peer}
}

func mcpOffer(requested string, peer ...string) negotiate.Offer {
	return negotiate.Offer{Protocol: facets.ProtocolMCP, Peer: peerURL, Requested: requested, PeerVersions: peer}
}

func counter(o negotiate.Offer) negotiate.Offer {
	o.CounterOffer = true
	return o
}

// decideCase is one row of the rule-by-rule table. The expected Outcome
// and event are built from the want fields by expect.
type decideCase struct {
	name    string
	set     facets.Set
	subject *negotiate.Subject
	offer   negotiate.Offer
	policy  policy.Policy

	kind    negotiate.Kind
	version string
	reason  string
	rule    negotiate.Rule
	counter bool
	// eventRequested is the event's requested: the offer's when it names a
	// well-formed version, else empty.
	eventRequested string
}

// expect builds the exact Outcome and event c wants.
func (c decideCase) expect() (negotiate.Outcome, events.NegotiationDecided) {
	adv, _ := c.set.Lookup(c.offer.Protocol)
	o := negotiate.Outcome{
		Kind:           c.kind,
		Protocol:       c.offer.Protocol,
		Version:        c.version,
		Requested:      c.offer.Requested,
		Reason:         c.reason,
		Rule:           c.rule,
		CounterOffered: c.counter,
	}
	outcome := "accepted"
	if c.kind == negotiate.Refused {
		outcome = "refused"
		requested := c.offer.Requested
		if requested == "" {
			requested = adv.Preferred
		}
		o.Error = &wperrors.Error{
			Code:    wperrors.InteropVersionUnsupported,
			Message: fmt.Sprintf("%s negotiation refused: %s", c.offer.Protocol, c.reason),
			Details: map[string]any{
				"protocol":  string(c.offer.Protocol),
				"requested": requested,
				"supported": c.servable(adv),
				"reason":    string(c.reason),
			},
		}
	}
	e := events.NegotiationDecided{
		Protocol:   c.offer.Protocol,
		Outcome:    outcome,
		Version:    c.version,
		Requested:  c.eventRequested,
		Reason:     c.reason,
		Floor:      adv.Floor,
		PeerDigest: peerDigest,
		At:         testNowUTC,
	}
	return o, e
}

// servable is what c's caller could be served at: the offered versions,
// in the facet's order, at or above preferred, and those between the floor
// and preferred when the caller is authenticated and the policy allows the
// downgrade.
func (c decideCase) servable(adv facets.Advertised) []string {
	out := []string{}
	parse := func(s string) facets.Version { return facets.MustParseVersion(adv.Protocol, s) }
	for _, s := range adv.Versions {
		v := parse(s)
		switch {
		case v.Compare(parse(adv.Floor)) < 0:
		case v.Compare(parse(adv.Preferred)) >= 0,
			c.policy.IsAuthenticated(c.subject) && !c.policy.DeniesDowngrade(policy.Downgrade{Subject: c.subject, Protocol: adv.Protocol, From: adv.Preferred, To: s}):
			out = append(out, s)
		}
	}
	return out
}

const (
	ok              = events.ReasonOK
	belowFloor      = events.ReasonBelowFloor
	unauthenticated = events.ReasonUnauthenticated
	unsupported     = events.ReasonUnsupported
)

func decideCases() []decideCase {
	a2a := wideA2A() // V=[1.0,1.1,1.2] P=1.2 F=1.1
	mcp := wideMCP() // V=[2025-06-18,2025-11-25,2026-07-28] P=2026-07-28 F=2025-11-25
	refA2A := a2aSet([]string{"1.0"}, "1.0", "1.0")
	refMCP := mcpSet([]string{"2026-07-28"}, "2026-07-28", "2026-07-28")
	above := a2aSet([]string{"1.0", "1.1", "1.2", "1.3"}, "1.2", "1.0")
	// Listed out of order, so "highest" cannot be "last" or "first".
	shuffled := a2aSet([]string{"1.1", "1.3", "1.0", "1.2"}, "1.3", "1.0")
	tens := a2aSet([]string{"1.9", "1.10"}, "1.10", "1.9")
	deny := policy.Policy{DenyDowngrade: true}
	denyTo11 := policy.Policy{DowngradeDenied: func(d policy.Downgrade) bool { return d.To == "1.1" }}
	distrust := policy.Policy{Authenticated: func(s *policy.Subject) bool { return s.Issuer != "https://idp.example" }}

	return []decideCase{
		// Reference host, table A.
		{name: "A1 a2a preferred", set: refA2A, subject: user(), offer: a2aOffer("", "1.0"), kind: negotiate.Accepted, version: "1.0", reason: ok, rule: negotiate.RuleAccept},
		{name: "A2 a2a peer below floor", set: refA2A, subject: user(), offer: a2aOffer("", "0.3"), reason: belowFloor, rule: negotiate.RuleCommon},
		{name: "A3 a2a peer below floor, unauthenticated", set: refA2A, offer: a2aOffer("", "0.3"), reason: belowFloor, rule: negotiate.RuleCommon},
		{name: "A4 a2a requested below floor", set: refA2A, subject: user(), offer: a2aOffer("0.3", "1.0"), reason: belowFloor, rule: negotiate.RuleFloor, eventRequested: "0.3"},
		{name: "A5 a2a requested unoffered", set: refA2A, subject: user(), offer: a2aOffer("99.0", "1.0"), reason: unsupported, rule: negotiate.RuleOffered, eventRequested: "99.0"},
		{name: "A6 a2a empty card", set: refA2A, subject: user(), offer: a2aOffer(""), reason: belowFloor, rule: negotiate.RuleCommon},
		{name: "A7 a2a peer above", set: refA2A, subject: user(), offer: a2aOffer("", "2.0"), reason: unsupported, rule: negotiate.RuleCommon},
		{name: "A8 mcp preferred", set: refMCP, subject: user(), offer: mcpOffer("", "2026-07-28"), kind: negotiate.Accepted, version: "2026-07-28", reason: ok, rule: negotiate.RuleAccept},
		{name: "A9 mcp requested below floor", set: refMCP, subject: user(), offer: mcpOffer("2025-06-18", "2025-06-18"), reason: belowFloor, rule: negotiate.RuleFloor, eventRequested: "2025-06-18"},
		{name: "A10 mcp peer below floor", set: refMCP, offer: mcpOffer("", "2025-06-18"), reason: belowFloor, rule: negotiate.RuleCommon},

		// Wider host, table C.
		{name: "C1", set: a2a, subject: user(), offer: a2aOffer("", "1.0", "1.1", "1.2"), kind: negotiate.Accepted, version: "1.2", reason: ok, rule: negotiate.RuleAccept},
		{name: "C2 downgrade", set: a2a, subject: user(), offer: a2aOffer("", "1.1"), kind: negotiate.Downgraded, version: "1.1", reason: ok, rule: negotiate.RuleAccept},
		{name: "C3 unauthenticated downgrade", set: a2a, offer: a2aOffer("", "1.1"), reason: unauthenticated, rule: negotiate.RuleAuthenticated},
		{name: "C4 below floor", set: a2a, subject: user(), offer: a2aOffer("", "1.0"), reason: belowFloor, rule: negotiate.RuleCommon},
		{name: "C5 explicit downgrade", set: a2a, subject: user(), offer: a2aOffer("1.1", "1.1", "1.2"), kind: negotiate.Downgraded, version: "1.1", reason: ok, rule: negotiate.RuleAccept, eventRequested: "1.1"},
		{name: "C6 explicit unauthenticated", set: a2a, offer: a2aOffer("1.1", "1.1"), reason: unauthenticated, rule: negotiate.RuleAuthenticated, eventRequested: "1.1"},
		{name: "C7 peer only above the candidate", set: a2a, subject: user(), offer: a2aOffer("1.1", "1.2"), reason: unsupported, rule: negotiate.RuleCommon, eventRequested: "1.1"},
		{name: "C8 requested below floor", set: a2a, subject: user(), offer: a2aOffer("1.0", "1.0", "1.1", "1.2"), reason: belowFloor, rule: negotiate.RuleFloor, eventRequested: "1.0"},
		{name: "C9 requested unoffered", set: a2a, subject: user(), offer: a2aOffer("1.3", "1.3"), reason: unsupported, rule: negotiate.RuleOffered, eventRequested: "1.3"},
		{name: "C10 unauthenticated at preferred", set: a2a, offer: a2aOffer("", "1.0", "1.2"), kind: negotiate.Accepted, version: "1.2", reason: ok, rule: negotiate.RuleAccept},
		{name: "C11 unauthenticated below preferred", set: a2a, offer: a2aOffer("", "1.0", "1.1"), reason: unauthenticated, rule: negotiate.RuleAuthenticated},
		{name: "C12 authenticated downgrade", set: a2a, subject: user(), offer: a2aOffer("", "1.0", "1.1"), kind: negotiate.Downgraded, version: "1.1", reason: ok, rule: negotiate.RuleAccept},

		// Rule 2: the floor, at and around its boundary.
		{name: "rule 2: requested is the floor", set: a2a, subject: user(), offer: a2aOffer("1.1", "1.1"), kind: negotiate.Downgraded, version: "1.1", reason: ok, rule: negotiate.RuleAccept, eventRequested: "1.1"},
		{name: "rule 2: requested just below the floor", set: a2a, subject: user(), offer: a2aOffer("1.0", "1.1"), reason: belowFloor, rule: negotiate.RuleFloor, eventRequested: "1.0"},
		{name: "rule 2: unoffered and below the floor", set: a2a, subject: user(), offer: a2aOffer("0.3", "0.3"), reason: belowFloor, rule: negotiate.RuleFloor, eventRequested: "0.3"},
		{name: "rule 2: no counter-offer below the floor", set: a2a, subject: user(), offer: counter(a2aOffer("1.0", "1.0")), reason: belowFloor, rule: negotiate.RuleFloor, eventRequested: "1.0"},
		{name: "rule 2: 1.9 is below a 1.10 floor", set: tens, subject: user(), offer: a2aOffer("1.9", "1.9"), kind: negotiate.Downgraded, version: "1.9", reason: ok, rule: negotiate.RuleAccept, eventRequested: "1.9"},
		{name: "rule 2: mcp floor", set: mcp, subject: user(), offer: mcpOffer("2025-11-25", "2025-11-25"), kind: negotiate.Downgraded, version: "2025-11-25", reason: ok, rule: negotiate.RuleAccept, eventRequested: "2025-11-25"},
		{name: "rule 2: mcp a day below the floor", set: mcp, subject: user(), offer: mcpOffer("2025-11-24", "2025-11-24"), reason: belowFloor, rule: negotiate.RuleFloor, eventRequested: "2025-11-24"},

		// Rule 3: the host must offer the candidate.
		{name: "rule 3: unoffered above preferred", set: a2a, subject: user(), offer: a2aOffer("1.3", "1.2"), reason: unsupported, rule: negotiate.RuleOffered, eventRequested: "1.3"},
		{name: "rule 3: counter-offer", set: a2a, subject: user(), offer: counter(a2aOffer("1.3", "1.3")), kind: negotiate.Accepted, version: "1.2", reason: ok, rule: negotiate.RuleOffered, counter: true, eventRequested: "1.3"},
		{name: "rule 3: malformed requested", set: a2a, subject: user(), offer: a2aOffer("1.x", "1.2"), reason: unsupported, rule: negotiate.RuleOffered},
		{name: "rule 3: malformed requested skips the floor", set: a2a, subject: user(), offer: a2aOffer("01.0", "1.0"), reason: unsupported, rule: negotiate.RuleOffered},
		{name: "rule 3: mcp revision on a2a is malformed", set: a2a, subject: user(), offer: a2aOffer("2026-07-28", "1.2"), reason: unsupported, rule: negotiate.RuleOffered},
		{name: "rule 3: malformed requested, counter-offer", set: a2a, offer: counter(a2aOffer("1.x")), kind: negotiate.Accepted, version: "1.2", reason: ok, rule: negotiate.RuleOffered, counter: true},
		{name: "rule 3: mcp unoffered between offers", set: mcp, subject: user(), offer: mcpOffer("2026-01-01", "2026-01-01"), reason: unsupported, rule: negotiate.RuleOffered, eventRequested: "2026-01-01"},
		{name: "rule 3: mcp impossible date", set: mcp, subject: user(), offer: mcpOffer("2026-02-30", "2026-07-28"), reason: unsupported, rule: negotiate.RuleOffered},
		{name: "rule 3: mcp legacy initialize below the floor", set: mcp, offer: counter(mcpOffer("2024-11-05", "2024-11-05")), reason: belowFloor, rule: negotiate.RuleFloor, eventRequested: "2024-11-05"},
		{name: "rule 3: mcp legacy initialize, unknown newer revision", set: mcp, offer: counter(mcpOffer("2027-01-01", "2027-01-01")), kind: negotiate.Accepted, version: "2026-07-28", reason: ok, rule: negotiate.RuleOffered, counter: true, eventRequested: "2027-01-01"},

		// Rule 4: the highest common version between floor and candidate.
		{name: "rule 4: nil peer list", set: a2a, subject: user(), offer: a2aOffer(""), reason: belowFloor, rule: negotiate.RuleCommon},
		{name: "rule 4: empty peer list", set: a2a, subject: user(), offer: a2aOffer("", []string{}...), reason: belowFloor, rule: negotiate.RuleCommon},
		{name: "rule 4: only malformed peer versions", set: a2a, subject: user(), offer: a2aOffer("", "garbage", "1.2.0", "v1.2"), reason: belowFloor, rule: negotiate.RuleCommon},
		{name: "rule 4: malformed ignored, rest below floor", set: a2a, subject: user(), offer: a2aOffer("", "0.3", "garbage"), reason: belowFloor, rule: negotiate.RuleCommon},
		{name: "rule 4: host offers below floor, peer speaks only that", set: a2a, subject: user(), offer: a2aOffer("", "1.0"), reason: belowFloor, rule: negotiate.RuleCommon},
		{name: "rule 4: peer at the floor", set: a2a, subject: user(), offer: a2aOffer("", "1.1"), kind: negotiate.Downgraded, version: "1.1", reason: ok, rule: negotiate.RuleAccept},
		{name: "rule 4: peer above everything", set: a2a, subject: user(), offer: a2aOffer("", "2.0"), reason: unsupported, rule: negotiate.RuleCommon},
		{name: "rule 4: peer below and above", set: a2a, subject: user(), offer: a2aOffer("", "1.0", "2.0"), reason: unsupported, rule: negotiate.RuleCommon},
		{name: "rule 4: peer speaks a malformed version and one above the candidate", set: above, subject: user(), offer: a2aOffer("1.1", "1.05", "1.2"), reason: unsupported, rule: negotiate.RuleCommon, eventRequested: "1.1"},
		{name: "rule 4: candidate itself is included", set: a2a, subject: user(), offer: a2aOffer("1.1", "1.1", "1.2"), kind: negotiate.Downgraded, version: "1.1", reason: ok, rule: negotiate.RuleAccept, eventRequested: "1.1"},
		{name: "rule 4: above the candidate is excluded", set: above, subject: user(), offer: a2aOffer("1.2", "1.3", "1.1"), kind: negotiate.Downgraded, version: "1.1", reason: ok, rule: negotiate.RuleAccept, eventRequested: "1.2"},
		{name: "rule 4: highest of several, out of order", set: shuffled, subject: user(), offer: a2aOffer("", "1.0", "1.2", "1.1"), kind: negotiate.Downgraded, version: "1.2", reason: ok, rule: negotiate.RuleAccept},
		{name: "rule 4: highest of all", set: shuffled, subject: user(), offer: a2aOffer("", "1.3", "1.0", "1.2", "1.1"), kind: negotiate.Accepted, version: "1.3", reason: ok, rule: negotiate.RuleAccept},
		{name: "rule 4: 1.10 is above 1.9", set: tens, offer: a2aOffer("", "1.9", "1.10"), kind: negotiate.Accepted, version: "1.10", reason: ok, rule: negotiate.RuleAccept},
		{name: "rule 4: no counter-offer", set: a2a, subject: user(), offer: counter(a2aOffer("", "2.0")), reason: unsupported, rule: negotiate.RuleCommon},
		{name: "rule 4: no counter-offer below the floor", set: a2a, offer: counter(a2aOffer("")), reason: belowFloor, rule: negotiate.RuleCommon},
		{name: "rule 4: requested above preferred", set: above, offer: a2aOffer("1.3", "1.3"), kind: negotiate.Accepted, version: "1.3", reason: ok, rule: negotiate.RuleAccept, eventRequested: "1.3"},
		{name: "rule 4: requested above preferred, peer at preferred", set: above, offer: a2aOffer("1.3", "1.2"), kind: negotiate.Accepted, version: "1.2", reason: ok, rule: negotiate.RuleAccept, eventRequested: "1.3"},
		{name: "rule 4: mcp peer speaks only below", set: mcp, subject: user(), offer: mcpOffer("", "2025-06-18"), reason: belowFloor, rule: negotiate.RuleCommon},
		{name: "rule 4: mcp peer speaks only newer", set: mcp, subject: user(), offer: mcpOffer("", "2027-01-01"), reason: unsupported, rule: negotiate.RuleCommon},

		// Rule 5: an unauthenticated exchange never goes below preferred.
		{name: "rule 5: anonymous", set: a2a, subject: anonymous(), offer: a2aOffer("", "1.1"), reason: unauthenticated, rule: negotiate.RuleAuthenticated},
		{name: "rule 5: anonymous forwarded by an authenticated peer", set: a2a, subject: forwardedAnonymous(), offer: a2aOffer("", "1.1"), reason: unauthenticated, rule: negotiate.RuleAuthenticated},
		{name: "rule 5: anonymous actor", set: a2a, subject: userWithAnonymousActor(), offer: a2aOffer("", "1.1"), reason: unauthenticated, rule: negotiate.RuleAuthenticated},
		{name: "rule 5: invalid Subject", set: a2a, subject: invalidSubject(), offer: a2aOffer("", "1.1"), reason: unauthenticated, rule: negotiate.RuleAuthenticated},
		{name: "rule 5: distrusted issuer", set: a2a, subject: user(), offer: a2aOffer("", "1.1"), policy: distrust, reason: unauthenticated, rule: negotiate.RuleAuthenticated},
		{name: "rule 5: other issuer trusted", set: a2a, subject: agentSAML(), offer: a2aOffer("", "1.1"), policy: distrust, kind: negotiate.Downgraded, version: "1.1", reason: ok, rule: negotiate.RuleAccept},
		{name: "rule 5: counter-offer", set: a2a, offer: counter(a2aOffer("", "1.1")), kind: negotiate.Accepted, version: "1.2", reason: ok, rule: negotiate.RuleAuthenticated, counter: true},
		{name: "rule 5: floor before authentication", set: a2a, offer: a2aOffer("1.0", "1.0"), reason: belowFloor, rule: negotiate.RuleFloor, eventRequested: "1.0"},
		{name: "rule 5: mcp", set: mcp, subject: anonymous(), offer: mcpOffer("", "2025-11-25"), reason: unauthenticated, rule: negotiate.RuleAuthenticated},
		{name: "rule 5: at preferred needs no authentication", set: mcp, offer: mcpOffer("", "2025-11-25", "2026-07-28"), kind: negotiate.Accepted, version: "2026-07-28", reason: ok, rule: negotiate.RuleAccept},

		// Rule 6: the policy may deny a downgrade.
		{name: "rule 6: deny all", set: a2a, subject: user(), offer: a2aOffer("", "1.1"), policy: deny, reason: unsupported, rule: negotiate.RulePolicy},
		{name: "rule 6: deny all, counter-offer", set: a2a, subject: user(), offer: counter(a2aOffer("", "1.1")), policy: deny, kind: negotiate.Accepted, version: "1.2", reason: ok, rule: negotiate.RulePolicy, counter: true},
		{name: "rule 6: deny all, no downgrade", set: a2a, subject: user(), offer: a2aOffer("", "1.1", "1.2"), policy: deny, kind: negotiate.Accepted, version: "1.2", reason: ok, rule: negotiate.RuleAccept},
		{name: "rule 6: deny to 1.1", set: a2a, subject: user(), offer: a2aOffer("", "1.1"), policy: denyTo11, reason: unsupported, rule: negotiate.RulePolicy},
		{name: "rule 6: deny to 1.1, unauthenticated first", set: a2a, offer: a2aOffer("", "1.1"), policy: denyTo11, reason: unauthenticated, rule: negotiate.RuleAuthenticated},
		{name: "rule 6: deny to 1.1 allows 1.0", set: above, subject: user(), offer: a2aOffer("", "1.0"), policy: denyTo11, kind: negotiate.Downgraded, version: "1.0", reason: ok, rule: negotiate.RuleAccept},
		{name: "rule 6: deny all, mcp", set: mcp, subject: agentSAML(), offer: mcpOffer("2025-11-25", "2025-11-25"), policy: deny, reason: unsupported, rule: negotiate.RulePolicy, eventRequested: "2025-11-25"},

		// Rule 7.
		{name: "rule 7: downgrade by an authenticated agent", set: mcp, subject: agentSAML(), offer: mcpOffer("", "2025-06-18", "2025-11-25"), kind: negotiate.Downgraded, version: "2025-11-25", reason: ok, rule: negotiate.RuleAccept},
		{name: "rule 7: inbound at preferred", set: mcp, offer: negotiate.InboundOffer(facets.Advertised{Protocol: facets.ProtocolMCP, Preferred: "2026-07-28"}, peerURL, ""), kind: negotiate.Accepted, version: "2026-07-28", reason: ok, rule: negotiate.RuleAccept},
	}
}

func TestDecideRules(t *testing.T) {
	for _, c := range decideCases() {
		t.Run(c.name, func(t *testing.T) {
			wantO, wantE := c.expect()
			o, e := negotiate.Decide(c.subject, c.set, c.offer, withClock(c.policy))
			if !reflect.DeepEqual(o, wantO) {
				t.Errorf("Outcome\n got %+v\nwant %+v", o, wantO)
				if o.Error != nil && wantO.Error != nil {
					t.Errorf("Error\n got %#v\nwant %#v", *o.Error, *wantO.Error)
				}
			}
			if !reflect.DeepEqual(e, wantE) {
				t.Errorf("event\n got %+v\nwant %+v", e, wantE)
			}
			if err := e.Validate(); err != nil {
				t.Errorf("event does not validate: %v", err)
			}
			adv, _ := c.set.Lookup(c.offer.Protocol)
			checkInvariants(t, c.subject, adv, c.offer, withClock(c.policy), o, e)
			checkContentFree(t, c.offer.Peer, e)
		})
	}
}

// TestNegotiatorMatchesDecideTable runs the rule table through a compiled
// Negotiator.
func TestNegotiatorMatchesDecideTable(t *testing.T) {
	for _, c := range decideCases() {
		t.Run(c.name, func(t *testing.T) {
			n, err := negotiate.Compile(c.set, withClock(c.policy))
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			wantO, wantE := c.expect()
			for range 2 { // the second call reads the digest from the cache
				o, e := n.Decide(c.subject, c.offer)
				if !reflect.DeepEqual(o, wantO) {
					t.Errorf("Outcome\n got %+v\nwant %+v", o, wantO)
				}
				if !reflect.DeepEqual(e, wantE) {
					t.Errorf("event\n got %+v\nwant %+v", e, wantE)
				}
			}
		})
	}
}

func TestDecideRefusalErrorDetails(t *testing.T) {
	// requested is R, or preferred when R is absent; supported is what
	// this caller could be served, in the facet's order: never below the
	// floor, so a below-floor refusal never lists the version it refused.
	set := a2aSet([]string{"1.2", "1.0", "1.1"}, "1.2", "1.1")
	for _, c := range []struct {
		name, requested, wantRequested string
		reason                         string
	}{
		{"absent", "", "1.2", belowFloor},
		{"named", "1.0", "1.0", belowFloor},
		{"malformed", "1.x", "1.x", unsupported},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, _ := negotiate.Decide(user(), set, a2aOffer(c.requested, "0.3"), clock())
			want := &wperrors.Error{
				Code:    wperrors.InteropVersionUnsupported,
				Message: "a2a negotiation refused: " + string(c.reason),
				Details: map[string]any{"protocol": "a2a", "requested": c.wantRequested, "supported": []string{"1.2", "1.1"}, "reason": string(c.reason)},
			}
			if !reflect.DeepEqual(o.Error, want) {
				t.Fatalf("Error = %#v, want %#v", o.Error, want)
			}
			body, err := json.Marshal(o.Error)
			if err != nil {
				t.Fatal(err)
			}
			wantBody := `{"error":"interop_version_unsupported","message":"a2a negotiation refused: ` + string(c.reason) +
				`","details":{"protocol":"a2a","reason":"` + string(c.reason) + `","requested":"` + c.wantRequested + `","supported":["1.2","1.1"]}}`
			if string(body) != wantBody {
				t.Errorf("body\n got %s\nwant %s", body, wantBody)
			}
			if o.Error.Code.HTTPStatus() != 400 || o.Error.Code.Retriable() {
				t.Errorf("status %d retriable %v", o.Error.Code.HTTPStatus(), o.Error.Code.Retriable())
			}
		})
	}

	t.Run("supported is a copy", func(t *testing.T) {
		o, _ := negotiate.Decide(user(), set, a2aOffer("", "0.3"), clock())
		o.Error.Details["supported"].([]string)[0] = "9.9"
		if set.A2A.Versions[0] != "1.2" {
			t.Fatalf("mutating details.supported changed the facet: %v", set.A2A.Versions)
		}
	})
}

// TestDecideInputRefusals covers RuleInput: the decision refuses inputs
// it cannot rely on, and still records one event.
func TestDecideInputRefusals(t *testing.T) {
	type inputCase struct {
		name  string
		set   facets.Set
		offer negotiate.Offer
		cause error  // matched with errors.Is, when set
		text  string // Cause.Error(), exactly
		// what the refusal and the event carry
		requested, floor, digest string
		supported                []string
	}
	// An authenticated caller can be served everything from the floor up;
	// a facet the decision cannot rely on serves nothing.
	a2aV := []string{"1.1", "1.2"}
	cases := []inputCase{
		{name: "mcp not advertised", set: wideA2A(), offer: mcpOffer("2026-07-28", "2026-07-28"), cause: negotiate.ErrNotAdvertised,
			text: `protocol not advertised: "mcp"`, requested: "2026-07-28", digest: peerDigest, supported: []string{}},
		{name: "a2a not advertised, nothing requested", set: wideMCP(), offer: a2aOffer("", "1.0"), cause: negotiate.ErrNotAdvertised,
			text: `protocol not advertised: "a2a"`, requested: "", digest: peerDigest, supported: []string{}},
		{name: "empty set", set: facets.Set{}, offer: a2aOffer("1.x"), cause: negotiate.ErrNotAdvertised,
			text: `protocol not advertised: "a2a"`, requested: "1.x", digest: peerDigest, supported: []string{}},
		{name: "peer URL without origin", set: wideA2A(), offer: negotiate.Offer{Protocol: facets.ProtocolA2A, Peer: "ftp://peer.example", Requested: "1.2", PeerVersions: []string{"1.2"}},
			cause: errNoOrigin, requested: "1.2", floor: "1.1", supported: a2aV},
		{name: "relative peer URL", set: wideA2A(), offer: negotiate.Offer{Protocol: facets.ProtocolA2A, Peer: "/peer", PeerVersions: []string{"1.2"}},
			cause: errNoOrigin, requested: "1.2", floor: "1.1", supported: a2aV},
		{name: "no versions offered", set: a2aSet(nil, "1.0", "1.0"), offer: a2aOffer("", "1.0"),
			text: "a2a facet offers no versions", requested: "1.0", floor: "1.0", digest: peerDigest, supported: []string{}},
		{name: "malformed offered version", set: a2aSet([]string{"1.0", "1.x"}, "1.0", "1.0"), offer: a2aOffer("", "1.0"),
			cause: facets.ErrInvalid, requested: "1.0", floor: "1.0", digest: peerDigest, supported: []string{}},
		{name: "offered twice", set: a2aSet([]string{"1.0", "1.1", "1.0"}, "1.0", "1.0"), offer: a2aOffer("", "1.0"),
			text: `a2a facet offers "1.0" twice`, requested: "1.0", floor: "1.0", digest: peerDigest, supported: []string{}},
		{name: "malformed preferred", set: a2aSet([]string{"1.0"}, "1", "1.0"), offer: a2aOffer("", "1.0"),
			cause: facets.ErrInvalid, requested: "1", floor: "1.0", digest: peerDigest, supported: []string{}},
		{name: "malformed floor", set: a2aSet([]string{"1.0"}, "1.0", "x"), offer: a2aOffer("", "1.0"),
			cause: facets.ErrInvalid, requested: "1.0", digest: peerDigest, supported: []string{}},
		{name: "preferred not offered", set: a2aSet([]string{"1.0"}, "1.1", "1.0"), offer: a2aOffer("", "1.0"),
			text: `a2a facet does not offer its preferred version "1.1"`, requested: "1.1", floor: "1.0", digest: peerDigest, supported: []string{}},
		{name: "floor not offered", set: a2aSet([]string{"1.1"}, "1.1", "1.0"), offer: a2aOffer("", "1.1"),
			text: `a2a facet does not offer its floor "1.0"`, requested: "1.1", floor: "1.0", digest: peerDigest, supported: []string{}},
		{name: "floor above preferred", set: a2aSet([]string{"1.0", "1.1"}, "1.0", "1.1"), offer: a2aOffer("", "1.0"),
			text: `a2a facet floor "1.1" is above its preferred version "1.0"`, requested: "1.0", floor: "1.1", digest: peerDigest, supported: []string{}},
		{name: "mcp floor above preferred", set: mcpSet([]string{"2025-06-18", "2026-07-28"}, "2025-06-18", "2026-07-28"), offer: mcpOffer("", "2025-06-18"),
			text: `mcp facet floor "2026-07-28" is above its preferred version "2025-06-18"`, requested: "2025-06-18", floor: "2026-07-28", digest: peerDigest, supported: []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, e := negotiate.Decide(user(), c.set, c.offer, clock())
			if o.Kind != negotiate.Refused || o.Rule != negotiate.RuleInput || o.Reason != unsupported || o.Version != "" || o.CounterOffered {
				t.Errorf("Outcome = %+v", o)
			}
			if o.Protocol != c.offer.Protocol || o.Requested != c.offer.Requested {
				t.Errorf("Outcome protocol %q requested %q", o.Protocol, o.Requested)
			}
			if o.Cause == nil {
				t.Fatal("no Cause")
			}
			if c.cause == errNoOrigin && !isNoOrigin(o.Cause) || c.cause != errNoOrigin && c.cause != nil && !errors.Is(o.Cause, c.cause) {
				t.Errorf("Cause %v is not %v", o.Cause, c.cause)
			}
			if c.text != "" && o.Cause.Error() != c.text {
				t.Errorf("Cause = %q, want %q", o.Cause.Error(), c.text)
			}
			wantErr := &wperrors.Error{
				Code:    wperrors.InteropVersionUnsupported,
				Message: string(c.offer.Protocol) + " negotiation refused: unsupported",
				Details: map[string]any{"protocol": string(c.offer.Protocol), "requested": c.requested, "supported": c.supported, "reason": "unsupported"},
			}
			if !reflect.DeepEqual(o.Error, wantErr) {
				t.Errorf("Error\n got %#v\nwant %#v", o.Error, wantErr)
			}
			eventRequested := ""
			if _, err := facets.ParseVersion(c.offer.Protocol, c.offer.Requested); err == nil {
				eventRequested = c.offer.Requested
			}
			wantE := events.NegotiationDecided{Protocol: c.offer.Protocol, Outcome: "refused", Requested: eventRequested,
				Reason: unsupported, Floor: c.floor, PeerDigest: c.digest, At: testNowUTC}
			if !reflect.DeepEqual(e, wantE) {
				t.Errorf("event\n got %+v\nwant %+v", e, wantE)
			}
			if err := e.Validate(); err != nil {
				t.Errorf("event does not validate: %v", err)
			}
		})
	}
}

func TestDecideFloorEqualsPreferredIsValid(t *testing.T) {
	o, _ := negotiate.Decide(nil, a2aSet([]string{"1.0", "1.1"}, "1.1", "1.1"), a2aOffer("", "1.1"), clock())
	if o.Kind != negotiate.Accepted || o.Version != "1.1" || o.Rule != negotiate.RuleAccept {
		t.Fatalf("Outcome = %+v", o)
	}
}

func TestDecideManyOfferedVersions(t *testing.T) {
	// More offered and peer versions than the decision's stack buffers hold.
	var vs []string
	for i := range 40 {
		vs = append(vs, fmt.Sprintf("1.%d", i))
	}
	set := a2aSet(vs, "1.39", "1.3")
	o, e := negotiate.Decide(user(), set, a2aOffer("", vs[:20]...), clock())
	if o.Kind != negotiate.Downgraded || o.Version != "1.19" || e.Version != "1.19" {
		t.Fatalf("Outcome = %+v", o)
	}
	n, err := negotiate.Compile(set, clock())
	if err != nil {
		t.Fatal(err)
	}
	if o2, _ := n.Decide(user(), a2aOffer("", vs[:20]...)); o2.Version != "1.19" {
		t.Fatalf("Negotiator Outcome = %+v", o2)
	}
}

func TestDecideEmptyPeerURL(t *testing.T) {
	offer := a2aOffer("", "1.2")
	offer.Peer = ""
	o, e := negotiate.Decide(nil, wideA2A(), offer, clock())
	if o.Kind != negotiate.Accepted || e.PeerDigest != "" || e.Version != "1.2" {
		t.Fatalf("Outcome %+v, event %+v", o, e)
	}
	n, err := negotiate.Compile(wideA2A(), clock())
	if err != nil {
		t.Fatal(err)
	}
	if o, e := n.Decide(nil, offer); o.Kind != negotiate.Accepted || e.PeerDigest != "" {
		t.Fatalf("Negotiator: Outcome %+v, event %+v", o, e)
	}
}

func TestDecidePeerDigestIgnoresSpelling(t *testing.T) {
	for _, peer := range []string{"https://peer.example", "HTTPS://Peer.Example:443/x?y#z", "https://user:pw@peer.example/"} {
		_, e := negotiate.Decide(nil, wideA2A(), negotiate.Offer{Protocol: facets.ProtocolA2A, Peer: peer, PeerVersions: []string{"1.2"}}, clock())
		if e.PeerDigest != peerDigest {
			t.Errorf("%s: digest %s, want %s", peer, e.PeerDigest, peerDigest)
		}
	}
	_, e := negotiate.Decide(nil, wideA2A(), negotiate.Offer{Protocol: facets.ProtocolA2A, Peer: "https://peer.example:8443", PeerVersions: []string{"1.2"}}, clock())
	if want := "f66a74505ebacc18891e83ba719489e6a52a53cc2b07a4ec05c8c3687d736909"; e.PeerDigest != want {
		t.Errorf("non-default port: digest %s, want %s", e.PeerDigest, want)
	}
}

func TestOutcomeErr(t *testing.T) {
	var zero negotiate.Outcome
	err := zero.Err()
	var we *wperrors.Error
	if !errors.As(err, &we) || we.Code != wperrors.InteropVersionUnsupported || we.Message != "negotiation refused" || we.Details != nil {
		t.Fatalf("zero Outcome Err() = %#v", err)
	}
	if zero.Err() == nil {
		t.Error("zero Outcome is accepted")
	}
	for _, k := range []negotiate.Kind{negotiate.Accepted, negotiate.Downgraded} {
		o := negotiate.Outcome{Kind: k, Error: wperrors.New(wperrors.Internal, "ignored")}
		if err := o.Err(); err != nil {
			t.Errorf("%v: Err() = %v, want nil", k, err)
		}
	}
	refusal := wperrors.New(wperrors.InteropVersionUnsupported, "x")
	if got := (negotiate.Outcome{Error: refusal}).Err(); got != error(refusal) {
		t.Errorf("Err() = %v, want the Outcome's own Error", got)
	}
	if (negotiate.Outcome{Kind: 3}).Err() == nil {
		t.Error("Kind(3) is accepted")
	}
}

func TestKindAndRuleNames(t *testing.T) {
	kinds := []struct {
		k    negotiate.Kind
		want string
	}{{negotiate.Refused, "refused"}, {negotiate.Accepted, "accepted"}, {negotiate.Downgraded, "downgraded"}, {3, "refused"}, {255, "refused"}}
	for _, c := range kinds {
		if got := c.k.String(); got != c.want {
			t.Errorf("Kind(%d).String() = %q, want %q", c.k, got, c.want)
		}
	}
	rules := []struct {
		r    negotiate.Rule
		want string
	}{
		{negotiate.RuleInput, "input"}, {negotiate.RuleFloor, "floor"}, {negotiate.RuleOffered, "offered"},
		{negotiate.RuleCommon, "common"}, {negotiate.RuleAuthenticated, "authenticated"}, {negotiate.RulePolicy, "policy"},
		{negotiate.RuleAccept, "accept"}, {negotiate.RuleAudit, "audit"},
	}
	for _, c := range rules {
		if got := fmt.Sprint(c.r); string(c.r) != c.want || got != c.want {
			t.Errorf("Rule %q prints %q, want %q", string(c.r), got, c.want)
		}
	}
}

func TestInboundOffer(t *testing.T) {
	adv, _ := wideMCP().Lookup(facets.ProtocolMCP)
	got := negotiate.InboundOffer(adv, "https://client.example", "2025-11-25")
	want := negotiate.Offer{Protocol: facets.ProtocolMCP, Peer: "https://client.example", Requested: "2025-11-25", PeerVersions: []string{"2025-11-25"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Inbound(requested) = %+v, want %+v", got, want)
	}
	got = negotiate.InboundOffer(adv, "", "")
	want = negotiate.Offer{Protocol: facets.ProtocolMCP, PeerVersions: []string{"2026-07-28"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Inbound(absent) = %+v, want %+v", got, want)
	}
	// Inbound below the floor is refused below-floor; inbound absent is
	// served at preferred.
	o, e := negotiate.Decide(nil, wideMCP(), negotiate.InboundOffer(adv, "", "2025-06-18"), clock())
	if o.Kind != negotiate.Refused || o.Reason != belowFloor || o.Rule != negotiate.RuleFloor || e.Requested != "2025-06-18" {
		t.Errorf("inbound below floor: %+v / %+v", o, e)
	}
	o, e = negotiate.Decide(nil, wideMCP(), negotiate.InboundOffer(adv, "", ""), clock())
	if o.Kind != negotiate.Accepted || o.Version != "2026-07-28" || e.Requested != "" {
		t.Errorf("inbound absent: %+v / %+v", o, e)
	}
}

func TestCompileRefusesInvalidFacet(t *testing.T) {
	for name, set := range map[string]facets.Set{
		"nothing advertised":   {},
		"floor above":          a2aSet([]string{"1.0", "1.1"}, "1.0", "1.1"),
		"refreshedAt no date":  {A2A: &facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0", RefreshedAt: "2026-02-30"}},
		"preferred not listed": mcpSet([]string{"2026-07-28"}, "2025-06-18", "2026-07-28"),
		"a2a ok but mcp bad":   {A2A: wideA2A().A2A, MCP: &facets.MCP{Revisions: []string{"2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2026-07-28", RefreshedAt: "2026-02-30"}},
	} {
		t.Run(name, func(t *testing.T) {
			n, err := negotiate.Compile(set, clock())
			var v *facets.Violation
			if n != nil || !errors.As(err, &v) || v.Rule == "" || !errors.Is(err, facets.ErrInvalid) {
				t.Fatalf("Compile = %v, %v; want a *facets.Violation", n, err)
			}
		})
	}
}

// Decide checks only what it decides with, so a facet missing its
// refreshedAt is decided on; Compile validates the whole facet.
func TestDecideIsLenientWhereCompileIsNot(t *testing.T) {
	set := facets.Set{A2A: &facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0", RefreshedAt: "2026-02-30"}}
	if o, _ := negotiate.Decide(nil, set, a2aOffer("", "1.0"), clock()); o.Kind != negotiate.Accepted {
		t.Fatalf("Decide = %+v", o)
	}
	if _, err := negotiate.Compile(set, clock()); err == nil {
		t.Fatal("Compile accepted a facet whose refreshedAt is no date")
	}
}

// TestCompileDatesAnEmptyRefreshedAt: a facet without refreshedAt is
// dated by the release list embedded in the module, on the policy's
// clock, and the caller's set is left alone; a facet with one keeps it;
// a facet whose versions the list does not vouch for is an error naming
// them.
func TestCompileDatesAnEmptyRefreshedAt(t *testing.T) {
	at := func(day string) policy.Policy {
		d, _ := time.Parse(time.DateOnly, day)
		return policy.Policy{Now: func() time.Time { return d.Add(time.Hour) }}
	}
	set := facets.Set{A2A: &facets.A2A{Versions: []string{"0.3", "1.0"}, PreferredVersion: "1.0", MinimumVersion: "0.3"},
		MCP: &facets.MCP{Revisions: []string{"2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2026-07-28", RefreshedAt: "2026-08-01"}}
	for day, want := range map[string]string{"2026-11-20": "2026-11-20", "2026-11-29": "2026-11-29", "2028-01-04": "2026-11-29"} {
		n, err := negotiate.Compile(set, at(day))
		if err != nil {
			t.Fatalf("on %s: %v", day, err)
		}
		if got := n.Facets(); got.A2A.RefreshedAt != want || got.MCP.RefreshedAt != "2026-08-01" {
			t.Errorf("on %s: a2a dated %q, mcp %q; want %q and the one written", day, got.A2A.RefreshedAt, got.MCP.RefreshedAt, want)
		}
	}
	if set.A2A.RefreshedAt != "" {
		t.Error("Compile dated the caller's facet")
	}
	set.A2A.Versions, set.A2A.PreferredVersion = []string{"0.3", "1.0", "1.1"}, "1.1"
	_, err := negotiate.Compile(set, at("2026-12-01"))
	var v *facets.Violation
	if err == nil || !errors.As(err, &v) || v.Path != "a2a.versions[2]" || v.Rule != "unlisted" ||
		!strings.HasPrefix(err.Error(), "negotiate: the a2a facet has no refreshedAt, and the release list embedded in the module does not vouch for it: a2a.versions[2]: ") {
		t.Errorf("Compile = %v", err)
	}
	set.A2A.PreferredVersion = "2.0"
	if _, err := negotiate.Compile(set, at("2026-12-01")); !errors.Is(err, facets.ErrInvalid) {
		t.Errorf("an invalid undated facet: %v", err)
	}
}

func TestCompileCopiesTheFacet(t *testing.T) {
	set := facets.Set{A2A: wideA2A().A2A, MCP: wideMCP().MCP}
	n, err := negotiate.Compile(set, clock())
	if err != nil {
		t.Fatal(err)
	}
	want := facets.Set{A2A: wideA2A().A2A, MCP: wideMCP().MCP}
	if !reflect.DeepEqual(n.Facets(), want) {
		t.Fatalf("Facets() = %+v", n.Facets())
	}
	if n.Facets().A2A == set.A2A || n.Facets().MCP == set.MCP {
		t.Fatal("Facets() shares the caller's facets")
	}
	a2aBefore, a2aEvent := n.Decide(user(), a2aOffer("", "1.1"))
	mcpBefore, _ := n.Decide(user(), mcpOffer("", "2026-07-28"))
	refusedBefore, _ := n.Decide(user(), a2aOffer("", "0.3"))

	// Change every decision input of the caller's facets.
	set.A2A.Versions[0], set.A2A.Versions[1], set.A2A.Versions[2] = "2.0", "2.1", "2.2"
	set.A2A.PreferredVersion, set.A2A.MinimumVersion = "2.2", "2.0"
	set.MCP.Revisions[2] = "2027-01-01"
	set.MCP.PreferredVersion = "2027-01-01"
	set.A2A, set.MCP = nil, nil

	a2aAfter, a2aEventAfter := n.Decide(user(), a2aOffer("", "1.1"))
	mcpAfter, _ := n.Decide(user(), mcpOffer("", "2026-07-28"))
	refusedAfter, _ := n.Decide(user(), a2aOffer("", "0.3"))
	if d := sameOutcome(a2aBefore, a2aAfter); d != "" || a2aAfter.Version != "1.1" {
		t.Errorf("a2a changed: %s (%+v)", d, a2aAfter)
	}
	if !reflect.DeepEqual(a2aEvent, a2aEventAfter) {
		t.Errorf("a2a event changed: %+v", a2aEventAfter)
	}
	if d := sameOutcome(mcpBefore, mcpAfter); d != "" || mcpAfter.Version != "2026-07-28" {
		t.Errorf("mcp changed: %s (%+v)", d, mcpAfter)
	}
	if d := sameOutcome(refusedBefore, refusedAfter); d != "" {
		t.Errorf("refusal changed: %s", d)
	}
	if got := refusedAfter.Error.Details["supported"]; !reflect.DeepEqual(got, []string{"1.1", "1.2"}) {
		t.Errorf("supported = %v", got)
	}
	if !reflect.DeepEqual(n.Facets(), want) {
		t.Errorf("Facets() changed: %+v", n.Facets())
	}
}

// Compile promises its own copy of the facets: neither the caller's
// facets nor the value Facets returns may reach the Negotiator afterwards.
func TestNegotiatorFacetsAreItsOwn(t *testing.T) {
	set := facets.Set{A2A: wideA2A().A2A, MCP: wideMCP().MCP}
	set.MCP.MRTR = &facets.MRTR{MaxRounds: 4}
	set.A2A.Profiles = []string{"a2a-1.2"}
	n, err := negotiate.Compile(set, clock())
	if err != nil {
		t.Fatal(err)
	}
	set.MCP.MRTR.MaxRounds = 16
	set.A2A.Profiles[0] = "a2a-1.0"
	if got := n.Facets().MCP.MRTR.MaxRounds; got != 4 {
		t.Errorf("caller's mrtr.maxRounds reached the Negotiator: %d", got)
	}
	if got := n.Facets().A2A.Profiles[0]; got != "a2a-1.2" {
		t.Errorf("caller's profiles reached the Negotiator: %s", got)
	}

	view := n.Facets()
	view.A2A.Versions[0] = "9.9"
	view.A2A.PreferredVersion = "1.1"
	if got := n.Facets().A2A; got.Versions[0] != "1.0" || got.PreferredVersion != "1.2" {
		t.Errorf("a change to Facets() reached the Negotiator: %+v", got)
	}
	o, _ := n.Decide(user(), a2aOffer("", "0.3"))
	if got := o.Error.Details["supported"]; !reflect.DeepEqual(got, []string{"1.1", "1.2"}) {
		t.Errorf("a change to Facets() reached the refusal: supported = %v", got)
	}
}

func TestNegotiatorSingleProtocol(t *testing.T) {
	n, err := negotiate.Compile(wideMCP(), clock())
	if err != nil {
		t.Fatal(err)
	}
	o, e := n.Decide(user(), a2aOffer("1.2", "1.2"))
	if o.Rule != negotiate.RuleInput || !errors.Is(o.Cause, negotiate.ErrNotAdvertised) || e.Outcome != "refused" {
		t.Errorf("a2a against an mcp-only Negotiator: %+v", o)
	}
	if d := sameOutcome(o, first(negotiate.Decide(user(), wideMCP(), a2aOffer("1.2", "1.2"), clock()))); d != "" {
		t.Errorf("Negotiator and Decide differ: %s", d)
	}
	o, _ = n.Decide(user(), negotiate.Offer{Protocol: "grpc", PeerVersions: []string{"1.0"}})
	if o.Rule != negotiate.RuleInput || o.Cause.Error() != `protocol not advertised: "grpc"` {
		t.Errorf("unknown protocol: %+v", o)
	}
	o, _ = n.Decide(user(), mcpOffer("", "2026-07-28"))
	if o.Kind != negotiate.Accepted || o.Version != "2026-07-28" {
		t.Errorf("mcp: %+v", o)
	}
	n, err = negotiate.Compile(wideA2A(), clock())
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := n.Decide(user(), mcpOffer("", "2026-07-28")); o.Rule != negotiate.RuleInput || !errors.Is(o.Cause, negotiate.ErrNotAdvertised) {
		t.Errorf("mcp against an a2a-only Negotiator: %+v", o)
	}
	if o, _ := n.Decide(user(), a2aOffer("", "1.2")); o.Kind != negotiate.Accepted || o.Version != "1.2" {
		t.Errorf("a2a: %+v", o)
	}
}

func first[A, B any](a A, _ B) A { return a }

func TestNegotiatorBadPeerIsNotCached(t *testing.T) {
	n, err := negotiate.Compile(wideA2A(), clock())
	if err != nil {
		t.Fatal(err)
	}
	bad := negotiate.Offer{Protocol: facets.ProtocolA2A, Peer: "mailto:ops@peer.example", PeerVersions: []string{"1.2"}}
	for range 2 {
		o, e := n.Decide(user(), bad)
		if o.Rule != negotiate.RuleInput || !isNoOrigin(o.Cause) || e.PeerDigest != "" || e.Floor != "1.1" {
			t.Fatalf("Outcome %+v event %+v", o, e)
		}
	}
}

func TestNegotiatorManyPeers(t *testing.T) {
	// More distinct peers than the cache holds: every answer still carries
	// its own peer's digest, including peers seen again after eviction.
	n, err := negotiate.Compile(wideA2A(), clock())
	if err != nil {
		t.Fatal(err)
	}
	const peers = negotiate.DefaultPeerCacheSize + 500
	check := func(i int) {
		peer := fmt.Sprintf("https://peer-%d.example:%d", i, 1000+i%50000)
		want, err := events.PeerDigest(peer)
		if err != nil {
			t.Fatal(err)
		}
		_, e := n.Decide(user(), negotiate.Offer{Protocol: facets.ProtocolA2A, Peer: peer, PeerVersions: []string{"1.2"}})
		if e.PeerDigest != want {
			t.Fatalf("peer %d: digest %s, want %s", i, e.PeerDigest, want)
		}
	}
	for i := range peers {
		check(i)
	}
	for i := range peers {
		check(i)
	}
}

func TestNegotiatorConcurrent(t *testing.T) {
	set := facets.Set{A2A: wideA2A().A2A, MCP: wideMCP().MCP}
	n, err := negotiate.Compile(set, clock())
	if err != nil {
		t.Fatal(err)
	}
	cases := decideCases()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 400 {
				c := cases[(g*7+i)%len(cases)]
				if c.policy.DenyDowngrade || c.policy.DowngradeDenied != nil || c.policy.Authenticated != nil {
					continue // n has the zero policy
				}
				if _, ok := set.Lookup(c.offer.Protocol); !ok || !reflect.DeepEqual(mustLookup(c.set, c.offer.Protocol), mustLookup(set, c.offer.Protocol)) {
					continue // a facet other than n's
				}
				offer := c.offer
				offer.Peer = fmt.Sprintf("https://p%d.example", (g+i)%64)
				wantO, wantE := negotiate.Decide(c.subject, set, offer, clock())
				o, e := n.Decide(c.subject, offer)
				if d := sameOutcome(o, wantO); d != "" {
					t.Errorf("goroutine %d, %s: %s", g, c.name, d)
					return
				}
				if !reflect.DeepEqual(e, wantE) {
					t.Errorf("goroutine %d, %s: event %+v, want %+v", g, c.name, e, wantE)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func mustLookup(s facets.Set, p facets.Protocol) facets.Advertised {
	a, _ := s.Lookup(p)
	return a
}

// The hook is asked about each downgrade the other rules would allow: the
// one a decision settles on, and on a refusal each version below preferred
// the refusal could list as served to this caller (details.supported).
func TestDowngradeDeniedHook(t *testing.T) {
	a2a := &policy.Downgrade{Protocol: facets.ProtocolA2A, From: "1.2", To: "1.1"}
	for _, c := range []struct {
		name    string
		set     facets.Set
		subject *negotiate.Subject
		offer   negotiate.Offer
		want    *policy.Downgrade // what the hook is asked; nil: never asked
		asked   [2]int            // how many times, allowing and denying
	}{
		{"a2a downgrade", wideA2A(), user(), a2aOffer("", "1.1"), a2a, [2]int{1, 2}},
		{"a2a explicit downgrade", wideA2A(), agentSAML(), a2aOffer("1.1", "1.1", "1.2"), a2a, [2]int{1, 2}},
		{"mcp downgrade", wideMCP(), user(), mcpOffer("", "2025-11-25", "2025-06-18"), &policy.Downgrade{Protocol: facets.ProtocolMCP, From: "2026-07-28", To: "2025-11-25"}, [2]int{1, 2}},
		{"no downgrade", wideA2A(), user(), a2aOffer("", "1.1", "1.2"), nil, [2]int{}},
		{"unauthenticated is refused first", wideA2A(), nil, a2aOffer("", "1.1"), nil, [2]int{}},
		{"anonymous is refused first", wideA2A(), anonymous(), a2aOffer("", "1.1"), nil, [2]int{}},
		{"below floor is refused first, then listed", wideA2A(), user(), a2aOffer("", "1.0"), a2a, [2]int{1, 1}},
		{"unoffered is refused first, then listed", wideA2A(), user(), a2aOffer("1.3", "1.1"), a2a, [2]int{1, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for i, deny := range []bool{false, true} {
				var asked []policy.Downgrade
				p := withClock(policy.Policy{DowngradeDenied: func(d policy.Downgrade) bool {
					asked = append(asked, d)
					return deny
				}})
				o, _ := negotiate.Decide(c.subject, c.set, c.offer, p)
				if len(asked) != c.asked[i] {
					t.Fatalf("deny %v: hook asked %d times (%+v), want %d", deny, len(asked), asked, c.asked[i])
				}
				for _, d := range asked {
					want := *c.want
					want.Subject = c.subject
					if d.Subject != c.subject || !reflect.DeepEqual(d, want) {
						t.Fatalf("hook asked %+v, want %+v", d, want)
					}
				}
				if c.asked != [2]int{1, 2} {
					continue
				}
				if deny && (o.Kind != negotiate.Refused || o.Rule != negotiate.RulePolicy || o.Reason != unsupported) {
					t.Errorf("denied: %+v", o)
				}
				if deny && slices.Contains(o.Error.Details["supported"].([]string), c.want.To) {
					t.Errorf("denied, and still listed: %v", o.Error.Details["supported"])
				}
				if !deny && (o.Kind != negotiate.Downgraded || o.Version != c.want.To) {
					t.Errorf("allowed: %+v", o)
				}
			}
		})
	}
}

func TestDenyDowngradeOverridesHook(t *testing.T) {
	p := withClock(policy.Policy{DenyDowngrade: true, DowngradeDenied: func(policy.Downgrade) bool { return false }})
	o, _ := negotiate.Decide(user(), wideA2A(), a2aOffer("", "1.1"), p)
	if o.Kind != negotiate.Refused || o.Rule != negotiate.RulePolicy {
		t.Fatalf("Outcome %+v", o)
	}
}

func TestAuthenticatedHookCannotPromote(t *testing.T) {
	for _, s := range []*negotiate.Subject{nil, anonymous(), forwardedAnonymous(), userWithAnonymousActor(), invalidSubject()} {
		asked := 0
		p := withClock(policy.Policy{Authenticated: func(*policy.Subject) bool { asked++; return true }})
		o, _ := negotiate.Decide(s, wideA2A(), a2aOffer("", "1.1"), p)
		if o.Kind != negotiate.Refused || o.Reason != unauthenticated || o.Rule != negotiate.RuleAuthenticated {
			t.Errorf("%+v: Outcome %+v", s, o)
		}
		if asked != 0 {
			t.Errorf("%+v: hook asked %d times", s, asked)
		}
	}
	// It is asked about an authenticated Subject, with that Subject, and
	// may demote it.
	s := user()
	var seen *policy.Subject
	p := withClock(policy.Policy{Authenticated: func(x *policy.Subject) bool { seen = x; return false }})
	o, _ := negotiate.Decide(s, wideA2A(), a2aOffer("", "1.1"), p)
	if seen != s || o.Reason != unauthenticated {
		t.Errorf("demotion: seen %p want %p, Outcome %+v", seen, s, o)
	}
}

func TestClock(t *testing.T) {
	calls := 0
	at := time.Date(2030, 1, 2, 3, 4, 5, 6, time.FixedZone("X", -7*3600))
	p := policy.Policy{Now: func() time.Time { calls++; return at }}
	for name, decide := range map[string]func() events.NegotiationDecided{
		"Decide": func() events.NegotiationDecided {
			_, e := negotiate.Decide(nil, wideA2A(), a2aOffer("", "1.2"), p)
			return e
		},
		"Decide refused": func() events.NegotiationDecided {
			_, e := negotiate.Decide(nil, wideA2A(), a2aOffer("", "0.3"), p)
			return e
		},
		"Decide input": func() events.NegotiationDecided {
			_, e := negotiate.Decide(nil, facets.Set{}, a2aOffer("", "1.2"), p)
			return e
		},
		"Negotiator": func() events.NegotiationDecided {
			n, err := negotiate.Compile(wideA2A(), p)
			if err != nil {
				t.Fatal(err)
			}
			_, e := n.Decide(nil, a2aOffer("", "1.2"))
			return e
		},
	} {
		calls = 0
		e := decide()
		if calls != 1 {
			t.Errorf("%s: clock read %d times", name, calls)
		}
		if !e.At.Equal(at) || e.At.Location() != time.UTC || e.At != at.UTC() {
			t.Errorf("%s: at %v, want %v in UTC", name, e.At, at.UTC())
		}
	}
	// Without a clock, time.Now is used.
	before := time.Now()
	_, e := negotiate.Decide(nil, wideA2A(), a2aOffer("", "1.2"), policy.Policy{})
	if e.At.Before(before.Add(-time.Second)) || e.At.After(time.Now().Add(time.Second)) || e.At.Location() != time.UTC {
		t.Errorf("default clock: at %v", e.At)
	}
}

// errNoOrigin stands, in a table, for the error of a peer URL with no
// origin: a *events.FieldError for the peer, which isNoOrigin recognizes.
var errNoOrigin = errors.New("peer URL without an origin")

// isNoOrigin reports whether err holds the *events.FieldError of a peer URL
// with no origin.
func isNoOrigin(err error) bool {
	fe, ok := errors.AsType[*events.FieldError](err)
	return ok && fe.Field == "peer"
}

// A refusal lists only what this caller could be served (issue 21): an
// anonymous caller is not told of versions below preferred it cannot
// have, a below-floor refusal never lists the version it refused, and a
// downgrade the policy denies is not offered either.
func TestRefusalListsWhatThisCallerCanBeServed(t *testing.T) {
	set := wideA2A() // 1.0, 1.1, 1.2; preferred 1.2, floor 1.1
	for _, c := range []struct {
		name    string
		subject *negotiate.Subject
		p       policy.Policy
		offer   negotiate.Offer
		want    []string
	}{
		{"anonymous, below preferred", nil, policy.Policy{}, a2aOffer("1.1", "1.1"), []string{"1.2"}},
		{"anonymous, below the floor", anonymous(), policy.Policy{}, a2aOffer("1.0", "1.0"), []string{"1.2"}},
		{"authenticated, below the floor", user(), policy.Policy{}, a2aOffer("1.0", "1.0"), []string{"1.1", "1.2"}},
		{"authenticated, downgrades denied", user(), policy.Policy{DenyDowngrade: true}, a2aOffer("1.1", "1.1"), []string{"1.2"}},
		{"authenticated, unoffered", user(), policy.Policy{}, a2aOffer("1.3", "1.3"), []string{"1.1", "1.2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, _ := negotiate.Decide(c.subject, set, c.offer, withClock(c.p))
			if o.Kind != negotiate.Refused {
				t.Fatalf("not refused: %+v", o)
			}
			if got := o.Error.Details["supported"]; !reflect.DeepEqual(got, c.want) {
				t.Errorf("supported %v, want %v", got, c.want)
			}
		})
	}
}
