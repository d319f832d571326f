package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"

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
   "rule": "input" | "floor" | "offered" | "common" | "authenticated" | "policy" | "accept",
   "counterOffered": true,            when the host answered with its own version
   "status": 400,                     when refused
   "error": {"error": ..., "message": ..., "details": {...}},  when refused
   "event": {...negotiation.decided payload...}}

Exit 0 for every decision, refusals included; 2 with one line on stderr,
naming the JSON path at fault, when the request is malformed.
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
	req, err := vec.DecodeRequest(data)
	if err != nil {
		return fail(stderr, 2, err)
	}
	if err := req.Validate(); err != nil {
		return fail(stderr, 2, err)
	}
	answer, _ := req.Decide(nil)
	if err := writeJSON(stdout, answer); err != nil {
		return fail(stderr, 1, err)
	}
	return 0
}
