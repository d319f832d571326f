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
	at := func(path string, offset, size int) string {
		return "the document is not JSON: nested deeper than 64 levels at byte " + strconv.Itoa(offset) + " of " + strconv.Itoa(size) +
			" (in " + path + strings.Repeat("[0]", 64-strings.Count(path, ".")-1) + ")"
	}
	for doc, msg := range map[string]string{
		`{"a2a":{` + okA2A + `,"x":` + deep + `}}`:        at("a2a.x", 168, 10108),
		`{"x":` + deep + `}`:                              at("x", 68, 10006),
		`{"a2a":{` + okA2A + `,"versions":` + deep + `}}`: at("a2a.versions", 175, 10115),
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
		`{"a2a":{` + okA2A + `}} }`:       "the document is not JSON: data after the JSON value at byte 104 of 105 (at the top level)",
		`null null`:                       "the document is not JSON: data after the JSON value at byte 5 of 9 (at the top level)",
		`{"a2a":{` + okA2A + `,}}`:        "the document is not JSON: invalid character ',' looking for beginning of value at byte 101 of 104 (in a2a)",
		"{\"a2a\":{\"status\":\"\xff\"}}": "the document is not valid UTF-8",
		``:                                "the document is empty: no JSON value in 0 bytes",
		" \n\t ":                          "the document is empty: no JSON value in 4 bytes",
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

// A member given to the wrong object says what was meant: an MCP facet's
// versions are its revisions, an A2A facet's revisions its versions, and
// a discovery document's root members given to Parse belong to the
// document, not to a facet set.
func TestParseMisplacedMembers(t *testing.T) {
	for doc, want := range map[string]Violation{
		`{"mcp":{"versions":["2025-11-25"]}}`:     {"mcp.versions", "unknown-field", `unknown field "versions" (did you mean "revisions"?)`},
		`{"a2a":{"revisions":["1.0"]}}`:           {"a2a.revisions", "unknown-field", `unknown field "revisions" (did you mean "versions"?)`},
		`{"mcp":{"minimumVersion":"2025-11-25"}}`: {"mcp.minimumVersion", "unknown-field", `unknown field "minimumVersion" (did you mean "minimumRevision"?)`},
		`{"protocolVersions":["2.0"]}`:            {"protocolVersions", "unknown-field", `protocolVersions is a member of a v2 discovery document, not of a facet set: a facet set holds only "a2a" and "mcp"; read the whole document with facets.ParseDiscovery (wopneg lint checks one), or give only its a2a and mcp members`},
		`{"hostEvents":{}}`:                       {"hostEvents", "unknown-field", `hostEvents is a member of a v2 discovery document, not of a facet set: a facet set holds only "a2a" and "mcp"; read the whole document with facets.ParseDiscovery (wopneg lint checks one), or give only its a2a and mcp members`},
		`{"a2a":{"protocolVersions":["1.0"]}}`:    {"a2a.protocolVersions", "unknown-field", "the v1 list protocolVersions is gone from the families in v2"},
	} {
		_, err := Parse([]byte(doc))
		if got := violationsOf(t, err); !slices.Contains(got, want) {
			t.Errorf("Parse(%s) = %q, want %q among them", doc, got, want)
		}
	}
	// In a discovery document, protocolVersions is a member like any other.
	_, err := ParseDiscovery([]byte(`{"protocolVersions":["2.0"],"preferredVersion":"2.0"}`))
	if err == nil || strings.Contains(err.Error(), "protocolVersions") {
		t.Errorf("ParseDiscovery = %v, want only that it advertises no facet", err)
	}
}
