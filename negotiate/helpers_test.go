package negotiate_test

import (
	"errors"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
	"golang.org/x/mod/semver"
)

// testNow is the fixed clock of every test. It is given in a zone other
// than UTC so that the tests see the decision convert it.
var testNow = time.Date(2026, 11, 29, 13, 0, 0, 0, time.FixedZone("CET", 3600))

// testNowUTC is testNow as the event must carry it.
var testNowUTC = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// refreshed keeps every facet of the tests within the refresh window of
// testNow, so that facets.Set.Validate accepts them.
const refreshed = "2026-11-01"

func clock() policy.Policy {
	return policy.Policy{Now: func() time.Time { return testNow }}
}

func withClock(p policy.Policy) policy.Policy {
	p.Now = func() time.Time { return testNow }
	return p
}

func a2aSet(versions []string, preferred, floor string) facets.Set {
	return facets.Set{A2A: &facets.A2A{
		Versions:         versions,
		PreferredVersion: preferred,
		MinimumVersion:   floor,
		RefreshedAt:      refreshed,
	}}
}

func mcpSet(revisions []string, preferred, floor string) facets.Set {
	return facets.Set{MCP: &facets.MCP{
		Revisions:        revisions,
		PreferredVersion: preferred,
		MinimumRevision:  floor,
		RefreshedAt:      refreshed,
	}}
}

// wideA2A is the wider host of the digest's table C.
func wideA2A() facets.Set { return a2aSet([]string{"1.0", "1.1", "1.2"}, "1.2", "1.1") }

// wideMCP is an MCP host with the same shape as wideA2A.
func wideMCP() facets.Set {
	return mcpSet([]string{"2025-06-18", "2025-11-25", "2026-07-28"}, "2026-07-28", "2025-11-25")
}

const peerURL = "https://peer.example/a2a"

// peerDigest is events.PeerDigest(peerURL), computed independently:
// lowercase hex SHA-256 of "https://peer.example".
const peerDigest = "3a61b99132bfdfa2ce5f773d8dc89d8246bfe6b266791549de14a6692d1bb1e1"

func user() *negotiate.Subject {
	return &negotiate.Subject{Issuer: "https://idp.example", SubjectID: "u-42", Tenant: "acme", Lane: policy.LaneOIDC, Kind: policy.KindUser}
}

func agentSAML() *negotiate.Subject {
	return &negotiate.Subject{Issuer: "https://saml.example", SubjectID: "agent-7", Tenant: "acme", Lane: policy.LaneSAML, Kind: policy.KindAgent, KeyClass: policy.KeyClassOpaqueIDP}
}

func anonymous() *negotiate.Subject {
	return &negotiate.Subject{Issuer: "urn:host.example:anon-surface", SubjectID: "anon-1", Tenant: "acme", Lane: policy.LaneAnonymous, Kind: policy.KindAnonymous}
}

// forwardedAnonymous is an anonymous end user forwarded by an
// authenticated peer.
func forwardedAnonymous() *negotiate.Subject {
	s := anonymous()
	s.Actor = user()
	return s
}

// userWithAnonymousActor is an authenticated Subject acting through an
// anonymous actor: anonymous somewhere in its chain.
func userWithAnonymousActor() *negotiate.Subject {
	s := user()
	s.Actor = anonymous()
	return s
}

func invalidSubject() *negotiate.Subject {
	s := user()
	s.Tenant = "not a tenant"
	return s
}

// tb is what the shared checks need from *testing.T and *rapid.T.
type tb interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// sameOutcome reports how two Outcomes differ, or "" when they agree on
// every field but Cause, whose text may differ; for Cause it compares
// presence and message.
func sameOutcome(a, b negotiate.Outcome) string {
	var diffs []string
	if a.Kind != b.Kind {
		diffs = append(diffs, "Kind "+a.Kind.String()+" vs "+b.Kind.String())
	}
	if a.Protocol != b.Protocol || a.Version != b.Version || a.Requested != b.Requested || a.Reason != b.Reason {
		diffs = append(diffs, "protocol/version/requested/reason "+
			strings.Join([]string{string(a.Protocol), a.Version, a.Requested, string(a.Reason)}, ",")+" vs "+
			strings.Join([]string{string(b.Protocol), b.Version, b.Requested, string(b.Reason)}, ","))
	}
	if a.Rule != b.Rule {
		diffs = append(diffs, "Rule "+string(a.Rule)+" vs "+string(b.Rule))
	}
	if a.CounterOffered != b.CounterOffered {
		diffs = append(diffs, "CounterOffered differs")
	}
	if !reflect.DeepEqual(a.Error, b.Error) {
		diffs = append(diffs, "Error differs")
	}
	if (a.Cause == nil) != (b.Cause == nil) || a.Cause != nil && a.Cause.Error() != b.Cause.Error() {
		diffs = append(diffs, "Cause differs")
	}
	return strings.Join(diffs, "; ")
}

