package facets

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"slices"
	"testing"
	"time"
)

// discoveryCase is one row of testdata/discovery/cases.json: a document,
// what ParseDiscovery refuses in it and what Lint finds in it at lintNow,
// each as "path rule" pairs in the order reported.
type discoveryCase struct {
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	InputText *string         `json:"inputText"`
	Parse     []pathRule      `json:"parse"`
	Lint      []pathRule      `json:"lint"`
}

func (c discoveryCase) doc() []byte {
	if c.InputText != nil {
		return []byte(*c.InputText)
	}
	return c.Input
}

var lintNow = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

func loadDiscoveryCases(t testing.TB) []discoveryCase {
	t.Helper()
	data, err := os.ReadFile("testdata/discovery/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cs []discoveryCase
	if err := json.Unmarshal(data, &cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestDiscoveryCases(t *testing.T) {
	cases := loadDiscoveryCases(t)
	if len(cases) < 25 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			d, err := ParseDiscovery(c.doc())
			got := pairsOf(violationsOf(t, err))
			if g, w := sortedPairs(got), sortedPairs(c.Parse); !slices.Equal(g, w) {
				t.Errorf("ParseDiscovery\n got %q\nwant %q\n%v", g, w, err)
			}
			if (err == nil) == reflect.ValueOf(d).IsZero() {
				t.Errorf("ParseDiscovery = %+v, %v: want a zero Discovery exactly on error", d, err)
			}
			lint := Lint(c.doc(), lintNow)
			if got, want := pairsOf(lint), c.Lint; !slices.Equal(got, append([]pathRule{}, want...)) && (len(got) > 0 || len(want) > 0) {
				t.Errorf("Lint\n got %v\nwant %v\n%q", got, want, lint)
			}
			for _, f := range lint {
				if f.Message == "" {
					t.Errorf("finding %+v says nothing", f)
				}
			}
			var viaJSON Discovery
			if jerr := json.Unmarshal(c.doc(), &viaJSON); err == nil && (jerr != nil || !reflect.DeepEqual(viaJSON, d)) {
				t.Errorf("json.Unmarshal = %+v, %v; ParseDiscovery %+v", viaJSON, jerr, d)
			}
		})
	}
}

// TestDiscoveryRoundTrip checks that an accepted document marshals to the
// same JSON value, keys in the order of the schema, and parses back to
// the same Discovery.
func TestDiscoveryRoundTrip(t *testing.T) {
	n := 0
	for _, c := range loadDiscoveryCases(t) {
		d, err := ParseDiscovery(c.doc())
		if err != nil {
			continue
		}
		n++
		out, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var in, back any
		if json.Unmarshal(c.doc(), &in) != nil || json.Unmarshal(out, &back) != nil || !reflect.DeepEqual(in, back) {
			t.Errorf("%s: marshalled JSON differs from the input\n got %s\nwant %s", c.Name, out, c.doc())
		}
		again, err := ParseDiscovery(out)
		if err != nil || !reflect.DeepEqual(again, d) {
			t.Errorf("%s: re-parse = %+v, %v", c.Name, again, err)
		}
	}
	if n < 4 {
		t.Fatalf("only %d accepted cases", n)
	}
}

func TestDiscoveryMarshal(t *testing.T) {
	d := Discovery{PreferredVersion: "2.0", Seams: true, HostEvents: []HostEvent{{"negotiation.decided", "durable"}},
		MCP: refMCP(), A2A: refA2A()}
	out, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{`"protocolVersions":[]`, `"preferredVersion"`, `"conformance":{"seamsProfile":"openwop-conformance-seams-v2"}`,
		`"hostEvents":{"types":[{"type":"negotiation.decided","delivery":"durable"}]}`, `"a2a"`, `"mcp"`}
	at := -1
	for _, k := range keys {
		i := bytes.Index(out, []byte(k))
		if i <= at {
			t.Fatalf("%s is not after the keys before it in %s", k, out)
		}
		at = i
	}
	bare, _ := json.Marshal(Discovery{ProtocolVersions: []string{"2.0"}, PreferredVersion: "2.0"})
	if string(bare) != `{"protocolVersions":["2.0"],"preferredVersion":"2.0"}` {
		t.Errorf("a bare document: %s", bare)
	}
	if again, _ := json.Marshal(d); !bytes.Equal(again, out) {
		t.Error("two marshals differ")
	}
}

func TestDiscoveryStrictSeams(t *testing.T) {
	var d Discovery
	err := d.UnmarshalJSON([]byte(`{"protocolVersions": ["2.0"], "preferredVersion": "2.0"}`))
	if got := violationsOf(t, err); !slices.Equal(got, []Violation{{"", "required", "advertises neither a2a nor mcp"}}) || !reflect.DeepEqual(d, Discovery{}) {
		t.Errorf("UnmarshalJSON = %+v, %q", d, got)
	}
	doc := `{"protocolVersions": ["2.0"], "preferredVersion": "2.0", "conformance": {"seamsProfile": "openwop-conformance-seams-v2"},
		"mcp": {"status": "stable", "since": "2.0", "witness": "seam-gated", "revisions": ["2026-07-28"],
		"preferredVersion": "2026-07-28", "minimumRevision": "2026-07-28", "refreshedAt": "2026-11-01"}}`
	if err := d.UnmarshalJSON([]byte(doc)); err != nil || !d.Seams || d.HostEvents != nil || d.A2A != nil || d.MCP.Status != "stable" {
		t.Errorf("UnmarshalJSON = %+v, %v", d, err)
	}
}

func TestLintRepeatedKeyIsTheOneFinding(t *testing.T) {
	for _, doc := range []string{
		`{"grpc": {}, "a2a": {"x": 1, "versions": [], "versions": []}}`,
		`{"supportedTransports": [], "other": [{"k": 1, "k": 2}]}`,
		`{"grpc": {}, "grpc": {}}`,
	} {
		got := Lint([]byte(doc), lintNow)
		if len(got) != 1 || got[0].Rule != "duplicate-key" {
			t.Errorf("Lint(%s) = %q, want the one duplicate-key finding", doc, got)
		}
	}
	if got := Lint([]byte(`{"protocolVersions": ["2.0"], "preferredVersion": "2.0"}`), lintNow); got != nil {
		t.Errorf("a document with nothing to report: %q", got)
	}
}

// FuzzParseDiscovery checks that the discovery parser and Lint never
// panic; that a document ParseDiscovery accepts survives a round trip
// and that Lint, at its refresh day, finds nothing in it but what needs
// a clock; and that what either reports is located and explained.
func FuzzParseDiscovery(f *testing.F) {
	for _, c := range loadDiscoveryCases(f) {
		f.Add(c.doc())
	}
	clock := []string{"until-in-past", "refresh-stale", "refresh-future"}
	f.Fuzz(func(t *testing.T, data []byte) {
		lint := Lint(data, lintNow)
		for _, v := range lint {
			if v.Rule == "" || v.Message == "" {
				t.Fatalf("finding %+v lacks a rule or message", v)
			}
		}
		d, err := ParseDiscovery(data)
		if err != nil {
			var vs violations
			if !errors.As(err, &vs) || len(vs) == 0 || !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v (%T) does not carry violations", err, err)
			}
			return
		}
		if slices.ContainsFunc(lint, func(v Violation) bool { return !slices.Contains(clock, v.Rule) }) {
			t.Fatalf("Lint finds %q in a document ParseDiscovery accepts", lint)
		}
		out, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseDiscovery(out)
		if err != nil || !reflect.DeepEqual(again, d) {
			t.Fatalf("round trip of %s: %+v, %v", out, again, err)
		}
	})
}
