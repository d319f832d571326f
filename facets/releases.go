package facets

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"

	"github.com/wopneg/wopneg/internal/strictjson"
)

// Release is one published A2A version or MCP revision as upstream lists
// it. A [Refresher] compares a facet's offered versions with these.
type Release struct {
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

// Superseded reports whether upstream has replaced r.
func (r Release) Superseded() bool { return r.SupersededBy != "" }

// Releases is an upstream release list: what A2A and MCP have published.
// Its JSON form is `{"a2a": [Release...], "mcp": [Release...]}`, the form
// [ParseReleases] reads and a host's own mirror serves.
type Releases struct {
	A2A []Release `json:"a2a,omitzero"`
	MCP []Release `json:"mcp,omitzero"`
}

// List returns the releases of p, in the order upstream gave them.
func (r Releases) List(p Protocol) []Release {
	switch p {
	case ProtocolA2A:
		return r.A2A
	case ProtocolMCP:
		return r.MCP
	}
	return nil
}

// Lookup returns upstream's entry for version v of p, and false when
// upstream does not list it.
func (r Releases) Lookup(p Protocol, v string) (Release, bool) {
	i := slices.IndexFunc(r.List(p), func(rel Release) bool { return rel.Version == v })
	if i < 0 {
		return Release{}, false
	}
	return r.List(p)[i], true
}

// Clone returns a copy of r that shares no memory with it, so a caller may
// keep or change it without touching the list it came from.
func (r Releases) Clone() Releases {
	return Releases{A2A: slices.Clone(r.A2A), MCP: slices.Clone(r.MCP)}
}

// Validate checks a release list, so that a mirror with a typo is refused
// rather than read as "upstream withdrew everything": every version parses
// as its protocol's, is listed once and has a published full-date; a
// supersededBy names a listed, later version. It returns nil or a
// [*ValidationError] with paths such as "a2a[1].published".
func (r Releases) Validate() error { return asError(r.violations()) }

func (r Releases) violations() []Violation {
	var vs []Violation
	for _, p := range []Protocol{ProtocolA2A, ProtocolMCP} {
		list := r.List(p)
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
			}
			if rel.SupersededBy == "" {
				continue
			}
			by, err := ParseVersion(p, rel.SupersededBy)
			if err != nil {
				rule, msg := describe(tag, "supersededBy", rel.SupersededBy)
				vs = append(vs, Violation{at + "supersededBy", rule, msg})
				continue
			}
			if !slices.ContainsFunc(list, func(o Release) bool { return o.Version == rel.SupersededBy }) {
				vs = append(vs, Violation{at + "supersededBy", "member",
					fmt.Sprintf("%q is not a listed %s version", rel.SupersededBy, p)})
			} else if v, err := ParseVersion(p, rel.Version); err == nil && by.Compare(v) <= 0 {
				vs = append(vs, Violation{at + "supersededBy", "supersede-order",
					fmt.Sprintf("%q cannot supersede %q: it is not later", rel.SupersededBy, rel.Version)})
			}
		}
	}
	return vs
}

