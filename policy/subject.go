package policy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wopneg/wopneg/internal/strictjson"
)

// Subject is the v2 caller identity (schemas/v2/subject.schema.json): who
// is negotiating. It is closed: JSON with any other key is refused. The
// package negotiate re-exports it as negotiate.Subject.
type Subject struct {
	// Issuer is the lane's trust root: 1–1024 characters, no whitespace.
	Issuer string `json:"issuer"`
	// SubjectID is opaque and never PII: 1–256 characters, no whitespace or '/'.
	SubjectID string `json:"subjectId"`
	// Tenant is 1–128 of A–Z a–z 0–9 . _ ~ -.
	Tenant string `json:"tenant"`
	// Lane is how the Subject was resolved; see the Lane constants.
	Lane string `json:"lane"`
	// Kind is user, agent, anonymous or workload.
	Kind string `json:"kind"`
	// KeyClass is present exactly when Lane is saml or scim.
	KeyClass string `json:"keyClass,omitzero"`
	// Actor is the party acting for this Subject, such as the peer that
	// forwarded an end user; at most four levels deep (the schema's
	// actor1..actor4).
	Actor *Subject `json:"actor,omitzero"`
}

// The lanes, kinds and key classes of the v2 Subject schema.
const (
	LaneAPIKey    = "api-key"
	LaneOAuth2    = "oauth2"
	LaneOIDC      = "oidc"
	LaneMTLS      = "mtls"
	LaneSAML      = "saml"
	LaneSCIM      = "scim"
	LaneLDAP      = "ldap"
	LaneWorkload  = "workload"
	LaneSession   = "session"
	LaneAnonymous = "anonymous"

	KindUser      = "user"
	KindAgent     = "agent"
	KindAnonymous = "anonymous"
	KindWorkload  = "workload"

	KeyClassOpaqueIDP           = "opaque-idp"
	KeyClassConfiguredImmutable = "configured-immutable"
)

// maxActorDepth is how many actors may nest under a Subject; the schema's
// fifth level (actor5) does not exist.
const maxActorDepth = 4

// readActors is how many actors [Subject.UnmarshalJSON] reads and the
// anonymity walk looks at: one more than a valid Subject holds, so that
// Validate reports the fifth at its path, and not one more than that.
const readActors = 5 // maxActorDepth + 1, written out: a constant expression is a mutant no test can reach

// SubjectError is one way a Subject breaks the v2 Subject schema, at the
// JSON path of the offending field. [Subject.Validate] reports every one it
// finds: a single *SubjectError, or, when there are several, an error whose
// Unwrap() []error lists them in order (errors.As finds the first); its
// message names them all.
type SubjectError struct {
	// Path is the JSON path of the offending field, such as
	// "subject.actor.tenant".
	Path string
	// Message says what is wrong with it.
	Message string
}

// Error returns "invalid subject: path: message".
func (e *SubjectError) Error() string {
	return subjectErrorPrefix + e.Path + ": " + e.Message
}

const subjectErrorPrefix = "invalid subject: "

// subjectErrors is what Validate returns for more than one violation.
type subjectErrors []*SubjectError

func (es subjectErrors) Error() string {
	var b strings.Builder
	b.WriteString(subjectErrorPrefix)
	for i, e := range es {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(e.Path + ": " + e.Message)
	}
	return b.String()
}

func (es subjectErrors) Unwrap() []error {
	errs := make([]error, len(es))
	for i, e := range es {
		errs[i] = e
	}
	return errs
}

// Validate checks s against the v2 Subject schema and reports every
// violation (see [SubjectError]); nil when s is valid. A nil Subject is
// invalid.
func (s *Subject) Validate() error {
	var problems subjectErrors
	s.walk(func(depth int, field, value, problem string) bool {
		path := actorPath(depth)
		if field != "" {
			path += "." + field
		}
		msg := problem
		if value != "" {
			msg = fmt.Sprintf("%q %s", value, problem)
		}
		problems = append(problems, &SubjectError{path, msg})
		return true
	})
	if len(problems) == 0 {
		return nil
	}
	if len(problems) == 1 {
		return problems[0]
	}
	return problems
}

// valid reports whether s passes Validate, without building any message.
func (s *Subject) valid() bool {
	ok := true
	s.walk(func(int, string, string, string) bool { ok = false; return false })
	return ok
}

