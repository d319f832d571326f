package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenNow is the clock of every golden run, so that the refresh SLA and
// until findings do not change with the day the tests run.
const goldenNow = "2026-11-29"

// discoveryDocs lists the shipped example documents.
func discoveryDocs(t testing.TB) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join("testdata", "discovery", "*.json"))
	if err != nil || len(docs) < 30 {
		t.Fatalf("found %d example documents (%v), want at least 30", len(docs), err)
	}
	return docs
}

// goldenRun is one command run on one document, rendered as its golden
// file holds it: the command, the exit code, stdout and stderr.
type goldenRun struct {
	suffix string
	args   []string
}

func goldenRuns(doc string) []goldenRun {
	return []goldenRun{
		{"lint", []string{"lint", "--now", goldenNow, doc}},
		{"lint-json", []string{"lint", "--json", "--now", goldenNow, doc}},
		{"migrate", []string{"migrate", "--now", goldenNow, doc}},
	}
}

func render(args []string, code int, stdout, stderr string) string {
	shown := slices.Clone(args)
	shown[len(shown)-1] = filepath.Base(shown[len(shown)-1])
	if stdout != "" && !strings.HasSuffix(stdout, "\n") {
		stdout += "\n\\ no newline at end of stdout\n"
	}
	return fmt.Sprintf("$ wopneg %s\nexit %d\n-- stdout --\n%s-- stderr --\n%s", strings.Join(shown, " "), code, stdout, stderr)
}

