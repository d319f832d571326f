package policy_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/policy"
)

func valid() *policy.Subject {
	return &policy.Subject{Issuer: "https://idp.example", SubjectID: "u-42", Tenant: "acme", Lane: policy.LaneOIDC, Kind: policy.KindUser}
}

func anon() *policy.Subject {
	return &policy.Subject{Issuer: "urn:host.example:anon-surface", SubjectID: "anon-1", Tenant: "acme", Lane: policy.LaneAnonymous, Kind: policy.KindAnonymous}
}

func with(f func(*policy.Subject)) *policy.Subject {
	s := valid()
	f(s)
	return s
}

// chain returns a valid Subject with depth actors below it.
func chain(depth int) *policy.Subject {
	s := valid()
	for x := s; depth > 0; depth-- {
		x.Actor = valid()
		x = x.Actor
	}
	return s
}

// last returns the deepest actor of s.
func last(s *policy.Subject) *policy.Subject {
	for s.Actor != nil {
		s = s.Actor
	}
	return s
}

type problem = policy.SubjectError

const (
	laneMsg  = "is not a lane (api-key, oauth2, oidc, mtls, saml, scim, ldap, workload, session, anonymous)"
	kindMsg  = "is not a kind (user, agent, anonymous, workload)"
	charsMsg = "may hold only A-Z a-z 0-9 . _ ~ -"
)

