package facets

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-playground/validator/v10"
)

// ErrInvalid matches, under errors.Is, every error this package returns
// for a value that breaks a rule, so callers that only need to know "not
// acceptable" need not care which rule broke.
var ErrInvalid = errors.New("invalid")

// Violation is one broken rule, and the one error type of this package.
// It is located by the JSON path of the value that breaks it (for example
// "mcp.revisions[2]" or "a2a.preferredVersion"; "" is the document or the
// value itself). Rule is a stable kebab-case id meant for programs and
// tests (the package documentation lists them); Message is a sentence
// meant for people and may be reworded between releases.
//
// The functions of this package report every violation of a document at
// once: their error matches [ErrInvalid] with errors.Is, errors.As finds
// its first *Violation, and its Unwrap() []error method lists each
// *Violation in path order. [Lint] returns them as a list.
type Violation struct {
	Path, Rule, Message string
}

// Error renders the violation as "PATH: message", or just the message
// when the violation is about the document or value as a whole.
func (v *Violation) Error() string {
	if v.Path == "" {
		return v.Message
	}
	return v.Path + ": " + v.Message
}

// violations is the error that carries one or more violations.
type violations []Violation

// Error lists the violations on one line.
func (e violations) Error() string {
	if len(e) == 1 {
		return e[0].Error()
	}
	parts := make([]string, len(e))
	for i := range e {
		parts[i] = e[i].Error()
	}
	return strconv.Itoa(len(parts)) + " violations: " + strings.Join(parts, "; ")
}

// Unwrap lists each violation as a *Violation.
func (e violations) Unwrap() []error {
	errs := make([]error, len(e))
	for i := range e {
		errs[i] = &e[i]
	}
	return errs
}

// Is makes [ErrInvalid] match with errors.Is.
func (e violations) Is(target error) bool { return target == ErrInvalid }

// Validate checks both facets of s against their schemas and the
// cross-field rules no schema states (preferred and floor offered, floor ≤
// preferred, no repeated version, each profile's version offered), and
// reports all their violations together. The record fields (status,
// since, until, witness, agentCards, client) are optional here but are
// checked when present; a [Discovery] requires them. A Set that
// advertises neither facet is itself a violation: there is nothing to
// negotiate with.
func (s Set) Validate() error { return asError(s.violations(false)) }

// pastUntil reports an until that has already passed. It needs a
// clock, so it is kept apart from validation: a document that was valid
// when it was written does not become malformed, only out of date. An
// until given as a full-date before now's UTC date is a violation at
// "<p>.until"; an until that names an OpenWOP version, is empty, or is
// not a real date (which validation reports) is none.
func (r Record) pastUntil(p Protocol, now time.Time) []Violation {
	until, err := parseDate(r.Until)
	if err != nil {
		return nil
	}
	y, m, d := now.UTC().Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	if !until.Before(today) {
		return nil
	}
	return []Violation{{string(p) + ".until", "until-in-past",
		fmt.Sprintf("until %s is in the past (today is %s)", r.Until, today.Format(time.DateOnly))}}
}

// asError wraps violations, in path order, as the error that carries
// them.
func asError(vs []Violation) error {
	if len(vs) == 0 {
		return nil
	}
	sortViolations(vs)
	return violations(vs)
}

func (s Set) violations(record bool) []Violation {
	if s.A2A == nil && s.MCP == nil {
		return []Violation{{"", "required", "advertises neither a2a nor mcp"}}
	}
	var vs []Violation
	for _, p := range s.Protocols() {
		adv, _ := s.Lookup(p)
		names := offerNames[p]
		var facet any = s.A2A
		if p == ProtocolMCP {
			facet = s.MCP
		}
		vs = append(vs, fieldViolations(p, facet, record)...)
		vs = append(vs, offerViolations(offer{p, names[0], "preferredVersion", names[1],
			adv.Versions, adv.Preferred, adv.Floor, profilesOf(s, p)})...)
		vs = append(vs, untilViolations(p, recordOf(s, p), record)...)
	}
	return vs
}

// offerNames are the JSON names of each facet's offered list and floor.
var offerNames = map[Protocol][2]string{ProtocolA2A: {"versions", "minimumVersion"}, ProtocolMCP: {"revisions", "minimumRevision"}}

// recordKey marks a validation context as checking a discovery record
// rather than a bare facet; the "inrecord" rule reads it.
type recordKey struct{}

var (
	sinceRE = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)
	untilRE = regexp.MustCompile(`^((0|[1-9][0-9]*)\.(0|[1-9][0-9]*)|\d{4}-\d{2}-\d{2})$`)
)

