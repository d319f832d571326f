package negotiate_test

import (
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// Each rapid check draws a batch of cases, so that the properties run
// thousands of cases within rapid's default 100 checks and a few seconds.
const (
	casesPerCheck      = 40
	modelCasesPerCheck = 120 // 100 checks: 12,000 cases
)

var (
	a2aUniverse = []string{"0.3", "0.9", "1.0", "1.1", "1.2", "1.9", "1.10", "2.0", "2.1", "10.0"}
	mcpUniverse = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-01-01", "2026-07-28", "2026-12-31", "2027-02-28"}
	// malformed is never a version of either protocol.
	malformed = []string{
		"1", "1.x", "01.0", "1.01", "v1.0", "1.0.0", " 1.0", "1.0 ", "latest", "-1.0", "+1.0", "1,0", "\uff11.0",
		"4294967296.0", "1.99999999999", "2025-02-30", "2025-13-01", "2025-6-18", "20250618", "2026-07-28T00:00:00Z",
		"2026-07-28 ", "\x00", "1.0\n",
	}
	// peerURLs are valid and invalid peer URLs. Valid hosts are chosen so
	// that they cannot occur in a version or a hex digest by chance.
	validPeerURLs = []string{
		"https://peer.example", "https://Peer.Example:443/a2a?x=1#f", "http://agent.example.com:8080/mcp",
		"https://user:secret@tools.example.net/mcp", "wss://stream.example.org/ws", "https://[2001:db8::1]:8443/",
		"https://xn--bcher-kva.example/", "",
	}
	invalidPeerURLs = []string{
		"ftp://peer.example", "not a url", "https://", "mailto:ops@peer.example",
		"https://peer.example:99999", "/relative/path", "https://bad host.example/",
	}
	issuers = []string{"https://idp.example", "https://distrusted.example", "urn:host.example:anon-surface"}
)

func universe(p facets.Protocol) []string {
	if p == facets.ProtocolMCP {
		return mcpUniverse
	}
	return a2aUniverse
}

func genVersion(p facets.Protocol) *rapid.Generator[string] {
	if p == facets.ProtocolMCP {
		day := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
		return rapid.OneOf(rapid.SampledFrom(mcpUniverse), rapid.Custom(func(t *rapid.T) string {
			return day.AddDate(0, 0, rapid.IntRange(0, 4*366).Draw(t, "day")).Format(time.DateOnly)
		}))
	}
	return rapid.OneOf(rapid.SampledFrom(a2aUniverse), rapid.Custom(func(t *rapid.T) string {
		return fmt.Sprintf("%d.%d", rapid.IntRange(0, 3).Draw(t, "major"), rapid.IntRange(0, 12).Draw(t, "minor"))
	}))
}

func cmpVersions(p facets.Protocol) func(a, b string) int {
	return func(a, b string) int {
		c, err := compareVersions(p, a, b)
		if err != nil {
			panic(err)
		}
		return c
	}
}

// genAdvertised draws a valid facet: 1–8 distinct versions in random
// order, floor ≤ preferred, both offered.
func genAdvertised(t *rapid.T, p facets.Protocol) facets.Advertised {
	n := rapid.IntRange(1, 8).Draw(t, "offered count")
	offered := rapid.SliceOfNDistinct(genVersion(p), n, n, rapid.ID[string]).Draw(t, "offered")
	sorted := slices.SortedFunc(slices.Values(offered), cmpVersions(p))
	pi := rapid.IntRange(0, n-1).Draw(t, "preferred index")
	fi := rapid.IntRange(0, pi).Draw(t, "floor index")
	return facets.Advertised{Protocol: p, Versions: offered, Preferred: sorted[pi], Floor: sorted[fi], RefreshedAt: refreshed}
}

func setOf(advs ...facets.Advertised) facets.Set {
	var s facets.Set
	for _, a := range advs {
		switch a.Protocol {
		case facets.ProtocolA2A:
			s.A2A = &facets.A2A{Versions: a.Versions, PreferredVersion: a.Preferred, MinimumVersion: a.Floor, RefreshedAt: a.RefreshedAt}
		case facets.ProtocolMCP:
			s.MCP = &facets.MCP{Revisions: a.Versions, PreferredVersion: a.Preferred, MinimumRevision: a.Floor, RefreshedAt: a.RefreshedAt}
		}
	}
	return s
}

func genSubject(t *rapid.T) *negotiate.Subject {
	authenticated := func(label string) *negotiate.Subject {
		lane := rapid.SampledFrom([]string{policy.LaneAPIKey, policy.LaneOAuth2, policy.LaneOIDC, policy.LaneMTLS, policy.LaneSAML,
			policy.LaneSCIM, policy.LaneLDAP, policy.LaneWorkload, policy.LaneSession}).Draw(t, label+" lane")
		s := &negotiate.Subject{
			Issuer:    rapid.SampledFrom(issuers[:2]).Draw(t, label+" issuer"),
			SubjectID: rapid.SampledFrom([]string{"u-1", "agent-7", "svc"}).Draw(t, label+" subjectId"),
			Tenant:    rapid.SampledFrom([]string{"acme", "acme-2", "t.1~x_y-z"}).Draw(t, label+" tenant"),
			Lane:      lane,
			Kind:      rapid.SampledFrom([]string{policy.KindUser, policy.KindAgent, policy.KindWorkload}).Draw(t, label+" kind"),
		}
		if lane == policy.LaneSAML || lane == policy.LaneSCIM {
			s.KeyClass = rapid.SampledFrom([]string{policy.KeyClassOpaqueIDP, policy.KeyClassConfiguredImmutable}).Draw(t, label+" keyClass")
		}
		return s
	}
	switch rapid.IntRange(0, 9).Draw(t, "subject shape") {
	case 0:
		return nil
	case 1, 2, 6, 7, 8:
		return authenticated("subject")
	case 3: // anonymous
		return &negotiate.Subject{Issuer: issuers[2], SubjectID: "anon-1", Tenant: "acme", Lane: policy.LaneAnonymous, Kind: policy.KindAnonymous}
	case 4: // anonymous end user forwarded by an authenticated peer
		return &negotiate.Subject{Issuer: issuers[2], SubjectID: "anon-1", Tenant: "acme", Lane: policy.LaneAnonymous, Kind: policy.KindAnonymous,
			Actor: authenticated("actor")}
	case 5: // authenticated, acting through an anonymous actor
		s := authenticated("subject")
		s.Actor = &negotiate.Subject{Issuer: issuers[2], SubjectID: "anon-1", Tenant: "acme", Lane: policy.LaneAnonymous, Kind: policy.KindAnonymous}
		return s
	}
	// invalid, in one of several ways
	s := authenticated("subject")
	switch rapid.IntRange(0, 6).Draw(t, "invalid how") {
	case 0:
		s.Tenant = "bad tenant"
	case 1:
		s.Issuer = ""
	case 2:
		s.SubjectID = "a/b"
	case 3:
		s.Lane = policy.LaneAnonymous // kind not anonymous
	case 4:
		s.Kind = "robot"
	case 5:
		s.KeyClass = "opaque-idp"
		s.Lane = policy.LaneOIDC
	case 6: // too deep
		x := s
		for range 5 { // one more actor than the schema allows (actor1..actor4)
			x.Actor = authenticated("deep actor")
			x = x.Actor
		}
	}
	return s
}

// genPolicy draws a policy with the fixed clock; its name is for failure
// messages.
func genPolicy(t *rapid.T, p facets.Protocol) policy.Policy {
	var pol policy.Policy
	switch rapid.IntRange(0, 4).Draw(t, "policy") {
	case 1:
		pol.DenyDowngrade = true
	case 2:
		deny := rapid.SliceOfN(rapid.SampledFrom(universe(p)), 0, 4).Draw(t, "deny to")
		pol.DowngradeDenied = func(d policy.Downgrade) bool { return slices.Contains(deny, d.To) }
	case 3:
		pol.Authenticated = func(s *policy.Subject) bool { return s.Issuer != issuers[1] }
	case 4:
		deny := rapid.SliceOfN(rapid.SampledFrom(universe(p)), 0, 4).Draw(t, "deny to")
		pol.DowngradeDenied = func(d policy.Downgrade) bool { return slices.Contains(deny, d.To) }
		pol.Authenticated = func(s *policy.Subject) bool { return s.Issuer != issuers[1] }
	}
	return withClock(pol)
}

func genOffer(t *rapid.T, adv facets.Advertised) negotiate.Offer {
	p := adv.Protocol
	other := facets.ProtocolMCP
	if p == facets.ProtocolMCP {
		other = facets.ProtocolA2A
	}
	cmp := cmpVersions(p)
	var requested string
	switch rapid.IntRange(0, 6).Draw(t, "requested kind") {
	case 0: // absent
	case 1: // offered
		requested = rapid.SampledFrom(adv.Versions).Draw(t, "requested")
	case 2: // anything, offered or not
		requested = genVersion(p).Draw(t, "requested")
	case 3:
		requested = rapid.SampledFrom(malformed).Draw(t, "requested")
	case 4: // the other protocol's version: malformed here
		requested = rapid.SampledFrom(universe(other)).Draw(t, "requested")
	case 5, 6: // below the floor, when anything is
		below := slices.DeleteFunc(slices.Concat(universe(p), adv.Versions), func(v string) bool { return cmp(v, adv.Floor) >= 0 })
		if len(below) > 0 {
			requested = rapid.SampledFrom(below).Draw(t, "requested")
		}
	}
	peer := rapid.SliceOfN(rapid.OneOf(
		rapid.SampledFrom(adv.Versions), rapid.SampledFrom(adv.Versions), rapid.SampledFrom(adv.Versions), genVersion(p),
		rapid.SampledFrom(malformed), rapid.SampledFrom(universe(other)), rapid.Just(""),
	), 0, 6).Draw(t, "peer versions")
	if rapid.Bool().Draw(t, "peer below preferred") {
		// A peer that speaks only versions between the floor and preferred:
		// the downgrade path.
		span := slices.DeleteFunc(slices.Clone(adv.Versions), func(v string) bool { return cmp(v, adv.Floor) < 0 || cmp(v, adv.Preferred) >= 0 })
		if len(span) > 0 {
			peer = rapid.SliceOfN(rapid.SampledFrom(span), 1, 3).Draw(t, "peer versions below preferred")
		}
	}
	return negotiate.Offer{
		Protocol:     p,
		Peer:         genPeerURL(t),
		Requested:    requested,
		PeerVersions: peer,
		CounterOffer: rapid.Bool().Draw(t, "counter-offer"),
	}
}

func genPeerURL(t *rapid.T) string {
	if rapid.IntRange(0, 9).Draw(t, "peer URL valid") < 8 {
		return rapid.SampledFrom(validPeerURLs).Draw(t, "peer URL")
	}
	return rapid.SampledFrom(invalidPeerURLs).Draw(t, "peer URL")
}

// decisionCase is one drawn negotiation.
type decisionCase struct {
	subject *negotiate.Subject
	set     facets.Set
	adv     facets.Advertised // the facet of offer.Protocol; zero when not advertised
	offer   negotiate.Offer
	policy  policy.Policy
}

func genCase(t *rapid.T) decisionCase {
	a2a := genAdvertised(t, facets.ProtocolA2A)
	mcp := genAdvertised(t, facets.ProtocolMCP)
	var set facets.Set
	switch rapid.IntRange(0, 5).Draw(t, "advertises") {
	case 0:
		set = setOf(a2a)
	case 1:
		set = setOf(mcp)
	default:
		set = setOf(a2a, mcp)
	}
	adv := a2a
	if rapid.Bool().Draw(t, "mcp offer") {
		adv = mcp
	}
	c := decisionCase{subject: genSubject(t), set: set, offer: genOffer(t, adv)}
	c.adv, _ = set.Lookup(adv.Protocol)
	c.policy = genPolicy(t, adv.Protocol)
	return c
}

// coverage counts the rules and kinds the properties reached, so that a
// generator that stops reaching a rule fails the test.
type coverage struct {
	mu    sync.Mutex
	cases int
	seen  map[string]int
}

func (c *coverage) add(o negotiate.Outcome) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]int{}
	}
	c.cases++
	key := string(o.Rule) + "/" + o.Kind.String()
	if o.CounterOffered {
		key += "/counter"
	}
	c.seen[key]++
}

