package vectors

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/strictjson"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/mrtr"
	"github.com/wopneg/wopneg/policy"
)

//go:embed data/*.json
var vectorFiles embed.FS

// The kinds of vector.
const (
	KindDecide  = "decide"
	KindDigest  = "digest"
	KindSubject = "subject"
	KindRefresh = "refresh"
	KindRounds  = "rounds"
)

// File is one vectors file: named facet sets its vectors may refer to, a
// default clock, and the vectors.
type File struct {
	Facets  map[string]facets.Set `json:"facets,omitzero"`
	Now     time.Time             `json:"now,omitzero"`
	Vectors []Vector              `json:"vectors"`
}

// Vector is one expectation, as data. Which fields it uses depends on Kind:
//
//   - decide: Facets (a name) or Facet, Subject, Offer, Policy, Now; Want
//     needs outcome, reason and rule.
//   - digest: Peer; Want needs digest and origin, or error. It is run
//     through the decide function, so a host's wrapper is checked too.
//   - subject: Subject; Want needs valid and authenticated. It is run
//     through the decide function on a facet where only authentication
//     separates a downgrade from a refusal.
//   - refresh: RefreshedAt, Now; Want needs refresh.
//   - rounds: MaxRounds; Want needs allowed.
type Vector struct {
	Name string `json:"name"`
	// Kind is one of the Kind constants; empty means decide.
	Kind string `json:"kind,omitzero"`
	// Source says where the expectation comes from (a row of the digest's
	// test vectors, a rule of the decision).
	Source string `json:"source,omitzero"`

	Facets      string             `json:"facets,omitzero"`
	Facet       *facets.Set        `json:"facet,omitzero"`
	Subject     *negotiate.Subject `json:"subject,omitzero"`
	Offer       negotiate.Offer    `json:"offer,omitzero"`
	Policy      PolicySpec         `json:"policy,omitzero"`
	Now         time.Time          `json:"now,omitzero"`
	Peer        string             `json:"peer,omitzero"`
	RefreshedAt string             `json:"refreshedAt,omitzero"`
	MaxRounds   int                `json:"maxRounds,omitzero"`

	Want Want `json:"want"`
}

// Want is what a vector expects.
type Want struct {
	// Outcome is accepted, downgraded or refused (decide).
	Outcome string `json:"outcome,omitzero"`
	// Version is the version settled on; empty when refused (decide).
	Version string `json:"version,omitzero"`
	// Reason is the audit reason (decide).
	Reason string `json:"reason,omitzero"`
	// Rule names the deciding rule: input, floor, offered, common,
	// authenticated, policy, accept (decide).
	Rule string `json:"rule,omitzero"`
	// CounterOffered expects a counter-offer (decide).
	CounterOffered bool `json:"counterOffered,omitzero"`
	// Event lists payload fields to match exactly, beyond those derived
	// from the rest of Want (decide).
	Event map[string]string `json:"event,omitzero"`

	// Origin and Digest are the peer's origin and its digest (digest).
	Origin string `json:"origin,omitzero"`
	Digest string `json:"digest,omitzero"`
	// Error expects the input to be refused as having no origin (digest).
	Error bool `json:"error,omitzero"`

	// Valid and Authenticated are the Subject's verdicts (subject).
	Valid         *bool `json:"valid,omitzero"`
	Authenticated *bool `json:"authenticated,omitzero"`

	// Refresh is ok, stale, future or malformed (refresh).
	Refresh string `json:"refresh,omitzero"`

	// Allowed is how many rounds pass before the next is refused, or -1
	// when the limit itself is invalid (rounds).
	Allowed *int `json:"allowed,omitzero"`
}

// Shipped returns every vector shipped with the package, in file order,
// each named "file/name". It fails on a file that does not parse, a
// duplicate name, a reference to an unknown facet set, or a vector whose
// expectation is empty.
func Shipped() ([]Vector, error) { return Load(vectorFiles, "data") }

// Load reads every *.json vectors file in dir of fsys, as [Shipped]
// does for the shipped ones.
func Load(fsys fs.FS, dir string) ([]Vector, error) {
	return LoadFiles(fsys, dir,
		func(f *File) []Vector { return f.Vectors },
		func(v *Vector) *string { return &v.Name },
		func(f *File, v *Vector) error {
			if v.Facets != "" {
				set, ok := f.Facets[v.Facets]
				if !ok {
					return fmt.Errorf("no facet set named %q", v.Facets)
				}
				v.Facet = &set
			}
			if v.Now.IsZero() {
				v.Now = f.Now
			}
			return v.complete()
		})
}

