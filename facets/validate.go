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

// ErrInvalid is wrapped by every [*ValidationError], so callers that only
// need to know "the advertisement is not acceptable" can use errors.Is
// without caring which rule broke.
var ErrInvalid = errors.New("invalid facet")

// Violation is one broken rule, located by the JSON path of the value that
// breaks it (for example "mcp.revisions[2]" or "a2a.preferredVersion"; ""
// is the document itself). Rule is a stable kebab-case id meant for
// programs and tests; Message is a sentence meant for people and may be
// reworded between releases.
type Violation struct {
	Path, Rule, Message string
}

// String renders the violation as "PATH: message", or just the message
// when the violation is about the document as a whole.
func (v Violation) String() string {
	if v.Path == "" {
		return v.Message
	}
	return v.Path + ": " + v.Message
}

// ValidationError reports every violation found in one document at once,
// so that a host author fixes an advertisement in one round rather than
// one error per run.
type ValidationError struct {
	Violations []Violation
}

// Error lists the violations on one line.
func (e *ValidationError) Error() string {
	if len(e.Violations) == 1 {
		return e.Violations[0].String()
	}
	parts := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		parts[i] = v.String()
	}
	return strconv.Itoa(len(parts)) + " violations: " + strings.Join(parts, "; ")
}

// Unwrap makes [ErrInvalid] match with errors.Is.
func (e *ValidationError) Unwrap() error { return ErrInvalid }

// Validate checks f against the a2a facet schema and the cross-field rules
// no schema states (preferred and floor offered, floor ≤ preferred, no
// repeated version, each profile's version offered). The record fields
// (status, since, until, witness, agentCards) are optional here but are
// checked when present. It returns nil or a [*ValidationError].
func (f *A2A) Validate() error { return asError(f.violations(false)) }

// ValidateRecord is [A2A.Validate] for the `a2a` record of a discovery
// document, which also requires status, since and witness, and ties until
// to status (forbidden when stable, required otherwise).
func (f *A2A) ValidateRecord() error { return asError(f.violations(true)) }

// Validate checks f against the mcp facet schema and the cross-field rules;
// see [A2A.Validate].
func (f *MCP) Validate() error { return asError(f.violations(false)) }

// ValidateRecord is [MCP.Validate] for the `mcp` record of a discovery
// document; see [A2A.ValidateRecord].
func (f *MCP) ValidateRecord() error { return asError(f.violations(true)) }

// Validate checks both facets of s and reports all their violations
// together. A Set that advertises neither facet is itself a violation:
// there is nothing to negotiate with.
func (s Set) Validate() error { return asError(s.violations(false)) }

// ValidateRecord is [Set.Validate] with both facets read as discovery
// records; see [A2A.ValidateRecord].
func (s Set) ValidateRecord() error { return asError(s.violations(true)) }

// CheckUntil reports an until that has already passed. It needs a clock,
// so it is kept apart from ValidateRecord: a document that was valid
// when it was written does not become malformed, only out of date. An
// until given as a full-date before now's UTC date is a violation at
// "<p>.until"; an until that names an OpenWOP version, is empty, or is not
// a real date (which ValidateRecord reports) yields nil.
func (r Record) CheckUntil(p Protocol, now time.Time) error {
	until, err := ParseDate(r.Until)
	if err != nil {
		return nil
	}
	y, m, d := now.UTC().Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	if !until.Before(today) {
		return nil
	}
	return &ValidationError{[]Violation{{string(p) + ".until", "until-in-past",
		fmt.Sprintf("until %s is in the past (today is %s)", r.Until, today.Format(time.DateOnly))}}}
}

// asError wraps violations, in path order, as a *ValidationError.
func asError(vs []Violation) error {
	if len(vs) == 0 {
		return nil
	}
	sortViolations(vs)
	return &ValidationError{vs}
}

func (s Set) violations(record bool) []Violation {
	if s.A2A == nil && s.MCP == nil {
		return []Violation{{"", "required", "advertises neither a2a nor mcp"}}
	}
	var vs []Violation
	if s.A2A != nil {
		vs = append(vs, s.A2A.violations(record)...)
	}
	if s.MCP != nil {
		vs = append(vs, s.MCP.violations(record)...)
	}
	return vs
}

func (f *A2A) violations(record bool) []Violation {
	if f == nil {
		return []Violation{{"a2a", "required", "the a2a facet is missing"}}
	}
	vs := fieldViolations(ProtocolA2A, f, record)
	vs = append(vs, offerViolations(offer{ProtocolA2A, "versions", "preferredVersion", "minimumVersion",
		f.Versions, f.PreferredVersion, f.MinimumVersion, f.Profiles})...)
	return append(vs, untilViolations(ProtocolA2A, f.Record, record)...)
}

func (f *MCP) violations(record bool) []Violation {
	if f == nil {
		return []Violation{{"mcp", "required", "the mcp facet is missing"}}
	}
	vs := fieldViolations(ProtocolMCP, f, record)
	vs = append(vs, offerViolations(offer{ProtocolMCP, "revisions", "preferredVersion", "minimumRevision",
		f.Revisions, f.PreferredVersion, f.MinimumRevision, f.Profiles})...)
	return append(vs, untilViolations(ProtocolMCP, f.Record, record)...)
}

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
	_, err := ParseVersion(p, s)
	return err == nil
}

func validDate(s string) bool {
	_, err := ParseDate(s)
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
func describe(tag, field string, value any) (rule, msg string) {
	s, _ := value.(string)
	switch tag {
	case "required":
		return "required", field + " is required"
	case "inrecord":
		return "required", field + " is required in a discovery record"
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
	}
	return tag, fmt.Sprintf("%s fails rule %q", field, tag)
}

// detail says why s is not a version of p, when that says more than the
// grammar already quoted in the message (a leading zero, an overflow, a
// day the calendar does not have).
func detail(p Protocol, s string) string {
	var ve *VersionError
	if _, err := ParseVersion(p, s); errors.As(err, &ve) && !strings.Contains(ve.Problem, "want") {
		return ": " + ve.Problem
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
	pref, prefErr := ParseVersion(o.p, o.preferred)
	floor, floorErr := ParseVersion(o.p, o.floor)
	if wellFormed {
		if prefErr == nil && !slices.Contains(o.list, o.preferred) {
			vs = append(vs, Violation{path + o.prefName, "member",
				fmt.Sprintf("%q is not one of the offered %s", o.preferred, o.listName)})
		}
		if floorErr == nil && !slices.Contains(o.list, o.floor) {
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
	if prefErr == nil && floorErr == nil && floor.Compare(pref) > 0 {
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