// anonymous reports whether s, or any actor in its chain, is anonymous by
// kind or by lane. A nil Subject is anonymous, and so is a chain that goes
// on past the five actors the decoder reads (a longer one, or a cycle built
// in Go): no such chain is a valid Subject, and the walk must end.
func (s *Subject) anonymous() bool {
	if s == nil {
		return true
	}
	for range readActors + 1 {
		if s.Kind == KindAnonymous || s.Lane == LaneAnonymous {
			return true
		}
		if s = s.Actor; s == nil {
			return false
		}
	}
	return true
}

// walk reports each problem to report, stopping early when it returns false.
func (s *Subject) walk(report func(depth int, field, value, problem string) bool) {
	if s == nil {
		report(0, "", "", "is missing")
		return
	}
	for depth := 0; s != nil; depth, s = depth+1, s.Actor {
		if depth > maxActorDepth {
			report(depth, "", "", fmt.Sprintf("nests deeper than %d actors", maxActorDepth))
			return
		}
		checks := [...]struct {
			field, value, problem string
		}{
			{"issuer", s.Issuer, issuerProblem(s.Issuer)},
			{"subjectId", s.SubjectID, subjectIDProblem(s.SubjectID)},
			{"tenant", s.Tenant, tenantProblem(s.Tenant)},
			{"lane", s.Lane, laneProblem(s.Lane)},
			{"kind", s.Kind, kindProblem(s.Kind)},
			{"keyClass", s.KeyClass, keyClassProblem(s.Lane, s.KeyClass)},
			{"kind", "", anonymityProblem(s.Lane, s.Kind)},
		}
		for _, c := range checks {
			if c.problem != "" && !report(depth, c.field, c.value, c.problem) {
				return
			}
		}
	}
}

// The problem functions are chains of ifs rather than switches so that a
// mutation tester sees every condition as covered code.

func issuerProblem(v string) string {
	return textProblem(v, "issuer", 1024, isSpace, &asciiSpace, "whitespace")
}

func subjectIDProblem(v string) string {
	return textProblem(v, "subjectId", 256, isSlashOrSpace, &asciiSlashOrSpace, "whitespace or '/'")
}

// textProblem is the problem of a required field of text: v, at most max
// characters, none of which may be bad (the characters named); ascii is
// bad for the ASCII characters, read from a table because a Subject is
// checked on every request that carries one, and an issuer is a URL of
// ASCII that unicode.IsSpace, called per character, made the most of the
// check.
func textProblem(v, field string, max int, bad func(rune) bool, ascii *[utf8.RuneSelf]bool, named string) string {
	if v == "" {
		return "is empty; the " + field + " is required"
	}
	if !utf8.ValidString(v) {
		return "is not valid UTF-8"
	}
	chars, hasBad := 0, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < utf8.RuneSelf {
			chars++
			hasBad = hasBad || ascii[c]
			continue
		}
		r, size := utf8.DecodeRuneInString(v[i:])
		chars++
		hasBad = hasBad || bad(r)
		i += size - 1
	}
	if chars > max {
		return "is longer than " + strconv.Itoa(max) + " characters"
	}
	if hasBad {
		return "contains " + named
	}
	return ""
}

// asciiSpace and asciiSlashOrSpace are isSpace and isSlashOrSpace for the
// ASCII characters.
var asciiSpace, asciiSlashOrSpace = asciiTable(isSpace), asciiTable(isSlashOrSpace)

func asciiTable(bad func(rune) bool) (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = bad(rune(c))
	}
	return t
}

func tenantProblem(v string) string {
	if v == "" {
		return "is empty; the tenant is required"
	}
	if len(v) > 128 {
		return "is longer than 128 characters"
	}
	for i := 0; i < len(v); i++ {
		if !isTenantByte(v[i]) {
			return "may hold only A-Z a-z 0-9 . _ ~ -"
		}
	}
	return ""
}

func isTenantByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '.' || c == '_' || c == '~' || c == '-'
}

func laneProblem(v string) string {
	switch v {
	case LaneAPIKey, LaneOAuth2, LaneOIDC, LaneMTLS, LaneSAML, LaneSCIM, LaneLDAP,
		LaneWorkload, LaneSession, LaneAnonymous:
		return ""
	}
	return "is not a lane (api-key, oauth2, oidc, mtls, saml, scim, ldap, workload, session, anonymous)"
}