// LoadFiles reads every *.json file in dir of fsys, in name order, each
// into a fresh F through the module's strict JSON reader, and returns the
// vectors each holds (vectorsOf), in order. Each vector's name (name) is
// prefixed with its file's base name and a slash, "file/name", and must be
// unique; then finish completes and checks it against its file. It fails
// on a file that does not read or parse, a duplicate name, an error of
// finish (named with the file and the vector), and when there are no
// vectors at all.
func LoadFiles[F, V any](fsys fs.FS, dir string, vectorsOf func(*F) []V, name func(*V) *string, finish func(*F, *V) error) ([]V, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var all []V
	seen := map[string]bool{}
	for _, file := range names {
		data, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, err
		}
		var f F
		if err := strictjson.Decode(data, &f); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		base := strings.TrimSuffix(path.Base(file), ".json")
		for _, v := range vectorsOf(&f) {
			n := name(&v)
			*n = base + "/" + *n
			if seen[*n] {
				return nil, fmt.Errorf("%s: duplicate vector name %q", file, *n)
			}
			seen[*n] = true
			if err := finish(&f, &v); err != nil {
				return nil, fmt.Errorf("%s: vector %q: %w", file, *n, err)
			}
			all = append(all, v)
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("no vectors in %s", dir)
	}
	return all, nil
}

// complete refuses a vector that could not fail: one whose expectation
// leaves out what its kind decides.
func (v *Vector) complete() error {
	w := v.Want
	var missing []string
	need := func(ok bool, field string) {
		if !ok {
			missing = append(missing, field)
		}
	}
	switch v.Kind {
	case "", KindDecide:
		need(v.Facet != nil, "facet or facets")
		need(w.Outcome != "", "want.outcome")
		need(w.Reason != "", "want.reason")
		need(w.Rule != "", "want.rule")
		need(w.Outcome == "refused" || w.Version != "", "want.version")
	case KindDigest:
		need(v.Peer != "", "peer")
		need(w.Error || w.Digest != "" && w.Origin != "", "want.digest and want.origin, or want.error")
	case KindSubject:
		need(w.Valid != nil, "want.valid")
		need(w.Authenticated != nil, "want.authenticated")
	case KindRefresh:
		need(w.Refresh != "", "want.refresh")
	case KindRounds:
		need(w.Allowed != nil, "want.allowed")
	default:
		return fmt.Errorf("unknown kind %q", v.Kind)
	}
	if (v.Kind == "" || v.Kind == KindDecide || v.Kind == KindRefresh) && v.Now.IsZero() {
		need(false, "now")
	}
	if len(missing) > 0 {
		return fmt.Errorf("vacuous: no %s", strings.Join(missing, ", "))
	}
	return nil
}

// fixedNow is the clock of vectors that do not need one of their own.
var fixedNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// The facets the subject and digest vectors run on: on wide, an offer of
// [1.0, 1.1] with no requested version settles at 1.1, below preferred
// 1.2, so authentication alone decides between a downgrade and a refusal.
var (
	wideA2A = facets.Set{A2A: &facets.A2A{
		Versions: []string{"1.0", "1.1", "1.2"}, PreferredVersion: "1.2", MinimumVersion: "1.1", RefreshedAt: "2026-11-01",
	}}
	referenceA2A = facets.Set{A2A: &facets.A2A{
		Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0", RefreshedAt: "2026-11-01",
	}}
)

// Check runs v against decide and returns every way the result differs
// from the expectation, joined; nil when it matches.
func (v Vector) Check(decide DecideFunc) error {
	if decide == nil {
		decide = negotiate.Decide
	}
	if err := v.complete(); err != nil {
		return err
	}
	c := &checker{}
	switch v.Kind {
	case "", KindDecide:
		v.checkDecide(c, decide)
	case KindDigest:
		v.checkDigest(c, decide)
	case KindSubject:
		v.checkSubject(c, decide)
	case KindRefresh:
		v.checkRefresh(c)
	case KindRounds:
		v.checkRounds(c)
	}
	return errors.Join(c.errs...)
}

type checker struct{ errs []error }

func (c *checker) eq(what string, got, want any) {
	if !reflect.DeepEqual(got, want) {
		c.errs = append(c.errs, fmt.Errorf("%s = %#v, want %#v", what, got, want))
	}
}

func (c *checker) failf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

func (v Vector) checkDecide(c *checker, decide DecideFunc) {
	r := Request{Subject: v.Subject, Facet: *v.Facet, Offer: v.Offer, Policy: v.Policy, Now: v.Now}
	a, o := r.Decide(decide)
	w := v.Want
	c.eq("outcome", a.Outcome, w.Outcome)
	c.eq("version", a.Version, w.Version)
	c.eq("reason", string(a.Reason), w.Reason)
	c.eq("rule", a.Rule, w.Rule)
	c.eq("counterOffered", a.CounterOffered, w.CounterOffered)
	checkAnswer(c, r, a, o)
	for field, want := range w.Event {
		got, ok := eventField(a.Event, field)
		if !ok {
			c.failf("want.event names unknown field %q", field)
			continue
		}
		c.eq("event."+field, got, want)
	}
}

