// Package logfile points slog.Default at a file for a test of a host, so
// that the test reads the host's records without sharing memory with the
// goroutines of its servers.
package logfile

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// Capture makes slog.Default write, as text, to a file of t's until t
// ends, and returns a func that reads what was written so far.
func Capture(t testing.TB) func() string {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(f, nil)))
	t.Cleanup(func() { slog.SetDefault(old); f.Close() })
	return func() string {
		b, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
}