func TestSubjectValidate(t *testing.T) {
	long := func(s string, n int) string { return strings.Repeat(s, n) }
	deep5 := chain(5)
	deep5Bad := chain(5)
	deep5Bad.Actor.Tenant = "a b"
	last(deep5Bad).Issuer = "" // below the limit: not reached
	cases := []struct {
		name string
		s    *policy.Subject
		want []problem // nil: valid
	}{
		{"valid", valid(), nil},
		{"nil", nil, []problem{{"subject", "is missing"}}},

		// issuer: 1–1024 characters (code points), no whitespace.
		{"issuer 1 char", with(func(s *policy.Subject) { s.Issuer = "x" }), nil},
		{"issuer 1024 chars", with(func(s *policy.Subject) { s.Issuer = long("a", 1024) }), nil},
		{"issuer 1024 two-byte runes", with(func(s *policy.Subject) { s.Issuer = long("é", 1024) }), nil},
		{"issuer 1025 chars", with(func(s *policy.Subject) { s.Issuer = long("a", 1025) }),
			[]problem{{"subject.issuer", fmt.Sprintf("%q is longer than 1024 characters", long("a", 1025))}}},
		{"issuer 1025 runes", with(func(s *policy.Subject) { s.Issuer = long("é", 1025) }),
			[]problem{{"subject.issuer", fmt.Sprintf("%q is longer than 1024 characters", long("é", 1025))}}},
		{"issuer empty", with(func(s *policy.Subject) { s.Issuer = "" }), []problem{{"subject.issuer", "is empty; the issuer is required"}}},
		{"issuer space", with(func(s *policy.Subject) { s.Issuer = "a b" }), []problem{{"subject.issuer", `"a b" contains whitespace`}}},
		{"issuer tab", with(func(s *policy.Subject) { s.Issuer = "a\tb" }), []problem{{"subject.issuer", `"a\tb" contains whitespace`}}},
		{"issuer newline", with(func(s *policy.Subject) { s.Issuer = "ab\n" }), []problem{{"subject.issuer", `"ab\n" contains whitespace`}}},
		{"issuer U+00A0", with(func(s *policy.Subject) { s.Issuer = "a\u00a0b" }), []problem{{"subject.issuer", `"a\u00a0b" contains whitespace`}}},
		{"issuer U+FEFF", with(func(s *policy.Subject) { s.Issuer = "\ufeffab" }), []problem{{"subject.issuer", `"\ufeffab" contains whitespace`}}},
		{"issuer U+2028", with(func(s *policy.Subject) { s.Issuer = "a\u2028b" }), []problem{{"subject.issuer", `"a\u2028b" contains whitespace`}}},
		{"issuer U+3000", with(func(s *policy.Subject) { s.Issuer = "a\u3000b" }), []problem{{"subject.issuer", `"a\u3000b" contains whitespace`}}},
		{"issuer U+200B is not whitespace", with(func(s *policy.Subject) { s.Issuer = "a\u200bb" }), nil},
		{"issuer invalid UTF-8", with(func(s *policy.Subject) { s.Issuer = "a\xffb" }), []problem{{"subject.issuer", `"a\xffb" is not valid UTF-8`}}},

		// subjectId: 1–256 characters, no whitespace or '/'.
		{"subjectId 256", with(func(s *policy.Subject) { s.SubjectID = long("é", 256) }), nil},
		{"subjectId 257", with(func(s *policy.Subject) { s.SubjectID = long("s", 257) }),
			[]problem{{"subject.subjectId", fmt.Sprintf("%q is longer than 256 characters", long("s", 257))}}},
		{"subjectId empty", with(func(s *policy.Subject) { s.SubjectID = "" }), []problem{{"subject.subjectId", "is empty; the subjectId is required"}}},
		{"subjectId slash", with(func(s *policy.Subject) { s.SubjectID = "users/42" }), []problem{{"subject.subjectId", `"users/42" contains whitespace or '/'`}}},
		{"subjectId space", with(func(s *policy.Subject) { s.SubjectID = "u 42" }), []problem{{"subject.subjectId", `"u 42" contains whitespace or '/'`}}},
		{"subjectId leading slash", with(func(s *policy.Subject) { s.SubjectID = "/u" }), []problem{{"subject.subjectId", `"/u" contains whitespace or '/'`}}},
		{"subjectId U+FEFF", with(func(s *policy.Subject) { s.SubjectID = "u\ufeff" }), []problem{{"subject.subjectId", `"u\ufeff" contains whitespace or '/'`}}},
		{"subjectId backslash is fine", with(func(s *policy.Subject) { s.SubjectID = `u\42:x@y` }), nil},
		{"subjectId invalid UTF-8", with(func(s *policy.Subject) { s.SubjectID = "\xc3" }), []problem{{"subject.subjectId", `"\xc3" is not valid UTF-8`}}},

		// tenant: 1–128 of A-Z a-z 0-9 . _ ~ -
		{"tenant 128", with(func(s *policy.Subject) { s.Tenant = long("t", 128) }), nil},
		{"tenant 129", with(func(s *policy.Subject) { s.Tenant = long("t", 129) }),
			[]problem{{"subject.tenant", fmt.Sprintf("%q is longer than 128 characters", long("t", 129))}}},
		{"tenant every allowed class boundary", with(func(s *policy.Subject) { s.Tenant = "azAZ09._~-" }), nil},
		{"tenant empty", with(func(s *policy.Subject) { s.Tenant = "" }), []problem{{"subject.tenant", "is empty; the tenant is required"}}},
		{"tenant space", with(func(s *policy.Subject) { s.Tenant = "bad tenant" }), []problem{{"subject.tenant", `"bad tenant" ` + charsMsg}}},
		{"tenant non-ASCII", with(func(s *policy.Subject) { s.Tenant = "acmé" }), []problem{{"subject.tenant", `"acmé" ` + charsMsg}}},
		{"tenant colon", with(func(s *policy.Subject) { s.Tenant = "anon:acme" }), []problem{{"subject.tenant", `"anon:acme" ` + charsMsg}}},

		// lane and kind enums.
		{"lane empty", with(func(s *policy.Subject) { s.Lane = "" }), []problem{{"subject.lane", laneMsg}}},
		{"lane case", with(func(s *policy.Subject) { s.Lane = "OIDC" }), []problem{{"subject.lane", `"OIDC" ` + laneMsg}}},
		{"kind empty", with(func(s *policy.Subject) { s.Kind = "" }), []problem{{"subject.kind", kindMsg}}},
		{"kind unknown", with(func(s *policy.Subject) { s.Kind = "robot" }), []problem{{"subject.kind", `"robot" ` + kindMsg}}},

		// keyClass exactly when the lane is saml or scim.
		{"saml with keyClass", with(func(s *policy.Subject) { s.Lane, s.KeyClass = policy.LaneSAML, policy.KeyClassOpaqueIDP }), nil},
		{"scim with keyClass", with(func(s *policy.Subject) { s.Lane, s.KeyClass = policy.LaneSCIM, policy.KeyClassConfiguredImmutable }), nil},
		{"saml without keyClass", with(func(s *policy.Subject) { s.Lane = policy.LaneSAML }), []problem{{"subject.keyClass", "is missing; lane saml requires a keyClass"}}},
		{"scim without keyClass", with(func(s *policy.Subject) { s.Lane = policy.LaneSCIM }), []problem{{"subject.keyClass", "is missing; lane scim requires a keyClass"}}},
		{"oidc with keyClass", with(func(s *policy.Subject) { s.KeyClass = policy.KeyClassOpaqueIDP }), []problem{{"subject.keyClass", `"opaque-idp" is allowed only with lane saml or scim`}}},
		{"saml with unknown keyClass", with(func(s *policy.Subject) { s.Lane, s.KeyClass = policy.LaneSAML, "bogus" }),
			[]problem{{"subject.keyClass", `"bogus" is not a key class (opaque-idp, configured-immutable)`}}},

		// anonymous kind ⇔ anonymous lane.
		{"anonymous", anon(), nil},
		{"anonymous kind, other lane", with(func(s *policy.Subject) { s.Kind = policy.KindAnonymous }),
			[]problem{{"subject.kind", `kind "anonymous" and lane "oidc" must both be anonymous or neither be`}}},
		{"anonymous lane, other kind", with(func(s *policy.Subject) { s.Lane = policy.LaneAnonymous }),
			[]problem{{"subject.kind", `kind "user" and lane "anonymous" must both be anonymous or neither be`}}},

		// actors: four levels, and paths that name them.
		{"actor depth 1", chain(1), nil},
		{"actor depth 4", chain(4), nil},
		{"actor depth 5", deep5, []problem{{"subject.actor.actor.actor.actor.actor", "nests deeper than 4 actors"}}},
		{"actor depth 5, problems above the limit still reported", deep5Bad, []problem{
			{"subject.actor.tenant", `"a b" ` + charsMsg},
			{"subject.actor.actor.actor.actor.actor", "nests deeper than 4 actors"},
		}},
		{"actor tenant", func() *policy.Subject { s := chain(1); s.Actor.Tenant = "x y"; return s }(),
			[]problem{{"subject.actor.tenant", `"x y" ` + charsMsg}}},
		{"actor of actor issuer", func() *policy.Subject { s := chain(2); s.Actor.Actor.Issuer = ""; return s }(),
			[]problem{{"subject.actor.actor.issuer", "is empty; the issuer is required"}}},
		{"fourth actor keyClass", func() *policy.Subject { s := chain(4); last(s).Lane = policy.LaneSCIM; return s }(),
			[]problem{{"subject.actor.actor.actor.actor.keyClass", "is missing; lane scim requires a keyClass"}}},
		{"forwarded anonymous", func() *policy.Subject { s := anon(); s.Actor = valid(); return s }(), nil},

		// every problem at once, in field order, then the actor's.
		{"all at once", &policy.Subject{Issuer: "", SubjectID: "a/b", Tenant: "", Lane: "x", Kind: "y", KeyClass: "z",
			Actor: &policy.Subject{Issuer: "i", SubjectID: "s", Tenant: "t t", Lane: policy.LaneAnonymous, Kind: policy.KindUser}}, []problem{
			{"subject.issuer", "is empty; the issuer is required"},
			{"subject.subjectId", `"a/b" contains whitespace or '/'`},
			{"subject.tenant", "is empty; the tenant is required"},
			{"subject.lane", `"x" ` + laneMsg},
			{"subject.kind", `"y" ` + kindMsg},
			{"subject.keyClass", `"z" is allowed only with lane saml or scim`},
			{"subject.actor.tenant", `"t t" ` + charsMsg},
			{"subject.actor.kind", `kind "user" and lane "anonymous" must both be anonymous or neither be`},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.s.Validate()
			if c.s.Valid() != (err == nil) {
				t.Errorf("Valid() = %v, Validate() = %v", c.s.Valid(), err)
			}
			if c.want == nil {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var se *policy.SubjectError
			if !errors.As(err, &se) || *se != c.want[0] {
				t.Fatalf("Validate() = %v, want a *SubjectError for %v first", err, c.want[0])
			}
			if got := policy.Problems(err); !reflect.DeepEqual(got, c.want) {
				t.Errorf("problems\n got %q\nwant %q", got, c.want)
			}
			if policy.DefaultAuthenticated(c.s) {
				t.Errorf("an invalid Subject is authenticated")
			}
		})
	}
}

func TestSubjectLanesAndKinds(t *testing.T) {
	lanes := []string{policy.LaneAPIKey, policy.LaneOAuth2, policy.LaneOIDC, policy.LaneMTLS, policy.LaneSAML, policy.LaneSCIM,
		policy.LaneLDAP, policy.LaneWorkload, policy.LaneSession, policy.LaneAnonymous}
	wantLanes := []string{"api-key", "oauth2", "oidc", "mtls", "saml", "scim", "ldap", "workload", "session", "anonymous"}
	if !reflect.DeepEqual(lanes, wantLanes) {
		t.Fatalf("lanes %v", lanes)
	}
	for _, lane := range lanes {
		for _, kind := range []string{policy.KindUser, policy.KindAgent, policy.KindAnonymous, policy.KindWorkload} {
			s := valid()
			s.Lane, s.Kind = lane, kind
			if lane == policy.LaneSAML || lane == policy.LaneSCIM {
				s.KeyClass = policy.KeyClassOpaqueIDP
			}
			wantValid := (lane == policy.LaneAnonymous) == (kind == policy.KindAnonymous)
			if got := s.Valid(); got != wantValid || (s.Validate() == nil) != wantValid {
				t.Errorf("lane %s kind %s: Valid() = %v, want %v", lane, kind, got, wantValid)
			}
			wantAuth := wantValid && lane != policy.LaneAnonymous
			if got := policy.DefaultAuthenticated(s); got != wantAuth {
				t.Errorf("lane %s kind %s: DefaultAuthenticated = %v, want %v", lane, kind, got, wantAuth)
			}
		}
	}
}

func TestSubjectErrorString(t *testing.T) {
	s := valid()
	s.Tenant = "a b"
	if got, want := s.Validate().Error(), `invalid subject: subject.tenant: "a b" `+charsMsg; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	s.Kind = "robot"
	want := `invalid subject: subject.tenant: "a b" ` + charsMsg + `; subject.kind: "robot" ` + kindMsg
	if got := s.Validate().Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got := (*policy.Subject)(nil).Validate().Error(); got != "invalid subject: subject: is missing" {
		t.Errorf("nil: %q", got)
	}
	// Several violations unwrap to one *SubjectError each, in order.
	s.Kind = policy.KindAnonymous
	var many interface{ Unwrap() []error }
	if err := s.Validate(); !errors.As(err, &many) || len(many.Unwrap()) != 2 {
		t.Fatalf("Validate() = %v (%T), want two violations", err, err)
	}
	for i, err := range many.Unwrap() {
		var se *policy.SubjectError
		if !errors.As(err, &se) || se.Path != [...]string{"subject.tenant", "subject.kind"}[i] {
			t.Errorf("violation %d: %v", i, err)
		}
	}
	if got := policy.Problems(errors.New("other")); got != nil {
		t.Errorf("Problems(other) = %v", got)
	}
}

func TestSubjectAnonymous(t *testing.T) {
	kindOnly := with(func(s *policy.Subject) { s.Kind = policy.KindAnonymous })
	laneOnly := with(func(s *policy.Subject) { s.Lane = policy.LaneAnonymous })
	deepAnon := chain(3)
	deepAnon.Actor.Actor.Actor.Lane = policy.LaneAnonymous
	forwarded := anon()
	forwarded.Actor = valid()
	actorAnon := valid()
	actorAnon.Actor = anon()
	for _, c := range []struct {
		name      string
		s         *policy.Subject
		anonymous bool
		auth      bool
	}{
		{"nil", nil, true, false},
		{"user", valid(), false, true},
		{"anonymous", anon(), true, false},
		{"kind only", kindOnly, true, false},
		{"lane only", laneOnly, true, false},
		{"forwarded by an authenticated peer", forwarded, true, false},
		{"anonymous actor", actorAnon, true, false},
		{"anonymous third actor", deepAnon, true, false},
		{"four authenticated actors", chain(4), false, true},
		{"five authenticated actors", chain(5), false, false},
		{"invalid, not anonymous", with(func(s *policy.Subject) { s.Tenant = "" }), false, false},
	} {
		if got := c.s.Anonymous(); got != c.anonymous {
			t.Errorf("%s: Anonymous() = %v, want %v", c.name, got, c.anonymous)
		}
		if got := policy.DefaultAuthenticated(c.s); got != c.auth {
			t.Errorf("%s: DefaultAuthenticated = %v, want %v", c.name, got, c.auth)
		}
		if got := (&policy.Policy{}).IsAuthenticated(c.s); got != c.auth {
			t.Errorf("%s: zero Policy IsAuthenticated = %v, want %v", c.name, got, c.auth)
		}
		asked := 0
		promote := &policy.Policy{Authenticated: func(*policy.Subject) bool { asked++; return true }}
		if got := promote.IsAuthenticated(c.s); got != c.auth {
			t.Errorf("%s: a hook that says yes changed IsAuthenticated to %v", c.name, got)
		}
		if wantAsked := map[bool]int{true: 1, false: 0}[c.auth]; asked != wantAsked {
			t.Errorf("%s: hook asked %d times, want %d", c.name, asked, wantAsked)
		}
		demote := &policy.Policy{Authenticated: func(*policy.Subject) bool { return false }}
		if demote.IsAuthenticated(c.s) {
			t.Errorf("%s: a hook that says no did not demote", c.name)
		}
	}
}

func TestIsAuthenticatedHookSeesTheSubject(t *testing.T) {
	s := valid()
	var seen *policy.Subject
	p := &policy.Policy{Authenticated: func(x *policy.Subject) bool { seen = x; return x.Issuer != "https://idp.example" }}
	if p.IsAuthenticated(s) || seen != s {
		t.Fatalf("hook saw %p, want %p", seen, s)
	}
	s.Issuer = "https://other.example"
	if !p.IsAuthenticated(s) {
		t.Fatal("trusted issuer refused")
	}
}

func TestDeniesDowngrade(t *testing.T) {
	d := policy.Downgrade{Subject: valid(), Protocol: facets.ProtocolA2A, From: "1.2", To: "1.1"}
	if (&policy.Policy{}).DeniesDowngrade(d) {
		t.Error("zero Policy denies")
	}
	if !(&policy.Policy{DenyDowngrade: true}).DeniesDowngrade(d) {
		t.Error("DenyDowngrade does not deny")
	}
	var got []policy.Downgrade
	hook := func(answer bool) *policy.Policy {
		return &policy.Policy{DowngradeDenied: func(x policy.Downgrade) bool { got = append(got, x); return answer }}
	}
	if !hook(true).DeniesDowngrade(d) || hook(false).DeniesDowngrade(d) {
		t.Error("the hook's answer is not the policy's")
	}
	if len(got) != 2 || !reflect.DeepEqual(got[0], d) || got[0].Subject != d.Subject || !reflect.DeepEqual(got[1], d) {
		t.Errorf("hook saw %+v, want %+v twice", got, d)
	}
	// DenyDowngrade wins over a hook that allows.
	p := hook(false)
	p.DenyDowngrade = true
	if !p.DeniesDowngrade(d) {
		t.Error("a hook allowed what DenyDowngrade denies")
	}
}

func TestTime(t *testing.T) {
	at := time.Date(2026, 11, 29, 13, 30, 0, 5, time.FixedZone("CET", 3600))
	p := &policy.Policy{Now: func() time.Time { return at }}
	got := p.Time()
	if !got.Equal(at) || got.Location() != time.UTC || got.Hour() != 12 || got.Nanosecond() != 5 {
		t.Errorf("Time() = %v, want %v in UTC", got, at.UTC())
	}
	for name, p := range map[string]policy.Policy{"zero": {}, "clockless": {DenyDowngrade: true, RequireAudit: true}} {
		before := time.Now()
		got := p.Time()
		after := time.Now()
		if got.Before(before.Truncate(time.Second)) || got.After(after.Add(time.Second)) || got.Location() != time.UTC {
			t.Errorf("%s Policy: Time() = %v, want about %v in UTC", name, got, before.UTC())
		}
	}
}

func TestPolicyJSON(t *testing.T) {
	b, err := json.Marshal(policy.Policy{DenyDowngrade: true, RequireAudit: true, Now: time.Now,
		DowngradeDenied: func(policy.Downgrade) bool { return true }, Authenticated: func(*policy.Subject) bool { return true }})
	if err != nil || string(b) != `{"denyDowngrade":true,"requireAudit":true}` {
		t.Errorf("JSON = %s, %v", b, err)
	}
	if b, err := json.Marshal(policy.Policy{}); err != nil || string(b) != `{}` {
		t.Errorf("zero JSON = %s, %v", b, err)
	}
}

func TestSubjectJSON(t *testing.T) {
	s := valid()
	s.Lane, s.KeyClass = policy.LaneSAML, policy.KeyClassOpaqueIDP
	s.Actor = anon()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"issuer":"https://idp.example","subjectId":"u-42","tenant":"acme","lane":"saml","kind":"user","keyClass":"opaque-idp",` +
		`"actor":{"issuer":"urn:host.example:anon-surface","subjectId":"anon-1","tenant":"acme","lane":"anonymous","kind":"anonymous"}}`
	if string(b) != want {
		t.Fatalf("JSON\n got %s\nwant %s", b, want)
	}
	var back policy.Subject
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(&back, s) {
		t.Fatalf("round trip: %+v, %v", back, err)
	}

	// Unmarshal does not validate.
	var empty policy.Subject
	if err := json.Unmarshal([]byte(`{"issuer":"","subjectId":"a/b","tenant":"","lane":"x","kind":"y"}`), &empty); err != nil {
		t.Fatalf("values are for Validate, not Unmarshal: %v", err)
	}
	if want := (policy.Subject{SubjectID: "a/b", Lane: "x", Kind: "y"}); !reflect.DeepEqual(empty, want) {
		t.Fatalf("decoded %+v", empty)
	}

	// Closed at every depth.
	base := `"issuer":"i","subjectId":"s","tenant":"t","lane":"oidc","kind":"user"`
	for _, in := range []string{
		`{` + base + `,"authenticated":true}`,
		`{` + base + `,"actor":{` + base + `,"extra":1}}`,
		`{` + base + `,"actor":{` + base + `,"actor":{` + base + `,"roles":["admin"]}}}`,
		`{` + base + `,"issuer":5}`,
		`{` + base + `,"actor":[]}`,
		`[]`,
	} {
		var s policy.Subject
		err := json.Unmarshal([]byte(in), &s)
		if err == nil {
			t.Errorf("Unmarshal(%s) accepted", in)
			continue
		}
		if !strings.Contains(err.Error(), "subject: ") {
			t.Errorf("Unmarshal(%s): error %q does not name the subject", in, err)
		}
	}
	for _, key := range []string{"authenticated", "extra", "roles"} {
		in := `{` + base + `,"actor":{` + base + `,"` + key + `":1}}`
		var s policy.Subject
		if err := json.Unmarshal([]byte(in), &s); err == nil || !strings.Contains(err.Error(), `unknown field "`+key+`"`) {
			t.Errorf("nested unknown %q: %v", key, err)
		}
	}
	// A null actor is no actor.
	var nullActor policy.Subject
	if err := json.Unmarshal([]byte(`{`+base+`,"actor":null}`), &nullActor); err != nil || nullActor.Actor != nil {
		t.Errorf("null actor: %+v, %v", nullActor, err)
	}
}

// The Subject object is closed and JSON keys are case-sensitive, so a key
// spelled "Issuer" is an unknown key. encoding/json matches keys without
// regard to case, and DisallowUnknownFields does not change that.
func TestSubjectJSONKeysAreCaseSensitive(t *testing.T) {
	for _, in := range []string{
		`{"Issuer":"i","subjectId":"s","tenant":"t","lane":"oidc","kind":"user"}`,
		`{"issuer":"i","SUBJECTID":"s","tenant":"t","lane":"oidc","kind":"user"}`,
		`{"issuer":"i","subjectId":"s","tenant":"t","lane":"oidc","kind":"user","Actor":null}`,
	} {
		var s policy.Subject
		if err := json.Unmarshal([]byte(in), &s); err == nil {
			t.Errorf("Unmarshal(%s) accepted a key the schema does not have", in)
		}
	}
}
