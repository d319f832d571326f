package events

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// releaseContexts are the hosts each code point is tried in: inside a
// left-to-right label, alone, as the last label, between Hebrew letters
// and after an Arabic one (the bidi rule), and before each joiner (the
// CONTEXTJ rules).
var releaseContexts = []string{
	"http://a%sb.example/",
	"http://%s.example/",
	"http://x.%s/",
	"http://\u05d0%s\u05d0.example/",
	"http://\u0628%s.example/",
	"http://a%s\u200cb.example/",
	"http://a%s\u200db.example/",
}

// TestOriginIsTheSameOnEveryGoRelease holds the supported Go releases to
// one reading of every host. x/net/idna's tables follow the Go release
// that builds it (Unicode 15.0 before Go 1.27, 17.0 from it), and a peer
// must have one digest whatever Go built its host. The test runs Origin
// over every code point of planes 0 to 3 and of the tags plane in each of
// releaseContexts, and compares a SHA-256 of the outcomes (the origin, or
// "refused": x/net/idna words its refusals by release) with
// testdata/origin-releases.sha256. CI runs it under Go 1.26 and Go 1.27,
// so both must give that digest.
//
// When a release moves the tables it fails. Then set
// WOPNEG_ORIGIN_OUTCOMES to a file name and run it under each release, diff
// the two files, and add the code points they disagree on to
// releaseDrift; that is how releaseDrift was found.
func TestOriginIsTheSameOnEveryGoRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Origin on 1.8 million hosts")
	}
	skipPerMutant(t, "the run over 1.8 million hosts")
	want, err := os.ReadFile("testdata/origin-releases.sha256")
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	out := io.Writer(h)
	if name := os.Getenv("WOPNEG_ORIGIN_OUTCOMES"); name != "" {
		f, err := os.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		defer func() {
			if err := w.Flush(); err != nil {
				t.Error(err)
			}
			if err := f.Close(); err != nil {
				t.Error(err)
			}
		}()
		out = io.MultiWriter(h, w)
	}
	var hosts, refused int
	for r := rune(0x80); r < 0xe1000; r++ {
		if r == 0x40000 {
			r = 0xe0000 // planes 4 to 13 have nothing assigned
		}
		if !utf8.ValidRune(r) {
			continue // the surrogates
		}
		for _, context := range releaseContexts {
			origin, err := Origin(fmt.Sprintf(context, string(r)))
			if err != nil {
				origin = "refused"
				refused++
			}
			fmt.Fprintf(out, "%U %q %s\n", r, context, origin)
			hosts++
		}
	}
	got := hex.EncodeToString(h.Sum(nil))
	t.Logf("%d hosts, %d refused: outcomes SHA-256 %s", hosts, refused, got)
	if got != strings.TrimSpace(string(want)) {
		t.Fatalf("the outcomes' SHA-256 is %s, testdata/origin-releases.sha256 says %s: this Go release reads some host otherwise (see the test's doc comment)", got, want)
	}
}

// skipPerMutant skips t, which costs seconds, when gremlins runs the
// package's tests once per mutant. A mutant that only t would kill is
// then counted alive, never hidden; CI runs t in full.
func skipPerMutant(t *testing.T, what string) {
	t.Helper()
	if strings.Contains(os.Getenv("GOTMPDIR"), "gremlins-") {
		t.Skip("under gremlins: " + what + " would run once per mutant")
	}
}
