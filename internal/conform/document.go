package conform

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/conform/verdict"
)

var (
	openwopVersion = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)
	fullDate       = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
	profileID      = map[facets.Protocol]*regexp.Regexp{
		facets.ProtocolA2A: regexp.MustCompile(`^a2a-[0-9]+\.[0-9]+$`),
		facets.ProtocolMCP: regexp.MustCompile(`^mcp-[0-9]{4}-[0-9]{2}-[0-9]{2}$`),
	}
	protocols = []facets.Protocol{facets.ProtocolA2A, facets.ProtocolMCP}
)

// facet is the a2a or mcp record of the discovery document, or nil.
func (r *runner) facet(p facets.Protocol) map[string]any {
	return obj(r.doc, string(p))
}

// shape is what a facet advertises, read loosely: a missing or mistyped
// field is "", so the checks that need it fail or gate on it.
type shape struct {
	versions          []string
	preferred, floor  string
	hasMRTR           bool
	maxRounds         any
	refreshedAt       string
	refreshedAtString bool
}

func shapeOf(p facets.Protocol, f map[string]any) shape {
	s := shape{preferred: first(str(f, "preferredVersion"))}
	if p == facets.ProtocolA2A {
		s.versions, s.floor = strs(f, "versions"), first(str(f, "minimumVersion"))
	} else {
		s.versions, s.floor = strs(f, "revisions"), first(str(f, "minimumRevision"))
	}
	if m := obj(f, "mrtr"); m != nil {
		s.hasMRTR, s.maxRounds = true, m["maxRounds"]
	}
	s.refreshedAt, s.refreshedAtString = str(f, "refreshedAt")
	return s
}

func first(s string, _ bool) string { return s }

// validRecord validates the a2a or mcp record of the document: status,
// since and witness present, and the rest as the module reads a facet
// (closed, patterns, enums, dates, floor and preferred offered). The
// record was decoded from JSON, so it encodes.
func (r *runner) validRecord(p facets.Protocol) error {
	f := r.facet(p)
	for _, k := range []string{"status", "since", "witness"} {
		if _, ok := str(f, k); !ok {
			return fmt.Errorf("%s.%s is required in a discovery record", p, k)
		}
	}
	data, _ := json.Marshal(map[string]any{string(p): f})
	_, err := facets.Parse(data)
	return err
}

// noTransport is v2-no-transport-advertisement.
func (r *runner) noTransport(context.Context) []verdict.Result {
	l := verdict.New(scNoTransport, "openwop.requirement.0175.no-transport-advertisement")
	if !r.gateDoc(l) {
		return settle(l)
	}
	_, has := r.doc["supportedTransports"]
	l.Wire(!has, "the discovery root carries supportedTransports (RFC 0175 C8.2)")
	_, has = r.doc["grpc"]
	l.Wire(!has, "the discovery root carries a grpc block (RFC 0175 C8.3)")
	pv := strs(r.doc, "protocolVersions")
	arr, _ := r.doc["protocolVersions"].([]any)
	l.Wire(len(pv) > 0 && len(pv) == len(arr) && allMatch(pv, openwopVersion) && !hasDuplicate(pv),
		"protocolVersions must be a non-empty list of unique major.minor versions, got %v", r.doc["protocolVersions"])
	pref, _ := str(r.doc, "preferredVersion")
	l.Wire(openwopVersion.MatchString(pref), "the root preferredVersion must be major.minor, got %v", r.doc["preferredVersion"])
	for _, p := range protocols {
		f := r.facet(p)
		if f == nil {
			continue
		}
		_, has := f["supportedTransports"]
		l.Wire(!has, "%s carries supportedTransports (RFC 0175 C8.2)", p)
		err := r.validRecord(p)
		l.Wire(err == nil, "the %s record does not validate: %v", p, err)
	}
	return settle(l)
}

// legacyProfiles is v2-legacy-profiles-absent.
func (r *runner) legacyProfiles(context.Context) []verdict.Result {
	l := verdict.New(scLegacy, "openwop.requirement.0175.legacy-profiles-absent")
	root := verdict.New(scLegacy, "openwop.requirement.0175.legacy-profiles-absent.no-root-profiles")
	if !r.gateDoc(l, root) {
		return settle(l, root)
	}
	_, has := r.doc["profiles"]
	root.Wire(!has, "the discovery root carries profiles (RFC 0169 §C.1 removed it)")
	r.eachFacet(l, func(p facets.Protocol, f map[string]any) {
		ids := strs(f, "profiles")
		for _, id := range ids {
			l.Wire(!strings.HasSuffix(id, "-legacy"), "%s.profiles lists %q, a legacy profile (RFC 0175 C8.1)", p, id)
			l.Wire(profileID[p].MatchString(id), "%s.profiles lists %q, which is not a v2 profile id", p, id)
		}
		err := r.validRecord(p)
		l.Wire(err == nil, "{protocolVersions, preferredVersion, %s} does not validate: %v", p, err)
	})
	return settle(l, root)
}

