// Package cli is the wopneg command (cmd/wopneg, whose documentation
// describes the subcommands) without the process: Main takes the arguments
// and the standard streams and returns the exit code.
package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// maxRequest bounds what decide, lint and migrate read.
const maxRequest = 1 << 20

// Main runs the wopneg command line args (without the program name), reading
// stdin and writing stdout and stderr, and returns the exit code each
// subcommand documents; no arguments or an unknown command print the usage
// on stderr and return 2.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "decide":
		return decide(args[1:], stdin, stdout, stderr)
	case "demo":
		return demo(stdout, stderr)
	case "vectors":
		return vectors(args[1:], stdout, stderr)
	case "lint":
		return lint(args[1:], stdin, stdout, stderr)
	case "migrate":
		return migrateCmd(args[1:], stdin, stdout, stderr)
	case "digest":
		return digest(args[1:], stdin, stdout, stderr)
	case "conform":
		return conformCmd(args[1:], stdout, stderr)
	case "report":
		return reportCmd(args[1:], stdin, stdout, stderr)
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
  wopneg decide      read one JSON request on stdin, write the decision on stdout (-h: its shape)
  wopneg demo        print the decision table of the built-in example facets
  wopneg vectors     run the shipped test vectors through the library (-v lists each)
  wopneg lint [--json] [--now DATE] FILE|-
                     report every violation in a v2 discovery document
  wopneg migrate [--now DATE] FILE|-
                     rewrite a v1-era discovery document as v2 (RFC 0175 C8.1–C8.3)
  wopneg digest [URL...]
                     print "<peer digest>  <origin>" per URL (or stdin line)
  wopneg conform [--json] [--token BEARER] [--now DATE] BASEURL
                     run the OpenWOP v2 interop conformance scenarios against a running host
  wopneg report [--json] [--period day|week|month] [--floor [PROTO=]VERSION]... [--drop [PROTO=]VERSION]...
                [--names FILE] [FILE|-]...
                     count a record of negotiation.decided JSON lines; what a floor or drop would refuse
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
