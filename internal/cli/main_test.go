package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	vec "github.com/wopneg/wopneg/internal/vectors"
	"github.com/wopneg/wopneg/negotiate"
)

func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

const wideFacet = `{"a2a": {"versions": ["1.0","1.1","1.2"], "preferredVersion": "1.2",
	"minimumVersion": "1.1", "refreshedAt": "2026-11-01"}}`

func TestDecide(t *testing.T) {
	tests := []struct {
		name, request string
		want          map[string]any // top-level answer fields, compared as JSON values
		wantEvent     map[string]any
		absent        []string
	}{{
		name: "authenticated downgrade",
		request: `{"subject": {"issuer":"https://idp.example","subjectId":"u-1","tenant":"acme","lane":"oidc","kind":"user"},
			"facet": ` + wideFacet + `, "offer": {"peer": "https://peer.example", "peerVersions": ["1.1"]},
			"policy": {}, "now": "2026-11-29T12:00:00Z"}`,
		want: map[string]any{"outcome": "downgraded", "version": "1.1", "reason": "ok", "rule": "accept"},
		wantEvent: map[string]any{"protocol": "a2a", "outcome": "accepted", "version": "1.1", "reason": "ok", "floor": "1.1",
			"peerDigest": "3a61b99132bfdfa2ce5f773d8dc89d8246bfe6b266791549de14a6692d1bb1e1", "at": "2026-11-29T12:00:00Z"},
		absent: []string{"status", "error"},
	}, {
		name: "unauthenticated downgrade refused",
		request: `{"subject": null, "facet": ` + wideFacet + `,
			"offer": {"peer": "https://peer.example", "requested": "1.1", "peerVersions": ["1.1"]},
			"policy": {"denyDowngrade": false}, "now": "2026-11-29T12:00:00Z"}`,
		want:      map[string]any{"outcome": "refused", "reason": "unauthenticated", "rule": "authenticated", "status": 400.0},
		wantEvent: map[string]any{"outcome": "refused", "requested": "1.1", "reason": "unauthenticated"},
		absent:    []string{"version"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.request, "decide")
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
			}
			for k, want := range tt.want {
				if got[k] != want {
					t.Errorf("%s = %#v, want %#v", k, got[k], want)
				}
			}
			for _, k := range tt.absent {
				if _, ok := got[k]; ok {
					t.Errorf("%s present, want absent", k)
				}
			}
			event, _ := got["event"].(map[string]any)
			for k, want := range tt.wantEvent {
				if event[k] != want {
					t.Errorf("event.%s = %#v, want %#v", k, event[k], want)
				}
			}
			if got["outcome"] == "refused" {
				envelope, _ := got["error"].(map[string]any)
				if envelope["error"] != "interop_version_unsupported" || envelope["message"] == "" {
					t.Errorf("error = %#v, want an interop_version_unsupported envelope", got["error"])
				}
			}
		})
	}
}

func TestDecideMalformed(t *testing.T) {
	valid := `"facet": ` + wideFacet + `, "offer": {"peerVersions": ["1.1"]}, "now": "2026-11-29T12:00:00Z"`
	tests := []struct{ name, request, mention string }{
		{"not JSON", `{"subject": `, "request"},
		{"unknown key", `{"subjet": null, ` + valid + `}`, "subjet"},
		{"invalid facet", `{"subject": null, "facet": {"a2a": {"versions": ["1.0"], "preferredVersion": "1.2",
			"minimumVersion": "1.0", "refreshedAt": "2026-11-01"}}, "offer": {"peerVersions": ["1.0"]}, "now": "2026-11-29T12:00:00Z"}`, "preferredVersion"},
		{"invalid subject", `{"subject": {"issuer":"x","subjectId":"u","tenant":"a b","lane":"oidc","kind":"user"}, ` + valid + `}`, "tenant"},
		{"no clock", `{"subject": null, "facet": ` + wideFacet + `, "offer": {"peerVersions": ["1.1"]}}`, "now"},
		{"unadvertised protocol", `{"subject": null, "facet": ` + wideFacet + `, "offer": {"protocol": "mcp", "peerVersions": []}, "now": "2026-11-29T12:00:00Z"}`, "mcp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.request, "decide")
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "wopneg: ") || !strings.Contains(stderr, tt.mention) {
				t.Errorf("stderr = %q, want one line naming %q", stderr, tt.mention)
			}
		})
	}
}

