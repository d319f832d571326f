package tenline_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// maxLines is the promise: every wopneg line of a host, beyond its
// function that says who the caller is, ten for a host that takes the
// defaults and a dozen for one past them (its own sink, OpenTelemetry,
// RequireAudit).
const maxLines = 12

// wopnegCode matches a line that uses wopneg: its import path, one of
// its packages, or the facet the host declares.
var wopnegCode = regexp.MustCompile(`github\.com/wopneg/|\b(facets|negotiate|mcphttp|a2ahttp|events|policy|wopnegotel)\.|\bfacet\b`)

// hosts are the hosts the test counts, each with the document that shows
// it as it is and says its count.
var hosts = map[string]string{
	"mcphost":   "../../README.md",
	"a2ahost":   "../README.md",
	"mcpaudit":  "../../README.md",
	"a2aotel":   "../README.md",
	"a2alegacy": "../README.md",
}

// TestTenLines counts each host's wopneg lines (those that end in
// "// wopneg"), checks that no line using wopneg outside the caller
// function goes uncounted, and that its document (README.md or
// examples/README.md) shows the file as it is, with the count it says.
func TestTenLines(t *testing.T) {
	for dir, doc := range hosts {
		t.Run(dir, func(t *testing.T) {
			shown, err := os.ReadFile(doc)
			if err != nil {
				t.Fatal(err)
			}
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
			if claim := fmt.Sprintf("`examples/tenline/%s` (%d wopneg lines", dir, counted); !strings.Contains(string(shown), claim) {
				t.Errorf("%s does not say %q", doc, claim)
			}
			if !strings.Contains(string(shown), "```go\n"+string(src)+"```\n") {
				t.Errorf("%s does not show %s/main.go as it is", doc, dir)
			}
		})
	}
}