// checkAnswer checks what every decision must hold whatever its vector:
// the refusal error, and an event that agrees with the outcome, is valid
// and content-free.
func checkAnswer(c *checker, r Request, a Answer, o negotiate.Outcome) {
	e := a.Event
	refused := a.Outcome == "refused"
	if refused {
		c.eq("status", a.Status, 400)
		if a.Error == nil {
			c.failf("refused without an error envelope")
		} else {
			c.eq("error.code", a.Error.Code, wperrors.InteropVersionUnsupported)
			c.eq("error.details.protocol", a.Error.Details["protocol"], string(r.Offer.Protocol))
			c.eq("error.details.reason", a.Error.Details["reason"], string(a.Reason))
			wantRequested := r.Offer.Requested
			if adv, ok := r.Facet.Lookup(r.Offer.Protocol); ok && wantRequested == "" {
				wantRequested = adv.Preferred
			}
			c.eq("error.details.requested", a.Error.Details["requested"], wantRequested)
		}
		c.eq("event.outcome", e.Outcome, "refused")
		c.eq("event.version", e.Version, "")
	} else {
		c.eq("status", a.Status, 0)
		if a.Error != nil {
			c.failf("accepted with an error %v", a.Error)
		}
		c.eq("event.outcome", e.Outcome, "accepted")
		c.eq("event.version", e.Version, a.Version)
	}
	c.eq("event.reason", e.Reason, a.Reason)
	c.eq("event.protocol", e.Protocol, r.Offer.Protocol)
	c.eq("event.at", e.At, r.Now.UTC())
	if r.Offer.Protocol.Valid() {
		if err := e.Validate(); err != nil {
			c.failf("event does not validate: %v", err)
		}
	}
	wantRequested := ""
	if _, err := facets.ParseVersion(r.Offer.Protocol, r.Offer.Requested); err == nil {
		wantRequested = r.Offer.Requested
	}
	c.eq("event.requested", e.Requested, wantRequested)
	if adv, ok := r.Facet.Lookup(r.Offer.Protocol); ok && o.Rule != negotiate.RuleInput {
		c.eq("event.floor", e.Floor, adv.Floor)
	}
	if r.Offer.Peer != "" {
		if origin, err := events.Origin(r.Offer.Peer); err == nil {
			c.eq("event.peerDigest", e.PeerDigest, sha256Hex(origin))
			for _, field := range []string{"protocol", "outcome", "version", "requested", "reason", "floor", "peerDigest"} {
				if s, _ := eventField(e, field); strings.Contains(s, peerHost(origin)) {
					c.failf("event.%s %q holds the peer host %q", field, s, peerHost(origin))
				}
			}
		} else {
			c.eq("event.peerDigest", e.PeerDigest, "")
		}
	}
}

// peerHost is the hostname of an origin, without brackets or port: the
// part a content-free event must never hold.
func peerHost(origin string) string {
	host := origin[strings.Index(origin, "://")+3:]
	if strings.HasPrefix(host, "[") {
		return host[1:strings.Index(host, "]")]
	}
	host, _, _ = strings.Cut(host, ":")
	return host
}

// eventFields read the payload's fields by their JSON names.
var eventFields = map[string]func(events.NegotiationDecided) string{
	"protocol":   func(e events.NegotiationDecided) string { return string(e.Protocol) },
	"outcome":    func(e events.NegotiationDecided) string { return string(e.Outcome) },
	"version":    func(e events.NegotiationDecided) string { return e.Version },
	"requested":  func(e events.NegotiationDecided) string { return e.Requested },
	"reason":     func(e events.NegotiationDecided) string { return string(e.Reason) },
	"floor":      func(e events.NegotiationDecided) string { return e.Floor },
	"peerDigest": func(e events.NegotiationDecided) string { return e.PeerDigest },
	"at":         func(e events.NegotiationDecided) string { return e.At.Format(time.RFC3339Nano) },
}

