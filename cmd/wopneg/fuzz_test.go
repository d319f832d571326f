package main

import (
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
