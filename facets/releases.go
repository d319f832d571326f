package facets

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"slices"
)

// release is one published A2A version or MCP revision as upstream lists
// it. A [Refresher] compares a facet's offered versions with these.
type release struct {
	// Version is the A2A version ("1.0") or MCP revision ("2026-07-28").
	Version string `json:"version"`
	// Published is the full-date upstream published the version on.
	Published string `json:"published"`
	// SupersededBy, when set, names the later version upstream says
	// replaces this one. Upstream still publishes it, so a host may go on
	// offering it (below its preferred version, as §D.1's downgrade
	// needs): a refresh check reports it and still passes.
	SupersededBy string `json:"supersededBy,omitzero"`
}

// releases is an upstream release list: what A2A and MCP have published.
// Its JSON form is `{"takenAt"?: "YYYY-MM-DD", "a2a": [Release...], "mcp":
// [Release...]}`, the form parseReleases reads and a host's own mirror
// serves.
type releases struct {
	// TakenAt is the full-date the list was taken from upstream on: a
	// check against it can say the versions were checked no later than
	// that day. Empty means the list is upstream as of the moment it is
	// read, as a host's own mirror is. The embedded list always has one.
	TakenAt string    `json:"takenAt,omitzero"`
	A2A     []release `json:"a2a,omitzero"`
	MCP     []release `json:"mcp,omitzero"`
}

// checkedOn is the day a check against r, run on today (a full-date,
// as TakenAt), can say the versions were checked against upstream: today,
// unless r was taken from upstream before.
func (r releases) checkedOn(today string) string {
	if r.TakenAt != "" && r.TakenAt < today { // two full-dates: they order as strings
		return r.TakenAt
	}
	return today
}

// list returns the releases of p, in the order upstream gave them.
func (r releases) list(p Protocol) []release {
	if p == ProtocolA2A {
		return r.A2A
	}
	return r.MCP
}

// lookup returns upstream's entry for version v of p, and false when
// upstream does not list it.
func (r releases) lookup(p Protocol, v string) (release, bool) {
	i := slices.IndexFunc(r.list(p), func(rel release) bool { return rel.Version == v })
	if i < 0 {
		return release{}, false
	}
	return r.list(p)[i], true
}

// violations checks a release list, so that a mirror with a typo is
// refused rather than read as "upstream withdrew everything": takenAt,
// when present, is a full-date; every version parses as its protocol's,
// is listed once and has a published full-date, on or before takenAt (a
// list cannot hold a release published after it was taken); a
// supersededBy names a listed, later version. Paths are such as
// "a2a[1].published".
func (r releases) violations() []Violation {
	var vs []Violation
	if r.TakenAt != "" && !validDate(r.TakenAt) {
		rule, msg := describe("fulldate", "takenAt", r.TakenAt)
		vs = append(vs, Violation{"takenAt", rule, msg})
	}
	for _, p := range []Protocol{ProtocolA2A, ProtocolMCP} {
		list := r.list(p)
		tag := "a2aversion"
		if p == ProtocolMCP {
			tag = "mcprevision"
		}
		first := make(map[string]int, len(list))
		for i, rel := range list {
			at := fmt.Sprintf("%s[%d].", p, i)
			if rel.Version == "" {
				vs = append(vs, Violation{at + "version", "required", "version is required"})
			} else if !parses(p, rel.Version) {
				rule, msg := describe(tag, "version", rel.Version)
				vs = append(vs, Violation{at + "version", rule, msg})
			} else if j, seen := first[rel.Version]; seen {
				vs = append(vs, Violation{at + "version", "duplicate",
					fmt.Sprintf("%q is listed twice (first at %s[%d])", rel.Version, p, j)})
			} else {
				first[rel.Version] = i
			}
			if rel.Published == "" {
				vs = append(vs, Violation{at + "published", "required", "published is required"})
			} else if !validDate(rel.Published) {
				rule, msg := describe("fulldate", "published", rel.Published)
				vs = append(vs, Violation{at + "published", rule, msg})
			} else if validDate(r.TakenAt) && rel.Published > r.TakenAt {
				vs = append(vs, Violation{at + "published", "after-taken",
					fmt.Sprintf("published %s is after the list's takenAt %s", rel.Published, r.TakenAt)})
			}
			if rel.SupersededBy == "" {
				continue
			}
			by, problem := parseVersion(p, rel.SupersededBy)
			if problem != "" {
				rule, msg := describe(tag, "supersededBy", rel.SupersededBy)
				vs = append(vs, Violation{at + "supersededBy", rule, msg})
				continue
			}
			if !slices.ContainsFunc(list, func(o release) bool { return o.Version == rel.SupersededBy }) {
				vs = append(vs, Violation{at + "supersededBy", "member",
					fmt.Sprintf("%q is not a listed %s version", rel.SupersededBy, p)})
			} else if v, problem := parseVersion(p, rel.Version); problem == "" && by.Compare(v) <= 0 {
				vs = append(vs, Violation{at + "supersededBy", "supersede-order",
					fmt.Sprintf("%q cannot supersede %q: it is not later", rel.SupersededBy, rel.Version)})
			}
		}
	}
	return vs
}

