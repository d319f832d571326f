package facets

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/wopneg/wopneg/internal/strictjson"
)

// fixture is one row of the table files in testdata: a document, which
// check to run on it, and exactly the violations that check must find.
type fixture struct {
	Name string `json:"name"`
	// Check is "facet" (Parse) or "record" (the records of a discovery
	// document, which also need status, since and witness).
	Check string `json:"check"`
	// Input is the document; InputText is used instead for documents that
	// are not JSON at all.
	Input     json.RawMessage `json:"input"`
	InputText *string         `json:"inputText"`
	Want      []pathRule      `json:"want"`

	file string
}

type pathRule struct {
	Path string `json:"path"`
	Rule string `json:"rule"`
}

func (f fixture) doc() []byte {
	if f.InputText != nil {
		return []byte(*f.InputText)
	}
	return f.Input
}

// run parses the fixture's document as its check says, returning the
// result in a form that compares with reflect.DeepEqual.
func (f fixture) run() (any, error) {
	data := f.doc()
	if f.Check == "facet" {
		return Parse(data)
	}
	if f.Check == "record" {
		return parseSet(data, true)
	}
	return nil, fmt.Errorf("fixture %q: bad check %q", f.Name, f.Check)
}

func loadFixtures(t testing.TB) []fixture {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixture files: %v", err)
	}
	var all []fixture
	names := map[string]bool{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var fs []fixture
		if err := json.Unmarshal(data, &fs); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, f := range fs {
			f.file = filepath.Base(file)
			if names[f.file+"/"+f.Name] {
				t.Fatalf("%s: fixture name %q used twice", file, f.Name)
			}
			names[f.file+"/"+f.Name] = true
			all = append(all, f)
		}
	}
	return all
}

func sortedPairs(ps []pathRule) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Path + " " + p.Rule
	}
	slices.Sort(out)
	return out
}

func TestFixtures(t *testing.T) {
	fixtures := loadFixtures(t)
	if len(fixtures) < 50 {
		t.Fatalf("only %d fixtures", len(fixtures))
	}
	for _, f := range fixtures {
		t.Run(f.file+"/"+f.Name, func(t *testing.T) {
			got, err := f.run()
			var gotPairs []pathRule
			if err != nil {
				for _, v := range violationsOf(t, err) {
					if v.Message == "" {
						t.Errorf("violation %s %s has no message", v.Path, v.Rule)
					}
					gotPairs = append(gotPairs, pathRule{v.Path, v.Rule})
				}
				if !reflect.ValueOf(got).IsZero() {
					t.Errorf("on error the result is %+v, want the zero value", got)
				}
			} else if reflect.ValueOf(got).IsZero() {
				t.Errorf("on success the result is zero")
			}
			if g, w := sortedPairs(gotPairs), sortedPairs(f.Want); !slices.Equal(g, w) {
				t.Errorf("violations\n got %q\nwant %q\nerror: %v", g, w, err)
			}
		})
	}
}