func eventField(e events.NegotiationDecided, field string) (string, bool) {
	get, ok := eventFields[field]
	if !ok {
		return "", false
	}
	return get(e), true
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func (v Vector) clock() time.Time {
	if v.Now.IsZero() {
		return fixedNow
	}
	return v.Now
}

func (v Vector) checkDigest(c *checker, decide DecideFunc) {
	r := Request{
		Facet: referenceA2A,
		Offer: negotiate.Offer{Protocol: facets.ProtocolA2A, Peer: v.Peer, PeerVersions: []string{"1.0"}},
		Now:   v.clock(),
	}
	a, o := r.Decide(decide)
	if v.Want.Error {
		c.eq("outcome", a.Outcome, "refused")
		c.eq("rule", a.Rule, "input")
		c.eq("event.peerDigest", a.Event.PeerDigest, "")
		if _, err := events.PeerDigest(v.Peer); !isNoOrigin(err) {
			c.failf("PeerDigest(%q) error = %v, want the *events.FieldError of the peer", v.Peer, err)
		}
		return
	}
	if got := sha256Hex(v.Want.Origin); got != v.Want.Digest {
		c.failf("the vector is inconsistent: sha256(%q) = %s, not want.digest", v.Want.Origin, got)
	}
	origin, err := events.Origin(v.Peer)
	c.eq("Origin", origin, v.Want.Origin)
	if err != nil {
		c.failf("Origin(%q): %v", v.Peer, err)
	}
	c.eq("outcome", a.Outcome, "accepted")
	c.eq("event.peerDigest", a.Event.PeerDigest, v.Want.Digest)
	checkAnswer(c, r, a, o)
}

func (v Vector) checkSubject(c *checker, decide DecideFunc) {
	c.eq("valid", v.Subject.Validate() == nil, *v.Want.Valid)
	r := Request{
		Subject: v.Subject,
		Facet:   wideA2A,
		Offer:   negotiate.Offer{Protocol: facets.ProtocolA2A, PeerVersions: []string{"1.0", "1.1"}},
		Now:     v.clock(),
	}
	a, o := r.Decide(decide)
	if *v.Want.Authenticated {
		c.eq("outcome", a.Outcome, "downgraded")
		c.eq("version", a.Version, "1.1")
		c.eq("rule", a.Rule, "accept")
	} else {
		c.eq("outcome", a.Outcome, "refused")
		c.eq("reason", string(a.Reason), string(events.ReasonUnauthenticated))
		c.eq("rule", a.Rule, "authenticated")
	}
	checkAnswer(c, r, a, o)
}

// refreshKinds name the refresh SLA's verdicts, by the rule of the
// facets.Violation, as refresh vectors spell them.
var refreshKinds = map[string]string{"refresh-stale": "stale", "refresh-future": "future", "date": "malformed"}

func (v Vector) checkRefresh(c *checker) {
	err := facets.CheckRefresh(facets.Advertised{Protocol: facets.ProtocolA2A, RefreshedAt: v.RefreshedAt}, v.Now)
	got := "ok"
	if err != nil {
		got = err.Error() // an error of no kind above reads as itself, never as ok
		var v *facets.Violation
		if errors.As(err, &v) && refreshKinds[v.Rule] != "" {
			got = refreshKinds[v.Rule]
		}
	}
	c.eq("refresh", got, v.Want.Refresh)
}

func (v Vector) checkRounds(c *checker) {
	allowed := *v.Want.Allowed
	r, err := mrtr.NewGuard(v.MaxRounds)
	if allowed == -1 {
		if err == nil {
			c.failf("NewGuard(%d) accepted an invalid limit", v.MaxRounds)
		}
		return
	}
	if err != nil {
		c.failf("NewGuard(%d): %v", v.MaxRounds, err)
		return
	}
	for round := 1; round <= allowed; round++ {
		if err := r.Next(); err != nil {
			c.failf("round %d refused: %v", round, err)
			return
		}
	}
	err = r.Next()
	var we *wperrors.Error
	if !errors.As(err, &we) {
		c.failf("round %d = %v, want mcp_mrtr_rounds_exceeded", allowed+1, err)
		return
	}
	c.eq("error.code", we.Code, wperrors.MCPRoundsExceeded)
	c.eq("status", we.Code.HTTPStatus(), 422)
	c.eq("details", we.Details, map[string]any{"rounds": allowed + 1, "maxRounds": v.MaxRounds})
}

// DecideFunc has the shape of [negotiate.Decide]; a host that wraps the
// decision (in middleware, say) exposes one to run the vectors against.
type DecideFunc func(*negotiate.Subject, facets.Set, negotiate.Offer, policy.Policy) (negotiate.Outcome, events.NegotiationDecided)

// Compiled is a DecideFunc that compiles the facets with [negotiate.Compile]
// on every call and decides with the Negotiator, so the vectors can check
// that the compiled form gives the answers of the pure one. Facets that do
// not compile have no Negotiator; they are decided by [negotiate.Decide].
func Compiled(subject *negotiate.Subject, set facets.Set, offer negotiate.Offer, p policy.Policy) (negotiate.Outcome, events.NegotiationDecided) {
	n, err := negotiate.Compile(set, p)
	if err != nil {
		return negotiate.Decide(subject, set, offer, p)
	}
	return n.Decide(subject, offer)
}

// PolicySpec is a [policy.Policy] in data form, for vectors and the CLI.
type PolicySpec struct {
	// DenyDowngrade sets Policy.DenyDowngrade.
	DenyDowngrade bool `json:"denyDowngrade,omitzero"`
	// DenyDowngradeTo denies a downgrade to any of these versions, through
	// Policy.DowngradeDenied.
	DenyDowngradeTo []string `json:"denyDowngradeTo,omitzero"`
	// DistrustIssuers demotes Subjects from these issuers to
	// unauthenticated, through Policy.Authenticated.
	DistrustIssuers []string `json:"distrustIssuers,omitzero"`
	// RequireAudit sets Policy.RequireAudit.
	RequireAudit bool `json:"requireAudit,omitzero"`
}

// Policy returns the policy s describes, with a clock stopped at now.
func (s PolicySpec) Policy(now time.Time) policy.Policy {
	p := policy.Policy{
		DenyDowngrade: s.DenyDowngrade,
		RequireAudit:  s.RequireAudit,
		Now:           func() time.Time { return now },
	}
	// Empty lists deny and distrust nothing, so the hooks can always be set.
	deny, distrust := slices.Clone(s.DenyDowngradeTo), slices.Clone(s.DistrustIssuers)
	p.DowngradeDenied = func(d policy.Downgrade) bool { return slices.Contains(deny, d.To) }
	p.Authenticated = func(s *policy.Subject) bool { return !slices.Contains(distrust, s.Issuer) }
	return p
}

// Request is one negotiation in data form: the input of `wopneg decide`,
// and the input half of a decision vector.
type Request struct {
	// Subject is the caller; null for none.
	Subject *negotiate.Subject `json:"subject"`
	// Facet advertises a2a, mcp or both.
	Facet facets.Set `json:"facet"`
	// Offer is what the requesting side put on the table. When its protocol
	// is absent and Facet advertises exactly one protocol, that one is meant.
	Offer negotiate.Offer `json:"offer"`
	// Policy tightens the reference rules.
	Policy PolicySpec `json:"policy"`
	// Now is the decision's clock.
	Now time.Time `json:"now"`
}

// requestJSON is a Request's wire form: an offer that may leave out
// peerVersions, and a clock that may be a date.
type requestJSON struct {
	Subject *negotiate.Subject `json:"subject"`
	Facet   facets.Set         `json:"facet"`
	Offer   offerJSON          `json:"offer"`
	Policy  PolicySpec         `json:"policy"`
	Now     *string            `json:"now"`
}

// offerJSON is negotiate.Offer with peerVersions' absence kept: an absent
// (or null) list makes the request inbound, an empty one is a peer that
// speaks nothing.
type offerJSON struct {
	Protocol     facets.Protocol `json:"protocol"`
	Peer         string          `json:"peer"`
	Requested    string          `json:"requested"`
	PeerVersions *[]string       `json:"peerVersions"`
	CounterOffer bool            `json:"counterOffer"`
}

// DecodeRequest reads a Request through the module's one strict JSON
// reader: keys match exactly (no case folding), every object is closed, a
// repeated key, a second JSON value and nesting past the bound are
// refused, and every error names the JSON path at fault. It checks the
// JSON's shape, not its values; see [Request.Validate] and
// [ParseRequest]. The members of the request, of its offer and of its
// policy are read one at a time, so that its error, a [RequestError],
// lists every member of the wrong shape, not only the first; the facet
// reports every shape problem of its own, and the subject its first.
// Syntax, a repeated key or a second value ends the reading, and is
// reported with what was found before it.
//
// When offer.protocol is absent and the facet advertises exactly one
// protocol, that one is meant. When offer.peerVersions is absent (or
// null) the request is inbound: the peer speaks what it requested, or the
// preferred version when it requested nothing, as [negotiate.InboundOffer]
// has it; an explicit [] is a peer that speaks nothing. now is an RFC
// 3339 time or a date YYYY-MM-DD (its midnight UTC).
func DecodeRequest(data []byte) (Request, error) {
	r, problems, _, _ := readRequest(data, func(raw []byte, set *facets.Set) error { return set.UnmarshalJSON(raw) })
	if len(problems) > 0 {
		return Request{}, problems
	}
	return r, nil
}

// ParseRequest is [DecodeRequest] and [Request.Validate] at once, for
// `wopneg decide`: its error, a [RequestError], lists every problem of
// the request, of shape and of value, each at its JSON path, leaving out
// the value problems a shape problem already explains (a value that could
// not be read is not also reported as missing, and an offer is not said
// to name a protocol the facet lacks when the facet itself is at fault).
func ParseRequest(data []byte) (Request, error) {
	if e := strictjson.Syntax(data); e != nil {
		// What a request that does not parse would say past the break
		// is findings about a document nobody wrote.
		return Request{}, RequestError{{Message: "the request is " + e.Msg, Err: e}}
	}
	facetRead := false
	r, problems, keys, complete := readRequest(data, func(raw []byte, set *facets.Set) error {
		facetRead = true
		var err error
		*set, err = facets.Parse(raw)
		return err
	})
	if complete {
		shape := problems
		for _, p := range r.problems(!facetRead) {
			if !echoes(shape, problems, p) {
				problems = append(problems, p)
			}
		}
	}
	// In the order of the request's members; a member it lacks comes last.
	slices.SortStableFunc(problems, func(a, b *Problem) int {
		return cmp.Compare(memberIndex(keys, a.Path), memberIndex(keys, b.Path))
	})
	if len(problems) > 0 {
		return Request{}, problems
	}
	return r, nil
}

// echoes reports whether p, a value problem, only echoes a problem found
// before it: it lies at or below a shape problem's path (what could not be
// read reads as missing), or it says the offer's protocol is not
// advertised by a facet that is itself at fault.
func echoes(shape, found RequestError, p *Problem) bool {
	if slices.ContainsFunc(shape, func(s *Problem) bool { return covers(s.Path, p.Path) }) {
		return true
	}
	return p.Path == "offer.protocol" && slices.ContainsFunc(found, func(s *Problem) bool { return covers("facet", s.Path) })
}

// readRequest reads data member by member, the facet with readFacet, and
// returns the Request as far as it could be read, every shape problem,
// the paths of the request's members in document order, and whether data
// was read to its end: when it was not, what follows
// the place reading stopped was never decoded, and would read as missing.
func readRequest(data []byte, readFacet func([]byte, *facets.Set) error) (Request, RequestError, []string, bool) {
	var w requestJSON
	var problems RequestError
	add := func(path string, err error) {
		problems = append(problems, problemsOf(path, err)...)
	}
	var keys []string
	end := eachMember(data, func(key, path string, raw []byte, at int) {
		keys = append(keys, path)
		switch key {
		case "facet":
			add("facet", readFacet(raw, &w.Facet))
		case "subject":
			// The Subject reads itself, reporting at its own paths
			// (subject.tenant), as strictjson would have it do.
			var subject negotiate.Subject
			if err := subject.UnmarshalJSON(raw); err != nil || bytes.Equal(raw, []byte("null")) {
				add("subject", err)
				break
			}
			w.Subject = &subject
		case "offer":
			add("offer", decodeMembers(raw, at, &w.Offer))
		case "policy":
			add("policy", decodeMembers(raw, at, &w.Policy))
		default:
			add("", decodeMember(key, path, raw, at, &w))
		}
	})
	add("", end)
	r := Request{Subject: w.Subject, Facet: w.Facet, Policy: w.Policy, Offer: negotiate.Offer{
		Protocol: w.Offer.Protocol, Peer: w.Offer.Peer, Requested: w.Offer.Requested, CounterOffer: w.Offer.CounterOffer,
	}}
	if w.Now != nil {
		t, err := ParseClock(*w.Now)
		add("now", err)
		r.Now = t
	}
	if r.Offer.Protocol == "" {
		if ps := r.Facet.Protocols(); len(ps) == 1 {
			r.Offer.Protocol = ps[0]
		}
	}
	if w.Offer.PeerVersions != nil {
		r.Offer.PeerVersions = *w.Offer.PeerVersions
	} else if adv, ok := r.Facet.Lookup(r.Offer.Protocol); ok {
		r.Offer.PeerVersions = negotiate.InboundOffer(adv, r.Offer.Peer, r.Offer.Requested).PeerVersions
	}
	return r, problems, keys, end == nil
}

// eachMember calls fn with each member of data, a JSON object: its key,
// its path within data, its value and where in data that starts; it
// returns what ended the walk early: syntax,
// a repeated key, a value other than an object, or bytes after it.
func eachMember(data []byte, fn func(key, path string, raw []byte, at int)) error {
	rd := strictjson.NewReader(data, 0)
	err := rd.Object(func(key string) error {
		raw, err := rd.Raw()
		if err == nil {
			fn(key, rd.Path(), raw, rd.Offset()-len(raw))
		}
		return err
	})
	if err == nil {
		err = rd.End()
	}
	return err
}

// decodeMembers decodes raw, which starts at offset at of the request,
// into v, a pointer to a struct, one member at a time, so that each
// member of the wrong shape is reported. A value other than an object is
// decoded whole, and reported as such.
func decodeMembers(raw []byte, at int, v any) error {
	if k, err := strictjson.NewReader(raw, 0).Next(); err != nil || k != strictjson.Object {
		return shift(strictjson.Decode(raw, v), at)
	}
	var errs []error
	end := eachMember(raw, func(key, path string, member []byte, from int) {
		errs = append(errs, decodeMember(key, path, member, at+from, v))
	})
	return errors.Join(append(errs, shift(end, at))...)
}

// decodeMember decodes the member key: raw of an object into v, as
// strictjson reads the object {key: raw}, so that the errors are the
// strict reader's own (an unknown key's included), at their paths; an
// unknown key is reported at its own path, as the facets report theirs,
// so that it hides no problem of its neighbours. at is where raw starts
// in the request, which the errors' offsets count from.
func decodeMember(key, path string, raw []byte, at int, v any) error {
	quoted, _ := json.Marshal(key) // a string from the reader: valid UTF-8, which Marshal never refuses
	object := slices.Concat([]byte("{"), quoted, []byte(":"), raw, []byte("}"))
	err := shift(strictjson.Decode(object, v), at-len(quoted)-2)
	if e, ok := err.(*strictjson.Error); ok && e.Path == "" {
		e.Path = path
	}
	return err
}

// shift moves the offset of a strict reader's error by n bytes.
func shift(err error, n int) error {
	if e, ok := err.(*strictjson.Error); ok {
		moved := *e
		moved.Offset += n
		return &moved
	}
	return err
}

// RequestError lists every problem found in a request, in the order they
// were found: errors.As finds its first *Problem, and Unwrap lists them.
type RequestError []*Problem

// Error lists the problems on one line.
func (e RequestError) Error() string {
	parts := make([]string, len(e))
	for i, p := range e {
		parts[i] = p.Error()
	}
	return strings.Join(parts, "; ")
}

// Unwrap lists each *Problem.
func (e RequestError) Unwrap() []error {
	errs := make([]error, len(e))
	for i, p := range e {
		errs[i] = p
	}
	return errs
}

// Problem is one thing wrong with a request: the JSON path of the value
// at fault in the request ("" for the request itself), what is wrong, and
// the error that found it, which errors.Is and errors.As see through it
// (a *facets.Violation, which also matches facets.ErrInvalid; a
// *policy.SubjectError; an *events.FieldError; a *strictjson.Error).
type Problem struct {
	Path, Message string
	Err           error
}

// Error returns "PATH: message", or the message alone for the request.
func (p *Problem) Error() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// Unwrap returns the error that found the problem.
func (p *Problem) Unwrap() error { return p.Err }

// problemsOf splits err into its problems, each at its path under base:
// the violations of a facet, the problems of a Subject, of a strict read,
// or of a list of them; nil for a nil err.
func problemsOf(base string, err error) RequestError {
	if err == nil {
		return nil
	}
	switch e := err.(type) {
	case interface{ Unwrap() []error }:
		var ps RequestError
		for _, inner := range e.Unwrap() {
			ps = append(ps, problemsOf(base, inner)...)
		}
		return ps
	case *facets.Violation:
		return RequestError{{joinPath(base, e.Path), e.Message, errors.Join(e, facets.ErrInvalid)}}
	case *policy.SubjectError:
		return RequestError{{e.Path, e.Message, e}}
	case *strictjson.Error:
		return RequestError{{joinPath(base, e.Path), e.Msg, e}}
	}
	return RequestError{{base, err.Error(), err}}
}

// memberIndex is where in keys the member holding the value at path
// comes: -1 for the request itself, len(keys) for a member it lacks.
func memberIndex(keys []string, path string) int {
	if path == "" {
		return -1
	}
	i := slices.IndexFunc(keys, func(key string) bool { return covers(key, path) })
	if i >= 0 {
		return i
	}
	return len(keys)
}

// joinPath is the path of a value at path inside the value at base.
func joinPath(base, path string) string {
	if base == "" || path == "" || path[0] == '[' {
		return base + path
	}
	return base + "." + path
}

// covers reports whether path lies at or below base, a member's path.
func covers(base, path string) bool {
	rest, ok := strings.CutPrefix(path, base)
	return ok && (rest == "" || rest[0] == '.' || rest[0] == '[')
}

// ParseClock reads a date YYYY-MM-DD as its midnight UTC, or an RFC 3339
// time: the clock of a request, and the CLI's --now.
func ParseClock(s string) (time.Time, error) {
	if d, err := time.Parse(time.DateOnly, s); err == nil {
		return d, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither a date YYYY-MM-DD nor an RFC 3339 time", s)
	}
	return t, nil
}

// Validate reports what makes r unfit to decide on, each problem under its
// JSON path: an invalid facet, an invalid Subject (a null one is fine: it
// is unauthenticated), an offer for a protocol the facet does not
// advertise, a peer URL with no http(s) or ws(s) origin (its digest is
// what the event records), no clock, or a refreshedAt outside its refresh
// window on that clock (more than 90 days old or more than a day ahead,
// which the adapters refuse where a host starts). Its error is a [RequestError].
func (r Request) Validate() error {
	if ps := r.problems(true); len(ps) > 0 {
		return ps
	}
	return nil
}

// problems are Validate's, with the facet's own when facet is set.
func (r Request) problems(facet bool) RequestError {
	var ps RequestError
	if facet {
		ps = append(ps, problemsOf("facet", r.Facet.Validate())...)
	}
	if r.Subject != nil {
		ps = append(ps, problemsOf("subject", r.Subject.Validate())...)
	}
	if _, ok := r.Facet.Lookup(r.Offer.Protocol); !ok {
		msg := fmt.Sprintf("%q is not advertised by the facet", r.Offer.Protocol)
		var advertised []string
		for _, p := range r.Facet.Protocols() {
			advertised = append(advertised, strconv.Quote(string(p)))
			if strings.EqualFold(string(p), string(r.Offer.Protocol)) {
				msg += fmt.Sprintf(" (did you mean %q?)", p)
			}
		}
		if advertised != nil {
			msg += "; it advertises " + strings.Join(advertised, " and ")
		}
		ps = append(ps, &Problem{"offer.protocol", msg, nil})
	}
	if r.Offer.Peer != "" {
		if _, err := events.Origin(r.Offer.Peer); err != nil {
			ps = append(ps, &Problem{"offer.peer", err.Error(), err})
		}
	}
	if r.Now.IsZero() {
		ps = append(ps, &Problem{"now", "required", nil})
	}
	for _, p := range r.Facet.Protocols() {
		adv, _ := r.Facet.Lookup(p)
		var v *facets.Violation
		if !r.Now.IsZero() && errors.As(facets.CheckRefresh(adv, r.Now), &v) && v.Rule != "date" {
			ps = append(ps, &Problem{joinPath("facet", v.Path), v.Message + "; " + refreshFix, errors.Join(v, facets.ErrInvalid)})
		}
	}
	return ps
}

// refreshFix is what to do about a refreshedAt outside its window, which
// a host refuses to start with.
const refreshFix = "a host does not start with it: write the day the facet's versions were last checked against upstream, or decide at a now inside its window"

// Answer is a decision in data form: the output of `wopneg decide`.
type Answer struct {
	// Outcome is accepted, downgraded or refused.
	Outcome string `json:"outcome"`
	// Version is set when not refused.
	Version string `json:"version,omitzero"`
	// Reason is the audit reason.
	Reason string `json:"reason"`
	// Rule names the decision rule that settled it.
	Rule string `json:"rule"`
	// CounterOffered is true when the host answered with its own version.
	CounterOffered bool `json:"counterOffered,omitzero"`
	// Status is the HTTP status of the refusal; 0 when accepted.
	Status int `json:"status,omitzero"`
	// Error is the v2 error envelope of the refusal.
	Error *wperrors.Error `json:"error,omitzero"`
	// Event is the negotiation.decided payload.
	Event events.NegotiationDecided `json:"event"`
}

// Decide runs r through decide (nil means [negotiate.Decide]).
func (r Request) Decide(decide DecideFunc) (Answer, negotiate.Outcome) {
	if decide == nil {
		decide = negotiate.Decide
	}
	o, e := decide(r.Subject, r.Facet, r.Offer, r.Policy.Policy(r.Now))
	a := Answer{
		Outcome:        o.Kind.String(),
		Version:        o.Version,
		Reason:         o.Reason,
		Rule:           string(o.Rule),
		CounterOffered: o.CounterOffered,
		Event:          e,
	}
	if o.Err() != nil {
		a.Version = ""
		err := o.Err()
		var we *wperrors.Error
		if errors.As(err, &we) {
			a.Error = we
			a.Status = we.Code.HTTPStatus()
		}
	}
	return a, o
}

// isNoOrigin reports whether err is the error of a peer URL with no origin.
func isNoOrigin(err error) bool {
	fe, ok := errors.AsType[*events.FieldError](err)
	return ok && fe.Field == "peer"
}
