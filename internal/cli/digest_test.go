package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/events"
)

// TestDigestGolden is item 8's regression test: wopneg digest over the
// lines of testdata/digest/input.txt prints testdata/digest/stdout.golden
// exactly, and exits 1 because some inputs have no origin.
func TestDigestGolden(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "digest", "input.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "digest", "stdout.golden"))
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, string(in), "digest")
	if code != 1 || stdout != string(want) || stderr != "" {
		t.Errorf("wopneg digest < input.txt: exit %d, stderr %q, stdout\n%s\nwant exit 1, no stderr, stdout\n%s", code, stderr, stdout, want)
	}
}

// TestDigestLinesAreTheLibrarysDigests checks every line against
// events.PeerDigest and events.Origin, so the golden file cannot hold a
// digest the library would not give.
func TestDigestLinesAreTheLibrarysDigests(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "digest", "input.txt"))
	if err != nil {
		t.Fatal(err)
	}
	inputs := strings.Split(strings.TrimSuffix(string(in), "\n"), "\n")
	_, stdout, _ := runCLI(t, "", append([]string{"digest"}, inputs...)...)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != len(inputs) {
		t.Fatalf("%d lines for %d inputs:\n%s", len(lines), len(inputs), stdout)
	}
	for i, u := range inputs {
		d, err := events.PeerDigest(u)
		o, _ := events.Origin(u)
		want := d + "  " + o
		if err != nil {
			want = "error: " + strings.TrimPrefix(err.Error(), "events: ")
		}
		if lines[i] != want {
			t.Errorf("line %d for %q = %q, want %q", i+1, u, lines[i], want)
		}
	}
}

func TestDigestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name, stdin  string
		args         []string
		code         int
		stdout       string
		stderrPrefix string
	}{
		{"all accepted", "", []string{"https://peer.example", "http://peer.example:8080/x"}, 0,
			"3a61b99132bfdfa2ce5f773d8dc89d8246bfe6b266791549de14a6692d1bb1e1  https://peer.example\n" +
				"6c368307ae8ec2178eb396986edc2248a4a8f931812785a535736e1704b958ec  http://peer.example:8080\n", ""},
		{"arguments, stdin ignored", "ftp://x\n", []string{"https://peer.example"}, 0,
			"3a61b99132bfdfa2ce5f773d8dc89d8246bfe6b266791549de14a6692d1bb1e1  https://peer.example\n", ""},
		{"one refused", "", []string{"mailto:a@b"}, 1, "error: peer: \"mailto:a@b\": scheme \"mailto\" has no origin (want http, https, ws or wss)\n", ""},
		{"stdin, CRLF and no final newline", "https://peer.example\r\nhttps://peer.example", nil, 0,
			strings.Repeat("3a61b99132bfdfa2ce5f773d8dc89d8246bfe6b266791549de14a6692d1bb1e1  https://peer.example\n", 2), ""},
		{"empty stdin", "", nil, 0, "", ""},
		{"line over 1 MiB", "https://a/" + strings.Repeat("x", maxRequest), nil, 2, "", "wopneg: digest: reading stdin: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.stdin, append([]string{"digest"}, tc.args...)...)
			if code != tc.code || stdout != tc.stdout || !strings.HasPrefix(stderr, tc.stderrPrefix) || (tc.stderrPrefix == "") != (stderr == "") {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr starting %q", code, stdout, stderr, tc.code, tc.stdout, tc.stderrPrefix)
			}
		})
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestDigestReportsAFailedWrite(t *testing.T) {
	var stderr strings.Builder
	if code := digest([]string{"https://peer.example"}, strings.NewReader(""), failingWriter{}, &stderr); code != 2 || !strings.Contains(stderr.String(), "file already closed") {
		t.Errorf("digest to a failing stdout: exit %d, stderr %q; want exit 2 naming the error", code, stderr.String())
	}
}
