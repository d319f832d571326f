package policy_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/strictjson"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

const leaf = `"issuer":"https://idp.example","subjectId":"u-42","tenant":"acme","lane":"oidc","kind":"user"`

// actorChain returns the JSON of a valid Subject with n actors below it,
// the last of which holds tail (`,"actor":...` or "").
func actorChain(n int, tail string) []byte {
	return []byte(strings.Repeat(`{`+leaf+`,"actor":`, n) + `{` + leaf + tail + `}` + strings.Repeat(`}`, n))
}

// subjectProblems decodes data as a Subject and returns the problems of
// the *SubjectError it must fail with.
func subjectProblems(t *testing.T, data []byte) []policy.SubjectError {
	t.Helper()
	var s policy.Subject
	err := json.Unmarshal(data, &s)
	var se *policy.SubjectError
	if !errors.As(err, &se) {
		t.Fatalf("Unmarshal: %v (%T), want a *SubjectError", err, err)
	}
	if !reflect.DeepEqual(s, policy.Subject{}) {
		t.Errorf("a refused Subject was partly decoded: %+v", s)
	}
	return policy.Problems(err)
}

// Issue 8 item 3: the actor chain is read once, and an actor below the
// fifth is refused before anything in it is read. On main before this
// change each level re-read the rest of the chain (an 8,000-deep chain
// took 100 s and 7 GB), and the limit was only checked afterwards.
func TestSubjectJSONDepthRefusedWhileReading(t *testing.T) {
	deepest := "subject" + strings.Repeat(".actor", policy.MaxActorDepth+2)
	want := []policy.SubjectError{{Path: deepest, Message: "nests deeper than 4 actors"}}
	for _, n := range []int{policy.MaxActorDepth + 2, 100, 8000} {
		if got := subjectProblems(t, actorChain(n, "")); !reflect.DeepEqual(got, want) {
			t.Errorf("%d actors: %+v, want %+v", n, got, want)
		}
	}
	// What lies below the sixth actor is never read: not even a value that
	// is no JSON at all.
	var s policy.Subject
	garbage := []byte(string(actorChain(policy.MaxActorDepth+1, `,"actor":{"issuer":5,"x":[[[[`)) + `}`)
	err := s.UnmarshalJSON(garbage)
	if err == nil || err.Error() != "invalid subject: "+deepest+": nests deeper than 4 actors" {
		t.Errorf("UnmarshalJSON of a chain with garbage below the limit: %v", err)
	}

	// The fifth actor is read, so that Validate names it at its path, as it
	// does for a Subject built in Go.
	if err := json.Unmarshal(actorChain(policy.MaxActorDepth+1, ""), &s); err != nil {
		t.Fatalf("five actors: %v", err)
	}
	var se *policy.SubjectError
	if err := s.Validate(); !errors.As(err, &se) || se.Path != "subject"+strings.Repeat(".actor", 5) {
		t.Errorf("five actors: Validate() = %v", err)
	}
	var four policy.Subject
	if err := json.Unmarshal(actorChain(policy.MaxActorDepth, `,"actor":null`), &four); err != nil || four.Validate() != nil {
		t.Errorf("four actors and a null one: %v, %v", err, four.Validate())
	}
}

// Reading a chain costs about as much at 8,000 actors as at 6: the reader
// stops at the same place. (A measure of work that is not a timing.) The
// slack is for encoding/json's pooled syntax scanner, which run under
// -race sometimes regrows its stack for the deeper input; decoding each
// actor would cost thousands.
func TestSubjectJSONDepthCostIsBounded(t *testing.T) {
	allocs := func(data []byte) float64 {
		return testing.AllocsPerRun(5, func() {
			var s policy.Subject
			_ = s.UnmarshalJSON(data)
		})
	}
	short, long := allocs(actorChain(policy.MaxActorDepth+2, "")), allocs(actorChain(8000, ""))
	if long > 2*short {
		t.Errorf("an 8,000-deep chain allocates %v times, a 6-deep one %v", long, short)
	}
}

