package vectors_test

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/strictjson"
	"github.com/wopneg/wopneg/internal/vectors"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// TestVectorsPure runs every shipped vector against the pure decision.
func TestVectorsPure(t *testing.T) {
	runAll(t, negotiate.Decide)
}

// TestVectorsCompiled runs every shipped vector against the compiled
// Negotiator, which must give the answers of the pure decision.
func TestVectorsCompiled(t *testing.T) {
	runAll(t, vectors.Compiled)
}

func runAll(t *testing.T, decide vectors.DecideFunc) {
	t.Helper()
	vs, err := vectors.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			if err := v.Check(decide); err != nil {
				t.Errorf("%s (%s):\n%v", v.Name, v.Source, err)
			}
		})
	}
}

// TestVectorsShipped checks the shipped data itself: enough of it, every
// kind present, every vector sourced.
func TestVectorsShipped(t *testing.T) {
	vs, err := vectors.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) < 100 {
		t.Errorf("%d vectors shipped, want at least 100", len(vs))
	}
	kinds := map[string]int{}
	for _, v := range vs {
		kind := v.Kind
		if kind == "" {
			kind = vectors.KindDecide
		}
		kinds[kind]++
		if strings.TrimSpace(v.Source) == "" {
			t.Errorf("%s: no source", v.Name)
		}
	}
	for _, k := range []string{vectors.KindDecide, vectors.KindDigest, vectors.KindSubject,
		vectors.KindRefresh, vectors.KindRounds} {
		if kinds[k] == 0 {
			t.Errorf("no %s vectors shipped", k)
		}
	}
	if kinds[vectors.KindDigest] < 20 {
		t.Errorf("%d digest vectors, want at least 20", kinds[vectors.KindDigest])
	}
}

const loadFacets = `"facets": {"ref": {"a2a": {"versions": ["1.0"], "preferredVersion": "1.0", "minimumVersion": "1.0", "refreshedAt": "2026-11-01"}}}`

func loadOne(t *testing.T, files map[string]string) ([]vectors.Vector, error) {
	t.Helper()
	fsys := fstest.MapFS{}
	for name, data := range files {
		fsys["v/"+name] = &fstest.MapFile{Data: []byte(data)}
	}
	return vectors.Load(fsys, "v")
}

