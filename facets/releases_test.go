package facets

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func TestPublishedReleases(t *testing.T) {
	r := publishedReleases()
	if err := asError(r.violations()); err != nil {
		t.Fatalf("embedded list: %v", err)
	}
	superseded := map[Protocol]map[string]bool{
		ProtocolA2A: {"0.2": true, "0.3": true, "1.0": false},
		ProtocolMCP: {"2024-11-05": true, "2025-03-26": true, "2025-06-18": true, "2025-11-25": false, "2026-07-28": false},
	}
	for p, want := range superseded {
		if n := len(r.list(p)); n != len(want) {
			t.Errorf("%s lists %d releases, want %d", p, n, len(want))
		}
		for v, sup := range want {
			rel, ok := r.lookup(p, v)
			if !ok {
				t.Errorf("%s %s is not listed", p, v)
				continue
			}
			if (rel.SupersededBy != "") != sup {
				t.Errorf("%s %s superseded by %q, want superseded %v", p, v, rel.SupersededBy, sup)
			}
			if !validDate(rel.Published) {
				t.Errorf("%s %s published %q", p, v, rel.Published)
			}
			if p == ProtocolMCP && rel.Published != v {
				t.Errorf("mcp %s published %s, want the revision's own date", v, rel.Published)
			}
		}
	}
	if r.TakenAt != "2026-11-29" {
		t.Errorf("embedded takenAt %q", r.TakenAt)
	}
	// A fresh copy on every call: changing one leaves the next intact.
	r.A2A[0].Version = "9.9"
	if again := publishedReleases(); again.A2A[0].Version != "0.2" {
		t.Errorf("publishedReleases shares memory between calls: %q", again.A2A[0].Version)
	}
}

func TestReleasesLookup(t *testing.T) {
	r := releases{A2A: []release{{Version: "1.0", Published: "2026-03-12"}}}
	if _, ok := r.lookup(ProtocolMCP, "1.0"); ok {
		t.Error("an A2A version was found under mcp")
	}
	if rel, ok := r.lookup(ProtocolA2A, "1.0"); !ok || rel.Published != "2026-03-12" {
		t.Errorf("Lookup a2a 1.0 = %+v, %v", rel, ok)
	}
}

func TestParseReleases(t *testing.T) {
	tests := []struct {
		name, doc string
		want      []string // "path rule", sorted
	}{
		{"valid", `{"a2a": [{"version": "1.0", "published": "2026-03-12"}], "mcp": []}`, nil},
		{"empty object", `{}`, nil},
		{"not JSON", `{"a2a": [`, []string{" syntax"}},
		{"not an object", `[]`, []string{" type"}},
		{"unknown key", `{"grpc": []}`, []string{"grpc unknown-field"}},
		{"repeated key", `{"a2a": [], "a2a": []}`, []string{"a2a duplicate-key"}},
		{"list not an array", `{"mcp": {}}`, []string{"mcp type"}},
		{"release not an object", `{"a2a": ["1.0"]}`, []string{"a2a[0] type"}},
		{"unknown release field", `{"a2a": [{"version": "1.0", "published": "2026-03-12", "date": "x"}]}`,
			[]string{"a2a[0].date unknown-field"}},
		{"missing fields", `{"a2a": [{}]}`, []string{"a2a[0].published required", "a2a[0].version required"}},
		{"empty strings", `{"a2a": [{"version": "", "published": ""}]}`,
			[]string{"a2a[0].published date", "a2a[0].version pattern"}},
		{"wrong types", `{"a2a": [{"version": 1.0, "published": null}]}`,
			[]string{"a2a[0].published type", "a2a[0].version type"}},
		{"bad version and date", `{"a2a": [{"version": "v1", "published": "2026-02-30"}], "mcp": [{"version": "2026-7-28", "published": "2026-07-28"}]}`,
			[]string{"a2a[0].published date", "a2a[0].version pattern", "mcp[0].version date"}},
		{"duplicate", `{"a2a": [{"version": "1.0", "published": "2026-03-12"}, {"version": "1.0", "published": "2026-03-13"}]}`,
			[]string{"a2a[1].version duplicate"}},
		{"superseded by an unlisted version", `{"a2a": [{"version": "1.0", "published": "2026-03-12", "supersededBy": "2.0"}]}`,
			[]string{"a2a[0].supersededBy member"}},
		{"superseded by an older version", `{"a2a": [{"version": "0.3", "published": "2025-07-30"}, {"version": "1.0", "published": "2026-03-12", "supersededBy": "0.3"}]}`,
			[]string{"a2a[1].supersededBy supersede-order"}},
		{"taken", `{"takenAt": "2026-03-12", "a2a": [{"version": "1.0", "published": "2026-03-12"}]}`, nil},
		{"taken before a release", `{"takenAt": "2026-03-11", "a2a": [{"version": "1.0", "published": "2026-03-12"}],
			"mcp": [{"version": "2026-03-11", "published": "2026-03-11"}, {"version": "2026-07-28", "published": "2026-07-28"}]}`,
			[]string{"a2a[0].published after-taken", "mcp[1].published after-taken"}},
		{"takenAt not a date", `{"takenAt": "2026-02-30", "a2a": [{"version": "1.0", "published": "2026-03-12"}]}`,
			[]string{"takenAt date"}},
		{"takenAt empty", `{"takenAt": ""}`, []string{"takenAt date"}},
		{"takenAt not a string", `{"takenAt": 20260312}`, []string{"takenAt type"}},
		{"superseded by itself", `{"a2a": [{"version": "1.0", "published": "2026-03-12", "supersededBy": "1.0"}]}`,
			[]string{"a2a[0].supersededBy supersede-order"}},
		{"superseded by a malformed version", `{"mcp": [{"version": "2025-06-18", "published": "2025-06-18", "supersededBy": "soon"}]}`,
			[]string{"mcp[0].supersededBy date"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := parseReleases([]byte(tt.doc))
			got := sortedPairs(pairsOf(violationsOf(t, err)))
			if len(got) == 0 {
				got = nil
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("violations %v, want %v", got, tt.want)
			}
			if err != nil && !reflect.DeepEqual(r, releases{}) {
				t.Errorf("on error parseReleases returned %+v", r)
			}
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not match ErrInvalid", err)
			}
		})
	}
}

const mirror = `{"a2a": [{"version": "1.0", "published": "2026-03-12"}],
	"mcp": [{"version": "2026-07-28", "published": "2026-07-28"}]}`

// FuzzParseReleases checks that parseReleases never panics, that what it
// accepts is valid and survives a JSON round trip, and that what it
// refuses comes with located violations.
func FuzzParseReleases(f *testing.F) {
	f.Add(published)
	f.Add([]byte(mirror))
	f.Add([]byte(`{"a2a": [{"version": "1.0", "published": "2026-03-12", "supersededBy": "0.3"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseReleases(data)
		if err != nil {
			for _, v := range violationsOf(t, err) {
				if v.Rule == "" || v.Message == "" {
					t.Fatalf("violation %+v lacks a rule or message", v)
				}
			}
			return
		}
		if err := asError(r.violations()); err != nil {
			t.Fatalf("accepted list is invalid: %v", err)
		}
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		again, err := parseReleases(out)
		if err != nil || !reflect.DeepEqual(again, r) {
			t.Fatalf("round trip of %s: %+v, %v", out, again, err)
		}
	})
}

func pairsOf(vs []Violation) []pathRule {
	ps := make([]pathRule, len(vs))
	for i, v := range vs {
		ps[i] = pathRule{v.Path, v.Rule}
	}
	return ps
}