func TestSubjectJSONErrors(t *testing.T) {
	for _, c := range []struct {
		in   string
		want policy.SubjectError
	}{
		{`[]`, policy.SubjectError{Path: "subject", Message: "want an object, got an array"}},
		{`{` + leaf + `}}`, policy.SubjectError{Path: "subject", Message: "data after the JSON value"}},
		{`null x`, policy.SubjectError{Path: "subject", Message: "data after the JSON value"}},
		{`nul`, policy.SubjectError{Path: "subject", Message: "unexpected end of JSON input"}},
		{`{` + leaf + `,"issuer":"x"}`, policy.SubjectError{Path: "subject", Message: `the key "issuer" appears twice`}},
		{`{` + leaf + `,"keyClass":null}`, policy.SubjectError{Path: "subject.keyClass", Message: "want a string, got null"}},
		{`{` + leaf + `,"actor":{` + leaf + `,"extra":1}}`, policy.SubjectError{Path: "subject.actor", Message: `unknown field "extra"`}},
		{`{` + leaf + `,"actor":{"tenant":7}}`, policy.SubjectError{Path: "subject.actor.tenant", Message: "want a string, got a number"}},
		{`{` + leaf + `,"actor":[]}`, policy.SubjectError{Path: "subject.actor", Message: "want an object, got an array"}},
	} {
		var s policy.Subject
		err := s.UnmarshalJSON([]byte(c.in))
		var se *policy.SubjectError
		if !errors.As(err, &se) || *se != c.want {
			t.Errorf("UnmarshalJSON(%s) = %v, want %s: %s", c.in, err, c.want.Path, c.want.Message)
		}
	}
	// null leaves the Subject as it was.
	s := *valid()
	if err := s.UnmarshalJSON([]byte(" null ")); err != nil || s != *valid() {
		t.Errorf("null: %+v, %v", s, err)
	}
	// Every field, each at its place.
	in := `{"issuer":"i","subjectId":"s","tenant":"t","lane":"saml","kind":"agent","keyClass":"opaque-idp","actor":{"issuer":"a","subjectId":"b","tenant":"c","lane":"d","kind":"e","keyClass":"f"}}`
	want := policy.Subject{Issuer: "i", SubjectID: "s", Tenant: "t", Lane: "saml", Kind: "agent", KeyClass: "opaque-idp",
		Actor: &policy.Subject{Issuer: "a", SubjectID: "b", Tenant: "c", Lane: "d", Kind: "e", KeyClass: "f"}}
	var got policy.Subject
	if err := got.UnmarshalJSON([]byte(in)); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("UnmarshalJSON(%s) = %+v, %v", in, got, err)
	}
}

// Issue 8 item 3: a cyclic actor chain built in Go made Anonymous (and so
// every Decide) loop forever on main before this change.
func TestSubjectCycleEnds(t *testing.T) {
	cycle := valid()
	cycle.Actor = cycle
	if !cycle.Anonymous() || policy.DefaultAuthenticated(cycle) || cycle.Valid() || cycle.Validate() == nil {
		t.Error("a cyclic chain counts as a valid, authenticated Subject")
	}
	set := facets.Set{A2A: &facets.A2A{Versions: []string{"1.0", "1.1"}, PreferredVersion: "1.1", MinimumVersion: "1.0", RefreshedAt: "2026-11-01"}}
	o, _ := negotiate.Decide(cycle, set, negotiate.Offer{Protocol: facets.ProtocolA2A, PeerVersions: []string{"1.0"}}, policy.Policy{})
	if o.Err() == nil {
		t.Errorf("Decide downgraded a cyclic Subject: %+v", o)
	}
	// The walk looks at readActors+1 Subjects: the sixth one decides.
	six := chain(policy.MaxActorDepth + 1)
	if six.Anonymous() {
		t.Error("five valid actors: anonymous")
	}
	last(six).Actor = anon()
	if !six.Anonymous() {
		t.Error("an anonymous sixth actor: not anonymous")
	}
	last(six).Kind = policy.KindUser
	last(six).Lane = policy.LaneOIDC
	if !six.Anonymous() {
		t.Error("a valid sixth actor: not anonymous, but the chain is too long to look at")
	}
}

