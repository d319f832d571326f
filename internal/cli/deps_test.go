package cli

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLinksNoTesting checks that the command, cmd/wopneg, does not link
// the testing package: the vector and request formats it shares with
// negotiate/negotiatetest live in internal/vectors, which imports no
// testing, so a test kit's flags never reach the binary.
func TestLinksNoTesting(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goCmd, "list", "-deps", "github.com/wopneg/wopneg/cmd/wopneg").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, want := range []string{"github.com/wopneg/wopneg/internal/cli", "github.com/wopneg/wopneg/internal/vectors"} {
		if !slices.Contains(deps, want) {
			t.Fatalf("go list -deps does not list %s, so it did not list the command:\n%s", want, out)
		}
	}
	for _, banned := range []string{"testing", "github.com/wopneg/wopneg/negotiate/negotiatetest"} {
		if slices.Contains(deps, banned) {
			t.Errorf("wopneg links %s", banned)
		}
	}
}