func TestLoadVectors(t *testing.T) {
	good := `{` + loadFacets + `, "now": "2026-11-29T12:00:00Z", "vectors": [
		{"name": "one", "source": "test", "facets": "ref", "subject": null,
		 "offer": {"protocol": "a2a", "peerVersions": ["1.0"]},
		 "want": {"outcome": "accepted", "version": "1.0", "reason": "ok", "rule": "accept"}}]}`

	t.Run("good", func(t *testing.T) {
		vs, err := loadOne(t, map[string]string{"good.json": good})
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 1 {
			t.Fatalf("got %d vectors, want 1", len(vs))
		}
		v := vs[0]
		if v.Name != "good/one" {
			t.Errorf("name = %q, want %q", v.Name, "good/one")
		}
		if v.Facet == nil || v.Facet.A2A == nil {
			t.Fatalf("facet set %q not resolved: %+v", v.Facets, v.Facet)
		}
		if v.Now.IsZero() {
			t.Errorf("now not inherited from the file")
		}
		if err := v.Check(nil); err != nil {
			t.Errorf("Check: %v", err)
		}
	})

	refusals := []struct {
		name, data, wantErr string
	}{
		{"empty want", `{` + loadFacets + `, "now": "2026-11-29T12:00:00Z", "vectors": [
			{"name": "x", "facets": "ref", "offer": {"protocol": "a2a", "peerVersions": ["1.0"]}, "want": {}}]}`, "vacuous"},
		{"accepted without version", `{` + loadFacets + `, "now": "2026-11-29T12:00:00Z", "vectors": [
			{"name": "x", "facets": "ref", "offer": {"protocol": "a2a", "peerVersions": ["1.0"]},
			 "want": {"outcome": "accepted", "reason": "ok", "rule": "accept"}}]}`, "vacuous"},
		{"decide without now", `{` + loadFacets + `, "vectors": [
			{"name": "x", "facets": "ref", "offer": {"protocol": "a2a", "peerVersions": ["1.0"]},
			 "want": {"outcome": "accepted", "version": "1.0", "reason": "ok", "rule": "accept"}}]}`, "vacuous"},
		{"decide without facet", `{"now": "2026-11-29T12:00:00Z", "vectors": [
			{"name": "x", "offer": {"protocol": "a2a", "peerVersions": ["1.0"]},
			 "want": {"outcome": "refused", "reason": "unsupported", "rule": "input"}}]}`, "vacuous"},
		{"digest without digest", `{"vectors": [{"name": "x", "kind": "digest", "peer": "https://peer.example", "want": {"origin": "https://peer.example"}}]}`, "vacuous"},
		{"subject without authenticated", `{"vectors": [{"name": "x", "kind": "subject", "subject": null, "want": {"valid": false}}]}`, "vacuous"},
		{"refresh without refresh", `{"now": "2026-11-29T12:00:00Z", "vectors": [{"name": "x", "kind": "refresh", "refreshedAt": "2026-11-01", "want": {}}]}`, "vacuous"},
		{"rounds without allowed", `{"vectors": [{"name": "x", "kind": "rounds", "maxRounds": 4, "want": {}}]}`, "vacuous"},
		{"duplicate name", `{` + loadFacets + `, "now": "2026-11-29T12:00:00Z", "vectors": [
			{"name": "x", "kind": "rounds", "maxRounds": 4, "want": {"allowed": 4}},
			{"name": "x", "kind": "rounds", "maxRounds": 2, "want": {"allowed": 2}}]}`, "duplicate"},
		{"unknown facet set", `{` + loadFacets + `, "now": "2026-11-29T12:00:00Z", "vectors": [
			{"name": "x", "facets": "nope", "offer": {"protocol": "a2a", "peerVersions": ["1.0"]},
			 "want": {"outcome": "accepted", "version": "1.0", "reason": "ok", "rule": "accept"}}]}`, `"nope"`},
		{"unknown kind", `{"vectors": [{"name": "x", "kind": "vibes", "want": {"allowed": 1}}]}`, "unknown kind"},
		{"unknown key", `{"vectors": [{"name": "x", "kind": "rounds", "maxRounds": 4, "expect": {}, "want": {"allowed": 4}}]}`, "expect"},
		{"no vectors", `{"vectors": []}`, "no vectors"},
		// Issue 8 item 6: vectors are read by the module's one strict
		// reader, so a wrong-case key, a repeated key and trailing bytes
		// are refused, each named by its JSON path.
		{"wrong-case key", `{"vectors": [{"name": "x", "kind": "rounds", "maxRounds": 4, "Want": {"allowed": 4}, "want": {"allowed": 4}}]}`, `vectors[0]: unknown field "Want"`},
		{"repeated key", `{"vectors": [{"name": "x", "kind": "rounds", "maxRounds": 4, "maxRounds": 2, "want": {"allowed": 4}}]}`, `"maxRounds"`},
		{"trailing bytes", `{"vectors": [{"name": "x", "kind": "rounds", "maxRounds": 4, "want": {"allowed": 4}}]} []`, "bad.json"},
		{"wrong type named by path", `{"vectors": [{"name": "x", "kind": "rounds", "maxRounds": "4", "want": {"allowed": 4}}]}`, "vectors[0].maxRounds"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadOne(t, map[string]string{"bad.json": tc.data})
			if err == nil {
				t.Fatalf("LoadVectors accepted it")
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q does not mention %q", err, tc.wantErr)
			}
		})
	}

	t.Run("duplicate across files is not a duplicate", func(t *testing.T) {
		// Names are qualified by their file, so the same name in two files is fine.
		vs, err := loadOne(t, map[string]string{"a.json": good, "b.json": good})
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 2 || vs[0].Name != "a/one" || vs[1].Name != "b/one" {
			t.Errorf("got %d vectors %v", len(vs), names(vs))
		}
	})
}

func names(vs []vectors.Vector) []string {
	var ns []string
	for _, v := range vs {
		ns = append(ns, v.Name)
	}
	return ns
}

// The deliberately wrong decide functions below prove that the vectors can
// fail: each breaks one rule, and Check must notice.

// alwaysPreferred accepts every exchange at the preferred version.
func alwaysPreferred(_ *negotiate.Subject, set facets.Set, offer negotiate.Offer, p policy.Policy) (negotiate.Outcome, events.NegotiationDecided) {
	adv, ok := set.Lookup(offer.Protocol)
	if !ok && len(offer.PeerVersions) > 0 {
		// Not even advertised: accept whatever the peer speaks.
		adv.Preferred = offer.PeerVersions[0]
	}
	o := negotiate.Outcome{Kind: negotiate.Accepted, Protocol: offer.Protocol, Version: adv.Preferred,
		Requested: offer.Requested, Reason: events.ReasonOK, Rule: negotiate.RuleAccept}
	e := events.NegotiationDecided{Protocol: offer.Protocol, Outcome: "accepted", Version: adv.Preferred,
		Reason: events.ReasonOK, Floor: adv.Floor, At: p.Time()}
	if _, err := facets.ParseVersion(offer.Protocol, offer.Requested); err == nil {
		e.Requested = offer.Requested
	}
	if d, err := events.PeerDigest(offer.Peer); err == nil {
		e.PeerDigest = d
	}
	return o, e
}