// BenchmarkSubjectJSONDeepChain is the figure of issue 8 item 3: decoding
// an 8,000-deep actor chain (about 784 KB), directly and through
// encoding/json.
func BenchmarkSubjectJSONDeepChain(b *testing.B) {
	data := actorChain(8000, "")
	b.SetBytes(int64(len(data)))
	b.Run("UnmarshalJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var s policy.Subject
			if s.UnmarshalJSON(data) == nil {
				b.Fatal("accepted")
			}
		}
	})
	// As a request holding a Subject is read by the module's strict
	// reader: its depth bound stops the chain before the Subject's own.
	b.Run("strictjson.Decode", func(b *testing.B) {
		req := append(append([]byte(`{"subject":`), data...), '}')
		b.ReportAllocs()
		for b.Loop() {
			var r struct {
				Subject *policy.Subject `json:"subject"`
			}
			if strictjson.Decode(req, &r) == nil {
				b.Fatal("accepted")
			}
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var s policy.Subject
			if json.Unmarshal(data, &s) == nil {
				b.Fatal("accepted")
			}
		}
	})
}

// subjectMirror is Subject's shape without its UnmarshalJSON, for
// encoding/json to decode.
type subjectMirror struct {
	Issuer    string         `json:"issuer"`
	SubjectID string         `json:"subjectId"`
	Tenant    string         `json:"tenant"`
	Lane      string         `json:"lane"`
	Kind      string         `json:"kind"`
	KeyClass  string         `json:"keyClass"`
	Actor     *subjectMirror `json:"actor"`
}

func (m *subjectMirror) subject() *policy.Subject {
	if m == nil {
		return nil
	}
	return &policy.Subject{Issuer: m.Issuer, SubjectID: m.SubjectID, Tenant: m.Tenant, Lane: m.Lane, Kind: m.Kind, KeyClass: m.KeyClass, Actor: m.Actor.subject()}
}

// FuzzSubjectJSON checks that the Subject reader never panics, refuses
// with a located *SubjectError, reads no chain deeper than five actors,
// and agrees with encoding/json on every document it accepts.
func FuzzSubjectJSON(f *testing.F) {
	for _, s := range []string{
		string(actorChain(0, "")), string(actorChain(5, "")), string(actorChain(7, "")),
		`{"issuer":"i","subjectId":"s","tenant":"t","lane":"saml","kind":"user","keyClass":"opaque-idp","actor":null}`,
		`{"issuer":"i","issuer":"j"}`, `{"Issuer":"i"}`, `null`, `{} x`, `{"actor":{"actor":[]}}`, "{\"issuer\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s policy.Subject
		err := s.UnmarshalJSON(data)
		if err != nil {
			var se *policy.SubjectError
			if !errors.As(err, &se) || len(policy.Problems(err)) != 1 || !strings.HasPrefix(se.Path, "subject") {
				t.Fatalf("error %v (%T) is not a located *SubjectError", err, err)
			}
			return
		}
		n := 0
		for a := s.Actor; a != nil; a = a.Actor {
			n++
		}
		if n > policy.MaxActorDepth+1 {
			t.Fatalf("read %d actors", n)
		}
		var m *subjectMirror
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("encoding/json refuses what the reader accepted: %v", err)
		}
		want := m.subject()
		if want == nil {
			want = &policy.Subject{} // null: unchanged
		}
		if !reflect.DeepEqual(&s, want) {
			t.Fatalf("reader %+v, encoding/json %+v", s, want)
		}
	})
}