// refreshSLA is v2-refresh-sla (RFC 0175 §D.4): refreshedAt at most 90
// days old and at most one day ahead, the preferred version and the floor
// offered.
func (r *runner) refreshSLA(context.Context) []verdict.Result {
	l := verdict.New(scRefresh, "openwop.requirement.0175.refresh-sla")
	if !r.gateDoc(l) {
		return settle(l)
	}
	r.eachFacet(l, func(p facets.Protocol, f map[string]any) {
		s := shapeOf(p, f)
		if l.Wire(fullDate.MatchString(s.refreshedAt), "%s.refreshedAt must be YYYY-MM-DD, got %v", p, f["refreshedAt"]) {
			at, err := time.Parse(time.DateOnly, s.refreshedAt)
			age := r.now.Sub(at).Hours() / 24
			l.Wire(err == nil && age <= 90, "%s.refreshedAt %s is %.1f days old: the refresh window is 90 days (RFC 0175 §D.4)", p, s.refreshedAt, age)
			l.Wire(err == nil && age >= -1, "%s.refreshedAt %s is more than a day in the future", p, s.refreshedAt)
		}
		l.Wire(len(s.versions) > 0, "%s offers no version", p)
		l.Wire(slices.Contains(s.versions, s.preferred), "%s.preferredVersion %q is not offered", p, s.preferred)
		l.Wire(slices.Contains(s.versions, s.floor), "the %s floor %q is not offered", p, s.floor)
	})
	return settle(l)
}

// eachFacet calls fn with each facet the document advertises, and marks l
// inapplicable when it advertises none.
func (r *runner) eachFacet(l *verdict.Leg, fn func(p facets.Protocol, f map[string]any)) {
	seen := false
	for _, p := range protocols {
		if f := r.facet(p); f != nil {
			seen = true
			fn(p, f)
		}
	}
	if !seen {
		l.Inapplicable("the host advertises neither a2a nor mcp")
	}
}

func allMatch(ss []string, re *regexp.Regexp) bool {
	for _, s := range ss {
		if !re.MatchString(s) {
			return false
		}
	}
	return true
}

func hasDuplicate(ss []string) bool {
	seen := make(map[string]bool, len(ss))
	for _, s := range ss {
		if seen[s] {
			return true
		}
		seen[s] = true
	}
	return false
}

// below reports whether version a is below b in p's order; a malformed
// version is below nothing.
func below(p facets.Protocol, a, b string) bool {
	va, errA := facets.ParseVersion(p, a)
	vb, errB := facets.ParseVersion(p, b)
	return errA == nil && errB == nil && va.Compare(vb) < 0
}

// inboundServed says whether the document advertises an inbound surface of
// p (RFC 0242 §B.3's condition).
func (r *runner) inboundServed(p facets.Protocol) bool {
	f := r.facet(p)
	if f == nil {
		return false
	}
	if p == facets.ProtocolA2A {
		_, ok := str(f, "agentCardUrl")
		return ok
	}
	_, mount := f["serverMount"]
	return len(strs(f, "serverUrls")) > 0 || mount
}

// listed judges RFC 0242 §B.3: hostEvents.types[] lists negotiation.decided
// as durable. It returns "" when it does.
func (r *runner) listed() string {
	types, _ := obj(r.doc, "hostEvents")["types"].([]any)
	for _, t := range types {
		row, _ := t.(map[string]any)
		if ty, _ := str(row, "type"); ty == "negotiation.decided" {
			if d, _ := str(row, "delivery"); d == "durable" {
				return ""
			}
			return fmt.Sprintf("hostEvents.types[] lists negotiation.decided with delivery %v, not durable (RFC 0242 §B.2)", row["delivery"])
		}
	}
	return "the host serves A2A or MCP inbound, so hostEvents.types[] must list {type: negotiation.decided, delivery: durable} (RFC 0242 §B.3)"
}