// TestGolden runs lint (text and --json) and migrate on every shipped
// document and compares what they print with testdata/golden. Run
// `go test ./internal/cli -run TestGolden -update` to rewrite the goldens
// after an intended change, and read the diff before committing it.
func TestGolden(t *testing.T) {
	for _, doc := range discoveryDocs(t) {
		name := strings.TrimSuffix(filepath.Base(doc), ".json")
		for _, g := range goldenRuns(doc) {
			t.Run(name+"/"+g.suffix, func(t *testing.T) {
				code, stdout, stderr := runCLI(t, "", g.args...)
				got := render(g.args, code, stdout, stderr)
				file := filepath.Join("testdata", "golden", name+"."+g.suffix)
				if *update {
					if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(file)
				if err != nil {
					t.Fatalf("%v (run with -update to create it)", err)
				}
				if got != string(want) {
					t.Errorf("%s differs from the golden file %s\n--- got\n%s\n--- want\n%s", g.suffix, file, got, want)
				}
			})
		}
	}
}

// TestGoldenFilesAreUsed fails on a golden file no document produces, so
// that a renamed example does not leave a stale golden behind.
func TestGoldenFilesAreUsed(t *testing.T) {
	want := map[string]bool{}
	for _, doc := range discoveryDocs(t) {
		for _, g := range goldenRuns(doc) {
			want[strings.TrimSuffix(filepath.Base(doc), ".json")+"."+g.suffix] = true
		}
	}
	files, err := os.ReadDir(filepath.Join("testdata", "golden"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !want[f.Name()] {
			t.Errorf("testdata/golden/%s belongs to no example document", f.Name())
		}
	}
	if len(files) != len(want) {
		t.Errorf("%d golden files, want %d", len(files), len(want))
	}
}

var findingLine = regexp.MustCompile(`^(\(root\)|\S+): ([a-z-]+): .+$`)

// TestEveryRuleHasAnExample checks the examples against the rule table:
// the document rule-X.json reports rule X, every rule lint knows has such
// a document, and no document yields a rule the table lacks.
func TestEveryRuleHasAnExample(t *testing.T) {
	seen := map[string]bool{}
	for _, doc := range discoveryDocs(t) {
		code, stdout, _ := runCLI(t, "", "lint", "--now", goldenNow, doc)
		var rules []string
		for line := range strings.Lines(stdout) {
			m := findingLine.FindStringSubmatch(strings.TrimSuffix(line, "\n"))
			if m == nil {
				t.Errorf("%s: line %q is not PATH: RULE: message", doc, line)
				continue
			}
			if !slices.Contains(lintRules, m[2]) {
				t.Errorf("%s: rule %q is not in the rule table", doc, m[2])
			}
			seen[m[2]] = true
			rules = append(rules, m[2])
		}
		if (len(rules) > 0) != (code == 1) {
			t.Errorf("%s: exit %d with %d findings", doc, code, len(rules))
		}
		if rule, ok := strings.CutPrefix(strings.TrimSuffix(filepath.Base(doc), ".json"), "rule-"); ok && !slices.Contains(rules, rule) {
			t.Errorf("%s does not report %s; it reports %v", doc, rule, rules)
		}
	}
	for _, rule := range lintRules {
		if !seen[rule] {
			t.Errorf("rule %s has no example document", rule)
		}
		if _, err := os.Stat(filepath.Join("testdata", "discovery", "rule-"+rule+".json")); err != nil {
			t.Errorf("rule %s: %v", rule, err)
		}
	}
}

// TestRuleTableDocumented checks that the command's documentation
// (cmd/wopneg/main.go, what go doc prints) lists exactly the rules lint
// knows, in the same order.
func TestRuleTableDocumented(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "cmd", "wopneg", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, m := range regexp.MustCompile(`(?m)^//\t([a-z][a-z-]+)\s{2,}\S`).FindAllSubmatch(src, -1) {
		documented = append(documented, string(m[1]))
	}
	if !slices.Equal(documented, lintRules) {
		t.Errorf("the rule table in cmd/wopneg/main.go lists\n%v\nlint knows\n%v", documented, lintRules)
	}
}

// TestLintJSONMatchesText checks that --json prints the same findings as
// the text form, as a JSON array, with the same exit code.
func TestLintJSONMatchesText(t *testing.T) {
	for _, doc := range discoveryDocs(t) {
		code, text, errText := runCLI(t, "", "lint", "--now", goldenNow, doc)
		jcode, js, errJSON := runCLI(t, "", "lint", "--now", goldenNow, "--json", doc)
		if code != jcode || errText != errJSON {
			t.Errorf("%s: text exit %d stderr %q; json exit %d stderr %q", doc, code, errText, jcode, errJSON)
		}
		if code == 2 {
			if js != "" {
				t.Errorf("%s: exit 2 with stdout %q", doc, js)
			}
			continue
		}
		var fs []finding
		dec := json.NewDecoder(strings.NewReader(js))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&fs); err != nil || fs == nil {
			t.Fatalf("%s: --json output is not an array of findings: %v\n%s", doc, err, js)
		}
		var lines strings.Builder
		for _, f := range fs {
			fmt.Fprintln(&lines, f)
		}
		if lines.String() != text {
			t.Errorf("%s: --json findings\n%s\ntext findings\n%s", doc, lines.String(), text)
		}
	}
}

// TestMigrateShippedExamples holds every shipped document to migrate's
// promises: the output re-parses, migrating it again changes nothing,
// it keeps every root value migrate does not own byte for byte, and lint
// finds none of the removed shapes in it.
func TestMigrateShippedExamples(t *testing.T) {
	rows := map[string]bool{}
	for _, doc := range discoveryDocs(t) {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		out, changes, err := migrateDocument(data)
		if err != nil {
			continue
		}
		for _, c := range changes {
			rows[c.row] = true
		}
		checkMigrated(t, doc, data, out)
	}
	for _, row := range []string{"C8.1", "C8.2", "C8.3", "no-root-profiles"} {
		if !rows[row] {
			t.Errorf("no example exercises %s", row)
		}
	}
}

// checkMigrated checks one successful migration of data into out.
func checkMigrated(t *testing.T, name string, data, out []byte) {
	t.Helper()
	again, changes, err := migrateDocument(out)
	if err != nil || !bytes.Equal(again, out) || len(changes) != 0 {
		t.Fatalf("%s: migrating the output again: err %v, %d changes, same bytes %v", name, err, len(changes), bytes.Equal(again, out))
	}
	in, _ := parseTree(data)
	res, _ := parseTree(out)
	for _, m := range in.members {
		switch m.key {
		case "supportedTransports", "grpc", "profiles", "a2a", "mcp":
			continue
		}
		if !slices.ContainsFunc(res.members, func(o jmember) bool {
			return o.key == m.key && bytes.Equal(out[o.value.start:o.value.end], data[m.value.start:m.value.end])
		}) {
			t.Errorf("%s: root %q did not come through byte for byte", name, m.key)
		}
	}
	checkAgree(t, name, data, out)
	for _, row := range legacyRows {
		rec := res.member(row.family)
		if rec == nil || rec.kind != '{' {
			continue
		}
		for _, field := range rec.members {
			bad := field.key == row.floor && field.value.isString(row.version) ||
				field.key == row.list && slices.ContainsFunc(field.value.elems, func(e *jnode) bool { return e.isString(row.version) }) ||
				field.key == "profiles" && slices.ContainsFunc(field.value.elems, func(e *jnode) bool { return e.isString(row.profile) })
			if bad {
				t.Errorf("%s: migrated %s.%s still names the legacy %s", name, row.family, field.key, row.noun)
			}
		}
	}
}

// migrateFixes are the rules whose findings migrate always fixes: none
// may survive in its output.
var migrateFixes = []string{"supported-transports", "grpc-block", "legacy-version"}

// checkAgree holds lint and migrate to one view of a document that data
// migrated into out (issue 9 item 7): every path migrate changed is one
// lint reported in data, and lint of out reports nothing migrate could
// have fixed — no finding of migrateFixes, no legacy profile C8.1 drops,
// and no profile-version finding data did not already have (a profile
// left naming a version migrate removed).
func checkAgree(t *testing.T, name string, data, out []byte) {
	t.Helper()
	now := mustNow(t)
	before, err := lintDocument(data, now)
	if err != nil {
		t.Fatalf("%s: lint of the input: %v", name, err)
	}
	_, changes, err := migrateDocument(data)
	if err != nil {
		t.Fatalf("%s: migrate: %v", name, err)
	}
	for _, c := range changes {
		if !slices.ContainsFunc(before.findings, func(f finding) bool { return f.Path == c.path }) {
			t.Errorf("%s: migrate changed %s (%s) where lint reports nothing", name, c.path, c.row)
		}
	}
	after, err := lintDocument(out, now)
	if err != nil {
		t.Fatalf("%s: lint of the output: %v", name, err)
	}
	for _, f := range after.findings {
		fixable := slices.Contains(migrateFixes, f.Rule) ||
			f.Rule == "legacy-profile" && (strings.Contains(f.Message, `"a2a-0.3-legacy"`) || strings.Contains(f.Message, `"mcp-2025-06-18-legacy"`)) ||
			f.Rule == "profile-version" && !slices.ContainsFunc(before.findings, func(b finding) bool { return b.Message == f.Message })
		if fixable {
			t.Errorf("%s: lint of migrate's output reports what migrate could have fixed: %s", name, f)
		}
	}
}

func mustNow(t testing.TB) time.Time {
	t.Helper()
	now, err := parseNow(goldenNow)
	if err != nil {
		t.Fatal(err)
	}
	return now
}

// TestLintMigrateAgree is the regression test of issue 9 item 7: lint
// reports every legacy version migrate strips (a document offering A2A
// 0.3 or MCP 2025-06-18 used to lint clean), and lint of migrate's output
// reports nothing migrate could have fixed (a profile "a2a-0.3" used to
// be left naming the version migrate removed).
func TestLintMigrateAgree(t *testing.T) {
	record := func(family, list, floorKey, versions, pref, floor, profiles string) string {
		return fmt.Sprintf(`{"protocolVersions": ["2.0"], "preferredVersion": "2.0", %q: {"status": "stable", "since": "2.0",
			"witness": "seam-gated", %q: %s, "preferredVersion": %q, %q: %q, "refreshedAt": "2026-11-01", "profiles": %s}}`,
			family, list, versions, pref, floorKey, floor, profiles)
	}
	tests := []struct {
		name, doc string
		lintRules []string // what lint reports on the input, in order
	}{
		{"a2a 0.3 offered", record("a2a", "versions", "minimumVersion", `["0.3", "1.0"]`, "1.0", "1.0", `["a2a-1.0"]`),
			[]string{"legacy-version"}},
		{"mcp 2025-06-18 offered", record("mcp", "revisions", "minimumRevision", `["2025-06-18", "2026-07-28"]`, "2026-07-28", "2026-07-28", `["mcp-2026-07-28"]`),
			[]string{"legacy-version"}},
		{"a2a profile of 0.3", record("a2a", "versions", "minimumVersion", `["0.3", "1.0"]`, "1.0", "0.3", `["a2a-0.3", "a2a-1.0"]`),
			[]string{"legacy-version", "legacy-version", "legacy-version"}},
		{"mcp profile of 2025-06-18", record("mcp", "revisions", "minimumRevision", `["2025-06-18", "2026-07-28"]`, "2026-07-28", "2025-06-18", `["mcp-2025-06-18"]`),
			[]string{"legacy-version", "legacy-version", "legacy-version"}},
		{"root profile of 0.3", `{"protocolVersions": ["2.0"], "preferredVersion": "2.0", "profiles": ["a2a-0.3"],
			"a2a": {"status": "stable", "since": "2.0", "witness": "seam-gated", "versions": ["0.3", "1.0"],
			"preferredVersion": "1.0", "minimumVersion": "1.0", "refreshedAt": "2026-11-01"}}`,
			[]string{"root-profiles", "legacy-version"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.doc)
			res, err := lintDocument(data, mustNow(t))
			if err != nil {
				t.Fatal(err)
			}
			var rules []string
			for _, f := range res.findings {
				rules = append(rules, f.Rule)
			}
			if !slices.Equal(rules, tt.lintRules) {
				t.Errorf("lint reports %v, want %v: %v", rules, tt.lintRules, res.findings)
			}
			out, _, err := migrateDocument(data)
			if err != nil {
				t.Fatalf("migrate: %v", err)
			}
			checkAgree(t, tt.name, data, out)
			after, _ := lintDocument(out, mustNow(t))
			if len(after.findings) != 0 {
				t.Errorf("lint of the migrated document: %v\n%s", after.findings, out)
			}
		})
	}
}