func TestVectorsCommand(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "vectors")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q\n%s", code, stderr, stdout)
	}
	m := regexp.MustCompile(`(?m)^(\d+) passed, 0 failed\n\z`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("last line is not \"N passed, 0 failed\":\n%s", stdout)
	}
	if n, _ := strconv.Atoi(m[1]); n < 80 {
		t.Errorf("%d vectors passed, want at least 80", n)
	}
}

// TestDemo is the regression test of issue 21 item 5: the demo's first
// screen explains itself. It prints testdata/demo/stdout.golden exactly
// (go test -run TestDemo -update rewrites it); it advertises real
// releases only, and names the one hypothetical version it asks for as
// such; every kind of outcome and every rule of the decision that
// settles one (2 to 7) is a row; a downgrade's record says accepted, as
// the legend explains; and every column the tables have is explained.
func TestDemo(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "demo")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	golden := filepath.Join("testdata", "demo", "stdout.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(stdout), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if stdout != string(want) {
		t.Errorf("demo differs from %s:\n%s\nwant\n%s", golden, stdout, want)
	}
	for _, want := range []string{
		"A2A: the host offers 1.0, preferred 1.0, floor 1.0.",
		"MCP: the host offers 2025-11-25 and 2026-07-28, preferred 2026-07-28, floor 2025-11-25.",
		"1.1 is not offered (hypothetical: A2A has no 1.1 release)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	header := regexp.MustCompile(`(?m)^CALLER\s.*$`).FindAllString(stdout, -1)
	if len(header) != 2 {
		t.Fatalf("demo printed %d table headers, want one per protocol:\n%s", len(header), stdout)
	}
	legend := stdout[strings.Index(stdout, "Columns:"):]
	for _, column := range strings.Fields(strings.ReplaceAll(header[0], "PEER SPEAKS", "PEER_SPEAKS")) {
		if !strings.Contains(legend, "\n  "+strings.ReplaceAll(column, "_", " ")+" ") {
			t.Errorf("the legend does not explain the column %s", column)
		}
	}
	rows := regexp.MustCompile(`(?m)^(authenticated|anonymous)\s+(\S+)\s+(\S+)\s+(yes|no)\s+(accepted|downgraded|refused)\s+(\S+)\s+(accepted|refused), (\S+)\s+(\d)\s+\S`).FindAllStringSubmatch(stdout, -1)
	if len(rows) != 12 {
		t.Fatalf("demo printed %d decision rows, want 12:\n%s", len(rows), stdout)
	}
	kinds, rules := map[string]int{}, map[string]int{}
	for _, r := range rows {
		kind, version, recorded := r[5], r[6], r[7]
		kinds[kind]++
		rules[r[9]]++
		if (kind == "refused") != (recorded == "refused") || (kind == "refused") != (version == "-") {
			t.Errorf("row %q: outcome %s, version %s, recorded %s", r[0], kind, version, recorded)
		}
	}
	if kinds["accepted"] == 0 || kinds["downgraded"] == 0 || kinds["refused"] == 0 {
		t.Errorf("demo shows %v; want every kind of outcome", kinds)
	}
	for n := 2; n <= 7; n++ {
		if rules[strconv.Itoa(n)] == 0 {
			t.Errorf("no row is settled by rule %d: %v", n, rules)
		}
	}
}