// belowFloorIsUnsupported reports every below-floor refusal as unsupported,
// consistently in the outcome, the error and the event.
func belowFloorIsUnsupported(s *negotiate.Subject, set facets.Set, offer negotiate.Offer, p policy.Policy) (negotiate.Outcome, events.NegotiationDecided) {
	o, e := negotiate.Decide(s, set, offer, p)
	if o.Reason == events.ReasonBelowFloor {
		o.Reason = events.ReasonUnsupported
		e.Reason = events.ReasonUnsupported
		if o.Error != nil {
			o.Error.Details["reason"] = string(events.ReasonUnsupported)
		}
	}
	return o, e
}

// noPeerDigest forgets the peer digest.
func noPeerDigest(s *negotiate.Subject, set facets.Set, offer negotiate.Offer, p policy.Policy) (negotiate.Outcome, events.NegotiationDecided) {
	o, e := negotiate.Decide(s, set, offer, p)
	e.PeerDigest = ""
	return o, e
}

// wrongFloor records a floor other than the advertised one.
func wrongFloor(s *negotiate.Subject, set facets.Set, offer negotiate.Offer, p policy.Policy) (negotiate.Outcome, events.NegotiationDecided) {
	o, e := negotiate.Decide(s, set, offer, p)
	if e.Floor != "" {
		e.Floor = "0.1"
		if offer.Protocol == facets.ProtocolMCP {
			e.Floor = "2000-01-01"
		}
	}
	return o, e
}

// invalidEvent records, on input refusals, a floor that is not a version:
// only the schema check of the event can see it, since no expectation
// names the floor of an input refusal.
func invalidEvent(s *negotiate.Subject, set facets.Set, offer negotiate.Offer, p policy.Policy) (negotiate.Outcome, events.NegotiationDecided) {
	o, e := negotiate.Decide(s, set, offer, p)
	if o.Rule == negotiate.RuleInput {
		e.Floor = "not-a-version"
	}
	return o, e
}

// ignoresAuthentication decides as if every caller were authenticated.
func ignoresAuthentication(_ *negotiate.Subject, set facets.Set, offer negotiate.Offer, p policy.Policy) (negotiate.Outcome, events.NegotiationDecided) {
	user := &negotiate.Subject{Issuer: "https://idp.example", SubjectID: "u-1", Tenant: "acme", Lane: "oidc", Kind: "user"}
	p.Authenticated = nil
	return negotiate.Decide(user, set, offer, p)
}

// leaksMalformedRequested records a malformed requested version in the
// event, which rule 1 forbids.
func leaksMalformedRequested(s *negotiate.Subject, set facets.Set, offer negotiate.Offer, p policy.Policy) (negotiate.Outcome, events.NegotiationDecided) {
	o, e := negotiate.Decide(s, set, offer, p)
	if offer.Requested != "" && e.Requested == "" {
		e.Requested = offer.Requested
	}
	return o, e
}

