package cli

import (
	"os"
	"testing"
)

// BenchmarkParseTree measures reading the shipped v1-era document into
// the span tree lint and migrate share (through internal/strictjson).
func BenchmarkParseTree(b *testing.B) {
	data, err := os.ReadFile("testdata/discovery/v1-era.json")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseTree(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMigrate measures a whole migration of the v1-era document.
func BenchmarkMigrate(b *testing.B) {
	data, err := os.ReadFile("testdata/discovery/v1-era.json")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := migrateDocument(data); err != nil {
			b.Fatal(err)
		}
	}
}