// TestRoundTrip checks that nothing a valid document says is lost: it
// parses, marshals back to the same JSON value, and parses again to the
// same Go value.
func TestRoundTrip(t *testing.T) {
	n := 0
	for _, f := range loadFixtures(t) {
		if len(f.Want) > 0 {
			continue
		}
		n++
		t.Run(f.file+"/"+f.Name, func(t *testing.T) {
			first, err := f.run()
			if err != nil {
				t.Fatal(err)
			}
			out, err := json.Marshal(first)
			if err != nil {
				t.Fatal(err)
			}
			var in, back any
			if err := json.Unmarshal(f.doc(), &in); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(out, &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(in, back) {
				t.Errorf("marshalled JSON differs from the input\n got %s\nwant %s", out, f.doc())
			}
			again := f
			again.Input, again.InputText = out, nil
			second, err := again.run()
			if err != nil {
				t.Fatalf("re-parse: %v", err)
			}
			if !reflect.DeepEqual(first, second) {
				t.Errorf("re-parse differs:\n got %#v\nwant %#v", second, first)
			}
		})
	}
	if n < 15 {
		t.Fatalf("only %d valid fixtures", n)
	}
}

func violationsOf(t *testing.T, err error) []Violation {
	t.Helper()
	if err == nil {
		return nil
	}
	var vs violations
	var first *Violation
	if !errors.As(err, &vs) || !errors.As(err, &first) || *first != vs[0] || !errors.Is(err, ErrInvalid) {
		t.Fatalf("error %v (%T) is not the violations error", err, err)
	}
	for i, e := range vs.Unwrap() {
		if v, ok := e.(*Violation); !ok || *v != vs[i] {
			t.Fatalf("Unwrap()[%d] = %v, want %v", i, e, vs[i])
		}
	}
	return vs
}

func refA2A() *A2A {
	f := false
	return &A2A{
		Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0", RefreshedAt: "2026-09-18",
		Profiles: []string{"a2a-1.0"}, AgentCardURL: "https://host.example/.well-known/agent-card.json",
		Streaming: &f, PushNotifications: &f, DurableTasks: &f,
		Record: Record{Status: "experimental", Since: "2.0", Until: "2.1", Witness: "seam-gated"},
	}
}

func refMCP() *MCP {
	return &MCP{
		Revisions: []string{"2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2026-07-28",
		RefreshedAt: "2026-09-18", Profiles: []string{"mcp-2026-07-28"},
		Features:    []string{"server-discover", "mrtr", "cacheable-lists", "extensions"},
		ServerURLs:  []string{"https://host.example/mcp"},
		ServerMount: &ServerMount{Transports: []string{"streamable-http"}},
		MRTR:        &MRTR{MaxRounds: 4},
		Record:      Record{Status: "experimental", Since: "2.0", Until: "2.1", Witness: "seam-gated"},
	}
}

func TestValidateGoValues(t *testing.T) {
	a, m := refA2A(), refMCP()
	for name, err := range map[string]error{
		"a2a facet": Set{A2A: a}.Validate(), "mcp facet": Set{MCP: m}.Validate(),
		"set facet": Set{a, m}.Validate(), "set record": asError(Set{a, m}.violations(true)),
		"set a2a only": asError(Set{A2A: a}.violations(true)), "set mcp only": asError(Set{MCP: m}.violations(true)),
	} {
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}

	bare := &A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0", RefreshedAt: "2026-09-18"}
	if err := (Set{A2A: bare}).Validate(); err != nil {
		t.Errorf("bare facet: %v", err)
	}
	want := []Violation{
		{"a2a.status", "required", "status is required in a discovery record: one of stable, experimental, deprecated"},
		{"a2a.since", "required", `since is required in a discovery record: the OpenWOP version that introduced the family, "major.minor" (such as "2.0")`},
		{"a2a.witness", "required", "witness is required in a discovery record: one of witnessable-unaided, witnessable-gated, seam-gated, claims-check, negative-existence (a2a and mcp declare seam-gated)"},
	}
	if got := violationsOf(t, asError(Set{A2A: bare}.violations(true))); !slices.Equal(got, want) {
		t.Errorf("bare record:\n got %q\nwant %q", got, want)
	}

	m.MRTR.MaxRounds = 0
	m.Revisions = []string{}
	m.Client = new(bool)
	want = []Violation{
		{"mcp.revisions", "min-items", "revisions must list at least one entry"},
		{"mcp.mrtr.maxRounds", "range", "maxRounds 0 is not in 1–16"},
		{"mcp.client", "const", "client may only be true"},
	}
	if got := violationsOf(t, Set{MCP: m}.Validate()); !slices.Equal(got, want) {
		t.Errorf("mcp:\n got %q\nwant %q", got, want)
	}
	if got := violationsOf(t, asError(Set{MCP: m}.violations(true))); !slices.Equal(got, want) {
		t.Errorf("set record:\n got %q\nwant %q", got, want)
	}
}

func TestValidateNil(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want Violation
	}{
		{Set{}.Validate(), Violation{"", "required", "advertises neither a2a nor mcp"}},
		{asError(Set{}.violations(true)), Violation{"", "required", "advertises neither a2a nor mcp"}},
	} {
		if got := violationsOf(t, tc.err); !slices.Equal(got, []Violation{tc.want}) {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

func TestViolationsText(t *testing.T) {
	one := violations{{"a2a.versions[1]", "pattern", `"1.x" is not a version "major.minor"`}}
	if got, want := one.Error(), `a2a.versions[1]: "1.x" is not a version "major.minor"`; got != want {
		t.Errorf("one: got %q, want %q", got, want)
	}
	three := violations{{"a", "r", "x"}, {"", "required", "y"}, {"b", "r", "z"}}
	if got, want := three.Error(), "3 violations: a: x; y; b: z"; got != want {
		t.Errorf("three: got %q, want %q", got, want)
	}
	if !errors.Is(one, ErrInvalid) || errors.Is(one, errors.New("invalid")) || one.Is(nil) {
		t.Error("violations do not match ErrInvalid alone")
	}
	if got := (&Violation{"", "required", "advertises neither a2a nor mcp"}).Error(); got != "advertises neither a2a nor mcp" {
		t.Errorf("root violation: got %q", got)
	}
	if got := asError(nil); got != nil {
		t.Errorf("asError(nil) = %v", got)
	}
}

// TestMessages pins the sentences people read for each rule.
func TestMessages(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a2a":{"versions":["1.0","1.x"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-09-18"}}`,
			`a2a.versions[1]: "1.x" is not a version "major.minor"`},
		{`{"a2a":{"versions":["1.0","01.0"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-09-18"}}`,
			`a2a.versions[1]: "01.0" is not a version "major.minor": major part has a leading zero`},
		{`{"a2a":{"versions":["1.0","1.4294967296"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-09-18"}}`,
			`a2a.versions[1]: "1.4294967296" is not a version "major.minor": minor part does not fit in 32 bits`},
		{`{"a2a":{"versions":["1.0","1.1"],"preferredVersion":"1.0","minimumVersion":"1.1","refreshedAt":"2026-09-18"}}`,
			`a2a.minimumVersion: minimumVersion "1.1" is above preferredVersion "1.0"`},
		{`{"a2a":{"versions":["1.0","1.0"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-09-18"}}`,
			`a2a.versions[1]: "1.0" is offered twice (first at a2a.versions[0])`},
		{`{"a2a":{"versions":["1.0"],"preferredVersion":"1.1","minimumVersion":"1.0","refreshedAt":"2026-09-18"}}`,
			`a2a.preferredVersion: "1.1" is not one of the offered versions`},
		{`{"a2a":{"versions":["1.0"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-09-18","profiles":["a2a-1.1"]}}`,
			`a2a.profiles[0]: profile "a2a-1.1" needs "1.1" in versions`},
		{`{"a2a":{"versions":["1.0"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-09-18","profiles":["a2a-1.0-legacy"]}}`,
			`a2a.profiles[0]: "a2a-1.0-legacy" is a legacy profile; RFC 0175 removed legacy profiles`},
		{`{"a2a":{"versions":["1.0"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-09-18","profiles":["a2a-01.0"]}}`,
			`a2a.profiles[0]: "a2a-01.0" is not a profile id "a2a-major.minor": major part has a leading zero`},
		{`{"a2a":{"versions":["1.0"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-09-18","agentCardUrl":""}}`,
			`a2a.agentCardUrl: "" is not an absolute URI`},
		{`{"a2a":{"versions":["1.0"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-02-29"}}`,
			`a2a.refreshedAt: "2026-02-29" is not a date YYYY-MM-DD: no such day in that month`},
		{`{"a2a":{"versions":["1.0"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-9-18"}}`,
			`a2a.refreshedAt: "2026-9-18" is not a date YYYY-MM-DD`},
		{`{"a2a":{"versions":["1.0"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-09-18","supportedTransports":[]}}`,
			`a2a.supportedTransports: supportedTransports was removed by RFC 0175: v2 does not advertise transports`},
		{`{"a2a":{"versions":["1.0"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-09-18","Streaming":true}}`,
			`a2a.Streaming: unknown field "Streaming" (field names are case-sensitive: did you mean "streaming"?)`},
		{`{"a2a":{"versions":["1.0"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-09-18","x":1}}`,
			`a2a.x: unknown field "x": the record is closed`},
		// Issue 21 item 5: a near miss of a known field names it.
		{`{"a2a":{"versions":["1.0"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-09-18","preferedVersion":"1.0"}}`,
			`a2a.preferedVersion: unknown field "preferedVersion" (did you mean "preferredVersion"?)`},
		{`{"a2a":{"versions":["1.0"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-09-18","minimumRevision":"1.0"}}`,
			`a2a.minimumRevision: unknown field "minimumRevision" (did you mean "minimumVersion"?)`},
		{`{"mcp":{"revisions":["2026-07-28"],"preferredVersion":"2026-07-28","minimumRevision":"2026-07-28","refreshedAt":"2026-09-18","serverUrl":["https://x.example/mcp"]}}`,
			`mcp.serverUrl: unknown field "serverUrl" (did you mean "serverUrls"?)`},
		{`{"a2a":{"versions":["1.0"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-09-18","status":"stable","until":"2.1"}}`,
			`a2a.until: until must be absent when status is "stable"`},
		{`{"a2a":{"versions":["1.0"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-09-18","status":"beta"}}`,
			`a2a.status: "beta" is not a status: want stable, experimental or deprecated`},
		{`{"a2a":{"versions":["1.0"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-09-18","witness":"x"}}`,
			`a2a.witness: "x" is not a witness class: want witnessable-unaided, witnessable-gated, seam-gated, claims-check, negative-existence`},
		{`{"a2a":{"versions":["1.0"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-09-18","since":"2"}}`,
			`a2a.since: "2" is not an OpenWOP version "major.minor"`},
		{`{"a2a":{"versions":["1.0"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-09-18","until":"2026-02-30"}}`,
			`a2a.until: "2026-02-30" is not a real date: no such day in that month`},
		{`{"a2a":{"versions":["1.0"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-09-18","until":"v2"}}`,
			`a2a.until: "v2" is neither an OpenWOP version "major.minor" nor a date YYYY-MM-DD`},
		{`{"a2a":{"versions":["1.0"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-09-18","streaming":null}}`,
			`a2a.streaming: must be a boolean, not null`},
		{`{"a2a":{"versions":"1.0","preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-09-18"}}`,
			`a2a.versions: must be an array of strings, not string`},
		{`{"mcp":{"revisions":["2026-07-28","2025-02-30"],"preferredVersion":"2026-07-28","minimumRevision":"2026-07-28","refreshedAt":"2026-09-18"}}`,
			`mcp.revisions[1]: "2025-02-30" is not a revision date YYYY-MM-DD: no such day in that month`},
		{`{"mcp":{"revisions":["2026-07-28","2025-13-01"],"preferredVersion":"2026-07-28","minimumRevision":"2026-07-28","refreshedAt":"2026-09-18"}}`,
			`mcp.revisions[1]: "2025-13-01" is not a revision date YYYY-MM-DD: month is not 01–12`},
		{`{"mcp":{"revisions":["2026-07-28"],"preferredVersion":"2026-07-28","minimumRevision":"2026-07-28","refreshedAt":"2026-09-18","profiles":["mcp-2025-02-30"]}}`,
			`mcp.profiles[0]: "mcp-2025-02-30" does not name a real revision date: no such day in that month`},
		{`{"mcp":{"revisions":["2026-07-28"],"preferredVersion":"2026-07-28","minimumRevision":"2026-07-28","refreshedAt":"2026-09-18","profiles":["mcp-2026-7-28"]}}`,
			`mcp.profiles[0]: "mcp-2026-7-28" is not a profile id "mcp-YYYY-MM-DD"`},
		{`{"mcp":{"revisions":["2026-07-28"],"preferredVersion":"2026-07-28","minimumRevision":"2026-07-28","refreshedAt":"2026-09-18","profiles":["mcp-2026-07-28-legacy"]}}`,
			`mcp.profiles[0]: "mcp-2026-07-28-legacy" is a legacy profile; RFC 0175 removed legacy profiles`},
		{`{"mcp":{"revisions":["2026-07-28"],"preferredVersion":"2026-07-28","minimumRevision":"2026-07-28","refreshedAt":"2026-09-18","serverMount":{"transports":["sse"]}}}`,
			`mcp.serverMount.transports[0]: "sse" is not a transport: want stdio or streamable-http`},
		{`{"mcp":{"revisions":["2026-07-28"],"preferredVersion":"2026-07-28","minimumRevision":"2026-07-28","refreshedAt":"2026-09-18","mrtr":{"maxRounds":17}}}`,
			`mcp.mrtr.maxRounds: maxRounds 17 is not in 1–16`},
		{`{"mcp":{"revisions":["2026-07-28"],"preferredVersion":"2026-07-28","minimumRevision":"2026-07-28","refreshedAt":"2026-09-18","mrtr":{"maxRounds":1e99}}}`,
			`mcp.mrtr.maxRounds: maxRounds 1e99 is not in 1–16`},
		{`{"mcp":{"revisions":["2026-07-28"],"preferredVersion":"2026-07-28","minimumRevision":"2026-07-28","refreshedAt":"2026-09-18","mrtr":{"maxRounds":1.5}}}`,
			`mcp.mrtr.maxRounds: must be an integer, not 1.5`},
		{`{"mcp":{"revisions":["2026-07-28"],"preferredVersion":"2026-07-28","minimumRevision":"2026-07-28","refreshedAt":"2026-09-18","mrtr":{}}}`,
			`mcp.mrtr.maxRounds: maxRounds is required`},
		{`{"mcp":{"revisions":["2026-07-28"],"preferredVersion":"2026-07-28","minimumRevision":"2026-07-28","refreshedAt":"2026-09-18","mrtr":{"maxRounds":4,"maxRounds":5}}}`,
			`mcp.mrtr.maxRounds: key "maxRounds" appears more than once`},
		{`{"mcp":{"revisions":["2026-07-28"],"minimumRevision":"2026-07-28","refreshedAt":"2026-09-18","preferredRevision":"2026-07-28"}}`,
			`2 violations: mcp.preferredVersion: preferredVersion is required; mcp.preferredRevision: unknown field preferredRevision: the mcp facet spells it preferredVersion`},
		{`{"a2a":[]}`, `a2a: must be an object (the a2a facet), not array`},
		{`{"mcp":"x"}`, `mcp: must be an object (the mcp facet), not string`},
		{`{"mcp":{"revisions":["2026-07-28"],"preferredVersion":"2026-07-28","minimumRevision":"2026-07-28","refreshedAt":"2026-09-18","serverMount":1,"mrtr":true}}`,
			`2 violations: mcp.serverMount: must be an object (serverMount), not number; mcp.mrtr: must be an object (mrtr), not boolean`},
		{`{"mcp":{"revisions":["2026-07-28"],"preferredVersion":"2026-07-28","minimumRevision":"2026-07-28","refreshedAt":"2026-09-18","mrtr":{"maxRounds":"4"}}}`,
			`mcp.mrtr.maxRounds: must be an integer, not string`},
		{`7`, `must be an object (a facet set), not number`},
		{`{"refreshWindowDays":90}`, `2 violations: advertises neither a2a nor mcp; refreshWindowDays: no field carries the refresh window: it is fixed at 90 days`},
		{`{"a2a":{"versions":["1.0"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-09-18","supported":true,"protocolVersions":["1.0"]},"grpc":{}}`,
			`3 violations: a2a.supported: the v1 flag supported is gone in v2: advertising the facet is the claim; a2a.protocolVersions: the v1 list protocolVersions is gone from the families in v2; grpc: grpc was removed by RFC 0175: v2 does not advertise transports`},
		{`{"a2a":`, `the document is not JSON: unexpected end of JSON input at byte 7 of 7 (in a2a)`},
		{"{\"a2a\":\"\xff\"}", `the document is not valid UTF-8`},
	} {
		_, err := Parse([]byte(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("Parse(%s):\n got %v\nwant %s", tc.in, err, tc.want)
		}
	}
}

// TestViolationOrder pins the order of a report: the document, then a2a,
// then mcp; fields in schema order; list entries by index; unknown keys
// after the known ones.
func TestViolationOrder(t *testing.T) {
	in := `{"zz":1,"mcp":{"x":1,"revisions":["2026-07-28","2026-07-28","bad"],"preferredVersion":"2026-07-28",
		"minimumRevision":"2026-07-28","refreshedAt":"2026-09-18","mrtr":{"maxRounds":0},"serverUrls":["/a","/b"]},
		"a2a":{"witness":"w","versions":["1.0","1.x"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-09-18",
		"profiles":["a2a-1.0","x","y"],"Versions":[]}}`
	want := []string{
		"a2a.versions[1]", "a2a.profiles[1]", "a2a.profiles[2]", "a2a.witness", "a2a.Versions",
		"mcp.revisions[1]", "mcp.revisions[2]", "mcp.serverUrls[0]", "mcp.serverUrls[1]", "mcp.mrtr.maxRounds", "mcp.x",
		"zz",
	}
	var got []string
	_, err := Parse([]byte(in))
	for _, v := range violationsOf(t, err) {
		got = append(got, v.Path)
	}
	if !slices.Equal(got, want) {
		t.Errorf("order:\n got %q\nwant %q", got, want)
	}
}

func TestPathRank(t *testing.T) {
	for _, tc := range []struct {
		path string
		want []int
	}{
		{"", []int{0, len(a2aFields), 0}},
		{"a2a", []int{1, len(a2aFields), 0}},
		{"a2a.versions", []int{1, 0, 0}},
		{"a2a.witness", []int{1, 13, 0}},
		{"mcp.revisions[12]", []int{2, 0, 12}},
		{"mcp.mrtr.maxRounds", []int{2, 8, 0}},
		{"mcp.serverMount.transports[3]", []int{2, 7, 3}},
		{"mcp.nope", []int{2, len(mcpFields), 0}},
		{`a2a["x.y"]`, []int{1, len(a2aFields), 0}},
		{"other.versions[2]", []int{3, 0, 2}},
		{`["x y"]`, []int{0, len(a2aFields), 0}},
		{`[""].a2a`, []int{0, len(a2aFields), 0}},
	} {
		if got := pathRank(tc.path); !slices.Equal(got, tc.want) {
			t.Errorf("pathRank(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

// TestMemberPath checks that the paths this package builds for a member
// are the ones the strict reader gives: one path syntax in the module.
func TestMemberPath(t *testing.T) {
	for _, tc := range []struct{ base, key, want string }{
		{"", "a2a", "a2a"},
		{"a2a", "versions", "a2a.versions"},
		{"a2a", "x-y_z$9", `a2a["x-y_z$9"]`},
		{"a2a", "_x", "a2a._x"},
		{"a2a", "x_9", "a2a.x_9"},
		{"a2a", "$x", `a2a["$x"]`},
		{"a2a", "Zz", "a2a.Zz"},
		{"a2a", "9a", `a2a["9a"]`},
		{"a2a", "-a", `a2a["-a"]`},
		{"a2a", "x.y", `a2a["x.y"]`},
		{"a2a", "a b", `a2a["a b"]`},
		{"a2a", "", `a2a[""]`},
		{"", "x[0]", `["x[0]"]`},
		{"a2a", "é", `a2a["é"]`},
		{"a2a", "a{", `a2a["a{"]`},
		{"a2a", "a`", `a2a["a` + "`" + `"]`},
	} {
		if got := memberPath(tc.base, tc.key); got != tc.want {
			t.Errorf("memberPath(%q, %q) = %q, want %q", tc.base, tc.key, got, tc.want)
		}
		doc, _ := json.Marshal(map[string]any{tc.key: 1})
		if tc.base != "" {
			doc, _ = json.Marshal(map[string]any{tc.base: json.RawMessage(doc)})
		}
		r := strictjson.NewReader(doc, 0)
		var seen string
		walk := func(string) error { seen = r.Path(); return nil }
		if tc.base != "" {
			inner := walk
			walk = func(string) error { return r.Object(inner) }
		}
		if err := r.Object(walk); err != nil || seen != tc.want {
			t.Errorf("the reader's path of %s is %q (%v), want %q", doc, seen, err, tc.want)
		}
	}
}

func TestCovers(t *testing.T) {
	for _, tc := range []struct {
		base, path string
		want       bool
	}{
		{"", "", true},
		{"", "a2a.versions", true},
		{"a2a", "a2a", true},
		{"a2a", "a2a.versions", true},
		{"a2a.versions", "a2a.versions[1]", true},
		{"a2a.versions", "a2a.versionsX", false},
		{"a2a", "mcp", false},
		{"a2a.versions[1]", "a2a.versions", false},
	} {
		if got := covers(tc.base, tc.path); got != tc.want {
			t.Errorf("covers(%q, %q) = %v, want %v", tc.base, tc.path, got, tc.want)
		}
	}
}

func TestAbsoluteURI(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"https://a.example/x", true},
		{"HTTPS://a.example", true},
		{"http://a.example:8080/p?q=1&r=%2F#frag", true},
		{"http://[::1]/", true},
		{"urn:example:x", true},
		{"a+b-c.d:x", true},
		{"z9:x", true},
		{"mailto:~a_b@c", true},
		{"x:%aF%09", true},
		{"x:%Ff%fF", true},
		{"x:%A0%0a", true},
		{"x:%G0", false},
		{"x:%`0", false},
		{"x:%@0", false},
		{"https://", false},
		{"http:/path", false},
		{"https:", false},
		{"", false},
		{":x", false},
		{"1http://a", false},
		{"/relative", false},
		{"ht tp://a", false},
		{"ht_tp://a", false},
		{"http://a.example/a b", false},
		{"http://a.example/\"", false},
		{"http://a.example/é", false},
		{"http://a.example/%", false},
		{"http://a.example/%2", false},
		{"http://a.example/%2g", false},
		{"http://a.example/%g2", false},
		{"http://[::1/", false},
		{"noscheme", false},
	} {
		if got := absoluteURI(tc.in); got != tc.want {
			t.Errorf("absoluteURI(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestCheckUntil(t *testing.T) {
	now := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		until string
		now   time.Time
		past  bool
	}{
		{"2026-11-20", now, false},
		{"2026-11-20", now.Add(24*time.Hour - 1), false},
		{"2026-11-19", now, true},
		{"2026-11-19", now.Add(-1), false},
		{"2026-11-21", now, false},
		{"2025-12-31", now, true},
		// 23:30 on the 19th in UTC-5 is already the 20th in UTC.
		{"2026-11-19", time.Date(2026, 11, 19, 23, 30, 0, 0, time.FixedZone("UTC-5", -5*3600)), true},
		// 00:30 on the 20th in UTC+5 is still the 19th in UTC.
		{"2026-11-19", time.Date(2026, 11, 20, 0, 30, 0, 0, time.FixedZone("UTC+5", 5*3600)), false},
		{"2.1", now, false},
		{"", now, false},
		{"2026-02-30", now, false},
	} {
		err := asError(Record{Until: tc.until}.pastUntil(ProtocolMCP, tc.now))
		if !tc.past {
			if err != nil {
				t.Errorf("until %q at %v: %v", tc.until, tc.now, err)
			}
			continue
		}
		got := violationsOf(t, err)
		if len(got) != 1 || got[0].Path != "mcp.until" || got[0].Rule != "until-in-past" || got[0].Message == "" {
			t.Errorf("until %q at %v: got %q", tc.until, tc.now, got)
		}
	}
	err := asError(Record{Until: "2026-01-01"}.pastUntil(ProtocolA2A, now))
	if got, want := fmt.Sprint(err), "a2a.until: until 2026-01-01 is in the past (today is 2026-11-20)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if !errors.Is(err, ErrInvalid) {
		t.Error("until-in-past does not match ErrInvalid")
	}
}

// TestUnmarshalJSON covers the decoders as encoding/json calls them.
func TestUnmarshalJSON(t *testing.T) {
	var doc struct {
		Facets Set `json:"facets"`
		Other  int `json:"other"`
	}
	in := `{"other":1,"facets":{"mcp":{"revisions":["2026-07-28"],"preferredVersion":"2026-07-28","minimumRevision":"2026-07-28","refreshedAt":"2026-09-18","mrtr":{"maxRounds":3}}}}`
	if err := json.Unmarshal([]byte(in), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Other != 1 || doc.Facets.A2A != nil || doc.Facets.MCP.MRTR.MaxRounds != 3 || doc.Facets.MCP.Revisions[0] != "2026-07-28" {
		t.Errorf("decoded %+v", doc)
	}

	err := json.Unmarshal([]byte(`{"facets":{"a2a":{"x":1,"versions":[2]}}}`), &doc)
	want := []Violation{
		{"a2a.versions[0]", "type", "must be a string, not number"},
		{"a2a.x", "unknown-field", `unknown field "x": the record is closed`},
	}
	if got := violationsOf(t, err); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}

	s := Set{A2A: refA2A()}
	if err := s.UnmarshalJSON([]byte(" null ")); err != nil || s.A2A != nil || s.MCP != nil {
		t.Errorf("null: %v %+v", err, s)
	}

	mrtr := func(body string) (int, []Violation) {
		set, err := Parse([]byte(`{"mcp":{"revisions":["2026-07-28"],"preferredVersion":"2026-07-28","minimumRevision":"2026-07-28","refreshedAt":"2026-09-18","mrtr":` + body + `}}`))
		if err != nil {
			return 0, violationsOf(t, err)
		}
		return set.MCP.MRTR.MaxRounds, nil
	}
	if _, got := mrtr(`{}`); !slices.Equal(got, []Violation{{"mcp.mrtr.maxRounds", "required", "maxRounds is required"}}) {
		t.Errorf("MRTR {}: %q", got)
	}
	for in, want := range map[string]int{`{"maxRounds":16}`: 16, `{"maxRounds":4.0}`: 4, `{"maxRounds":1e1}`: 10} {
		if got, vs := mrtr(in); vs != nil || got != want {
			t.Errorf("MRTR %s: %v %d", in, vs, got)
		}
	}
	for in, want := range map[string]string{`{"maxRounds":2147483648}`: "range", `{"maxRounds":-2147483648.5e3}`: "range",
		`{"maxRounds":1e309}`: "range", `{"maxRounds":-7}`: "range", `{"maxRounds":2147483647}`: "range", `{"maxRounds":1.5}`: "type"} {
		if _, got := mrtr(in); len(got) != 1 || got[0].Rule != want {
			t.Errorf("MRTR %s: %q, want %s", in, got, want)
		}
	}
	var sm struct {
		S Set `json:"s"`
	}
	if got := violationsOf(t, json.Unmarshal([]byte(`{"s":{"mcp":{"serverMount":{"transports":["stdio"],"x":[]}}}}`), &sm)); !slices.Contains(got, Violation{"mcp.serverMount.x", "unknown-field", `unknown field "x": the record is closed`}) {
		t.Errorf("ServerMount unknown: %q", got)
	}
}

// TestNoCascade checks that a value of the wrong shape is reported once,
// not again as missing or as breaking a rule that reads it.
func TestNoCascade(t *testing.T) {
	for in, want := range map[string][]Violation{
		`{"a2a":{"versions":[1],"preferredVersion":"1.0","minimumVersion":2,"refreshedAt":"2026-09-18"}}`: {
			{"a2a.versions[0]", "type", "must be a string, not number"},
			{"a2a.minimumVersion", "type", "must be a string, not number"},
		},
		`{"a2a":5}`: {{"a2a", "type", "must be an object (the a2a facet), not number"}},
		`"x"`:       {{"", "type", "must be an object (a facet set), not string"}},
		`{"mcp":{"revisions":["2026-07-28"],"preferredVersion":"2026-07-28","minimumRevision":"2026-07-28","refreshedAt":"2026-09-18","mrtr":[]}}`: {
			{"mcp.mrtr", "type", "must be an object (mrtr), not array"},
		},
	} {
		_, err := Parse([]byte(in))
		if got := violationsOf(t, err); !slices.Equal(got, want) {
			t.Errorf("Parse(%s):\n got %q\nwant %q", in, got, want)
		}
	}
}

func BenchmarkSetValidate(b *testing.B) {
	s := Set{A2A: refA2A(), MCP: refMCP()}
	if err := asError(s.violations(true)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	data, err := json.Marshal(Set{A2A: refA2A(), MCP: refMCP()})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

// TestConcurrentValidate runs the shared validator from many goroutines;
// under -race it checks the one-validator design is safe.
func TestConcurrentValidate(t *testing.T) {
	done := make(chan []Violation)
	for i := range 8 {
		go func() {
			m := refMCP()
			m.MRTR.MaxRounds = 16 + i%2 // odd goroutines break the ceiling
			var vs []Violation
			for range 50 {
				vs = nil
				if err := asError(Set{A2A: refA2A(), MCP: m}.violations(true)); err != nil {
					vs = err.(violations)
				}
			}
			done <- vs
		}()
	}
	broken := 0
	for range 8 {
		vs := <-done
		switch {
		case len(vs) == 0:
		case len(vs) == 1 && vs[0].Path == "mcp.mrtr.maxRounds" && vs[0].Rule == "range":
			broken++
		default:
			t.Errorf("unexpected %q", vs)
		}
	}
	if broken != 4 {
		t.Errorf("%d goroutines saw the ceiling broken, want 4", broken)
	}
}