func (c *coverage) require(t *testing.T, keys ...string) {
	t.Helper()
	t.Logf("%d cases: %v", c.cases, c.seen)
	if testing.Short() {
		return // too few cases to be sure to reach every rule
	}
	for _, k := range keys {
		if c.seen[k] == 0 {
			t.Errorf("no case reached %s", k)
		}
	}
}

var everyOutcome = []string{
	"input/refused", "floor/refused", "offered/refused", "offered/accepted/counter", "common/refused",
	"authenticated/refused", "authenticated/accepted/counter", "policy/refused", "policy/accepted/counter",
	"accept/accepted", "accept/downgraded",
}

// TestPropertyInvariants: never accepted below the floor; never below
// preferred for a Subject that is not authenticated; an accepted version is
// offered by the host, and spoken by the peer unless counter-offered; a
// counter-offer is the preferred version; one event that validates, agrees
// with the Outcome and never names the peer's host; every refusal carries
// interop_version_unsupported with its reason.
func TestPropertyInvariants(t *testing.T) {
	var cov coverage
	rapid.Check(t, func(t *rapid.T) {
		for range casesPerCheck {
			c := genCase(t)
			o, e := negotiate.Decide(c.subject, c.set, c.offer, c.policy)
			checkInvariants(t, c.subject, c.adv, c.offer, c.policy, o, e)
			checkContentFree(t, c.offer.Peer, e)
			if !(policy.Policy{}).IsAuthenticated(c.subject) && o.Kind == negotiate.Downgraded {
				t.Fatalf("downgraded an unauthenticated Subject: %+v", o)
			}
			cov.add(o)
		}
	})
	cov.require(t, everyOutcome...)
}

