package a2ahttp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/a2acard"
	"github.com/wopneg/wopneg/internal/a2aversion"
)

func TestReadVersion(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header http.Header
		query  string
		useQ   bool
		want   a2aversion.Requested
	}{
		{"nothing", nil, "", true, a2aversion.Requested{}},
		{"one", http.Header{"A2a-Version": {"1.0"}}, "", false, a2aversion.Requested{Version: "1.0"}},
		{"ows", http.Header{"A2a-Version": {"\t 1.0 "}}, "", false, a2aversion.Requested{Version: "1.0"}},
		{"empty", http.Header{"A2a-Version": {""}}, "", false, a2aversion.Requested{}},
		{"malformed", http.Header{"A2a-Version": {"1"}}, "", false, a2aversion.Requested{Values: []string{"1"}, Problem: a2aversion.Malformed}},
		{"inner space", http.Header{"A2a-Version": {"1. 0"}}, "", false, a2aversion.Requested{Values: []string{"1. 0"}, Problem: a2aversion.Malformed}},
		{"list", http.Header{"A2a-Version": {"1.0 , 0.3"}}, "", false, a2aversion.Requested{Values: []string{"1.0", "0.3"}, Count: 2, Problem: a2aversion.Multiple}},
		{"lines", http.Header{"A2a-Version": {"1.0", "0.3"}}, "", false, a2aversion.Requested{Values: []string{"1.0", "0.3"}, Count: 2, Problem: a2aversion.Multiple}},
		{"query", nil, "A2A-Version=1.0", true, a2aversion.Requested{Version: "1.0"}},
		{"query not read", nil, "A2A-Version=1.0", false, a2aversion.Requested{}},
		{"query plus", nil, "A2A-Version=+1.0+", true, a2aversion.Requested{Version: "1.0"}},
		{"query and header", http.Header{"A2a-Version": {"1.0"}}, "A2A-Version=0.3", true, a2aversion.Requested{Values: []string{"1.0", "0.3"}, Count: 2, Problem: a2aversion.Multiple}},
		{"query name without value", nil, "A2A-Version", true, a2aversion.Requested{}},
		{"other parameters", nil, "a=1&b=A2A&c=%41", true, a2aversion.Requested{}},
		// A header of commas keeps four values, not one per comma.
		{"many commas", http.Header{"A2a-Version": {strings.Repeat(",", 1<<16)}}, "", false, a2aversion.Requested{Values: []string{"", "", "", ""}, Count: 1<<16 + 1, Problem: a2aversion.Multiple}},
		{"four values", http.Header{"A2a-Version": {"1,2", "3"}}, "A2A-Version=4", true, a2aversion.Requested{Values: []string{"1", "2", "3", "4"}, Count: 4, Problem: a2aversion.Multiple}},
		{"five values", http.Header{"A2a-Version": {"1,2", "3"}}, "A2A-Version=4&A2A-Version=5", true, a2aversion.Requested{Values: []string{"1", "2", "3", "4"}, Count: 5, Problem: a2aversion.Multiple}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := readVersion(tc.header, tc.query, tc.useQ); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("readVersion = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// readVersion must not write into the header's own slices, whatever their
// capacity.
func TestReadVersionLeavesTheHeaderAlone(t *testing.T) {
	lines := make([]string, 1, 4)
	lines[0] = "1.0"
	h := http.Header{"A2a-Version": lines, "a2a-version": {"0.3"}}
	readVersion(h, "A2A-Version=9.9", true)
	if got := lines[:cap(lines)]; got[1] != "" || got[2] != "" || len(h["A2a-Version"]) != 1 {
		t.Fatalf("the header's backing array was written: %q", got)
	}
}

func TestSniffID(t *testing.T) {
	for body, want := range map[string]string{
		`{"id":"x"}`:                       `"x"`,
		`{"id":0}`:                         `0`,
		`{"id":-0.5e-3}`:                   `-0.5e-3`,
		` { "id" : "x" } `:                 `"x"`,
		`{"params":{"id":"inner"}}`:        `null`,
		`{"params":{"id":"inner"},"id":1}`: `1`,
		`{"id":"x",}`:                      `null`,
		`{"id":[1]}`:                       `null`,
		`{"id":false}`:                     `null`,
		`{"id":"a","id":"a"}`:              `null`,
		`{"\u0069d":"escaped name"}`:       `"escaped name"`,
		`{}`:                               `null`,
		`[]`:                               `null`,
		`"id"`:                             `null`,
		`{"id":"x"} x`:                     `null`,
		"":                                 `null`,
		// The strict reader's rules: any repeated member, a nesting
		// past strictjson.MaxDepth, invalid UTF-8, an id of another case.
		`{"method":"a","method":"b","id":1}`:                                          `null`,
		`{"params":{"a":1,"a":2},"id":1}`:                                             `null`,
		`{"params":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `,"id":1}`: `null`,
		`{"params":` + strings.Repeat("[", 63) + strings.Repeat("]", 63) + `,"id":1}`: `1`,
		"{\"id\":\"\xff\"}": `null`,
		`{"Id":1}`:          `null`,
		`{"id":null}`:       `null`,
		`{"id":{"a":1}}`:    `null`,
	} {
		if got := string(sniffID([]byte(body))); got != want {
			t.Errorf("sniffID(%q) = %s, want %s", body, got, want)
		}
	}
}

func FuzzReadVersion(f *testing.F) {
	for _, seed := range [][3]string{
		{"1.0", "", ""}, {"", "", "A2A-Version=1.0"}, {"1.0,0.3", "", ""}, {"1.0", "0.2", ""},
		{" 1.0\t", "", "A2A-Version=%31.0"}, {"01.0", "", ""}, {"", "", "A2A-Version=1%"}, {"\xff", "", "A2A%2DVersion=9.9"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, line1, line2, rawQuery string) {
		h := http.Header{}
		for _, l := range []string{line1, line2} {
			if l != "" {
				h.Add(HeaderName, l)
			}
		}
		got := readVersion(h, rawQuery, true)
		switch got.Problem {
		case a2aversion.None:
			if got.Values != nil {
				t.Fatalf("values %q without a problem", got.Values)
			}
			if got.Version != "" {
				if _, err := facets.ParseVersion(facets.ProtocolA2A, got.Version); err != nil {
					t.Fatalf("accepted %q, which does not parse: %v", got.Version, err)
				}
			}
			if got.Raw() != got.Version {
				t.Fatalf("raw %q, version %q", got.Raw(), got.Version)
			}
		case a2aversion.Malformed:
			if len(got.Values) != 1 || got.Version != "" {
				t.Fatalf("malformed with %+v", got)
			}
			fallthrough
		case a2aversion.Multiple:
			if got.Version != "" || len(got.Values) == 0 {
				t.Fatalf("refused with %+v", got)
			}
			// What the decision sees must never read as a version.
			if _, err := facets.ParseVersion(facets.ProtocolA2A, got.Raw()); err == nil {
				t.Fatalf("refused %+v, but the decision would read %q as a version", got, got.Raw())
			}
		default:
			t.Fatalf("problem %d", got.Problem)
		}
		// One value and one only is what is accepted.
		if got.Problem == a2aversion.None && got.Version != "" {
			n := len(h.Values(HeaderName)) + len(queryValues(rawQuery))
			if n != 1 {
				t.Fatalf("accepted %q from %d values", got.Version, n)
			}
		}
	})
}

func FuzzSniffID(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","method":"GetTask","params":{"id":"t"},"id":"r-1"}`, `{"id":1}`, `{"id":null}`, `[{"id":1}]`,
		`{"id":1,"id":2}`, `{"id":"\u00e9\ud800"}`, `{"id":1e400}`, `{"id":"x"}{}`, `not json`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		id := sniffID(body)
		if string(id) == "null" {
			return
		}
		if !json.Valid(id) || (id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9')) {
			t.Fatalf("sniffID(%q) = %s, not a string or number", body, id)
		}
		// The id echoed is the body's own bytes.
		if !bytes.Contains(body, id) {
			t.Fatalf("sniffID(%q) = %s, which the body does not contain", body, id)
		}
		// And the body is one JSON object whose id it is.
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("sniffID(%q) = %s from a body that is not an object: %v", body, id, err)
		}
		if got := m["id"]; !bytes.Equal(got, id) {
			t.Fatalf("sniffID(%q) = %s, encoding/json reads id %s", body, id, got)
		}
	})
}

func FuzzCardOffers(f *testing.F) {
	for _, seed := range []string{
		`{"supportedInterfaces":[{"protocolVersion":"1.0"},{"protocolVersion":"0.3"}]}`, `{"protocolVersion":"0.3.0"}`,
		`{"supportedInterfaces":[{"protocolVersion":"1.0.1"}],"protocolVersion":"7"}`, `{"protocolVersion":".3."}`, `[]`, `null`,
		`{"supportedInterfaces":[{"protocolVersion":"1.0"},{"protocolVersion":"1.0"}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, card []byte) {
		offers, err := CardOffers(card)
		if err != nil && offers != nil {
			t.Fatalf("CardOffers(%q) = %q, %v: offers beside an error", card, offers, err)
		}
		for i, v := range offers {
			if !a2acard.MajorMinor(v) {
				t.Fatalf("CardOffers(%q) offers %q, not major.minor", card, v)
			}
			for _, w := range offers[:i] {
				if v == w {
					t.Fatalf("CardOffers(%q) offers %q twice", card, v)
				}
			}
		}
	})
}
