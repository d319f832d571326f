package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/wopneg/wopneg/internal/strictjson"

	vec "github.com/wopneg/wopneg/internal/vectors"
)

// decideHelp is what `wopneg decide -h` prints: the shapes a host in
// another language needs to call it.
const decideHelp = `usage: wopneg decide < REQUEST.json

Reads one JSON request on stdin and writes the decision on stdout.

Request (keys are case-sensitive; unknown or repeated keys are refused):
  {"subject": {"issuer": ..., "subjectId": ..., "tenant": ..., "lane": ..., "kind": ...} | null,
   "facet":   {"a2a": {...}} | {"mcp": {...}} | both,
   "offer":   {"protocol": "a2a" | "mcp",        optional when the facet has one protocol
               "peer": "https://peer.example",    optional; needs an http(s) or ws(s) origin
               "requested": "1.1",                optional: the version the requesting side named
               "peerVersions": ["1.0", "1.1"],    absent: inbound, the peer speaks what it
                                                  requested (or preferred); [] speaks nothing
               "counterOffer": false},            true where the protocol allows one (MCP initialize)
   "policy":  {"denyDowngrade": false, "denyDowngradeTo": [], "distrustIssuers": [], "requireAudit": false},
   "now":     "2026-11-29T12:00:00Z" | "2026-11-29"}

Answer:
  {"outcome": "accepted" | "downgraded" | "refused",
   "version": "1.1",                  when not refused
   "reason": "ok" | "below-floor" | "unauthenticated" | "unsupported",
   "rule": the rule of the decision that settled it (README, "The decision"):
           "floor" (2) | "offered" (3) | "common" (4) | "authenticated" (5) | "policy" (6)
           | "accept" (7) | "input" (the request could not be decided on),
   "counterOffered": true,            when the host answered with its own version
   "status": 400,                     when refused
   "error": {"error": ..., "message": ..., "details": {...}},  when refused
   "event": {...negotiation.decided payload...}}

Exit 0 for every decision, refusals included; 2 when the request is
malformed, with one line on stderr for every problem found, each naming
the JSON path at fault. A facet's refreshedAt must lie in its refresh
window on now (at most 90 days old, at most a day ahead), as where a
host starts.
`

// decide answers one request read from stdin.
func decide(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("decide", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // -h prints the help on stdout, a mistake a pointer to it on stderr
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, decideHelp)
		return 0
	}
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("wopneg decide: takes no operands (the request is read from stdin), got %q", fs.Arg(0))
		fmt.Fprintln(stderr, err)
	}
	if err != nil {
		fmt.Fprintln(stderr, "usage: wopneg decide < REQUEST.json (wopneg decide -h shows the request and answer)")
		return 2
	}
	data, err := readInput("-", stdin)
	if err != nil {
		return fail(stderr, 2, err)
	}
	req, err := vec.ParseRequest(data)
	if problems, ok := errors.AsType[vec.RequestError](err); ok {
		for _, p := range problems {
			// A value of the wrong shape is named by its path, and found
			// at its byte.
			if e, ok := errors.AsType[*strictjson.Error](p.Err); ok && !strings.Contains(p.Message, "at byte") {
				p = &vec.Problem{Path: p.Path, Message: fmt.Sprintf("%s (at byte %d)", p.Message, e.Offset), Err: p.Err}
			}
			fail(stderr, 2, fmt.Errorf("request: %w", p))
		}
		return 2
	}
	if err != nil {
		return fail(stderr, 2, err)
	}
	answer, _ := req.Decide(nil)
	if err := writeJSON(stdout, answer); err != nil {
		return fail(stderr, 1, err)
	}
	return 0
}