// TestPropertyNegotiatorAgreesWithDecide: the compiled form gives the
// pure function's answers, event included.
func TestPropertyNegotiatorAgreesWithDecide(t *testing.T) {
	var cov coverage
	rapid.Check(t, func(t *rapid.T) {
		for range casesPerCheck {
			c := genCase(t)
			if err := c.set.Validate(); err != nil {
				t.Fatalf("generated an invalid facet: %v", err)
			}
			n, err := negotiate.Compile(c.set, c.policy)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			want, wantE := negotiate.Decide(c.subject, c.set, c.offer, c.policy)
			for range 2 { // uncached, then cached digest
				o, e := n.Decide(c.subject, c.offer)
				if d := sameOutcome(o, want); d != "" {
					t.Fatalf("Negotiator and Decide differ: %s\n%+v\n%+v", d, o, want)
				}
				if !reflect.DeepEqual(e, wantE) {
					t.Fatalf("events differ:\n%+v\n%+v", e, wantE)
				}
			}
			cov.add(want)
		}
	})
	cov.require(t, everyOutcome...)
}

// modelOutcome is what the model decides.
type modelOutcome struct {
	Kind    negotiate.Kind
	Version string
	Reason  string
	Rule    negotiate.Rule
	Counter bool
}

// modelAuthenticated is the definition of authenticated, written out:
// present, valid, and anonymous nowhere in the actor chain.
func modelAuthenticated(s *negotiate.Subject) bool {
	if s == nil || s.Validate() != nil {
		return false
	}
	for x := s; x != nil; x = x.Actor {
		if x.Kind == "anonymous" || x.Lane == "anonymous" {
			return false
		}
	}
	return true
}

