// Package npmtest prepares the Node.js packages that tests of the examples
// run real SDKs from: the TypeScript MCP SDK and the A2A JS SDK, each
// pinned by the package-lock.json of its testdata folder.
package npmtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Node returns the node binary, with the packages of dir installed as its
// package-lock.json pins them (npm ci), unless pkg is already in dir's
// node_modules. Without node or npm, or when npm ci fails, the test is
// skipped, saying so, except in CI (CI set), where it fails: CI must run
// it.
func Node(t testing.TB, dir, pkg string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node is not installed")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err == nil {
		return node
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		missing(t, "npm is not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		missing(t, "npm ci in %s: %v\n%s", dir, err, out)
	}
	return node
}

func missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format+"; the test needs it", args...)
}
