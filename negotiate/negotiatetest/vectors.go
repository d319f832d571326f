package negotiatetest

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"strings"
	"time"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/strictjson"
	"github.com/wopneg/wopneg/negotiate"
)

//go:embed vectors/*.json
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

// Vectors returns every vector shipped with the package, in file order,
// each named "file/name". It fails on a file that does not parse, a
// duplicate name, a reference to an unknown facet set, or a vector whose
// expectation is empty.
func Vectors() ([]Vector, error) { return LoadVectors(vectorFiles, "vectors") }

// LoadVectors reads every *.json vectors file in dir of fsys, as [Vectors]
// does for the shipped ones; a host can keep vectors of its own this way.
func LoadVectors(fsys fs.FS, dir string) ([]Vector, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var all []Vector
	seen := map[string]bool{}
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		var f File
		if err := strictjson.Decode(data, &f); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		base := strings.TrimSuffix(path.Base(name), ".json")
		for i, v := range f.Vectors {
			v.Name = base + "/" + v.Name
			if seen[v.Name] {
				return nil, fmt.Errorf("%s: vector %d: duplicate name %q", name, i, v.Name)
			}
			seen[v.Name] = true
			if v.Facets != "" {
				set, ok := f.Facets[v.Facets]
				if !ok {
					return nil, fmt.Errorf("%s: vector %q: no facet set named %q", name, v.Name, v.Facets)
				}
				v.Facet = &set
			}
			if v.Now.IsZero() {
				v.Now = f.Now
			}
			if err := v.complete(); err != nil {
				return nil, fmt.Errorf("%s: vector %q: %w", name, v.Name, err)
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
		c.eq("event.outcome", e.Outcome, events.Refused)
		c.eq("event.version", e.Version, "")
	} else {
		c.eq("status", a.Status, 0)
		if a.Error != nil {
			c.failf("accepted with an error %v", a.Error)
		}
		c.eq("event.outcome", e.Outcome, events.Accepted)
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

func eventField(e events.NegotiationDecided, field string) (string, bool) {
	switch field {
	case "protocol":
		return string(e.Protocol), true
	case "outcome":
		return string(e.Outcome), true
	case "version":
		return e.Version, true
	case "requested":
		return e.Requested, true
	case "reason":
		return string(e.Reason), true
	case "floor":
		return e.Floor, true
	case "peerDigest":
		return e.PeerDigest, true
	case "at":
		return e.At.Format(time.RFC3339Nano), true
	}
	return "", false
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
		if _, err := events.PeerDigest(v.Peer); !errors.Is(err, events.ErrNoOrigin) {
			c.failf("PeerDigest(%q) error = %v, want ErrNoOrigin", v.Peer, err)
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

// refreshKinds name the refresh SLA's verdicts as refresh vectors spell
// them.
var refreshKinds = []struct {
	err  error
	name string
}{{facets.ErrRefreshStale, "stale"}, {facets.ErrRefreshFuture, "future"}, {facets.ErrMalformedDate, "malformed"}}

func (v Vector) checkRefresh(c *checker) {
	err := facets.CheckRefresh(facets.Advertised{Protocol: facets.ProtocolA2A, RefreshedAt: v.RefreshedAt}, v.Now)
	got := "ok"
	if err != nil {
		got = err.Error() // an error of no kind below reads as itself, never as ok
		for _, k := range refreshKinds {
			if errors.Is(err, k.err) {
				got = k.name
			}
		}
	}
	c.eq("refresh", got, v.Want.Refresh)
}

func (v Vector) checkRounds(c *checker) {
	allowed := *v.Want.Allowed
	r, err := negotiate.NewRounds(v.MaxRounds)
	if allowed == -1 {
		if err == nil {
			c.failf("NewRounds(%d) accepted an invalid limit", v.MaxRounds)
		}
		return
	}
	if err != nil {
		c.failf("NewRounds(%d): %v", v.MaxRounds, err)
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