// model is a straightforward reading of the seven rules (the package
// documentation, "The decision"), written independently of the package,
// for valid facets.
func model(subject *negotiate.Subject, set facets.Set, offer negotiate.Offer, p policy.Policy) modelOutcome {
	refuse := func(rule negotiate.Rule, reason string) modelOutcome {
		return modelOutcome{Kind: negotiate.Refused, Reason: reason, Rule: rule}
	}
	var versions []string
	var preferred, floor string
	switch {
	case offer.Protocol == facets.ProtocolA2A && set.A2A != nil:
		versions, preferred, floor = set.A2A.Versions, set.A2A.PreferredVersion, set.A2A.MinimumVersion
	case offer.Protocol == facets.ProtocolMCP && set.MCP != nil:
		versions, preferred, floor = set.MCP.Revisions, set.MCP.PreferredVersion, set.MCP.MinimumRevision
	default:
		return refuse(negotiate.RuleInput, events.ReasonUnsupported)
	}
	if offer.Peer != "" {
		if _, err := events.PeerDigest(offer.Peer); err != nil {
			return refuse(negotiate.RuleInput, events.ReasonUnsupported)
		}
	}
	proto := offer.Protocol
	wellFormed := func(s string) bool { _, err := facets.ParseVersion(proto, s); return err == nil }
	compare := func(a, b string) int {
		c, err := compareVersions(proto, a, b)
		if err != nil {
			panic(err)
		}
		return c
	}
	refuseOrCounter := func(rule negotiate.Rule, reason string) modelOutcome {
		if offer.CounterOffer {
			return modelOutcome{Kind: negotiate.Accepted, Version: preferred, Reason: events.ReasonOK, Rule: rule, Counter: true}
		}
		return refuse(rule, reason)
	}

	// 1.
	candidate := offer.Requested
	if candidate == "" {
		candidate = preferred
	}
	// 2.
	if wellFormed(candidate) && compare(candidate, floor) < 0 {
		return refuse(negotiate.RuleFloor, events.ReasonBelowFloor)
	}
	// 3.
	if !wellFormed(candidate) || !slices.Contains(versions, candidate) {
		return refuseOrCounter(negotiate.RuleOffered, events.ReasonUnsupported)
	}
	// 4.
	var peer []string
	for _, v := range offer.PeerVersions {
		if wellFormed(v) {
			peer = append(peer, v)
		}
	}
	var common []string
	for _, v := range versions {
		speaks := slices.ContainsFunc(peer, func(o string) bool { return compare(o, v) == 0 })
		if speaks && compare(v, floor) >= 0 && compare(v, candidate) <= 0 {
			common = append(common, v)
		}
	}
	if len(common) == 0 {
		for _, v := range peer {
			if compare(v, floor) >= 0 {
				return refuse(negotiate.RuleCommon, events.ReasonUnsupported)
			}
		}
		return refuse(negotiate.RuleCommon, events.ReasonBelowFloor)
	}
	slices.SortFunc(common, func(a, b string) int { return compare(b, a) })
	chosen := common[0]
	if compare(chosen, preferred) >= 0 {
		return modelOutcome{Kind: negotiate.Accepted, Version: chosen, Reason: events.ReasonOK, Rule: negotiate.RuleAccept}
	}
	// 5.
	if !modelAuthenticated(subject) || p.Authenticated != nil && !p.Authenticated(subject) {
		return refuseOrCounter(negotiate.RuleAuthenticated, events.ReasonUnauthenticated)
	}
	// 6.
	if p.DenyDowngrade || p.DowngradeDenied != nil && p.DowngradeDenied(policy.Downgrade{Subject: subject, Protocol: proto, From: preferred, To: chosen}) {
		return refuseOrCounter(negotiate.RulePolicy, events.ReasonUnsupported)
	}
	// 7.
	return modelOutcome{Kind: negotiate.Downgraded, Version: chosen, Reason: events.ReasonOK, Rule: negotiate.RuleAccept}
}

// TestPropertyModel: Decide agrees with the model on at least 10,000
// random cases.
func TestPropertyModel(t *testing.T) {
	var cov coverage
	rapid.Check(t, func(t *rapid.T) {
		for range modelCasesPerCheck {
			c := genCase(t)
			want := model(c.subject, c.set, c.offer, c.policy)
			o, _ := negotiate.Decide(c.subject, c.set, c.offer, c.policy)
			got := modelOutcome{o.Kind, o.Version, o.Reason, o.Rule, o.CounterOffered}
			if got != want {
				t.Fatalf("Decide %+v, model %+v\nsubject %+v\nset a2a %+v mcp %+v\noffer %+v",
					got, want, c.subject, c.set.A2A, c.set.MCP, c.offer)
			}
			cov.add(o)
		}
	})
	cov.require(t, everyOutcome...)
	if cov.cases < 10_000 && !testing.Short() {
		t.Errorf("ran %d model cases, want at least 10,000", cov.cases)
	}
}