func TestVectorsCanFail(t *testing.T) {
	vs, err := vectors.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		decide vectors.DecideFunc
		// mustFail selects vectors that this breakage must fail, each one.
		mustFail func(v vectors.Vector) bool
	}{
		{"always accepts at preferred", alwaysPreferred, func(v vectors.Vector) bool {
			return isDecide(v) && v.Want.Outcome != "accepted" ||
				v.Kind == vectors.KindSubject && !*v.Want.Authenticated
		}},
		{"below-floor reported as unsupported", belowFloorIsUnsupported, func(v vectors.Vector) bool {
			return isDecide(v) && v.Want.Reason == string(events.ReasonBelowFloor)
		}},
		{"drops peerDigest", noPeerDigest, func(v vectors.Vector) bool {
			return v.Kind == vectors.KindDigest && !v.Want.Error ||
				isDecide(v) && v.Offer.Peer != "" && v.Want.Rule != "input"
		}},
		{"ignores authentication", ignoresAuthentication, func(v vectors.Vector) bool {
			return isDecide(v) && v.Want.Reason == string(events.ReasonUnauthenticated) && !v.Want.CounterOffered ||
				v.Kind == vectors.KindSubject && !*v.Want.Authenticated
		}},
		{"records a wrong floor", wrongFloor, func(v vectors.Vector) bool {
			return isDecide(v) && v.Want.Rule != "input"
		}},
		{"records an event the schema refuses", invalidEvent, func(v vectors.Vector) bool {
			return isDecide(v) && v.Want.Rule == "input" && v.Offer.Protocol.Valid()
		}},
		{"records malformed requested", leaksMalformedRequested, func(v vectors.Vector) bool {
			if !isDecide(v) || v.Offer.Requested == "" || v.Want.Rule == "input" {
				return false
			}
			_, err := facets.ParseVersion(v.Offer.Protocol, v.Offer.Requested)
			return err != nil
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			failed, selected := 0, 0
			for _, v := range vs {
				err := v.Check(tc.decide)
				if err != nil {
					failed++
				}
				if tc.mustFail(v) {
					selected++
					if err == nil {
						t.Errorf("%s passes against a decide function that %s", v.Name, tc.name)
					}
				}
			}
			if failed == 0 || selected == 0 {
				t.Errorf("%d vectors failed (%d selected as must-fail); want at least one", failed, selected)
			}
			t.Logf("%d of %d vectors fail, %d selected", failed, len(vs), selected)
		})
	}
}

func isDecide(v vectors.Vector) bool {
	return v.Kind == "" || v.Kind == vectors.KindDecide
}

func TestDecodeRequest(t *testing.T) {
	t.Run("protocol inferred from the only facet", func(t *testing.T) {
		r, err := vectors.DecodeRequest([]byte(`{
			"subject": null,
			"facet": {"mcp": {"revisions": ["2026-07-28"], "preferredVersion": "2026-07-28", "minimumRevision": "2026-07-28", "refreshedAt": "2026-11-01"}},
			"offer": {"peerVersions": ["2026-07-28"]},
			"now": "2026-11-29T12:00:00Z"}`))
		if err != nil {
			t.Fatal(err)
		}
		if r.Offer.Protocol != facets.ProtocolMCP {
			t.Errorf("offer.protocol = %q, want mcp", r.Offer.Protocol)
		}
		if err := r.Validate(); err != nil {
			t.Errorf("Validate: %v", err)
		}
		a, _ := r.Decide(nil)
		if a.Outcome != "accepted" || a.Version != "2026-07-28" {
			t.Errorf("decided %s %s, want accepted 2026-07-28", a.Outcome, a.Version)
		}
	})
	t.Run("no inference with two facets", func(t *testing.T) {
		r, err := vectors.DecodeRequest([]byte(`{
			"facet": {
				"a2a": {"versions": ["1.0"], "preferredVersion": "1.0", "minimumVersion": "1.0", "refreshedAt": "2026-11-01"},
				"mcp": {"revisions": ["2026-07-28"], "preferredVersion": "2026-07-28", "minimumRevision": "2026-07-28", "refreshedAt": "2026-11-01"}},
			"offer": {"peerVersions": ["1.0"]},
			"now": "2026-11-29T12:00:00Z"}`))
		if err != nil {
			t.Fatal(err)
		}
		if r.Offer.Protocol != "" {
			t.Errorf("offer.protocol = %q, want it left empty", r.Offer.Protocol)
		}
		if err := r.Validate(); err == nil || !strings.Contains(err.Error(), "not advertised") {
			t.Errorf("Validate = %v, want the unadvertised protocol reported", err)
		}
	})
	t.Run("explicit protocol kept", func(t *testing.T) {
		r, err := vectors.DecodeRequest([]byte(`{
			"facet": {"a2a": {"versions": ["1.0"], "preferredVersion": "1.0", "minimumVersion": "1.0", "refreshedAt": "2026-11-01"}},
			"offer": {"protocol": "mcp", "peerVersions": ["1.0"]},
			"now": "2026-11-29T12:00:00Z"}`))
		if err != nil {
			t.Fatal(err)
		}
		if r.Offer.Protocol != facets.ProtocolMCP {
			t.Errorf("offer.protocol = %q, want the explicit mcp", r.Offer.Protocol)
		}
	})
	for _, tc := range []struct{ name, data, key string }{
		{"unknown top-level key", `{"facet": {}, "offer": {"peerVersions": []}, "now": "2026-11-29T12:00:00Z", "clock": 1}`, "clock"},
		{"unknown offer key", `{"offer": {"peerVersions": [], "peerVersion": "1.0"}}`, "peerVersion"},
		{"unknown policy key", `{"policy": {"allowDowngrade": true}}`, "allowDowngrade"},
		{"unknown subject key", `{"subject": {"issuer": "i", "subjectId": "s", "tenant": "t", "lane": "oidc", "kind": "user", "authenticated": true}}`, "authenticated"},
		{"unknown facet key", `{"facet": {"a2a": {"versions": ["1.0"], "preferredVersion": "1.0", "minimumVersion": "1.0", "refreshedAt": "2026-11-01", "floor": "1.0"}}}`, "floor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := vectors.DecodeRequest([]byte(tc.data))
			if err == nil {
				t.Fatal("DecodeRequest accepted an unknown key")
			}
			if !strings.Contains(err.Error(), tc.key) {
				t.Errorf("error %q does not name %q", err, tc.key)
			}
		})
	}
	t.Run("two values", func(t *testing.T) {
		if _, err := vectors.DecodeRequest([]byte(`{} {}`)); err == nil {
			t.Error("DecodeRequest accepted two JSON values")
		}
	})
	t.Run("not JSON", func(t *testing.T) {
		if _, err := vectors.DecodeRequest([]byte(`{"offer":`)); err == nil {
			t.Error("DecodeRequest accepted truncated JSON")
		}
	})
	// Issue 8 item 6: keys match exactly and a repeated key is refused,
	// where encoding/json folded case and let the last one win.
	for _, tc := range []struct{ name, data, mention string }{
		{"wrong-case key", `{"OFFER": {"peerVersions": []}, "offer": {"peerVersions": ["1.0"]}}`, `"OFFER"`},
		{"repeated key", `{"offer": {"peerVersions": []}, "offer": {"peerVersions": ["1.0"]}}`, `"offer"`},
		{"malformed now", `{"now": "2026-11-31"}`, "now"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := vectors.DecodeRequest([]byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("DecodeRequest = %v, want an error naming %s", err, tc.mention)
			}
		})
	}
}

