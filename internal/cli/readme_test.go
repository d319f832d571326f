package cli

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// readmeBlock is one fenced block of the README.
type readmeBlock struct{ lang, text string }

func readmeBlocks(t *testing.T) (string, []readmeBlock) {
	t.Helper()
	return docBlocks(t, "../../README.md")
}

// docBlocks returns the text of a Markdown document and its fenced blocks.
func docBlocks(t *testing.T, path string) (string, []readmeBlock) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []readmeBlock
	for _, m := range regexp.MustCompile("(?ms)^```([a-z]*)\n(.*?)^```\n").FindAllStringSubmatch(string(data), -1) {
		blocks = append(blocks, readmeBlock{m[1], m[2]})
	}
	return string(data), blocks
}

// shownOutput returns the block after the sh block that is command, which
// is what the README says the command prints.
func shownOutput(t *testing.T, blocks []readmeBlock, command string) string {
	t.Helper()
	for i, b := range blocks {
		if b.lang == "sh" && strings.TrimSpace(b.text) == command && i+1 < len(blocks) {
			return blocks[i+1].text
		}
	}
	t.Fatalf("the README has no sh block %q followed by its output", command)
	return ""
}

// TestReadme is the regression test of issue 9 item 9 (with item 8's
// decide example): a newcomer's first commands work from a clone and are
// the README's first block, the README says how to use the unpublished
// module (a replace or go work, the otel module's replace) and the go get
// line for later, and what docs/cli.md shows demo, decide, lint and
// migrate printing is what they print, as `go run` shows it.
func TestReadme(t *testing.T) {
	text, blocks := readmeBlocks(t)

	// The first block is the two commands a newcomer needs: the demo, and
	// the test command CI runs, as .ci/run runs it.
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	const testCommand = "go test -race -count=1 ./..."
	first := blocks[0]
	if first.lang != "sh" || !strings.Contains(first.text, "go run ./cmd/wopneg demo") || !strings.Contains(first.text, testCommand) {
		t.Errorf("the README's first block is not the two commands:\n%s", first.text)
	}
	if !strings.Contains(string(ci), "\n"+testCommand+"\n") {
		t.Errorf(".ci/run does not run %q, which the README says it does", testCommand)
	}
	if lines := strings.Split(text, "\n"); len(lines) > 300 || !strings.Contains(strings.Join(lines[:60], "\n"), "func host() http.Handler {") {
		t.Errorf("the README has %d lines (want at most 300), and its first 60 must hold the ten-line host", len(lines))
	}

	// What the commands print is shown in docs/cli.md.
	_, blocks = docBlocks(t, "../../docs/cli.md")
	at := strings.Index(text, "## Using it from your module")
	if at < 0 {
		t.Fatal("the README has no section on using the module from a clone")
	}
	onboarding := text[at:]
	for _, want := range []string{
		"go mod edit -replace github.com/wopneg/wopneg=../wopneg\n",
		"go work init . ../wopneg\n",
		"go get github.com/wopneg/wopneg@latest\n",
		"go mod edit -replace github.com/wopneg/wopneg/otel=../wopneg/otel\n",
	} {
		if !strings.Contains(onboarding, want) {
			t.Errorf("the README's onboarding lacks %q", want)
		}
	}
	if i := strings.Index(text, "\ngo get github.com/wopneg/wopneg"); i >= 0 && i < at {
		t.Error("the README tells a newcomer to go get the unpublished module before it says how to use a clone")
	}

	_, demoOut, _ := runCLI(t, "", "demo")
	if got := shownOutput(t, blocks, "go run ./cmd/wopneg demo"); got != demoOut {
		t.Errorf("the README's demo output differs from demo's:\n%s\nwant\n%s", got, demoOut)
	}

	doc := "internal/cli/testdata/discovery/v1-era.json"
	code, stdout, stderr := runCLI(t, "", "lint", "--now", "2026-11-29", "testdata/discovery/v1-era.json")
	want := fmt.Sprintf("%s%sexit status %d\n", stdout, stderr, code)
	if got := shownOutput(t, blocks, "go run ./cmd/wopneg lint --now 2026-11-29 "+doc); got != want {
		t.Errorf("the README's lint output differs:\n%s\nwant\n%s", got, want)
	}
	_, _, stderr = runCLI(t, "", "migrate", "--now", "2026-11-29", "testdata/discovery/v1-era.json")
	if got := shownOutput(t, blocks, "go run ./cmd/wopneg migrate --now 2026-11-29 "+doc+" > v2.json"); got != stderr {
		t.Errorf("the README's migrate output differs:\n%s\nwant\n%s", got, stderr)
	}

	bad, err := os.ReadFile("testdata/decide/four-violations.json")
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, string(bad), "decide")
	if got := shownOutput(t, blocks, "go run ./cmd/wopneg decide < internal/cli/testdata/decide/four-violations.json"); got != fmt.Sprintf("%sexit status %d\n", stderr, code) {
		t.Errorf("the README's malformed decide request's output differs:\n%s\nwant\n%sexit status %d", got, stderr, code)
	}

	for i, b := range blocks {
		cmd, ok := strings.CutSuffix(strings.TrimSpace(b.text), "| go run ./cmd/wopneg decide")
		if b.lang != "sh" || !ok {
			continue
		}
		request, ok := strings.CutPrefix(strings.TrimSpace(cmd), "echo '")
		request, ok2 := strings.CutSuffix(strings.TrimSpace(request), "'")
		if !ok || !ok2 || i+1 == len(blocks) {
			t.Fatalf("cannot read the decide example:\n%s", b.text)
		}
		code, stdout, stderr := runCLI(t, request, "decide")
		if code != 0 || stderr != "" || blocks[i+1].text != stdout {
			t.Errorf("the README's decide example: exit %d, stderr %q, shown\n%s\nprinted\n%s", code, stderr, blocks[i+1].text, stdout)
		}
		return
	}
	t.Error("the README has no decide example")
}
