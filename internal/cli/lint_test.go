package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const cleanDoc = "testdata/discovery/v2-clean.json"

func TestLintArguments(t *testing.T) {
	clean, err := os.ReadFile(cleanDoc)
	if err != nil {
		t.Fatal(err)
	}
	// The mcp record of this document was refreshed 2026-07-30, so its
	// window closes at 2026-10-28T00:00:00Z; a2a's is made to stay open.
	staleData, err := os.ReadFile("testdata/discovery/rule-refresh-stale.json")
	if err != nil {
		t.Fatal(err)
	}
	stale := strings.Replace(string(staleData), `"refreshedAt": "2026-11-01"`, `"refreshedAt": "2026-10-01"`, 1)
	tests := []struct {
		name     string
		stdin    string
		args     []string
		code     int
		stdout   string // a substring; "" means stdout must be empty
		mentions string // a substring of stderr
	}{
		{"stdin", string(clean), []string{"lint", "--now", goldenNow, "-"}, 0, "", "no findings"},
		{"flags after the file", stale, []string{"lint", "-", "--now", goldenNow, "--json"}, 1, `"rule": "refresh-stale"`, "1 finding"},
		{"-- ends the flags", "", []string{"lint", "--now", goldenNow, "--", cleanDoc}, 0, "", "no findings"},
		{"the window's last instant", stale, []string{"lint", "--now", "2026-10-28T00:00:00Z", "-"}, 0, "", "no findings"},
		{"a second later", stale, []string{"lint", "--now", "2026-10-28T00:00:01Z", "-"}, 1,
			"mcp.refreshedAt: refresh-stale: refreshedAt 2026-07-30 is 90 days old: the 90-day refresh window closed at 2026-10-28T00:00:00Z", "1 finding"},
		{"a zone other than UTC", stale, []string{"lint", "--now", "2026-10-28T01:00:00+01:00", "-"}, 0, "", "no findings"},
		{"a day in the future", "", []string{"lint", "--now", "2026-10-30T23:59:59Z", cleanDoc}, 1,
			"refreshedAt 2026-11-01 is more than one day after now (2026-10-30T23:59:59Z)", "2 findings"},
		{"no file", "", []string{"lint"}, 2, "", "want one FILE"},
		{"two files", "", []string{"lint", cleanDoc, cleanDoc}, 2, "", "got 2"},
		{"bad clock", "", []string{"lint", "--now", "yesterday", cleanDoc}, 2, "", `--now "yesterday"`},
		{"unknown flag", "", []string{"lint", "--fix", cleanDoc}, 2, "", "flag provided but not defined: -fix"},
		{"help", "", []string{"lint", "-h"}, 0, "", "usage: wopneg lint"},
		{"missing file", "", []string{"lint", "testdata/discovery/nope.json"}, 2, "", "nope.json"},
		{"empty input", "", []string{"lint", "-"}, 2, "", "not JSON"},
		{"not UTF-8", "\"\xff\"", []string{"lint", "-"}, 2, "", "invalid UTF-8"},
		{"JSON empty array", "", []string{"lint", "--json", "--now", goldenNow, cleanDoc}, 0, "[]\n", "no findings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.stdin, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout %q\nstderr %q", code, tt.code, stdout, stderr)
			}
			if tt.stdout == "" && stdout != "" || !strings.Contains(stdout, tt.stdout) {
				t.Errorf("stdout %q, want %q", stdout, tt.stdout)
			}
			if !strings.Contains(stderr, tt.mentions) {
				t.Errorf("stderr %q does not mention %q", stderr, tt.mentions)
			}
		})
	}
}