// TestDemoRuleNumbersAreTheReadmes checks the demo's rule numbers against
// the README's "The decision": rule N there is the one each name stands
// for.
func TestDemoRuleNumbersAreTheReadmes(t *testing.T) {
	text, _ := readmeBlocks(t)
	at := strings.Index(text, "## The decision")
	if at < 0 {
		t.Fatal("the README has no section The decision")
	}
	section := text[at:]
	section = section[:strings.Index(section[3:], "\n## ")+3]
	says := map[negotiate.Rule]string{
		negotiate.RuleFloor: "candidate < F", negotiate.RuleOffered: "candidate ∉ V", negotiate.RuleCommon: "chosen = the highest",
		negotiate.RuleAuthenticated: "Subject is not authenticated", negotiate.RulePolicy: "policy denies the downgrade",
		negotiate.RuleAccept: "accepted at chosen",
	}
	if len(ruleNumbers) != len(says) {
		t.Errorf("the demo numbers %d rules, want %d", len(ruleNumbers), len(says))
	}
	for rule, phrase := range says {
		n := ruleNumber(rule)
		line := regexp.MustCompile(`(?m)^` + n + `\. .*$`).FindString(section)
		if !strings.Contains(line, phrase) {
			t.Errorf("the demo calls %s rule %s, but the README's rule %s is %q (want it to say %q)", rule, n, n, line, phrase)
		}
	}
	if got := ruleNumber(negotiate.RuleInput); got != "input" {
		t.Errorf("ruleNumber(RuleInput) = %q, want its name", got)
	}
}

func TestUsage(t *testing.T) {
	if code, _, stderr := runCLI(t, "", "frobnicate"); code != 2 || !strings.Contains(stderr, `unknown command "frobnicate"`) {
		t.Errorf("unknown command: exit %d, stderr %q", code, stderr)
	}
	if code, _, _ := runCLI(t, ""); code != 2 {
		t.Errorf("no command: exit %d, want 2", code)
	}
	if code, stdout, _ := runCLI(t, "", "help"); code != 0 || !strings.Contains(stdout, "wopneg decide") {
		t.Errorf("help: exit %d, stdout %q", code, stdout)
	}
}

// decideAnswer runs decide on request and returns the answer's fields,
// failing unless it exits 0.
func decideAnswer(t *testing.T, request string) map[string]any {
	t.Helper()
	code, stdout, stderr := runCLI(t, request, "decide")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	return got
}

// TestDecideInbound is the regression test of issue 9 item 8's first
// point: an offer without peerVersions is an inbound request, O =
// {requested} or {preferred}, where it used to be refused below-floor; an
// explicit [] still means a peer that speaks nothing.
func TestDecideInbound(t *testing.T) {
	user := `{"issuer":"https://idp.example","subjectId":"u-1","tenant":"acme","lane":"oidc","kind":"user"}`
	tests := []struct {
		name, subject, offer           string
		outcome, version, reason, rule string
	}{
		{"nothing requested: preferred", "null", `{}`, "accepted", "1.2", "ok", "accept"},
		{"requested preferred", "null", `{"requested": "1.2"}`, "accepted", "1.2", "ok", "accept"},
		{"authenticated asks for less", user, `{"requested": "1.1"}`, "downgraded", "1.1", "ok", "accept"},
		{"anonymous asks for less", "null", `{"requested": "1.1"}`, "refused", "", "unauthenticated", "authenticated"},
		{"below the floor", user, `{"requested": "1.0"}`, "refused", "", "below-floor", "floor"},
		{"null is absent", "null", `{"peerVersions": null}`, "accepted", "1.2", "ok", "accept"},
		{"explicit empty list", "null", `{"peerVersions": []}`, "refused", "", "below-floor", "common"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decideAnswer(t, `{"subject": `+tt.subject+`, "facet": `+wideFacet+`, "offer": `+tt.offer+`, "now": "2026-11-29T12:00:00Z"}`)
			version, _ := got["version"].(string)
			if got["outcome"] != tt.outcome || version != tt.version || got["reason"] != tt.reason || got["rule"] != tt.rule {
				t.Errorf("got %v %q %v %v, want %s %q %s %s", got["outcome"], version, got["reason"], got["rule"],
					tt.outcome, tt.version, tt.reason, tt.rule)
			}
		})
	}
}

