package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/wopneg/wopneg/facets"
)

// legacyRow is what codemod row C8.1 removes from one family.
type legacyRow struct {
	family     string // the record's root key
	protocol   facets.Protocol
	list       string // the offered list's key
	floor      string // the floor's key
	noun       string // "version" or "revision"
	version    string // the legacy version
	profile    string // the legacy profile id
	profilePfx string // what every profile id of the family starts with
}

// versionProfile is the profile id of the legacy version ("a2a-0.3"):
// not a legacy id by its name, but it names the version C8.1 removes, so
// it goes with it.
func (r legacyRow) versionProfile() string { return r.profilePfx + r.version }

var legacyRows = []legacyRow{
	{"a2a", facets.ProtocolA2A, "versions", "minimumVersion", "version", "0.3", "a2a-0.3-legacy", "a2a-"},
	{"mcp", facets.ProtocolMCP, "revisions", "minimumRevision", "revision", "2025-06-18", "mcp-2025-06-18-legacy", "mcp-"},
}

// change is one line of migrate's report.
type change struct {
	pos  int // where in the input, for ordering
	path string
	row  string // the codemod row: C8.1, C8.2, C8.3, or no-root-profiles
	what string
}

func (c change) String() string { return c.path + ": " + c.row + ": " + c.what }

// refusedError is a migration that would have to guess; it lists every
// reason.
type refusedError struct{ reasons []string }

func (e *refusedError) Error() string { return strings.Join(e.reasons, "; ") }

// errNotObject is a JSON document whose root is not an object: there is
// no discovery document to migrate.
var errNotObject = errors.New("the document is not a JSON object, so not a discovery document")

// migration collects the edits and the report of one migrate run.
type migration struct {
	data     []byte
	edits    []edit
	changes  []change
	refusals []string
	// kept are the profile ids each family still lists after migration.
	kept map[string]map[string]bool
}

func (m *migration) refuse(format string, args ...any) {
	m.refusals = append(m.refusals, fmt.Sprintf(format, args...))
}

func (m *migration) changed(pos int, path, row, format string, args ...any) {
	m.changes = append(m.changes, change{pos, path, row, fmt.Sprintf(format, args...)})
}

// migrateDocument rewrites a v1-era discovery document as v2 by the
// codemod rows C8.1–C8.3 of openwop.codemod.discovery-document-v2,
// splicing the source so that everything it does not change is kept byte
// for byte. It fails with a *notJSONError, errNotObject or a
// *refusedError.
func migrateDocument(data []byte) ([]byte, []change, error) {
	root, err := parseTree(data)
	var rk *repeatedKeyError
	if errors.As(err, &rk) {
		return nil, nil, &refusedError{[]string{rk.Error() + "; migrate cannot tell which one is meant, and strict readers refuse the document"}}
	}
	if err != nil {
		return nil, nil, err
	}
	if root.kind != '{' {
		return nil, nil, errNotObject
	}
	m := &migration{data: data, kept: map[string]map[string]bool{"a2a": {}, "mcp": {}}}
	var drop []int
	for i, mem := range root.members {
		switch mem.key {
		case "supportedTransports":
			drop = append(drop, i)
			m.changed(mem.keyStart, mem.key, "C8.2", "removed supportedTransports; v2 does not advertise transports")
		case "grpc":
			drop = append(drop, i)
			m.changed(mem.keyStart, mem.key, "C8.3", "removed the grpc block; v2 does not advertise transports")
		}
	}
	for _, row := range legacyRows {
		if rec := root.member(row.family); rec != nil && rec.kind == '{' {
			m.record(row, rec)
		}
	}
	for i, mem := range root.members {
		if mem.key == "profiles" && m.rootProfilesRedundant(mem.value) {
			drop = append(drop, i)
			m.changed(mem.keyStart, mem.key, "no-root-profiles",
				"removed the root profiles list; every id in it is legacy or listed in a2a.profiles / mcp.profiles")
		}
	}
	if len(m.refusals) > 0 {
		return nil, nil, &refusedError{m.refusals}
	}
	slices.Sort(drop)
	m.edits = append(m.edits, removeItems(root, drop)...)
	out, err := splice(data, m.edits)
	if err == nil && !wellFormed(out) {
		err = errors.New("internal error: the migrated document is not JSON")
	}
	if err != nil {
		return nil, nil, err
	}
	slices.SortStableFunc(m.changes, func(a, b change) int { return a.pos - b.pos })
	return out, m.changes, nil
}