// validate is the one validator the package uses: building one is costly
// (it caches struct metadata), and using one is safe for concurrent use.
var validate = sync.OnceValue(func() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		return name
	})
	str := func(ok func(string) bool) validator.Func {
		return func(fl validator.FieldLevel) bool { return ok(fl.Field().String()) }
	}
	for tag, ok := range map[string]func(string) bool{
		"a2aversion":   func(s string) bool { return parses(ProtocolA2A, s) },
		"mcprevision":  func(s string) bool { return parses(ProtocolMCP, s) },
		"fulldate":     validDate,
		"a2aprofile":   func(s string) bool { _, ok := profileVersion(ProtocolA2A, s); return ok },
		"mcpprofile":   func(s string) bool { _, ok := profileVersion(ProtocolMCP, s); return ok },
		"status":       func(s string) bool { return slices.Contains(statuses, s) },
		"witness":      func(s string) bool { return slices.Contains(witnesses, s) },
		"transport":    func(s string) bool { return slices.Contains(transports, s) },
		"sinceversion": sinceRE.MatchString,
		"until":        validUntil,
		"absuri":       absoluteURI,
	} {
		if err := v.RegisterValidation(tag, str(ok)); err != nil {
			panic(err)
		}
	}
	if err := v.RegisterValidationCtx("inrecord", inRecord); err != nil {
		panic(err)
	}
	return v
})

// inRecord is the "inrecord" rule: a field only a discovery record must
// carry is present, or the struct is checked as a bare facet.
func inRecord(ctx context.Context, fl validator.FieldLevel) bool {
	return ctx.Value(recordKey{}) == nil || !fl.Field().IsZero()
}

var (
	statuses   = []string{"stable", "experimental", "deprecated"}
	witnesses  = []string{"witnessable-unaided", "witnessable-gated", "seam-gated", "claims-check", "negative-existence"}
	transports = []string{"stdio", "streamable-http"}
)

func parses(p Protocol, s string) bool {
	_, problem := parseVersion(p, s)
	return problem == ""
}

func validDate(s string) bool {
	_, err := parseDate(s)
	return err == nil
}

// validUntil is the record's until pattern, with the date form also
// required to name a real day.
func validUntil(s string) bool {
	return untilRE.MatchString(s) && (sinceRE.MatchString(s) || validDate(s))
}

// profileVersion returns the version a well-formed profile id names:
// "a2a-1.0" names A2A 1.0, "mcp-2026-07-28" the MCP revision 2026-07-28.
func profileVersion(p Protocol, id string) (string, bool) {
	v, ok := strings.CutPrefix(id, string(p)+"-")
	return v, ok && parses(p, v)
}

