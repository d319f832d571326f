package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestCount(t *testing.T) {
	names, err := count("testdata/src/p")
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range names {
		slices.Sort(ns)
	}
	want := map[string][]string{
		"testdata/src/p":     {"C", "F", "G", "G.N", "I", "I.Do", "T", "T.M", "V"},
		"testdata/src/p/sub": {"One"},
	}
	if len(names) != len(want) {
		t.Fatalf("packages = %v, want %v", names, want)
	}
	for p, w := range want {
		if !slices.Equal(names[p], w) {
			t.Errorf("%s: %v, want %v", p, names[p], w)
		}
	}
}

func TestCountRefusesBrokenGo(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "b.go"), []byte("package b; func ("), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := count(dir); err == nil {
		t.Fatal("a file that does not parse was counted")
	}
}