// record applies C8.1 and C8.2 to one a2a or mcp record.
func (m *migration) record(row legacyRow, rec *jnode) {
	at := row.family + "."
	pref, list, floor, profiles := rec.member("preferredVersion"), rec.member(row.list), rec.member(row.floor), rec.member("profiles")
	if pref != nil && pref.isString(row.version) {
		m.refuse("%spreferredVersion is %q, the legacy %s RFC 0175 removes: choose a v2 preferred %s (and floor) first",
			at, row.version, row.noun, row.noun)
		return
	}

	var drop []int
	for i, mem := range rec.members {
		if mem.key == "supportedTransports" {
			drop = append(drop, i)
			m.changed(mem.keyStart, at+mem.key, "C8.2", "removed supportedTransports; v2 does not advertise transports")
		}
	}
	m.edits = append(m.edits, removeItems(rec, drop)...)

	if profiles != nil && profiles.kind == '[' {
		var gone []int
		for i, e := range profiles.elems {
			if e.isString(row.profile) {
				gone = append(gone, i)
				m.changed(e.start, fmt.Sprintf("%sprofiles[%d]", at, i), "C8.1", "removed the legacy profile %q", row.profile)
			} else if e.isString(row.versionProfile()) {
				gone = append(gone, i)
				m.changed(e.start, fmt.Sprintf("%sprofiles[%d]", at, i), "C8.1", "removed the profile %q of the legacy %s", e.str, row.noun)
			} else if e.kind == '"' {
				m.kept[row.family][e.str] = true
			}
		}
		m.edits = append(m.edits, removeItems(profiles, gone)...)
	}

	var remaining []*jnode
	if list != nil && list.kind == '[' {
		var gone []int
		for i, e := range list.elems {
			if e.isString(row.version) {
				gone = append(gone, i)
				m.changed(e.start, fmt.Sprintf("%s%s[%d]", at, row.list, i), "C8.1", "removed the legacy %s %q", row.noun, row.version)
			} else {
				remaining = append(remaining, e)
			}
		}
		if len(gone) > 0 && len(remaining) == 0 {
			m.refuse("removing the legacy %s %q would leave %s%s empty: offer a v2 %s first", row.noun, row.version, at, row.list, row.noun)
			return
		}
		m.edits = append(m.edits, removeItems(list, gone)...)
	}

	if floor != nil && floor.isString(row.version) {
		var lowest facets.Version
		found := false
		for _, e := range remaining {
			if v, err := facets.ParseVersion(row.protocol, e.str); e.kind == '"' && err == nil &&
				(!found || v.Compare(lowest) < 0) {
				lowest, found = v, true
			}
		}
		if !found {
			m.refuse("%s%s is the legacy %s %q and %s%s offers no other %s to move it to",
				at, row.floor, row.noun, row.version, at, row.list, row.noun)
			return
		}
		quoted, _ := json.Marshal(lowest.String())
		m.edits = append(m.edits, edit{floor.start, floor.end, string(quoted)})
		m.changed(floor.start, at+row.floor, "C8.1", "moved the floor from %q to %q, the lowest %s still offered",
			row.version, lowest.String(), row.noun)
	}
}

// rootProfilesRedundant reports whether dropping a root profiles list
// loses nothing: every id in it is a legacy id C8.1 removes, the profile
// of a legacy version, or is listed
// in its family's profiles after migration. Anything else is for a person
// to move, and lint goes on reporting it.
func (m *migration) rootProfilesRedundant(n *jnode) bool {
	if n.kind != '[' {
		return false
	}
	for _, e := range n.elems {
		if e.kind != '"' {
			return false
		}
		ok := false
		for _, row := range legacyRows {
			ok = ok || e.str == row.profile || e.str == row.versionProfile() ||
				strings.HasPrefix(e.str, row.profilePfx) && m.kept[row.family][e.str]
		}
		if !ok {
			return false
		}
	}
	return true
}

// migrateCmd is the migrate command.
func migrateCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	nowFlag := fs.String("now", "", "the clock for the lint run on the result, as YYYY-MM-DD or RFC 3339 (default: now)")
	data, now, code, ok := readDocument(fs, "migrate [--now DATE] FILE|-", args, nowFlag, stdin, stderr)
	if !ok {
		return code
	}
	out, changes, err := migrateDocument(data)
	var refused *refusedError
	if errors.As(err, &refused) {
		for _, r := range refused.reasons {
			fmt.Fprintf(stderr, "wopneg migrate: refused: %s\n", r)
		}
		fmt.Fprintln(stderr, "wopneg migrate: nothing written")
		return 1
	}
	if err != nil {
		return failCmd(stderr, "migrate", 2, err)
	}
	if _, err := stdout.Write(out); err != nil {
		return failCmd(stderr, "migrate", 2, err)
	}
	for _, c := range changes {
		fmt.Fprintln(stderr, c)
	}
	switch len(changes) {
	case 0:
		fmt.Fprintln(stderr, "wopneg migrate: no changes: the document carries none of the shapes RFC 0175 removed")
	case 1:
		fmt.Fprintln(stderr, "wopneg migrate: 1 change")
	default:
		fmt.Fprintf(stderr, "wopneg migrate: %d changes\n", len(changes))
	}
	res, err := lintDocument(out, now)
	if err == nil && len(res.findings) > 0 {
		fmt.Fprintln(stderr, "wopneg migrate: left for you, which migration cannot decide (wopneg lint reports them):")
		for _, f := range res.findings {
			fmt.Fprintf(stderr, "  %s\n", f)
		}
	}
	return 0
}

// failCmd writes err on one line, naming the command.
func failCmd(stderr io.Writer, cmd string, code int, err error) int {
	fmt.Fprintf(stderr, "wopneg %s: %s\n", cmd, strings.ReplaceAll(err.Error(), "\n", "; "))
	return code
}
