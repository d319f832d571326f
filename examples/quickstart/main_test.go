package main

import (
	"bytes"
	"strings"
	"testing"
)

// want is the whole output of run. The clock is fixed (the Refresher's
// too, so refreshedAt is the clock's day, no later than the embedded
// list's takenAt) and the peer digest is the SHA-256 of
// "https://peer.example", so every byte is deterministic.
const want = `0. facets checked against upstream: refreshedAt a2a 2026-11-29, mcp 2026-11-29
   mcp.revisions[0] [superseded]: "2025-06-18" is superseded upstream by "2025-11-25" but still published: the check passes
1. authenticated caller, MCP peer speaks only 2025-11-25
   outcome: downgraded mcp 2025-11-25 (reason ok, rule accept)
   negotiation.decided: {"protocol":"mcp","outcome":"accepted","version":"2025-11-25","reason":"ok","floor":"2025-11-25","peerDigest":"3a61b99132bfdfa2ce5f773d8dc89d8246bfe6b266791549de14a6692d1bb1e1","at":"2026-11-29T12:00:00Z"}
2. anonymous caller, MCP client requests 2025-11-25
   outcome: refused mcp (reason unauthenticated, rule authenticated)
   negotiation.decided: {"protocol":"mcp","outcome":"refused","requested":"2025-11-25","reason":"unauthenticated","floor":"2025-11-25","at":"2026-11-29T12:00:00Z"}
   HTTP 400: {"error":"interop_version_unsupported","message":"mcp negotiation refused: unauthenticated","details":{"protocol":"mcp","reason":"unauthenticated","requested":"2025-11-25","supported":["2026-07-28"]}}
3. authenticated caller, MCP client requests 2025-06-18
   outcome: refused mcp (reason below-floor, rule floor)
   negotiation.decided: {"protocol":"mcp","outcome":"refused","requested":"2025-06-18","reason":"below-floor","floor":"2025-11-25","at":"2026-11-29T12:00:00Z"}
   HTTP 400: {"error":"interop_version_unsupported","message":"mcp negotiation refused: below-floor","details":{"protocol":"mcp","reason":"below-floor","requested":"2025-06-18","supported":["2025-11-25","2026-07-28"]}}
`

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatalf("run: %v", err)
	}
	if got := out.String(); got != want {
		gotLines, wantLines := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := range max(len(gotLines), len(wantLines)) {
			var g, w string
			if i < len(gotLines) {
				g = gotLines[i]
			}
			if i < len(wantLines) {
				w = wantLines[i]
			}
			if g != w {
				t.Errorf("line %d:\n got: %q\nwant: %q", i+1, g, w)
			}
		}
		t.Fatalf("run printed\n%s\nwant\n%s", got, want)
	}
}

// TestRunTwice checks that the output does not depend on state left over
// from an earlier run, such as a warm digest cache.
func TestRunTwice(t *testing.T) {
	var a, b bytes.Buffer
	if err := run(&a); err != nil {
		t.Fatal(err)
	}
	if err := run(&b); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Fatalf("second run differs:\n%s\nfirst:\n%s", b.String(), a.String())
	}
}
