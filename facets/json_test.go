package facets

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const okA2A = `"versions":["1.0"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-09-18"`

// Issue 8 item 6: nesting is bounded while reading. On main before this
// change the facet decoder let encoding/json read any depth up to its own
// 10,000 and then reported a deep value under an unknown key as one
// unknown field; now the reader refuses it at MaxDepth, before reading
// further.
func TestParseDepthBoundedWhileReading(t *testing.T) {
	deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	// The error names the first container past the bound, and its offset.
	at := func(path string, offset int) string {
		return "the document is not JSON: " + path + strings.Repeat("[0]", 64-strings.Count(path, ".")-1) +
			": nested deeper than 64 levels (at byte " + strconv.Itoa(offset) + ")"
	}
	for doc, msg := range map[string]string{
		`{"a2a":{` + okA2A + `,"x":` + deep + `}}`:        at("a2a.x", 168),
		`{"x":` + deep + `}`:                              at("x", 68),
		`{"a2a":{` + okA2A + `,"versions":` + deep + `}}`: at("a2a.versions", 175),
	} {
		_, err := Parse([]byte(doc))
		want := []Violation{{"", "syntax", msg}}
		if got := violationsOf(t, err); !slices.Equal(got, want) {
			t.Errorf("Parse(%.40s...) = %q, want %q", doc, got, want)
		}
	}
}

// A repeated key stops the reading: what follows it is not decoded, so it
// is neither reported nor validated (a field after it would read as
// missing), and the Set is zero. Problems found before it are reported
// with it.
func TestRepeatedKeyStopsReading(t *testing.T) {
	for doc, want := range map[string][]Violation{
		`{"a2a":{"x":1,"versions":["1.0"],"versions":["1.1"],"y":2},"z":3}`: {
			{"a2a.versions", "duplicate-key", `key "versions" appears more than once`},
			{"a2a.x", "unknown-field", `unknown field "x": the record is closed`},
		},
		`{"a2a":{` + okA2A + `},"a2a":{}}`: {{"a2a", "duplicate-key", `key "a2a" appears more than once`}},
		`{"mcp":{"serverMount":{"transports":[],"transports":[]}}}`: {
			{"mcp.serverMount.transports", "duplicate-key", `key "transports" appears more than once`},
		},
		`{"a2a":{` + okA2A + `,"x-y":1,"x-y":2}}`: {
			{`a2a["x-y"]`, "unknown-field", `unknown field "x-y": the record is closed`},
			{`a2a["x-y"]`, "duplicate-key", `key "x-y" appears more than once`},
		},
	} {
		s, err := parseSet([]byte(doc), true)
		if got := violationsOf(t, err); !slices.Equal(got, want) {
			t.Errorf("parseSet(%s):\n got %q\nwant %q", doc, got, want)
		}
		if !reflect.DeepEqual(s, Set{}) {
			t.Errorf("parseSet(%s) = %+v, want a zero Set", doc, s)
		}
		if _, perr := Parse([]byte(doc)); !reflect.DeepEqual(perr, err) {
			t.Errorf("Parse(%s) = %v, parseSet %v", doc, perr, err)
		}
	}
	var s Set
	if got := violationsOf(t, s.UnmarshalJSON([]byte(`{"a2a":{"status":"x","status":"y"}}`))); !slices.Equal(got, []Violation{{"a2a.status", "duplicate-key", `key "status" appears more than once`}}) {
		t.Errorf("Set.UnmarshalJSON: %q", got)
	}
}

// The document is one JSON value: what follows it, even white space and
// a stray brace, makes it no JSON.
func TestParseSyntax(t *testing.T) {
	for doc, msg := range map[string]string{
		`{"a2a":{` + okA2A + `}} }`:       "the document is not JSON: data after the JSON value (at byte 104)",
		`null null`:                       "the document is not JSON: data after the JSON value (at byte 5)",
		`{"a2a":{` + okA2A + `,}}`:        "the document is not JSON: a2a: invalid character ',' looking for beginning of value (at byte 101)",
		"{\"a2a\":{\"status\":\"\xff\"}}": "the document is not valid UTF-8",
		``:                                "the document is not JSON: unexpected end of JSON input (at byte 0)",
	} {
		_, err := Parse([]byte(doc))
		if got := violationsOf(t, err); !slices.Equal(got, []Violation{{"", "syntax", msg}}) {
			t.Errorf("Parse(%q) = %q, want %q", doc, got, msg)
		}
	}
	if s, err := Parse([]byte(" {\"a2a\":{" + okA2A + "}}\n\t ")); err != nil || s.A2A.RefreshedAt != "2026-09-18" {
		t.Errorf("white space around the value: %+v, %v", s, err)
	}
}