func TestLintInputTooLarge(t *testing.T) {
	big := `{"x": "` + strings.Repeat("a", maxRequest) + `"}`
	code, stdout, stderr := runCLI(t, big, "lint", "-")
	if code != 2 || stdout != "" || !strings.Contains(stderr, "stdin is larger than 1 MiB") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestLintDefaultClock checks that without --now lint judges by the wall
// clock: a refreshedAt of today is fresh and one of a year ago is not.
func TestLintDefaultClock(t *testing.T) {
	data, err := os.ReadFile(cleanDoc)
	if err != nil {
		t.Fatal(err)
	}
	today := time.Now().UTC().Format(time.DateOnly)
	yearAgo := time.Now().UTC().AddDate(-1, 0, 0).Format(time.DateOnly)
	fresh := strings.ReplaceAll(string(data), "2026-11-01", today)
	if code, stdout, _ := runCLI(t, fresh, "lint", "-"); code != 0 {
		t.Errorf("refreshedAt today: exit %d\n%s", code, stdout)
	}
	old := strings.ReplaceAll(string(data), "2026-11-01", yearAgo)
	if code, stdout, _ := runCLI(t, old, "lint", "-"); code != 1 || strings.Count(stdout, "refresh-stale") != 2 {
		t.Errorf("refreshedAt a year ago: exit %d\n%s", code, stdout)
	}
}

// TestLintRepeatedKey checks that a key given twice, anywhere, is the one
// finding lint reports (issue 8 item 6: the module reads every JSON the
// same strict way, and a strict reader refuses such a document).
func TestLintRepeatedKey(t *testing.T) {
	for _, tt := range []struct{ doc, path string }{
		{`{"protocolVersions": ["2.0"], "preferredVersion": "2.0", "grpc": {}, "x": 1, "x": 2}`, "x"},
		{`{"grpc": {}, "conformance": {"seams": [{"k": 1, "k": 1}]}}`, "conformance.seams[0].k"},
		{`{"grpc": {}, "a2a": {"versions": ["1.0"], "versions": ["1.1"]}}`, "a2a.versions"},
	} {
		code, stdout, stderr := runCLI(t, tt.doc, "lint", "--now", goldenNow, "-")
		if code != 1 || !strings.HasPrefix(stdout, tt.path+": duplicate-key: key ") || strings.Count(stdout, "\n") != 1 ||
			stderr != "wopneg lint: 1 finding\n" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want the one duplicate-key finding at %s", tt.doc, code, stdout, stderr, tt.path)
		}
	}
}

// TestLintPassesOverOtherFamilies checks that the note naming the root
// keys lint does not own comes once, each key once, whatever the number
// of findings.
func TestLintPassesOverOtherFamilies(t *testing.T) {
	doc := `{"protocolVersions": ["2.0"], "preferredVersion": "2.0", "x": 1, "grpc": {}, "y": [],
		"z": {"supportedTransports": []}}`
	code, stdout, stderr := runCLI(t, doc, "lint", "--now", goldenNow, "-")
	if code != 1 || stdout != "grpc: grpc-block: the grpc block was removed by RFC 0175: v2 does not advertise transports\n" {
		t.Errorf("exit %d, stdout %q", code, stdout)
	}
	want := "wopneg lint: note: passed over root keys of families this tool does not check: x, y, z\n" +
		"wopneg lint: note: the document advertises neither a2a nor mcp\n" +
		"wopneg lint: 1 finding\n"
	if stderr != want {
		t.Errorf("stderr\n%s\nwant\n%s", stderr, want)
	}
}