func kindProblem(v string) string {
	switch v {
	case KindUser, KindAgent, KindAnonymous, KindWorkload:
		return ""
	}
	return "is not a kind (user, agent, anonymous, workload)"
}

func keyClassProblem(lane, keyClass string) string {
	needs := lane == LaneSAML || lane == LaneSCIM
	if needs && keyClass == "" {
		return "is missing; lane " + lane + " requires a keyClass"
	}
	if !needs && keyClass != "" {
		return "is allowed only with lane saml or scim"
	}
	if keyClass != "" && keyClass != KeyClassOpaqueIDP && keyClass != KeyClassConfiguredImmutable {
		return "is not a key class (opaque-idp, configured-immutable)"
	}
	return ""
}

func anonymityProblem(lane, kind string) string {
	if (kind == KindAnonymous) != (lane == LaneAnonymous) {
		return "kind " + quote(kind) + " and lane " + quote(lane) + " must both be anonymous or neither be"
	}
	return ""
}

func quote(s string) string { return `"` + s + `"` }

func isSlashOrSpace(r rune) bool { return r == '/' || isSpace(r) }

// isSpace is JSON Schema's \s (ECMAScript whitespace) widened by Go's
// unicode.IsSpace, the stricter union of the two.
func isSpace(r rune) bool { return unicode.IsSpace(r) || r == '\ufeff' }

// UnmarshalJSON reads a Subject strictly: the object is closed at every
// level, so a key that is not exactly one of the schema's is an error, as
// is a repeated one or a string field that is not a string. It does not
// validate field values; call Validate for that. A JSON null leaves s
// unchanged, and an actor of null is no actor.
//
// The actor chain is read once, from the front: the fifth actor is read
// (Validate reports it), and an actor below it is refused before any of
// its bytes are looked at, so a chain of any length costs at most six
// objects' worth of reading. Errors are a [*SubjectError], at its JSON
// path.
func (s *Subject) UnmarshalJSON(data []byte) error {
	r := strictjson.NewReader(data, readActors+1)
	if k, err := r.Next(); err == nil && k == strictjson.Null {
		if err := r.Skip(); err != nil {
			return readError(err)
		}
		return readError(r.End())
	}
	var out Subject
	if err := readSubject(r, &out, 0); err != nil {
		return readError(err)
	}
	if err := r.End(); err != nil {
		return readError(err)
	}
	*s = out
	return nil
}

// readSubject reads the Subject at actor level depth (0 for the caller).
func readSubject(r *strictjson.Reader, s *Subject, depth int) error {
	strs := [...]struct {
		key string
		dst *string
	}{{"issuer", &s.Issuer}, {"subjectId", &s.SubjectID}, {"tenant", &s.Tenant}, {"lane", &s.Lane}, {"kind", &s.Kind}, {"keyClass", &s.KeyClass}}
	return r.Object(func(key string) error {
		for _, f := range strs {
			if f.key == key {
				v, err := r.String()
				*f.dst = v
				return err
			}
		}
		if key != "actor" {
			return problem(actorPath(depth), fmt.Sprintf("unknown field %q", key))
		}
		if k, err := r.Next(); err != nil || k == strictjson.Null {
			return err // null: no actor; Object skips it
		}
		if depth == readActors {
			return problem(actorPath(depth+1), fmt.Sprintf("nests deeper than %d actors", maxActorDepth))
		}
		s.Actor = new(Subject)
		return readSubject(r, s.Actor, depth+1)
	})
}

// actorPath is the path of the Subject at actor level depth, as Validate
// writes it.
func actorPath(depth int) string {
	return "subject" + strings.Repeat(".actor", depth)
}

// problem is a *SubjectError at path.
func problem(path, msg string) *SubjectError {
	return &SubjectError{path, msg}
}

// readError turns what reading a Subject returned into a *SubjectError.
// The Reader's paths start at a member of the Subject, whose keys are all
// identifiers.
func readError(err error) error {
	if err == nil {
		return nil
	}
	var se *SubjectError
	if errors.As(err, &se) {
		return se
	}
	var e *strictjson.Error
	if !errors.As(err, &e) { // every other error is the Reader's
		return problem("subject", err.Error())
	}
	if e.Path != "" {
		return problem("subject."+e.Path, e.Msg)
	}
	return problem("subject", e.Msg)
}
