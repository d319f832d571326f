package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzLintMigrate runs lint and migrate on arbitrary input, seeded with
// the shipped documents. Neither may panic; lint fails only on input that
// is not JSON (or nested past the strict reader's bound), reports a
// repeated key as its only finding, and reports only rules of its table; migrate fails only on
// input that is not a JSON object or with a refusal, and otherwise writes
// JSON that lint finds none of the removed shapes in and that migrates to
// itself (migrate(migrate(x)) == migrate(x)), with every root value it
// does not own kept byte for byte.
func FuzzLintMigrate(f *testing.F) {
	for _, doc := range discoveryDocs(f) {
		data, err := os.ReadFile(doc)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{``, `null`, `[]`, `{}`, `{"a2a": null}`, `{"a2a": {"versions": ["0.3", "0.3"], "minimumVersion": "0.3"}}`,
		`{"grpc": 1, "grpc": 2, "supportedTransports": 3}`, `{"profiles": ["a2a-0.3-legacy"]}`, "{\"x\":\"\xff\"}",
		`{"a2a": {"profiles": ["a2a-0.3-legacy"], "profiles": []}}`, `{"mcp": {"minimumRevision": "2025-06-18", "revisions": [1, "2026-07-28"]}}`} {
		f.Add([]byte(s))
	}
	now := mustNow(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		valid := utf8.Valid(data) && json.Valid(data)
		res, err := lintDocument(data, now)
		var nj *notJSONError
		switch {
		case err == nil && !valid, err != nil && !errors.As(err, &nj):
			t.Fatalf("lint: %v on input valid=%v", err, valid)
		case err != nil && valid && !strings.Contains(err.Error(), "nested deeper than"):
			// Valid JSON is refused only past the strict reader's depth bound.
			t.Fatalf("lint: %v on valid JSON", err)
		}
		if slices.ContainsFunc(res.findings, func(f finding) bool { return f.Rule == "duplicate-key" }) && len(res.findings) != 1 {
			t.Fatalf("a repeated key is not the only finding: %v", res.findings)
		}
		for _, fd := range res.findings {
			if !slices.Contains(lintRules, fd.Rule) || fd.Message == "" {
				t.Fatalf("lint finding %+v is not in the rule table or says nothing", fd)
			}
		}
		if _, err := json.Marshal(res.findings); err != nil {
			t.Fatalf("findings do not encode: %v", err)
		}

		out, _, err := migrateDocument(data)
		var refused *refusedError
		switch {
		case err == nil:
			if !json.Valid(out) {
				t.Fatalf("migrate wrote what is not JSON:\n%s", out)
			}
			checkMigrated(t, "fuzz input", data, out)
		case errors.Is(err, errNotObject), errors.As(err, &refused):
			if !valid {
				t.Fatalf("migrate: %v on input that is not JSON", err)
			}
		case errors.As(err, &nj):
			if valid && !strings.Contains(err.Error(), "nested deeper than") {
				t.Fatalf("migrate: %v on valid JSON", err)
			}
		default:
			t.Fatalf("migrate: %v", err)
		}
	})
}

// FuzzDecide runs decide on arbitrary requests, seeded with well-formed
// and malformed ones. It may not panic; it answers with JSON and exit 0,
// or refuses with exit 2 and one line on stderr that names no Go type.
func FuzzDecide(f *testing.F) {
	facet := `{"a2a": {"versions": ["1.0","1.1","1.2"], "preferredVersion": "1.2", "minimumVersion": "1.1", "refreshedAt": "2026-11-01"}}`
	for _, s := range []string{
		`{"facet": ` + facet + `, "offer": {}, "now": "2026-11-29"}`,
		`{"subject": null, "facet": ` + facet + `, "offer": {"peer": "https://peer.example", "requested": "1.1", "peerVersions": ["1.1"]}, "policy": {"denyDowngrade": true}, "now": "2026-11-29T12:00:00Z"}`,
		`{"OFFER": {}, "offer": {}}`, `{"offer": {"peerVersions": [1]}}`, `{"now": "2026-02-30"}`, `[]`, ``, `{"facet": {"mcp": {}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var out, errOut bytes.Buffer
		code := Main([]string{"decide"}, bytes.NewReader(data), &out, &errOut)
		switch code {
		case 0:
			if !json.Valid(out.Bytes()) || errOut.Len() != 0 {
				t.Fatalf("exit 0 with stdout %q, stderr %q", out.String(), errOut.String())
			}
		case 2:
			msg := errOut.String()
			if out.Len() != 0 || !strings.HasSuffix(msg, "\n") {
				t.Fatalf("exit 2 with stdout %q, stderr %q", out.String(), msg)
			}
			for line := range strings.Lines(msg) {
				if !strings.HasPrefix(line, "wopneg: ") || strings.Count(line, "\n") != 1 {
					t.Fatalf("exit 2 with a stderr line %q not of one problem", line)
				}
			}
			for _, goName := range []string{"Go struct", "Go value", "negotiate.", "vectors.", "facets.", "time.Time", "cannot unmarshal"} {
				if strings.Contains(msg, goName) {
					t.Fatalf("stderr %q names Go (%s)", msg, goName)
				}
			}
		default:
			t.Fatalf("exit %d, stderr %q", code, errOut.String())
		}
	})
}