// TestDecodeRequestInbound checks the offer an absent peerVersions
// stands for (issue 9 item 8): negotiate.InboundOffer's, the requested version
// or the preferred one; an explicit [] stays empty, and with no
// advertised protocol to take a preferred version from, nothing is made
// up.
func TestDecodeRequestInbound(t *testing.T) {
	const a2a = `"facet": {"a2a": {"versions": ["1.0", "1.1"], "preferredVersion": "1.1", "minimumVersion": "1.0", "refreshedAt": "2026-11-01"}}`
	tests := []struct {
		name, offer string
		want        []string
	}{
		{"nothing requested", `{}`, []string{"1.1"}},
		{"requested", `{"requested": "1.0"}`, []string{"1.0"}},
		{"explicit empty", `{"peerVersions": []}`, []string{}},
		{"explicit list", `{"requested": "1.0", "peerVersions": ["1.1"]}`, []string{"1.1"}},
		{"unadvertised protocol", `{"protocol": "mcp"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := vectors.DecodeRequest([]byte(`{` + a2a + `, "offer": ` + tt.offer + `, "now": "2026-11-29"}`))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(r.Offer.PeerVersions, tt.want) {
				t.Errorf("peerVersions = %#v, want %#v", r.Offer.PeerVersions, tt.want)
			}
			if want := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC); !r.Now.Equal(want) {
				t.Errorf("now = %v, want %v", r.Now, want)
			}
		})
	}
}

func TestRequestValidate(t *testing.T) {
	r, err := vectors.DecodeRequest([]byte(`{
		"subject": {"issuer": "https://idp.example", "subjectId": "u/1", "tenant": "acme", "lane": "oidc", "kind": "user"},
		"facet": {"a2a": {"versions": ["1.0", "1.1"], "preferredVersion": "1.0", "minimumVersion": "1.1", "refreshedAt": "2026-11-01"}},
		"offer": {"peerVersions": ["1.0"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	err = r.Validate()
	if err == nil {
		t.Fatal("Validate accepted an invalid subject, an invalid facet and no clock")
	}
	if se := (*policy.SubjectError)(nil); !errors.As(err, &se) {
		t.Errorf("Validate = %v, want the invalid subject reported", err)
	}
	if !errors.Is(err, facets.ErrInvalid) {
		t.Errorf("Validate = %v, want the invalid facet reported", err)
	}
	if !strings.Contains(err.Error(), "now") {
		t.Errorf("Validate = %v, want the missing now reported", err)
	}
	if !strings.Contains(err.Error(), "subjectId") {
		t.Errorf("Validate = %v, want the subject's path named", err)
	}

	t.Run("peer without origin", func(t *testing.T) {
		for _, peer := range []string{"ftp://peer.example", "/peer", "peer.example"} {
			r, err := vectors.DecodeRequest([]byte(`{
				"facet": {"a2a": {"versions": ["1.0"], "preferredVersion": "1.0", "minimumVersion": "1.0", "refreshedAt": "2026-11-01"}},
				"offer": {"peer": "` + peer + `"}, "now": "2026-11-29"}`))
			if err != nil {
				t.Fatal(err)
			}
			err = r.Validate()
			if fe, ok := errors.AsType[*events.FieldError](err); !ok || fe.Field != "peer" || !strings.HasPrefix(err.Error(), "offer.peer: ") || !strings.Contains(err.Error(), peer) {
				t.Errorf("Validate with peer %q = %v, want offer.peer named with the URL, wrapping the peer's *events.FieldError", peer, err)
			}
		}
	})
	t.Run("null subject is fine", func(t *testing.T) {
		r, err := vectors.DecodeRequest([]byte(`{
			"subject": null,
			"facet": {"a2a": {"versions": ["1.0"], "preferredVersion": "1.0", "minimumVersion": "1.0", "refreshedAt": "2026-11-01"}},
			"offer": {"peerVersions": ["1.0"]},
			"now": "2026-11-29T12:00:00Z"}`))
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Validate(); err != nil {
			t.Errorf("Validate: %v", err)
		}
	})
	t.Run("empty facet", func(t *testing.T) {
		r, err := vectors.DecodeRequest([]byte(`{"facet": {}, "offer": {"protocol": "a2a", "peerVersions": []}, "now": "2026-11-29T12:00:00Z"}`))
		if err != nil {
			t.Fatal(err)
		}
		err = r.Validate()
		if !errors.Is(err, facets.ErrInvalid) || !strings.HasSuffix(err.Error(), `; offer.protocol: "a2a" is not advertised by the facet`) {
			t.Errorf("Validate = %v, want an invalid facet and an unadvertised protocol, and no list of none advertised", err)
		}
	})
}

// TestRoundsVectorCatchesWrongLimit checks that a rounds vector whose
// expectation disagrees with the round counter fails, saying which round:
// one that expects more rounds than the limit allows, and one that
// expects the refusal before it comes.
func TestRoundsVectorCatchesWrongLimit(t *testing.T) {
	tests := []struct {
		maxRounds, allowed int
		mention            string
	}{
		{2, 3, "round 3 refused"},
		{4, 2, "round 3 = <nil>, want mcp_mrtr_rounds_exceeded"},
	}
	for _, tt := range tests {
		allowed := tt.allowed
		v := vectors.Vector{Name: "r", Kind: vectors.KindRounds, MaxRounds: tt.maxRounds, Want: vectors.Want{Allowed: &allowed}}
		if err := v.Check(nil); err == nil || !strings.Contains(err.Error(), tt.mention) {
			t.Errorf("maxRounds %d, want.allowed %d: Check = %v, want an error naming %q", tt.maxRounds, tt.allowed, err, tt.mention)
		}
	}
}

// TestParseRequest is the library side of issue 21 item 5's "every
// violation from wopneg decide": every problem of a request, of shape and
// of value, each at its JSON path in the request, in the order of the
// request's members, without the echoes of a shape problem.
func TestParseRequest(t *testing.T) {
	const facet = `"facet": {"a2a": {"versions": ["1.0"], "preferredVersion": "1.0", "minimumVersion": "1.0", "refreshedAt": "2026-11-01"}}`
	for _, tc := range []struct {
		name, data string
		want       []string // each problem, as its Error()
	}{
		{"valid", `{` + facet + `, "offer": {}, "now": "2026-11-29"}`, nil},
		{"four problems, in document order",
			`{"subject": {"issuer": "https://idp.example", "subjectId": "u 1", "tenant": "acme", "lane": "oidc", "kind": "user"}, ` + facet + `,
			"offer": {"peer": "peer.example", "requested": 1}, "now": "yesterday"}`,
			[]string{`subject.subjectId: "u 1" contains whitespace or '/'`, "offer.requested: want a string, got a number",
				`offer.peer: events: peer: "peer.example": no scheme: a relative reference has no origin (want http://, https://, ws:// or wss://)`,
				`now: "yesterday" is neither a date YYYY-MM-DD nor an RFC 3339 time`}},
		{"unknown keys hide none of their neighbours' problems", `{"nowt": 1, ` + facet + `, "offer": {"peerVersion": [], "peer": "x:"}, "policy": {"x": 1, "denyDowngrade": 1}}`,
			[]string{`nowt: unknown field "nowt" (did you mean "now"?)`, `offer.peerVersion: unknown field "peerVersion" (did you mean "peerVersions"?)`,
				`offer.peer: events: peer: "x:": scheme "x" has no origin (want http, https, ws or wss)`,
				`policy.x: unknown field "x"`, "policy.denyDowngrade: want a boolean, got a number", "now: required"}},
		{"a member of the wrong kind", `{` + facet + `, "offer": 1, "policy": [], "subject": "me", "now": "2026-11-29"}`,
			[]string{"offer: want an object, got a number", "policy: want an object, got an array", "subject: want an object, got a string"}},
		{"a subject of the wrong shape and an invalid one", `{` + facet + `, "subject": {"issuer": 1}, "offer": {}, "now": "2026-11-29"}`,
			[]string{"subject.issuer: want a string, got a number"}},
		{"a null subject", `{` + facet + `, "subject": null, "offer": {}, "now": "2026-11-29"}`, nil},
		{"a key that is no identifier", `{` + facet + `, "offer": {"io.example/x": 1}, "now": "2026-11-29", "a b": 2}`,
			[]string{`offer["io.example/x"]: unknown field "io.example/x"`, `["a b"]: unknown field "a b"`}},
		{"a key that begins with another's name is its own member", `{"now": 1, ` + facet + `, "offer": {"requested": 1}, "nowt": 2}`,
			[]string{"now: want a string, got a number", "offer.requested: want a string, got a number", `nowt: unknown field "nowt" (did you mean "now"?)`}},
		{"a clock of the wrong type is not also missing", `{` + facet + `, "offer": {}, "now": 1}`, []string{"now: want a string, got a number"}},
		{"the facet's every violation, and no echo in the offer", `{"facet": {"a2a": {"versions": ["1.0"], "preferredVersion": "1.1", "minimumVersion": "1.2", "refreshedAt": "2026-11-01"}}, "now": "2026-11-29"}`,
			[]string{`facet.a2a.preferredVersion: "1.1" is not one of the offered versions`, `facet.a2a.minimumVersion: "1.2" is not one of the offered versions`,
				`facet.a2a.minimumVersion: minimumVersion "1.2" is above preferredVersion "1.1"`}},
		{"no facet", `{"offer": {}, "now": "2026-11-29"}`, []string{"facet: advertises neither a2a nor mcp"}},
		{"a refreshedAt past its window", `{"facet": {"a2a": {"versions": ["1.0"], "preferredVersion": "1.0", "minimumVersion": "1.0", "refreshedAt": "2026-08-30"}}, "now": "2026-11-29"}`,
			[]string{"facet.a2a.refreshedAt: refreshedAt 2026-08-30 is 91 days old: the 90-day refresh window closed at 2026-11-28T00:00:00Z (RFC 0175 §D.4); a host does not start with it: write the day the facet's versions were last checked against upstream, or decide at a now inside its window"}},
		{"a refreshedAt at the edges of its window", `{"facet": {"a2a": {"versions": ["1.0"], "preferredVersion": "1.0", "minimumVersion": "1.0", "refreshedAt": "2026-08-31"}, "mcp": {"revisions": ["2026-07-28"], "preferredVersion": "2026-07-28", "minimumRevision": "2026-07-28", "refreshedAt": "2026-11-30"}}, "offer": {"protocol": "a2a"}, "now": "2026-11-29"}`, nil},
		{"a refreshedAt ahead of its window", `{"facet": {"a2a": {"versions": ["1.0"], "preferredVersion": "1.0", "minimumVersion": "1.0", "refreshedAt": "2026-12-01"}}, "now": "2026-11-29"}`,
			[]string{"facet.a2a.refreshedAt: refreshedAt 2026-12-01 is more than one day after now (2026-11-29); a host does not start with it: write the day the facet's versions were last checked against upstream, or decide at a now inside its window"}},
		{"a refreshedAt that is no date is said once", `{"facet": {"a2a": {"versions": ["1.0"], "preferredVersion": "1.0", "minimumVersion": "1.0", "refreshedAt": "2026-02-30"}}, "now": "2026-11-29"}`,
			[]string{`facet.a2a.refreshedAt: "2026-02-30" is not a date YYYY-MM-DD: no such day in that month`}},
		{"a protocol the facet lacks", `{` + facet + `, "offer": {"protocol": "mcp"}, "now": "2026-11-29"}`, []string{`offer.protocol: "mcp" is not advertised by the facet; it advertises "a2a"`}},
		{"a protocol in another case", `{` + facet + `, "offer": {"protocol": "A2A"}, "now": "2026-11-29"}`, []string{`offer.protocol: "A2A" is not advertised by the facet (did you mean "a2a"?); it advertises "a2a"`}},
		{"a repeated key ends the reading, with what came before", `{"offer": {"requested": 1}, "offer": {}, "now": 1}`,
			[]string{`the key "offer" appears twice`, "offer.requested: want a string, got a number"}},
		{"a repeated key inside a member", `{` + facet + `, "offer": {"requested": "1.0", "requested": "1.0"}, "now": "2026-11-29"}`,
			[]string{`offer: the key "requested" appears twice`}},
		{"truncated: only where it broke", `{"offer": {"requested": 1}, "now": `, []string{"the request is not JSON: unexpected end of JSON input at byte 35 of 35 (in now)"}},
		{"a syntax error at the top level", `{"offer": {}, }`, []string{"the request is not JSON: invalid character ',' looking for beginning of value at byte 12 of 15 (at the top level)"}},
		{"blank", " \n ", []string{"the request is empty: no JSON value in 3 bytes"}},
		{"not an object", `[]`, []string{"want an object, got an array"}},
		{"a second value", `{` + facet + `, "now": "2026-11-29"} {}`, []string{"the request is not JSON: data after the JSON value at byte " + strconv.Itoa(len(facet)+24) + " of " + strconv.Itoa(len(facet)+26) + " (at the top level)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := vectors.ParseRequest([]byte(tc.data))
			if tc.want == nil && (err != nil || r.Facet.A2A == nil) {
				t.Fatalf("ParseRequest = %+v, %#v; want the request and no error", r, err)
			}
			var got []string
			if err != nil {
				ps, ok := errors.AsType[vectors.RequestError](err)
				if !ok {
					t.Fatalf("ParseRequest = %T %v, want a RequestError", err, err)
				}
				for _, p := range ps {
					got = append(got, p.Error())
				}
				if err.Error() != strings.Join(got, "; ") {
					t.Errorf("Error() = %q, want the problems joined", err)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// The problems keep what found them, for errors.Is and errors.As, and a
// strict reader's offset counts from the start of the request.
func TestRequestProblems(t *testing.T) {
	data := `{"offer": {"peer": "x:",  "requested": 11}, "facet": {"a2a": {"versions": ["1.0"], "preferredVersion": "1.1", "minimumVersion": "1.0", "refreshedAt": "2026-11-01"}},
		"subject": {"issuer": "https://idp.example", "subjectId": "u/1", "tenant": "acme", "lane": "oidc", "kind": "user"}, "policy": {"denyDowngradeTo": [7]}}`
	_, err := vectors.ParseRequest([]byte(data))
	if !errors.Is(err, facets.ErrInvalid) {
		t.Errorf("%v does not match facets.ErrInvalid", err)
	}
	for _, target := range []any{new(*facets.Violation), new(*policy.SubjectError), new(*events.FieldError), new(*vectors.Problem)} {
		if !errors.As(err, target) {
			t.Errorf("errors.As(%v, %T) found nothing", err, target)
		}
	}
	offsets := map[string]int{}
	for _, p := range err.(vectors.RequestError) {
		if e, ok := errors.AsType[*strictjson.Error](p); ok {
			offsets[p.Path] = e.Offset
		}
	}
	want := map[string]int{"offer.requested": strings.Index(data, "11"), "policy.denyDowngradeTo[0]": strings.Index(data, "7")}
	if !maps.Equal(offsets, want) {
		t.Errorf("offsets %v, want %v", offsets, want)
	}
	if p := (&vectors.Problem{Message: "m"}); p.Error() != "m" {
		t.Errorf("a problem of the request itself reads %q", p.Error())
	}
}

// DecodeRequest reports every shape problem, and no value problem.
func TestDecodeRequestEveryShapeProblem(t *testing.T) {
	_, err := vectors.DecodeRequest([]byte(`{"subject": null, "facet": {"a2a": {"versions": [1]}}, "offer": {"requested": 1, "peer": 2}, "now": "2026-11-31"}`))
	ps, _ := errors.AsType[vectors.RequestError](err)
	var paths []string
	for _, p := range ps {
		paths = append(paths, p.Path)
	}
	if want := []string{"facet.a2a.versions[0]", "offer.requested", "offer.peer", "now"}; !slices.Equal(paths, want) {
		t.Errorf("DecodeRequest reported %q at %q, want %q", err, paths, want)
	}
}
