package facets

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// FuzzParse checks that Parse never panics, that what it accepts survives
// a round trip through json.Marshal unchanged, and that what it refuses
// comes with located, explained violations.
func FuzzParse(f *testing.F) {
	for _, fx := range loadFixtures(f) {
		f.Add(fx.doc())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, record := range []bool{false, true} {
			parse := func(data []byte) (Set, error) { return parseSet(data, record) }
			s, err := parse(data)
			if err != nil {
				var vs violations
				var first *Violation
				if !errors.As(err, &vs) || len(vs) == 0 || !errors.As(err, &first) || !errors.Is(err, ErrInvalid) || err.Error() == "" {
					t.Fatalf("error %v (%T) does not carry violations", err, err)
				}
				for _, v := range vs {
					if v.Message == "" || v.Rule == "" {
						t.Fatalf("violation %+v lacks a rule or message", v)
					}
				}
				if !reflect.DeepEqual(s, Set{}) {
					t.Fatalf("on error Parse returned %+v", s)
				}
				continue
			}
			out, err := json.Marshal(s)
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
			again, err := parse(out)
			if err != nil {
				t.Fatalf("re-parse of %s: %v", out, err)
			}
			if !reflect.DeepEqual(s, again) {
				t.Fatalf("round trip differs:\n%#v\n%#v", s, again)
			}
		}
	})
}

// FuzzParseVersion checks that ParseVersion never panics and that a
// version it accepts prints as it was written and parses to itself.
func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"1.0", "1.10", "0.3", "01.0", "4294967295.0", "4294967296.0", "1.", "2026-07-28", "2024-02-29", "2023-02-29", "1900-02-29", "2026-13-01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range []Protocol{ProtocolA2A, ProtocolMCP} {
			v, err := ParseVersion(p, s)
			if err != nil {
				var viol *Violation
				if !errors.As(err, &viol) || !errors.Is(err, ErrInvalid) || v != (Version{}) || viol.Path != "" {
					t.Fatalf("%s %q: %v, %v", p, s, v, err)
				}
				continue
			}
			if v.String() != s || v.tag.protocol() != p {
				t.Fatalf("%s %q printed as %q", p, s, v)
			}
			w, err := ParseVersion(p, v.String())
			if err != nil || w != v || w.Compare(v) != 0 {
				t.Fatalf("%s %q re-parsed as %v, %v", p, s, w, err)
			}
			if p == ProtocolMCP && !validDate(s) {
				t.Fatalf("revision %q is not a date", s)
			}
		}
	})
}
