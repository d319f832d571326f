package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/wopneg/wopneg/facets"
	vec "github.com/wopneg/wopneg/internal/vectors"
)

// lintRules are the rule ids lint reports, in the order of the table in
// the package documentation, which says what each means. They are stable:
// scripts and CI filter on them. Where package facets owns a rule, lint
// reports facets' own id: it maps facets.Violation, it does not re-check.
var lintRules = []string{
	"supported-transports", "grpc-block", "root-profiles", "legacy-profile", "legacy-version", "pattern", "date",
	"required", "type", "min-items", "duplicate", "duplicate-key", "unknown-field", "member",
	"floor-above-preferred", "profile-version", "range", "const", "enum", "uri",
	"until-forbidden", "until-required", "until-in-past", "refresh-stale", "refresh-future",
}

// finding is one line of lint's report.
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

// rootKeys are the root keys lint reads; the rest belong to families this
// library does not own.
var rootKeys = []string{"protocolVersions", "preferredVersion", "supportedTransports", "grpc", "profiles", "a2a", "mcp"}

// openwopVersion is the root protocolVersions pattern (no leading zeros).
var openwopVersion = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)

// lintDocument checks a discovery document at time now. It fails only
// when data is not JSON (a *notJSONError). A key given twice stops it
// with that one finding: the module's strict reader, as every strict
// reader, refuses the document.
func lintDocument(data []byte, now time.Time) (lintResult, error) {
	var res lintResult
	root, err := parseTree(data)
	var rk *repeatedKeyError
	if errors.As(err, &rk) {
		res.findings = []finding{{rk.path, "duplicate-key", fmt.Sprintf(
			"key %q appears more than once; strict readers refuse the document, so lint reads no further", rk.key)}}
		return res, nil
	}
	if err != nil {
		return res, err
	}
	add := func(path, rule, msg string) { res.findings = append(res.findings, finding{path, rule, msg}) }
	if root.kind != '{' {
		add("", "type", "the discovery document must be an object, not "+root.kindName())
		return res, nil
	}
	first := map[string]*jnode{}
	passed := map[string]bool{}
	for _, m := range root.members {
		if !slices.Contains(rootKeys, m.key) {
			if !passed[m.key] {
				passed[m.key] = true
				res.passed = append(res.passed, m.key)
			}
			continue
		}
		first[m.key] = m.value
		switch m.key {
		case "supportedTransports":
			add(m.key, "supported-transports", "supportedTransports was removed by RFC 0175: v2 does not advertise transports")
		case "grpc":
			add(m.key, "grpc-block", "the grpc block was removed by RFC 0175: v2 does not advertise transports")
		case "profiles":
			add(m.key, "root-profiles", "root profiles were removed by RFC 0175: profiles live in a2a.profiles and mcp.profiles")
		}
	}
	res.findings = append(res.findings, rootVersions(first["protocolVersions"], first["preferredVersion"])...)
	if first["a2a"] == nil && first["mcp"] == nil {
		res.noFacets = true
		res.sort(root)
		return res, nil
	}
	res.findings = append(res.findings, recordFindings(data, first, now)...)
	res.sort(root)
	return res, nil
}

// sort orders findings as the document orders its root keys, the
// document itself and required keys it lacks first; within one key they
// keep the order they were found in (facets orders a record's by field,
// then come the clock's rules).
func (res *lintResult) sort(root *jnode) {
	at := make(map[string]int, len(root.members))
	for i, m := range slices.Backward(root.members) {
		at[m.key] = i
	}
	rank := func(f finding) int {
		if i, ok := at[topKey(f.Path)]; ok && f.Path != "" {
			return i
		}
		return -1
	}
	slices.SortStableFunc(res.findings, func(a, b finding) int { return rank(a) - rank(b) })
}

// rootVersions checks the OpenWOP protocolVersions and preferredVersion
// of the root (capabilities.schema.json: both required, the list
// non-empty and unique, each a version without leading zeros) and, as
// every conformance run does, that preferredVersion is listed.
func rootVersions(list, pref *jnode) []finding {
	var fs []finding
	add := func(path, rule, msg string) { fs = append(fs, finding{path, rule, msg}) }
	var versions []string
	listOK := false
	if list == nil {
		add("protocolVersions", "required", "protocolVersions is required")
	} else if list.kind != '[' {
		add("protocolVersions", "type", "must be an array of strings, not "+list.kindName())
	} else if len(list.elems) == 0 {
		add("protocolVersions", "min-items", "protocolVersions must list at least one entry")
	} else {
		listOK = true
		firstAt := map[string]int{}
		for i, e := range list.elems {
			path := fmt.Sprintf("protocolVersions[%d]", i)
			if e.kind != '"' {
				listOK = false
				add(path, "type", "must be a string, not "+e.kindName())
			} else if !openwopVersion.MatchString(e.str) {
				listOK = false
				add(path, "pattern", fmt.Sprintf("%q is not an OpenWOP version \"major.minor\" (no leading zeros)", e.str))
			} else if j, seen := firstAt[e.str]; seen {
				add(path, "duplicate", fmt.Sprintf("%q is listed twice (first at protocolVersions[%d])", e.str, j))
			} else {
				firstAt[e.str] = i
				versions = append(versions, e.str)
			}
		}
	}
	if pref == nil {
		add("preferredVersion", "required", "preferredVersion is required")
	} else if pref.kind != '"' {
		add("preferredVersion", "type", "must be a string, not "+pref.kindName())
	} else if !openwopVersion.MatchString(pref.str) {
		add("preferredVersion", "pattern", fmt.Sprintf("%q is not an OpenWOP version \"major.minor\" (no leading zeros)", pref.str))
	} else if listOK && !slices.Contains(versions, pref.str) {
		add("preferredVersion", "member", fmt.Sprintf("%q is not one of the protocolVersions", pref.str))
	}
	return fs
}