func TestLintRootVersions(t *testing.T) {
	facet := `"a2a": {"status": "experimental", "since": "2.0", "until": "2.1", "witness": "seam-gated",
		"versions": ["1.0"], "preferredVersion": "1.0", "minimumVersion": "1.0", "refreshedAt": "2026-11-01"}`
	tests := []struct {
		name, root string
		want       []string
	}{
		{"valid", `"protocolVersions": ["2.0", "2.10"], "preferredVersion": "2.10"`, nil},
		{"both missing", ``, []string{"protocolVersions: required", "preferredVersion: required"}},
		{"null", `"protocolVersions": null, "preferredVersion": null`, []string{"protocolVersions: type", "preferredVersion: type"}},
		{"element types", `"protocolVersions": ["2.0", 2.1], "preferredVersion": "2.0"`, []string{"protocolVersions[1]: type"}},
		{"no membership check on a broken list", `"protocolVersions": ["2.x"], "preferredVersion": "2.0"`, []string{"protocolVersions[0]: pattern"}},
		{"leading zero", `"protocolVersions": ["2.0"], "preferredVersion": "2.00"`, []string{"preferredVersion: pattern"}},
		{"repeated", `"protocolVersions": ["2.0", "2.1", "2.0"], "preferredVersion": "2.1"`, []string{"protocolVersions[2]: duplicate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := "{" + tt.root
			if tt.root != "" {
				doc += ", "
			}
			doc += facet + "}"
			res, err := lintDocument([]byte(doc), mustNow(t))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range res.findings {
				got = append(got, f.Path+": "+f.Rule)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("findings\n%v\nwant\n%v", got, tt.want)
			}
		})
	}
}

// TestLintFacetShapes checks records that are not objects, and the two
// families in the document's order.
func TestLintFacetShapes(t *testing.T) {
	doc := `{"mcp": [], "protocolVersions": ["2.0"], "preferredVersion": "2.0", "a2a": "1.0"}`
	res, err := lintDocument([]byte(doc), mustNow(t))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range res.findings {
		got = append(got, f.String())
	}
	want := []string{"mcp: type: must be an object (the mcp facet), not array", "a2a: type: must be an object (the a2a facet), not string"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Only the keys RFC 0175 removed are supported-transports; deeper
	// down the same name is just a key the closed record does not allow.
	doc = `{"protocolVersions": ["2.0"], "preferredVersion": "2.0", "mcp": {"serverMount": {"supportedTransports": []}}}`
	res, err = lintDocument([]byte(doc), mustNow(t))
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, f := range res.findings {
		if strings.HasPrefix(f.Path, "mcp.serverMount") {
			got = append(got, f.Path+": "+f.Rule)
		}
	}
	want = []string{"mcp.serverMount.supportedTransports: unknown-field"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestMigrateArguments(t *testing.T) {
	v1, err := os.ReadFile("testdata/discovery/v1-era.json")
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, string(v1), "migrate", "-", "--now", goldenNow)
	if code != 0 || !strings.Contains(stderr, "wopneg migrate: 11 changes") {
		t.Errorf("stdin: exit %d, stderr %q", code, stderr)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "golden", "v1-era.migrate"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(want), "-- stdout --\n"+stdout+"-- stderr --") {
		t.Errorf("migrating stdin printed something else than migrating the file:\n%s", stdout)
	}
	for _, args := range [][]string{{"migrate"}, {"migrate", "--now", "x", "-"}, {"migrate", "--json", "-"}} {
		if code, stdout, _ := runCLI(t, string(v1), args...); code != 2 || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q; want 2 and nothing", args, code, stdout)
		}
	}
	if code, _, stderr := runCLI(t, "", "migrate", "nope.json"); code != 2 || !strings.Contains(stderr, "nope.json") {
		t.Errorf("missing file: exit %d, stderr %q", code, stderr)
	}
}

func TestMigrateRefusals(t *testing.T) {
	rec := func(extra string) string {
		return `{"status": "experimental", "since": "2.0", "until": "2.1", "witness": "seam-gated", ` + extra + `}`
	}
	tests := []struct{ name, doc, mention string }{
		{"legacy preferred", `{"a2a": ` + rec(`"versions": ["0.3"], "preferredVersion": "0.3", "minimumVersion": "0.3"`) + `}`,
			`a2a.preferredVersion is "0.3"`},
		{"record twice", `{"mcp": {}, "mcp": {}}`, `mcp: key "mcp" appears more than once`},
		{"owned key twice", `{"a2a": ` + rec(`"versions": ["0.3", "1.0"], "versions": ["1.0"], "preferredVersion": "1.0"`) + `}`,
			`a2a.versions: key "versions" appears more than once`},
		{"other family's key twice", `{"conformance": {"x": 1, "x": 2}, "grpc": {}}`, `conformance.x: key "x" appears more than once`},
		{"nothing left", `{"mcp": ` + rec(`"revisions": ["2025-06-18"], "preferredVersion": "2026-07-28"`) + `}`,
			"would leave mcp.revisions empty"},
		{"no floor to move to", `{"a2a": ` + rec(`"versions": ["0.3", "one"], "preferredVersion": "one", "minimumVersion": "0.3"`) + `}`,
			"offers no other version to move it to"},
		{"floor with no list", `{"a2a": ` + rec(`"preferredVersion": "1.0", "minimumVersion": "0.3"`) + `}`,
			"offers no other version to move it to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.doc, "migrate", "-")
			if code != 1 || stdout != "" {
				t.Errorf("exit %d, stdout %q; want 1 and nothing", code, stdout)
			}
			if !strings.Contains(stderr, "wopneg migrate: refused: ") || !strings.Contains(stderr, tt.mention) ||
				!strings.HasSuffix(stderr, "wopneg migrate: nothing written\n") {
				t.Errorf("stderr %q, want a refusal naming %q", stderr, tt.mention)
			}
		})
	}
}

// TestMigrateEdits pins what migrate does to values around the ones it
// owns: shapes it does not recognise stay as they are.
func TestMigrateEdits(t *testing.T) {
	tests := []struct{ name, in, out string }{
		{"nothing to do", `{"a2a": 1}`, `{"a2a": 1}`},
		{"only key", `{ "grpc": {"a": [1, 2]} }`, `{}`},
		{"floor above the lowest", `{"a2a": {"versions": ["1.1", "0.3", "1.0"], "preferredVersion": "1.1", "minimumVersion": "0.3"}}`,
			`{"a2a": {"versions": ["1.1", "1.0"], "preferredVersion": "1.1", "minimumVersion": "1.0"}}`},
		{"floor moved past a malformed entry", `{"mcp": {"revisions": ["2025-06-18", "soon", "2026-07-28"], "minimumRevision": "2025-06-18"}}`,
			`{"mcp": {"revisions": ["soon", "2026-07-28"], "minimumRevision": "2026-07-28"}}`},
		{"legacy floor, legacy already gone", `{"a2a": {"versions": ["1.0"], "minimumVersion": "0.3"}}`,
			`{"a2a": {"versions": ["1.0"], "minimumVersion": "1.0"}}`},
		{"numbers are not versions", `{"a2a": {"versions": [0.3, "1.0"], "preferredVersion": 0.3}}`,
			`{"a2a": {"versions": [0.3, "1.0"], "preferredVersion": 0.3}}`},
		{"every legacy entry", `{"a2a": {"versions": ["0.3", "1.0", "0.3"], "profiles": ["a2a-0.3-legacy", "a2a-0.3-legacy"]}}`,
			`{"a2a": {"versions": ["1.0"], "profiles": []}}`},
		{"other -legacy ids are left to a person", `{"a2a": {"versions": ["1.0"], "profiles": ["a2a-1.0-legacy"]}}`,
			`{"a2a": {"versions": ["1.0"], "profiles": ["a2a-1.0-legacy"]}}`},
		{"grpc inside a record is not C8.3", `{"a2a": {"grpc": {}, "supportedTransports": []}}`, `{"a2a": {"grpc": {}}}`},
		{"other families untouched", `{"hostEvents": {"supportedTransports": [], "grpc": 1}}`, `{"hostEvents": {"supportedTransports": [], "grpc": 1}}`},
		{"root profiles kept when not redundant", `{"profiles": ["mcp-2026-07-28"], "mcp": {"profiles": ["mcp-2025-11-25"]}}`,
			`{"profiles": ["mcp-2026-07-28"], "mcp": {"profiles": ["mcp-2025-11-25"]}}`},
		{"root profiles dropped when redundant", `{"profiles": ["mcp-2025-06-18-legacy", "mcp-2026-07-28"], "mcp": {"profiles": ["mcp-2026-07-28"]}}`,
			`{"mcp": {"profiles": ["mcp-2026-07-28"]}}`},
		{"an a2a id is not found under mcp", `{"profiles": ["a2a-1.0"], "mcp": {"profiles": ["a2a-1.0"]}}`,
			`{"profiles": ["a2a-1.0"], "mcp": {"profiles": ["a2a-1.0"]}}`},
		{"empty root profiles", `{"profiles": [], "x": 1}`, `{"x": 1}`},
		{"no trailing newline added", "{\"grpc\": 1, \"x\": 1}", "{\"x\": 1}"},
		{"trailing space kept", "{\"x\": 1, \"grpc\": 1}\n\n", "{\"x\": 1}\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := migrateDocument([]byte(tt.in))
			if err != nil || string(out) != tt.out {
				t.Errorf("migrate(%s)\n= %s, %v\nwant %s", tt.in, out, err, tt.out)
			}
			if err == nil {
				checkMigrated(t, tt.name, []byte(tt.in), out)
			}
		})
	}
}

