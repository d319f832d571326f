package tenline_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// maxLines is the promise: every wopneg line of a host, beyond
// its function that says who the caller is.
const maxLines = 10

// wopnegCode matches a line that uses wopneg: its import path, one of
// its packages, or the facet the host declares.
var wopnegCode = regexp.MustCompile(`github\.com/wopneg/|\b(facets|negotiate|mcphttp|a2ahttp|events|policy)\.|\bfacet\b`)

// TestTenLines counts each host's wopneg lines (those that end in
// "// wopneg"), checks that no line using wopneg outside the caller
// function goes uncounted, and that the README shows the file as it is,
// with the count it says.
func TestTenLines(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"mcphost", "a2ahost"} {
		t.Run(dir, func(t *testing.T) {
			src, err := os.ReadFile(dir + "/main.go")
			if err != nil {
				t.Fatal(err)
			}
			counted, inCaller := 0, false
			for i, line := range strings.Split(string(src), "\n") {
				switch {
				case strings.HasPrefix(line, "func caller("):
					inCaller = true
				case inCaller && line == "}":
					inCaller = false
					continue
				}
				if strings.HasSuffix(line, "// wopneg") {
					counted++
				} else if !inCaller && !strings.HasPrefix(strings.TrimSpace(line), "//") && wopnegCode.MatchString(line) {
					t.Errorf("%s/main.go:%d uses wopneg but is not counted: %s", dir, i+1, line)
				}
			}
			t.Logf("%s: %d wopneg lines", dir, counted)
			if counted > maxLines || counted == 0 {
				t.Errorf("%s has %d wopneg lines, want 1 to %d", dir, counted, maxLines)
			}
			if claim := fmt.Sprintf("`examples/tenline/%s` (%d wopneg lines", dir, counted); !strings.Contains(string(readme), claim) {
				t.Errorf("README.md does not say %q", claim)
			}
			if !strings.Contains(string(readme), "```go\n"+string(src)+"```\n") {
				t.Errorf("README.md does not show %s/main.go as it is", dir)
			}
		})
	}
}