// absoluteURI accepts an RFC 3986 URI (JSON Schema "format": "uri"): a
// scheme, then only characters the grammar allows, percent escapes
// well-formed; http(s) URIs must also name a host.
func absoluteURI(s string) bool {
	colon := strings.IndexByte(s, ':')
	if colon < 1 || !isAlpha(s[0]) {
		return false
	}
	for i := 1; i < colon; i++ {
		if c := s[i]; !isAlpha(c) && !isDigit(c) && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	for i := colon; i < len(s); i++ {
		c := s[i]
		if c == '%' {
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			continue
		}
		if !isAlpha(c) && !isDigit(c) && strings.IndexByte("-._~:/?#[]@!$&'()*+,;=", c) < 0 {
			return false
		}
	}
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	return u.Host != "" || (u.Scheme != "http" && u.Scheme != "https")
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// fieldViolations runs the struct-tag rules and translates validator's
// errors into Violations with JSON paths.
func fieldViolations(p Protocol, s any, record bool) []Violation {
	ctx := context.Background()
	if record {
		ctx = context.WithValue(ctx, recordKey{}, true)
	}
	var fes validator.ValidationErrors
	if !errors.As(validate().StructCtx(ctx, s), &fes) {
		return nil
	}
	vs := make([]Violation, len(fes))
	for i, fe := range fes {
		// Namespace is "A2A.versions[1]" or "A2A.Record.status": swap the
		// type name for the protocol and drop the embedded Record.
		_, rest, _ := strings.Cut(fe.Namespace(), ".")
		rest = strings.TrimPrefix(rest, "Record.")
		rule, msg := describe(fe.Tag(), fe.Field(), fe.Value())
		vs[i] = Violation{string(p) + "." + rest, rule, msg}
	}
	return vs
}

// describe turns a failed tag into a rule id and a sentence. The JSON
// decoder uses it too, for strings that are present but empty, so that
// both report the same thing the same way.
// allowed says, for a record member that must be given, what it may be.
var allowed = map[string]string{
	"status":  ": one of stable, experimental, deprecated",
	"since":   ": the OpenWOP version that introduced the family, \"major.minor\" (such as \"2.0\")",
	"witness": ": one of " + strings.Join(witnesses, ", ") + " (a2a and mcp declare seam-gated)",
}

func describe(tag, field string, value any) (rule, msg string) {
	s, _ := value.(string)
	switch tag {
	case "required":
		return "required", field + " is required"
	case "inrecord":
		return "required", field + " is required in a discovery record" + allowed[field]
	case "min":
		return "min-items", field + " must list at least one entry"
	case "gte", "lte":
		return "range", fmt.Sprintf("%s %v is not in 1–16", field, value)
	case "eq":
		return "const", field + " may only be true"
	case "a2aversion":
		return "pattern", fmt.Sprintf("%q is not a version \"major.minor\"", s) + detail(ProtocolA2A, s)
	case "mcprevision":
		return "date", fmt.Sprintf("%q is not a revision date YYYY-MM-DD", s) + detail(ProtocolMCP, s)
	case "fulldate":
		return "date", fmt.Sprintf("%q is not a date YYYY-MM-DD", s) + detail(ProtocolMCP, s)
	case "a2aprofile", "mcpprofile":
		return describeProfile(Protocol(tag[:3]), s)
	case "status":
		return "enum", fmt.Sprintf("%q is not a status: want stable, experimental or deprecated", s)
	case "witness":
		return "enum", fmt.Sprintf("%q is not a witness class: want %s", s, strings.Join(witnesses, ", "))
	case "transport":
		return "enum", fmt.Sprintf("%q is not a transport: want stdio or streamable-http", s)
	case "sinceversion":
		return "pattern", fmt.Sprintf("%q is not an OpenWOP version \"major.minor\"", s)
	case "until":
		if untilRE.MatchString(s) {
			return "date", fmt.Sprintf("%q is not a real date", s) + detail(ProtocolMCP, s)
		}
		return "pattern", fmt.Sprintf("%q is neither an OpenWOP version \"major.minor\" nor a date YYYY-MM-DD", s)
	case "absuri":
		return "uri", fmt.Sprintf("%q is not an absolute URI", s)
	case "seamsprofile":
		return "const", fmt.Sprintf("%s may only be %q", field, SeamsProfile)
	case "eventtype":
		return "pattern", fmt.Sprintf("%q is not a host event type such as \"negotiation.decided\"", s)
	case "delivery":
		return "enum", fmt.Sprintf("%q is not a delivery: want durable or ephemeral", s)
	}
	return tag, fmt.Sprintf("%s fails rule %q", field, tag)
}

// detail says why s is not a version of p, when that says more than the
// grammar already quoted in the message (a leading zero, an overflow, a
// day the calendar does not have).
func detail(p Protocol, s string) string {
	if _, problem := parseVersion(p, s); problem != "" && !strings.Contains(problem, "want") {
		return ": " + problem
	}
	return ""
}

func describeProfile(p Protocol, s string) (rule, msg string) {
	want := "a2a-major.minor"
	if p == ProtocolMCP {
		want = "mcp-YYYY-MM-DD"
	}
	rest, _ := strings.CutPrefix(s, string(p)+"-")
	if strings.HasSuffix(s, "-legacy") {
		return "legacy-profile", fmt.Sprintf("%q is a legacy profile; RFC 0175 removed legacy profiles", s)
	}
	if p == ProtocolMCP && strings.HasPrefix(s, "mcp-") && detail(p, rest) != "" {
		return "date", fmt.Sprintf("%q does not name a real revision date", s) + detail(p, rest)
	}
	return "pattern", fmt.Sprintf("%q is not a profile id %q", s, want) + detail(p, rest)
}

// offer is what the cross-field rules read from either facet: the offered
// list, preferred, floor and profiles, with their JSON names.
type offer struct {
	p                             Protocol
	listName, prefName, floorName string
	list                          []string
	preferred, floor              string
	profiles                      []string
}

// offerViolations applies the rules no schema states. Each rule looks only
// at values that pass their own format check, so one bad value is
// reported once, not again by every rule that reads it: membership is
// judged only against a list whose every entry is well-formed (a
// malformed entry may be the one that was meant). Membership is string
// equality, which is exact because well-formed versions have one
// spelling each.
func offerViolations(o offer) []Violation {
	var vs []Violation
	path := string(o.p) + "."
	first := make(map[string]int, len(o.list))
	wellFormed := len(o.list) > 0
	for i, v := range o.list {
		if !parses(o.p, v) {
			wellFormed = false
			continue
		}
		if j, seen := first[v]; seen {
			vs = append(vs, Violation{fmt.Sprintf("%s%s[%d]", path, o.listName, i), "duplicate",
				fmt.Sprintf("%q is offered twice (first at %s%s[%d])", v, path, o.listName, j)})
			continue
		}
		first[v] = i
	}
	pref, prefProblem := parseVersion(o.p, o.preferred)
	floor, floorProblem := parseVersion(o.p, o.floor)
	if wellFormed {
		if prefProblem == "" && !slices.Contains(o.list, o.preferred) {
			vs = append(vs, Violation{path + o.prefName, "member",
				fmt.Sprintf("%q is not one of the offered %s", o.preferred, o.listName)})
		}
		if floorProblem == "" && !slices.Contains(o.list, o.floor) {
			vs = append(vs, Violation{path + o.floorName, "member",
				fmt.Sprintf("%q is not one of the offered %s", o.floor, o.listName)})
		}
		for i, id := range o.profiles {
			if v, ok := profileVersion(o.p, id); ok && !slices.Contains(o.list, v) {
				vs = append(vs, Violation{fmt.Sprintf("%sprofiles[%d]", path, i), "profile-version",
					fmt.Sprintf("profile %q needs %q in %s", id, v, o.listName)})
			}
		}
	}
	if prefProblem == "" && floorProblem == "" && floor.Compare(pref) > 0 {
		vs = append(vs, Violation{path + o.floorName, "floor-above-preferred",
			fmt.Sprintf("%s %q is above %s %q", o.floorName, o.floor, o.prefName, o.preferred)})
	}
	return vs
}

// untilViolations ties until to status. A stable record may not carry
// until; in a record an experimental or deprecated one must. A bare facet
// need not carry status at all, so there only the contradiction counts.
func untilViolations(p Protocol, r Record, record bool) []Violation {
	path := string(p) + ".until"
	if r.Status == "stable" && validUntil(r.Until) {
		return []Violation{{path, "until-forbidden", `until must be absent when status is "stable"`}}
	}
	if record && r.Until == "" && (r.Status == "experimental" || r.Status == "deprecated") {
		return []Violation{{path, "until-required", fmt.Sprintf("until is required when status is %q", r.Status)}}
	}
	return nil
}

// Field order of the two facets, for sorting violations the way the
// schema lists the fields.
var (
	a2aFields = []string{"versions", "preferredVersion", "minimumVersion", "refreshedAt", "profiles",
		"agentCardUrl", "streaming", "pushNotifications", "durableTasks", "agentCards",
		"status", "since", "until", "witness"}
	mcpFields = []string{"revisions", "preferredVersion", "minimumRevision", "refreshedAt", "profiles",
		"features", "serverUrls", "serverMount", "mrtr", "client",
		"status", "since", "until", "witness"}
)

// sortViolations orders violations as the schema orders fields: the
// document first, then a2a, then mcp; within a facet by field, then by
// list index; unknown fields last. Ties keep the order they were found in.
func sortViolations(vs []Violation) {
	slices.SortStableFunc(vs, func(a, b Violation) int {
		return slices.Compare(pathRank(a.Path), pathRank(b.Path))
	})
}

func pathRank(path string) []int {
	top, rest := cutName(path)
	fields := a2aFields
	rank := []int{0, 0, 0}
	switch top {
	case "":
	case "a2a":
		rank[0] = 1
	case "mcp":
		rank[0], fields = 2, mcpFields
	default:
		rank[0] = 3
	}
	name, rest := cutName(strings.TrimPrefix(rest, "."))
	rank[1] = slices.Index(fields, name)
	if rank[1] < 0 {
		rank[1] = len(fields)
	}
	if open := strings.IndexByte(rest, '['); open >= 0 {
		digits, _, _ := strings.Cut(rest[open+1:], "]")
		rank[2], _ = strconv.Atoi(digits)
	}
	return rank
}

// cutName splits a path at its first '.' or '['.
func cutName(path string) (name, rest string) {
	if i := strings.IndexAny(path, ".["); i >= 0 {
		return path[:i], path[i:]
	}
	return path, ""
}
