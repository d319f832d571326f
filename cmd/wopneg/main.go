// Command wopneg runs OpenWOP v2 A2A/MCP version negotiations from the
// command line, for hosts in any language and for people trying the rules.
//
// Usage:
//
//	wopneg decide      read one JSON request on stdin, write the decision on stdout
//	wopneg demo        print the decision table of the built-in example facets
//	wopneg vectors     run the shipped test vectors through the library
//
// A decide request is
//
//	{"subject": {...v2 Subject...} | null,
//	 "facet": {"a2a": {...}} | {"mcp": {...}},
//	 "offer": {"peer": "https://peer.example", "requested": "1.1",
//	           "peerVersions": ["1.0", "1.1"], "counterOffer": false},
//	 "policy": {"denyDowngrade": false},
//	 "now": "2026-11-29T12:00:00Z"}
//
// and its answer is {outcome, version, reason, rule, status, error, event},
// with version, status and error only where they apply. decide exits 0 for
// every decision, refusals included, and 2 with one line on stderr when the
// request is malformed (bad JSON, an invalid facet or Subject).
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// maxRequest bounds what decide reads from stdin.
const maxRequest = 1 << 20

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "decide":
		return decide(stdin, stdout, stderr)
	case "demo":
		return demo(stdout, stderr)
	case "vectors":
		return vectors(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "wopneg: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage:
  wopneg decide      read one JSON request on stdin, write the decision on stdout
  wopneg demo        print the decision table of the built-in example facets
  wopneg vectors     run the shipped test vectors through the library (-v lists each)
`)
}

// fail writes err on one line, as scripts reading stderr expect.
func fail(stderr io.Writer, code int, err error) int {
	msg := strings.ReplaceAll(err.Error(), "\n", "; ")
	fmt.Fprintf(stderr, "wopneg: %s\n", msg)
	return code
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func readAll(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxRequest+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxRequest {
		return nil, errors.New("request is larger than 1 MiB")
	}
	return data, nil
}
