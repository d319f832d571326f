package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/wopneg/wopneg/facets"
	vec "github.com/wopneg/wopneg/internal/vectors"
)

// lintRules are the rule ids lint reports, in the order of the table in
// the command's documentation (cmd/wopneg), which says what each means.
// They are stable: scripts and CI filter on them. They are the rules of
// facets.Lint, which lint reports as they are.
var lintRules = []string{
	"supported-transports", "grpc-block", "root-profiles", "legacy-profile", "legacy-version", "pattern", "date",
	"required", "type", "min-items", "duplicate", "duplicate-key", "unknown-field", "member",
	"floor-above-preferred", "profile-version", "range", "const", "enum", "uri",
	"until-forbidden", "until-required", "until-in-past", "refresh-stale", "refresh-future",
}

// finding is one line of lint's report: a facets.Violation, with the
// JSON names --json prints.
type finding struct {
	Path    string `json:"path"`
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

// String renders f as "PATH: RULE: message"; the document itself is
// "(root)".
func (f finding) String() string {
	path := f.Path
	if path == "" {
		path = "(root)"
	}
	return path + ": " + f.Rule + ": " + f.Message
}

// lintResult is what linting one document found.
type lintResult struct {
	findings []finding
	// passed are the root keys of families this library does not own.
	passed []string
	// noFacets is set when the document has neither a2a nor mcp.
	noFacets bool
}

// ownedKeys are the root keys facets.Lint reads; the rest belong to
// families this library does not own.
var ownedKeys = []string{"protocolVersions", "preferredVersion", "supportedTransports", "grpc", "profiles",
	"conformance", "hostEvents", "a2a", "mcp"}

// lintDocument checks a discovery document at time now with facets.Lint,
// and notes what it passed over. It fails only when data is not JSON (a
// *notJSONError). A key given twice is the one finding: the module's
// strict reader, as every strict reader, refuses the document.
func lintDocument(data []byte, now time.Time) (lintResult, error) {
	var res lintResult
	root, err := parseTree(data)
	var rk *repeatedKeyError
	if err != nil && !errors.As(err, &rk) {
		return res, err
	}
	for _, v := range facets.Lint(data, now) {
		res.findings = append(res.findings, finding{v.Path, v.Rule, v.Message})
	}
	if err != nil || root.kind != '{' {
		return res, nil
	}
	facetsSeen := false
	for _, m := range root.members {
		facetsSeen = facetsSeen || m.key == "a2a" || m.key == "mcp"
		if !slices.Contains(ownedKeys, m.key) && !slices.Contains(res.passed, m.key) {
			res.passed = append(res.passed, m.key)
		}
	}
	res.noFacets = !facetsSeen
	return res, nil
}

// lint is the lint command.
func lint(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lint", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the findings as a JSON array of {path, rule, message}")
	nowFlag := fs.String("now", "", "the clock for the refresh SLA and until, as YYYY-MM-DD or RFC 3339 (default: now)")
	data, now, code, ok := readDocument(fs, "lint [--json] [--now DATE] FILE|-", args, nowFlag, stdin, stderr)
	if !ok {
		return code
	}
	res, err := lintDocument(data, now)
	if err != nil {
		return failCmd(stderr, "lint", 2, err)
	}
	if *asJSON {
		fs := res.findings
		if fs == nil {
			fs = []finding{}
		}
		if err := writeJSON(stdout, fs); err != nil {
			return failCmd(stderr, "lint", 2, err)
		}
	} else {
		for _, f := range res.findings {
			fmt.Fprintln(stdout, f)
		}
	}
	notes(stderr, "lint", res)
	switch n := len(res.findings); n {
	case 0:
		fmt.Fprintln(stderr, "wopneg lint: no findings")
		return 0
	case 1:
		fmt.Fprintln(stderr, "wopneg lint: 1 finding")
	default:
		fmt.Fprintf(stderr, "wopneg lint: %d findings\n", n)
	}
	return 1
}

// notes says, once, what lint passed over.
func notes(w io.Writer, cmd string, res lintResult) {
	if len(res.passed) > 0 {
		fmt.Fprintf(w, "wopneg %s: note: passed over root keys of families this tool does not check: %s\n",
			cmd, strings.Join(res.passed, ", "))
	}
	if res.noFacets {
		fmt.Fprintf(w, "wopneg %s: note: the document advertises neither a2a nor mcp\n", cmd)
	}
}

// operand parses flags wherever they stand among args, as people type
// them ("lint FILE --json"), and returns the one operand, FILE or "-".
// readDocument parses a document command's arguments with fs, whose --now
// flag is nowFlag, and reads the document it names. When ok is false the
// command stops with exit code code, having said why (or printed its
// usage, for -help) on stderr.
func readDocument(fs *flag.FlagSet, synopsis string, args []string, nowFlag *string, stdin io.Reader, stderr io.Writer) (data []byte, now time.Time, code int, ok bool) {
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: wopneg "+synopsis)
		fs.PrintDefaults()
	}
	name, err := operand(fs, args)
	if err != nil {
		return nil, time.Time{}, usageError(fs, err), false
	}
	if now, err = parseNow(*nowFlag); err != nil {
		return nil, time.Time{}, usageError(fs, err), false
	}
	if data, err = readInput(name, stdin); err != nil {
		return nil, time.Time{}, failCmd(stderr, fs.Name(), 2, err), false
	}
	return data, now, 0, true
}

func operand(fs *flag.FlagSet, args []string) (string, error) {
	var operands []string
	for {
		if err := fs.Parse(args); err != nil {
			return "", flagError{err}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			operands = append(operands, rest...)
			break
		}
		operands = append(operands, rest[0])
		args = rest[1:]
	}
	if len(operands) != 1 {
		return "", fmt.Errorf("want one FILE (or - for stdin), got %d", len(operands))
	}
	return operands[0], nil
}

// flagError is an error the flag package has already printed, with the
// usage.
type flagError struct{ err error }

func (e flagError) Error() string { return e.err.Error() }

// usageError reports bad arguments with exit code 2; -h is not an error.
func usageError(fs *flag.FlagSet, err error) int {
	var fe flagError
	switch {
	case errors.As(err, &fe) && errors.Is(fe.err, flag.ErrHelp):
		return 0
	case errors.As(err, &fe):
		return 2
	}
	fmt.Fprintf(fs.Output(), "wopneg %s: %v\n", fs.Name(), err)
	fs.Usage()
	return 2
}

// parseNow reads --now: empty for the wall clock, a full-date for its
// midnight UTC, or an RFC 3339 timestamp.
func parseNow(s string) (time.Time, error) {
	if s == "" {
		return time.Now(), nil
	}
	t, err := vec.ParseClock(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--now %w", err)
	}
	return t, nil
}

// readInput reads FILE, or stdin for "-", up to 1 MiB.
func readInput(name string, stdin io.Reader) ([]byte, error) {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxRequest+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxRequest {
		return nil, fmt.Errorf("%s is larger than 1 MiB", inputName(name))
	}
	return data, nil
}

func inputName(name string) string {
	if name == "-" {
		return "stdin"
	}
	return name
}