// TestDecideDate is the regression test of issue 9 item 8's `now` point:
// a date YYYY-MM-DD is its midnight UTC, as lint --now reads it.
func TestDecideDate(t *testing.T) {
	got := decideAnswer(t, `{"facet": `+wideFacet+`, "offer": {}, "now": "2026-11-29"}`)
	event, _ := got["event"].(map[string]any)
	if event["at"] != "2026-11-29T00:00:00Z" {
		t.Errorf("event.at = %v, want 2026-11-29T00:00:00Z", event["at"])
	}
}

// TestDecideHelp is the regression test of issue 9 item 8's -h point:
// the help is on stdout, exit 0, and shows the request (offer.protocol
// included) and the answer.
func TestDecideHelp(t *testing.T) {
	for _, arg := range []string{"-h", "--help"} {
		code, stdout, stderr := runCLI(t, "", "decide", arg)
		if code != 0 || stderr != "" {
			t.Errorf("%s: exit %d, stderr %q", arg, code, stderr)
		}
		for _, want := range []string{`"offer":   {"protocol": "a2a" | "mcp"`, `"peerVersions"`, `"now":`, "Answer:", `"outcome"`, `"event"`} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%s: the help lacks %s:\n%s", arg, want, stdout)
			}
		}
	}
	for _, args := range [][]string{{"decide", "request.json"}, {"decide", "-x"}} {
		code, stdout, stderr := runCLI(t, "", args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, "wopneg decide -h") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and a pointer to -h", args, code, stdout, stderr)
		}
	}
}