// ParseReleases decodes and validates a release list strictly, as [Parse]
// does a facet set: unknown and repeated keys, wrong JSON types and the
// rules of [Releases.Validate] come back together in one
// [*ValidationError]. On error the Releases is zero.
func ParseReleases(data []byte) (Releases, error) {
	var r Releases
	vs, complete := readDoc(data, "", func(d *decoder) error {
		_, err := d.object("a release list", setFields, func(key string) error {
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
		return Releases{}, err
	}
	return r, nil
}

var releaseFields = []string{"version", "published", "supersededBy"}

// releases decodes one protocol's list. A present but empty string is
// reported under its field's format, as the facet decoder does.
func (d *decoder) releases(dst *[]Release, p Protocol) error {
	tag := "a2aversion"
	if p == ProtocolMCP {
		tag = "mcprevision"
	}
	if ok, err := d.is(strictjson.Array, "an array of releases"); !ok {
		return err
	}
	list := []Release{}
	err := d.r.Array(func(int) error {
		var rel Release
		_, err := d.object("a release", releaseFields, func(key string) error {
			switch key {
			case "version":
				return d.string(&rel.Version, tag, key)
			case "published":
				return d.string(&rel.Published, "fulldate", key)
			}
			return d.string(&rel.SupersededBy, tag, key)
		})
		list = append(list, rel)
		return err
	})
	*dst = list
	return err
}

// published is the release list this package ships: the A2A versions and
// MCP revisions published as of 2026-11. An A2A line is dated by its first
// release the upstream changelog records (0.2.1 on 2025-05-27, 0.3.0 on
// 2025-07-30, 1.0.0 on 2026-03-12); an MCP revision by its name.
//
//go:embed releases.json
var published []byte

// PublishedReleases returns the release list embedded in this package, a
// fresh copy on every call. It is what a [Refresher] with no Upstream
// checks against; a host that must see releases newer than its build
// mirrors its own list and uses [FileUpstream] or [HTTPUpstream].
func PublishedReleases() Releases {
	r, err := ParseReleases(published)
	if err != nil {
		panic("facets: embedded releases.json: " + err.Error())
	}
	return r
}

// Upstream is where a [Refresher] learns what A2A and MCP have published.
// Implementations must be safe for concurrent use and should honour ctx.
type Upstream interface {
	Releases(ctx context.Context) (Releases, error)
}

// UpstreamError reports an upstream release list that could not be had:
// unreadable, unreachable, or not a valid list (then Err is a
// [*ValidationError]).
type UpstreamError struct {
	// Source names the list: a file path, a URL without its query and
	// credentials, or the Go type of a custom Upstream.
	Source string
	Err    error
}

// Error names the source first, so a log line says which mirror failed.
func (e *UpstreamError) Error() string {
	return "upstream release list " + e.Source + ": " + e.Err.Error()
}

// Unwrap gives errors.Is and errors.As the cause: a *ValidationError, an
// fs error, a context error.
func (e *UpstreamError) Unwrap() error { return e.Err }

// StaticUpstream is an [Upstream] whose list never changes; use it for a
// list built in Go or in tests. Releases returns a copy.
type StaticUpstream Releases

// Releases returns a copy of the fixed list.
func (s StaticUpstream) Releases(context.Context) (Releases, error) {
	return Releases(s).Clone(), nil
}

// FileUpstream is an [Upstream] read from a JSON file (the form of
// [ParseReleases]) on every call, so a host that mirrors upstream into a
// file is checked against the file's current contents.
type FileUpstream struct {
	Path string
}

// maxReleases bounds what a file or HTTP upstream may hand over.
const maxReleases = 1 << 20

// Releases reads and parses the file.
func (f FileUpstream) Releases(ctx context.Context) (Releases, error) {
	if err := ctx.Err(); err != nil {
		return Releases{}, &UpstreamError{f.Path, err}
	}
	if f.Path == "" {
		return Releases{}, &UpstreamError{`""`, errors.New("FileUpstream.Path is empty")}
	}
	file, err := os.Open(f.Path)
	if err != nil {
		return Releases{}, &UpstreamError{f.Path, err}
	}
	defer file.Close()
	return readReleases(f.Path, file)
}

// HTTPUpstream is an [Upstream] fetched with GET from URL on every call,
// for hosts that serve their own mirror of the release list. The response
// must be 200 with a body of at most 1 MiB.
type HTTPUpstream struct {
	URL string
	// Client sends the request; nil means http.DefaultClient.
	Client *http.Client
}

// Releases fetches and parses the list.
func (h HTTPUpstream) Releases(ctx context.Context) (Releases, error) {
	source := redactURL(h.URL)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.URL, nil)
	if err != nil {
		return Releases{}, &UpstreamError{source, err}
	}
	req.Header.Set("Accept", "application/json")
	client := h.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return Releases{}, &UpstreamError{source, err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Releases{}, &UpstreamError{source, fmt.Errorf("HTTP status %s, want 200", resp.Status)}
	}
	return readReleases(source, resp.Body)
}

func readReleases(source string, r io.Reader) (Releases, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxReleases+1))
	if err != nil {
		return Releases{}, &UpstreamError{source, err}
	}
	if len(data) > maxReleases {
		return Releases{}, &UpstreamError{source, errors.New("the list is larger than 1 MiB")}
	}
	rel, err := ParseReleases(data)
	if err != nil {
		return Releases{}, &UpstreamError{source, err}
	}
	return rel, nil
}

// redactURL drops what may hold a secret (user info, query, fragment)
// from a URL before it appears in an error.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery, u.Fragment, u.RawFragment = nil, "", "", ""
	return u.String()
}