// hostnames returns the spellings of rawURL's host that must never appear
// in an event: as written, lowercased, and with its port.
func hostnames(rawURL string) []string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" {
		return nil
	}
	return []string{u.Hostname(), strings.ToLower(u.Hostname()), u.Host, strings.ToLower(u.Host)}
}

// eventStrings lists every string field of e.
func eventStrings(e events.NegotiationDecided) []string {
	return []string{string(e.Protocol), string(e.Outcome), e.Version, e.Requested, string(e.Reason), e.Floor, e.PeerDigest}
}

// checkContentFree checks that no string of e contains the peer's host in
// clear. It is for peers whose hosts cannot occur in an event by chance
// (not "a", which "accepted" contains).
func checkContentFree(t tb, peer string, e events.NegotiationDecided) {
	t.Helper()
	for _, h := range hostnames(peer) {
		for _, s := range eventStrings(e) {
			if h != "" && strings.Contains(s, h) {
				t.Errorf("event field %q contains the peer host %q", s, h)
			}
		}
	}
}

// checkInvariants checks what every decision must satisfy, whatever its
// inputs: the safety rules, the shape of the Outcome and of the event, and
// their agreement. adv is the host's advertised facet for the offer's
// protocol; subject and p are what the decision was given.
func checkInvariants(t tb, subject *negotiate.Subject, adv facets.Advertised, offer negotiate.Offer, p policy.Policy,
	o negotiate.Outcome, e events.NegotiationDecided) {
	t.Helper()
	proto := adv.Protocol
	cmp := func(a, b string) int {
		c, err := compareVersions(proto, a, b)
		if err != nil {
			t.Fatalf("comparing %q and %q: %v", a, b, err)
		}
		return c
	}

	if o.Protocol != offer.Protocol {
		t.Errorf("Outcome.Protocol = %q, want %q", o.Protocol, offer.Protocol)
	}
	if o.Requested != offer.Requested {
		t.Errorf("Outcome.Requested = %q, want %q", o.Requested, offer.Requested)
	}

	// Exactly one event, valid, agreeing with the outcome.
	if err := e.Validate(); err != nil {
		t.Errorf("event does not validate: %v\n%+v", err, e)
	}
	if (e.Outcome == "accepted") != (o.Err() == nil) {
		t.Errorf("event outcome %q, Outcome kind %v", e.Outcome, o.Kind)
	}
	if e.Version != o.Version {
		t.Errorf("event version %q, Outcome version %q", e.Version, o.Version)
	}
	if e.Reason != o.Reason {
		t.Errorf("event reason %q, Outcome reason %q", e.Reason, o.Reason)
	}
	if e.Protocol != offer.Protocol {
		t.Errorf("event protocol %q, want %q", e.Protocol, offer.Protocol)
	}
	if !e.At.Equal(testNowUTC) || e.At.Location() != time.UTC {
		t.Errorf("event at %v, want %v in UTC", e.At, testNowUTC)
	}
	if _, err := facets.ParseVersion(offer.Protocol, offer.Requested); err == nil {
		if e.Requested != offer.Requested {
			t.Errorf("event requested %q, want %q", e.Requested, offer.Requested)
		}
	} else if e.Requested != "" {
		t.Errorf("event requested %q for a request that named no well-formed version (%q)", e.Requested, offer.Requested)
	}
	wantDigest := ""
	if offer.Peer != "" {
		wantDigest, _ = events.PeerDigest(offer.Peer)
	}
	if e.PeerDigest != wantDigest {
		t.Errorf("event peerDigest %q, want %q", e.PeerDigest, wantDigest)
	}

	if o.Err() != nil {
		if o.Kind != negotiate.Refused {
			t.Errorf("Kind %v is neither accepted nor refused", o.Kind)
		}
		if o.Version != "" || o.CounterOffered {
			t.Errorf("refused Outcome has version %q, counterOffered %v", o.Version, o.CounterOffered)
		}
		if o.Reason != events.ReasonBelowFloor && o.Reason != events.ReasonUnauthenticated && o.Reason != events.ReasonUnsupported {
			t.Errorf("refused with reason %q", o.Reason)
		}
		if o.Error == nil {
			t.Fatalf("refused without an Error")
		}
		if o.Error.Code != wperrors.InteropVersionUnsupported || o.Error.Code.HTTPStatus() != 400 || o.Error.Code.Retriable() {
			t.Errorf("refusal error %v, status %d", o.Error.Code, o.Error.Code.HTTPStatus())
		}
		if got := o.Error.Details["reason"]; got != string(o.Reason) {
			t.Errorf("details.reason = %v, want %q", got, o.Reason)
		}
		if got := o.Error.Details["protocol"]; got != string(offer.Protocol) {
			t.Errorf("details.protocol = %v, want %q", got, offer.Protocol)
		}
		if !errors.Is(o.Err(), wperrors.InteropVersionUnsupported) {
			t.Errorf("Err() = %v", o.Err())
		}
		if o.Rule == negotiate.RuleAccept {
			t.Errorf("refused by RuleAccept")
		}
		if (o.Rule == negotiate.RuleInput) != (o.Cause != nil) {
			t.Errorf("rule %v with cause %v", o.Rule, o.Cause)
		}
		return
	}

	// Accepted or downgraded.
	if o.Error != nil || o.Err() != nil || o.Cause != nil {
		t.Errorf("accepted Outcome carries an error: %v / %v", o.Error, o.Cause)
	}
	if o.Reason != events.ReasonOK {
		t.Errorf("accepted with reason %q", o.Reason)
	}
	if !slices.Contains(adv.Versions, o.Version) {
		t.Errorf("accepted %q, which the host does not offer (%v)", o.Version, adv.Versions)
	}
	if cmp(o.Version, adv.Floor) < 0 {
		t.Errorf("accepted %q below the floor %q", o.Version, adv.Floor)
	}
	if !p.IsAuthenticated(subject) || !(policy.Policy{}).IsAuthenticated(subject) {
		if cmp(o.Version, adv.Preferred) < 0 {
			t.Errorf("accepted %q below preferred %q for an unauthenticated Subject %+v", o.Version, adv.Preferred, subject)
		}
	}
	if (o.Kind == negotiate.Downgraded) != (cmp(o.Version, adv.Preferred) < 0) {
		t.Errorf("kind %v for version %q against preferred %q", o.Kind, o.Version, adv.Preferred)
	}
	if o.CounterOffered {
		if o.Version != adv.Preferred || !offer.CounterOffer || o.Kind != negotiate.Accepted || o.Rule == negotiate.RuleAccept {
			t.Errorf("counter-offer at %q (preferred %q), offer.CounterOffer %v, kind %v, rule %v",
				o.Version, adv.Preferred, offer.CounterOffer, o.Kind, o.Rule)
		}
	} else {
		if o.Rule != negotiate.RuleAccept {
			t.Errorf("accepted without a counter-offer by rule %v", o.Rule)
		}
		if !slices.Contains(offer.PeerVersions, o.Version) {
			t.Errorf("accepted %q, which the peer does not speak (%v)", o.Version, offer.PeerVersions)
		}
		if offer.Requested != "" && cmp(o.Version, offer.Requested) > 0 {
			t.Errorf("accepted %q above the requested %q", o.Version, offer.Requested)
		}
	}
}

// compareVersions orders two well-formed versions of p independently of
// facets.Version, as the tests' oracle: A2A versions through
// golang.org/x/mod/semver, MCP revisions (full-dates) as strings.
func compareVersions(p facets.Protocol, a, b string) (int, error) {
	for _, s := range []string{a, b} {
		if _, err := facets.ParseVersion(p, s); err != nil {
			return 0, err
		}
	}
	if p == facets.ProtocolA2A {
		return semver.Compare("v"+a, "v"+b), nil
	}
	return strings.Compare(a, b), nil
}