// TestDecideStrictJSON is the regression test of issue 8 item 6 (CLI
// part) and of issue 9 item 8's messages and peer points: decide reads its
// request as the module's one strict reader does (keys match exactly,
// repeated keys and trailing bytes are refused), and every refusal is exit
// 2 with one line naming the JSON path, never a Go type.
func TestDecideStrictJSON(t *testing.T) {
	rest := `"facet": ` + wideFacet + `, "now": "2026-11-29T12:00:00Z"`
	tests := []struct{ name, request, mention string }{
		{"wrong-case key beside the right one", `{"OFFER": {"peerVersions": []}, "offer": {"peerVersions": ["1.2"]}, ` + rest + `}`, `"OFFER"`},
		{"wrong-case key alone", `{"Offer": {"peerVersions": ["1.2"]}, ` + rest + `}`, `"Offer"`},
		{"wrong-case nested key", `{"offer": {"PeerVersions": ["1.2"]}, ` + rest + `}`, `offer.PeerVersions: unknown field "PeerVersions"`},
		{"repeated key", `{"offer": {}, "offer": {"peerVersions": ["1.2"]}, ` + rest + `}`, `"offer"`},
		{"repeated nested key", `{"offer": {"requested": "1.1", "requested": "1.2"}, ` + rest + `}`, `"requested"`},
		{"trailing bytes", `{"offer": {}, ` + rest + `} {}`, "request"},
		{"wrong type", `{"offer": {"peerVersions": ["1.2", 2]}, ` + rest + `}`, "offer.peerVersions[1]"},
		{"wrong type of offer", `{"offer": "a2a", ` + rest + `}`, "offer"},
		{"wrong type of now", `{"offer": {}, "facet": ` + wideFacet + `, "now": 1}`, "now"},
		{"malformed now", `{"offer": {}, "facet": ` + wideFacet + `, "now": "29/11/2026"}`, "now"},
		{"peer without origin", `{"offer": {"peer": "ftp://peer.example"}, ` + rest + `}`, "offer.peer"},
		{"relative peer", `{"offer": {"peer": "/peer"}, ` + rest + `}`, "/peer"},
		{"too deep", `{"policy": {"denyDowngradeTo": ` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}, "offer": {}, ` + rest + `}`, "nested deeper than 64 levels at byte 93 of 412 (in policy.denyDowngradeTo" + strings.Repeat("[0]", 62) + ")"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.request, "decide")
			if code != 2 || stdout != "" {
				t.Errorf("exit %d, stdout %q; want 2 and nothing", code, stdout)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.mention) {
				t.Errorf("stderr = %q, want one line naming %s", stderr, tt.mention)
			}
			for _, goName := range []string{"Go struct", "negotiate.", "vectors.", "[]string", "cannot unmarshal", "time.Time"} {
				if strings.Contains(stderr, goName) {
					t.Errorf("stderr %q names Go (%s)", stderr, goName)
				}
			}
		})
	}
}

// TestVectorsReportsFailures checks the other half of the vectors
// command: a vector the library does not meet is listed with what each
// decider got wrong, counted, and makes the exit code 1.
func TestVectorsReportsFailures(t *testing.T) {
	vs, err := vec.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	good := vs[0]
	bad := good
	bad.Name, bad.Source = "made/wrong", "this test"
	bad.Want.Rule = "nonsense"
	var out bytes.Buffer
	if code := checkVectors([]vec.Vector{good, bad}, true, &out); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	want := "ok    " + good.Name + "\nFAIL  made/wrong (this test)\n      Decide: "
	if got := out.String(); !strings.HasPrefix(got, want) || !strings.Contains(got, "\n      Negotiator: ") ||
		!strings.HasSuffix(got, "\n1 passed, 1 failed\n") {
		t.Errorf("output:\n%s", got)
	}
}

// TestDecideSizeBound checks the 1 MiB bound on the request: exactly
// 1 MiB is read (and judged as JSON), one byte more is refused unread.
func TestDecideSizeBound(t *testing.T) {
	body := `{"facet": ` + wideFacet + `, "offer": {}, "now": "2026-11-29"}`
	padded := body + strings.Repeat(" ", maxRequest-len(body))
	if code, stdout, stderr := runCLI(t, padded, "decide"); code != 0 || stderr != "" || !strings.Contains(stdout, `"outcome": "accepted"`) {
		t.Errorf("a 1 MiB request: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runCLI(t, padded+" ", "decide"); code != 2 || !strings.Contains(stderr, "larger than 1 MiB") {
		t.Errorf("a request of 1 MiB and one byte: exit %d, stderr %q", code, stderr)
	}
}

// TestDecideGolden runs decide on every request in testdata/decide and
// compares the exit code, stdout and stderr with the request's .golden
// file (go test -run TestDecideGolden -update rewrites them).
func TestDecideGolden(t *testing.T) {
	requests, err := filepath.Glob(filepath.Join("testdata", "decide", "*.json"))
	if err != nil || len(requests) < 5 {
		t.Fatalf("found %d decide requests (%v), want at least 5", len(requests), err)
	}
	for _, request := range requests {
		name := strings.TrimSuffix(filepath.Base(request), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(request)
			if err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runCLI(t, string(data), "decide")
			got := fmt.Sprintf("$ wopneg decide < %s\nexit %d\n-- stdout --\n%s-- stderr --\n%s", filepath.Base(request), code, stdout, stderr)
			golden := strings.TrimSuffix(request, ".json") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("decide differs from %s\n--- got\n%s\n--- want\n%s", golden, got, want)
			}
		})
	}
}

// TestDecideEveryViolation is the regression test of issue 21 item 5's
// last point: a request with four problems — an invalid Subject, a
// requested version of the wrong type, a peer URL with no origin and a
// clock that is not one — gets all four, one line each, each naming its
// JSON path, where decide used to stop at the first.
func TestDecideEveryViolation(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "decide", "four-violations.json"))
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, string(data), "decide")
	if code != 2 || stdout != "" {
		t.Errorf("exit %d, stdout %q; want 2 and nothing", code, stdout)
	}
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	paths := []string{"subject.subjectId: ", "offer.requested: ", "offer.peer: ", "now: "}
	if len(lines) != len(paths) {
		t.Fatalf("%d lines, want one per violation, %d:\n%s", len(lines), len(paths), stderr)
	}
	for _, path := range paths {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "wopneg: request: "+path) }) {
			t.Errorf("no line for %s in\n%s", path, stderr)
		}
	}
}
