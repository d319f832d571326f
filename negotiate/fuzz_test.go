package negotiate_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

func FuzzSubjectJSON(f *testing.F) {
	for _, seed := range []string{
		`{"issuer":"https://idp.example","subjectId":"u-42","tenant":"acme","lane":"oidc","kind":"user"}`,
		`{"issuer":"https://saml.example","subjectId":"a","tenant":"acme","lane":"saml","kind":"agent","keyClass":"opaque-idp"}`,
		`{"issuer":"urn:h:anon-surface","subjectId":"anon-1","tenant":"anon:acme","lane":"anonymous","kind":"anonymous",
		  "actor":{"issuer":"https://idp.example","subjectId":"peer","tenant":"acme","lane":"mtls","kind":"agent"}}`,
		`{"issuer":"i","subjectId":"s","tenant":"t","lane":"oidc","kind":"user","actor":{"issuer":"i","subjectId":"s","tenant":"t","lane":"oidc","kind":"user",
		  "actor":{"issuer":"i","subjectId":"s","tenant":"t","lane":"oidc","kind":"user","actor":{"issuer":"i","subjectId":"s","tenant":"t","lane":"oidc","kind":"user",
		  "actor":{"issuer":"i","subjectId":"s","tenant":"t","lane":"oidc","kind":"user","actor":{"issuer":"i","subjectId":"s","tenant":"t","lane":"oidc","kind":"user"}}}}}}`,
		`{"issuer":"i","subjectId":"s","tenant":"t","lane":"oidc","kind":"user","actor":{"issuer":"i","subjectId":"s","tenant":"t","lane":"oidc","kind":"user","x":1}}`,
		`{"issuer":"","subjectId":"a/b","tenant":"bad tenant","lane":"carrier-pigeon","kind":"robot","keyClass":"x"}`,
		`{"issuer":"i\u00a0x","subjectId":"s\ufeff","tenant":"t","lane":"scim","kind":"user"}`,
		`{"issuer":"i","subjectId":"s","tenant":"t","lane":"oidc","kind":"user","actor":null}`,
		`{"ISSUER":"i","subjectId":"s","tenant":"t","lane":"oidc","kind":"user"}`,
		`{"issuer":"i","issuer":"j","subjectId":"s","tenant":"t","lane":"oidc","kind":"user"}`,
		`{}`, `null`, `[]`, `"x"`, `{"issuer":5}`, `{"actor":{}}`, `{"issuer":"\xff"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s negotiate.Subject
		if err := json.Unmarshal(data, &s); err != nil {
			return
		}
		err := s.Validate()
		if err == nil {
			out, err := json.Marshal(&s)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			var back negotiate.Subject
			if err := json.Unmarshal(out, &back); err != nil {
				t.Fatalf("Unmarshal(%s): %v", out, err)
			}
			if !reflect.DeepEqual(back, s) {
				t.Fatalf("round trip\n got %+v\nwant %+v\nvia %s", back, s, out)
			}
			if back.Validate() != nil {
				t.Fatalf("round trip no longer validates: %s", out)
			}
			return
		}
		if (policy.Policy{}).IsAuthenticated(&s) {
			t.Fatalf("an invalid Subject is authenticated: %v", err)
		}
		problems := []error{err}
		if many, ok := err.(interface{ Unwrap() []error }); ok {
			problems = many.Unwrap()
		}
		for _, p := range problems {
			var se *policy.SubjectError
			if !errors.As(p, &se) || se.Path == "" || se.Message == "" || !strings.HasPrefix(se.Path, "subject") {
				t.Fatalf("violation %T %+v has no path or message", p, p)
			}
		}
	})
}

// fuzzSet is the fixed facet FuzzDecide decides against: both protocols,
// each with room for a downgrade between floor and preferred.
func fuzzSet() facets.Set {
	return facets.Set{
		A2A: &facets.A2A{Versions: []string{"0.3", "1.0", "1.1", "1.2", "1.10"}, PreferredVersion: "1.2", MinimumVersion: "1.0", RefreshedAt: refreshed},
		MCP: wideMCP().MCP,
	}
}

func FuzzDecide(f *testing.F) {
	for _, seed := range []struct {
		requested, peer, url string
		counter              bool
	}{
		{"", "1.2", "https://peer.example", false},
		{"", "1.1", "https://peer.example/a2a", false},
		{"1.1", "1.1,1.2", "https://Peer.Example:443", false},
		{"0.3", "0.3", "http://agent.example.com:8080", false},
		{"1.3", "1.3", "https://peer.example", true},
		{"1.x", "garbage", "ftp://peer.example", true},
		{"", "", "", false},
		{"2026-07-28", "2026-07-28", "https://mcp.example/mcp", false},
		{"2025-06-18", "2025-06-18", "wss://mcp.example", true},
		{"2025-11-25", "2025-11-25,2026-07-28", "https://[::1]:8443", false},
		{"2027-01-01", "2025-11-25", "https://user:pw@mcp.example", true},
		{"1.10", "1.10,1.9", "https://a", false},
	} {
		f.Add(seed.requested, seed.peer, seed.url, seed.counter)
	}
	set := fuzzSet()
	pol := withClock(policy.Policy{})
	n, err := negotiate.Compile(set, pol)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, requested, peerVersions, peerURL string, counterOffer bool) {
		for _, proto := range []facets.Protocol{facets.ProtocolA2A, facets.ProtocolMCP} {
			adv, _ := set.Lookup(proto)
			offer := negotiate.Offer{
				Protocol:     proto,
				Peer:         peerURL,
				Requested:    requested,
				PeerVersions: strings.Split(peerVersions, ","),
				CounterOffer: counterOffer,
			}
			for _, subject := range []*negotiate.Subject{nil, user(), forwardedAnonymous()} {
				o, e := negotiate.Decide(subject, set, offer, pol)
				checkInvariants(t, subject, adv, offer, pol, o, e)

				o2, e2 := n.Decide(subject, offer)
				if d := sameOutcome(o, o2); d != "" {
					t.Fatalf("Negotiator and Decide differ: %s\n%+v\n%+v", d, o, o2)
				}
				if !reflect.DeepEqual(e, e2) {
					t.Fatalf("events differ:\n%+v\n%+v", e, e2)
				}

				want := model(subject, set, offer, pol)
				if got := (modelOutcome{o.Kind, o.Version, o.Reason, o.Rule, o.CounterOffered}); got != want {
					t.Fatalf("Decide %+v, model %+v", got, want)
				}

				// Content-free: the event depends on the peer only through
				// its digest. Deciding without the peer changes nothing
				// else (a peer without an origin is refused before the
				// rules, so compare only peers that digest).
				if o.Rule == negotiate.RuleInput && o.Cause != nil && isNoOrigin(o.Cause) {
					if e.PeerDigest != "" {
						t.Fatalf("a peer without an origin has a digest %q", e.PeerDigest)
					}
					continue
				}
				anon := offer
				anon.Peer = ""
				_, e3 := negotiate.Decide(subject, set, anon, pol)
				e3.PeerDigest = e.PeerDigest
				if !reflect.DeepEqual(e, e3) {
					t.Fatalf("the event depends on the peer URL beyond its digest:\n%+v\n%+v", e, e3)
				}
			}
		}
	})
}