// TestLintOrder checks that findings about what the document lacks come
// before those of its keys, which follow the keys' order.
func TestLintOrder(t *testing.T) {
	code, stdout, _ := runCLI(t, `{"grpc": {}, "supportedTransports": []}`, "lint", "--now", goldenNow, "-")
	var rules []string
	for line := range strings.Lines(stdout) {
		rules = append(rules, strings.SplitN(line, ": ", 3)[1])
	}
	want := []string{"required", "required", "grpc-block", "supported-transports"}
	if code != 1 || !slices.Equal(rules, want) {
		t.Errorf("exit %d, rules %v, want %v\n%s", code, rules, want, stdout)
	}
}

// TestLintFlagAfterFile checks that a flag after the file still counts
// when flags also come before it, and that after "--" everything is an
// operand.
func TestLintFlagAfterFile(t *testing.T) {
	doc := "testdata/discovery/v2-clean.json"
	if code, stdout, stderr := runCLI(t, "", "lint", "--now", goldenNow, doc, "--json"); code != 0 || stdout != "[]\n" {
		t.Errorf("lint --now D FILE --json: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if code, _, stderr := runCLI(t, "", "lint", "--now", goldenNow, "--", doc, "--json"); code != 2 || !strings.Contains(stderr, "got 2") {
		t.Errorf("lint --now D -- FILE --json: exit %d, stderr %q; want two operands refused", code, stderr)
	}
}