// recordFindings hands the a2a and mcp records to the facets package,
// which owns their rules, and adds the rules that need a clock. Paths
// come back rooted at the document, as the records sit at its root.
func recordFindings(data []byte, first map[string]*jnode, now time.Time) []finding {
	var sub bytes.Buffer
	sub.WriteByte('{')
	for _, key := range []string{"a2a", "mcp"} {
		if n := first[key]; n != nil {
			if sub.Len() > 1 {
				sub.WriteByte(',')
			}
			fmt.Fprintf(&sub, "%q:", key)
			sub.Write(data[n.start:n.end])
		}
	}
	sub.WriteByte('}')
	set, err := facets.DecodeRecord(sub.Bytes())
	var fs []finding
	var ve *facets.ValidationError
	if errors.As(err, &ve) {
		for _, v := range ve.Violations {
			rule := v.Rule
			if rule == "unknown-field" && (v.Path == "a2a.supportedTransports" || v.Path == "mcp.supportedTransports") {
				rule = "supported-transports"
			}
			fs = append(fs, finding{v.Path, rule, v.Message})
		}
	}
	fs = append(fs, legacyVersions(first)...)
	for _, p := range set.Protocols() {
		adv, _ := set.Lookup(p)
		var re *facets.RefreshError
		if errors.As(facets.CheckRefresh(adv, now), &re) {
			switch {
			case errors.Is(re.Err, facets.ErrRefreshStale):
				fs = append(fs, finding{string(p) + ".refreshedAt", "refresh-stale", fmt.Sprintf(
					"refreshedAt %s is %d days old: the 90-day refresh window closed at %s (RFC 0175 §D.4)",
					adv.RefreshedAt, int(re.Age/(24*time.Hour)), (now.Add(-re.Age + facets.RefreshWindow)).UTC().Format(time.RFC3339))})
			case errors.Is(re.Err, facets.ErrRefreshFuture):
				fs = append(fs, finding{string(p) + ".refreshedAt", "refresh-future", fmt.Sprintf(
					"refreshedAt %s is more than one day after now (%s)", adv.RefreshedAt, clockText(now))})
			}
		}
		var r facets.Record
		if p == facets.ProtocolA2A {
			r = set.A2A.Record
		} else {
			r = set.MCP.Record
		}
		var until *facets.ValidationError
		if errors.As(r.CheckUntil(p, now), &until) {
			for _, v := range until.Violations {
				fs = append(fs, finding{v.Path, v.Rule, v.Message})
			}
		}
	}
	return fs
}

// legacyVersions reports every place a record names its family's legacy
// version (A2A 0.3, MCP 2025-06-18): in the offered list, as the floor or
// the preferred version, and as a profile id ("a2a-0.3"). RFC 0175 removed
// it and migrate's row C8.1 rewrites each of these places (or, for the
// preferred version, refuses), so lint reports what migrate changes.
func legacyVersions(first map[string]*jnode) []finding {
	var fs []finding
	for _, row := range legacyRows {
		rec := first[row.family]
		if rec == nil {
			continue
		}
		legacy := fmt.Sprintf("the legacy %s %s %q RFC 0175 removed", row.family, row.noun, row.version)
		add := func(path, msg string) {
			fs = append(fs, finding{row.family + "." + path, "legacy-version", msg})
		}
		for _, m := range rec.members {
			switch m.key {
			case row.list:
				for i, e := range m.value.elems {
					if e.isString(row.version) {
						add(fmt.Sprintf("%s[%d]", m.key, i), legacy+" is offered; migrate drops it (C8.1)")
					}
				}
			case row.floor:
				if m.value.isString(row.version) {
					add(m.key, "the floor is "+legacy+"; migrate moves it to the lowest "+row.noun+" still offered (C8.1)")
				}
			case "preferredVersion":
				if m.value.isString(row.version) {
					add(m.key, "the preferred "+row.noun+" is "+legacy+"; choose a v2 one (migrate cannot)")
				}
			case "profiles":
				for i, e := range m.value.elems {
					if e.isString(row.versionProfile()) {
						add(fmt.Sprintf("%s[%d]", m.key, i), fmt.Sprintf("profile %q names %s; migrate drops it (C8.1)", e.str, legacy))
					}
				}
			}
		}
	}
	return fs
}

// clockText shows now as a date when it is a midnight UTC, as --now
// DATE gives, and as an RFC 3339 time otherwise.
func clockText(now time.Time) string {
	now = now.UTC()
	if now.Equal(now.Truncate(24 * time.Hour)) {
		return now.Format(time.DateOnly)
	}
	return now.Format(time.RFC3339)
}

// topKey is the root key a path starts with.
func topKey(path string) string {
	if i := strings.IndexAny(path, ".["); i >= 0 {
		return path[:i]
	}
	return path
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