// parseReleases decodes and validates a release list strictly, as [Parse]
// does a facet set: unknown and repeated keys, wrong JSON types and the
// rules of violations come back together in one error. On error the
// releases is zero.
func parseReleases(data []byte) (releases, error) {
	var r releases
	vs, complete := readDoc(data, func(d *decoder) error {
		_, err := d.object("a release list", releaseListFields, func(key string) error {
			if key == "takenAt" {
				return d.string(&r.TakenAt, "fulldate", key)
			}
			if key == "a2a" {
				return d.releases(&r.A2A, ProtocolA2A)
			}
			return d.releases(&r.MCP, ProtocolMCP)
		})
		return err
	})
	if complete {
		vs = merge(vs, r.violations())
	}
	if err := asError(vs); err != nil {
		return releases{}, err
	}
	return r, nil
}

var (
	releaseListFields = []string{"takenAt", "a2a", "mcp"}
	releaseFields     = []string{"version", "published", "supersededBy"}
)

// releases decodes one protocol's list. A present but empty string is
// reported under its field's format, as the facet decoder does.
func (d *decoder) releases(dst *[]release, p Protocol) error {
	tag := "a2aversion"
	if p == ProtocolMCP {
		tag = "mcprevision"
	}
	return readObjects(d, dst, "release", releaseFields, func(rel *release, key string) error {
		if key == "version" {
			return d.string(&rel.Version, tag, key)
		}
		if key == "published" {
			return d.string(&rel.Published, "fulldate", key)
		}
		return d.string(&rel.SupersededBy, tag, key)
	})
}

// published is the release list this package ships: the A2A versions and
// MCP revisions upstream published, as taken from upstream on its takenAt
// (2026-11-29, the day it was written into this package). An A2A line is
// dated by its first release the upstream changelog records (0.2.1 on
// 2025-05-27, 0.3.0 on 2025-07-30, 1.0.0 on 2026-03-12); an MCP revision
// by its name. Whoever updates the list from upstream moves takenAt to
// that day: it is what a check against the list can vouch for.
//
//go:embed releases.json
var published []byte

// publishedReleases returns the release list embedded in this package.
// One without takenAt would date a check on any later day, the claim
// nobody made, so it is refused like one that does not parse.
func publishedReleases() releases {
	r, err := parseReleases(published)
	if err != nil {
		panic("facets: embedded releases.json: " + err.Error())
	}
	if r.TakenAt == "" {
		panic("facets: embedded releases.json: takenAt is required")
	}
	return r
}

// maxReleases bounds what an upstream may hand over.
const maxReleases = 1 << 20

// readReleases reads and parses a release list of at most 1 MiB.
func readReleases(r io.Reader) (releases, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxReleases+1))
	if err != nil {
		return releases{}, err
	}
	if len(data) > maxReleases {
		return releases{}, errors.New("the list is larger than 1 MiB")
	}
	return parseReleases(data)
}
