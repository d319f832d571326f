package events

import (
	"crypto/rand"
	"errors"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"
)

// typeNegotiationDecided is the type of every event this package carries,
// written in the envelope's "type".
const typeNegotiationDecided = "negotiation.decided"

// deliveryDurable is the delivery of every host event this package carries:
// a negotiation.decided host event is durable (RFC 0242 §B).
const deliveryDurable = "durable"

// FieldError names one field of an event, of its payload, or the peer URL
// whose digest a payload would carry, and says what is wrong with it. Field
// is the JSON name: "eventId", "runId", "payload.version" in an event;
// "version" for [NegotiationDecided.Validate]; "peer" for [Origin] and
// [PeerDigest]. Validation reports every problem it finds, each as a
// *FieldError, joined with errors.Join when there are several; errors.As
// finds the first.
type FieldError struct {
	Field  string
	Reason string
}

// Error names the field and what is wrong with it.
func (e *FieldError) Error() string { return "events: " + e.Field + ": " + e.Reason }

// Event is one negotiation.decided record on its way to a [Sink]: a run
// event when RunID is set, a durable host event (RFC 0242 §B) when it is
// not. It is a plain value, passed to sinks by value as slog passes a
// slog.Record, so that queueing one costs a copy and never an allocation.
//
// Its type is always negotiation.decided and a host event's delivery is
// always durable, so neither is a field: the JSON form writes both, and
// reading refuses any other.
//
// The two envelopes are closed and disjoint: a run event never carries
// WorkspaceID, a host event never carries RunID, a sequence, SchemaVersion,
// NodeID, an engine version or CausationID. [Event.Validate] enforces that,
// and every sink in this package refuses an event that does not pass it.
//
// The sequence is not the caller's to choose: the store that records a run
// event assigns it (see [JSONLines]), so the zero Event has none.
//
// [NewRunEvent], [NewHostEvent] and [Event.UnmarshalJSON] validate the event
// they return and keep a private copy of it as proof: a sink that is handed
// the event unchanged checks it by comparing, not by validating again,
// which is what keeps [Async.Emit] cheap. Changing any field drops the
// proof (the event is then validated in full, as one built by hand is), so
// the proof can only vouch for the fields it was made from. Compare events
// by their fields: two events with equal fields but different proofs are
// not ==.
type Event struct {
	// ID is eventId: 16 to 128 of [A-Za-z0-9._~-]. The constructors make
	// one as crypto/rand.Text does (see newID).
	ID string
	// Time is the envelope's timestamp. The constructors use Payload.At, the
	// decision's own clock, so that recording reads no clock of its own.
	Time time.Time
	// Payload is the negotiation.decided payload; it must pass
	// [NegotiationDecided.Validate].
	Payload NegotiationDecided

	// RunID puts the event on a run's log. It is tenant-bound:
	// [anon:]tenant/id, the tenant being 1 to 128 and the id 16 to 128 of
	// [A-Za-z0-9._~-].
	RunID string
	// SchemaVersion is the run event's schemaVersion, at least 1. The
	// constructors write 1, the first version of the run-event schema.
	SchemaVersion int
	// Sequence is the run event's sequence when HasSequence is set, which
	// only the store recording the event does: 0 for a run's first event,
	// then 1, 2, …. Without HasSequence it must be 0.
	Sequence    int64
	HasSequence bool
	// NodeID is the run event's optional nodeId.
	NodeID string
	// EngineVersion is the run event's optional engineVersion, at least 0,
	// present when HasEngineVersion is set (0 is a version, so absent is
	// not 0). Without HasEngineVersion it must be 0.
	EngineVersion    int64
	HasEngineVersion bool
	// CausationID is the run event's optional causationId.
	CausationID string

	// WorkspaceID is the host event's optional workspaceId.
	WorkspaceID string

	// Tenant is the tenant the event belongs to, for routing only: it is
	// never serialized (both envelopes are closed), Validate does not read
	// it, and the proof does not cover it. A run event belongs to its
	// runId's tenant, whatever Tenant says; a host event belongs to
	// Tenant, which negotiate sets from the authenticated Subject of the
	// exchange. An empty Tenant is an unauthenticated exchange: its host
	// event is recorded and delivered to no subscriber.
	Tenant string

	// proof is a copy of the event as it passed Validate; see sealed.
	proof *Event
}

// NewRunEvent returns the run event that records payload on the run runID,
// with a fresh ID, schemaVersion 1 and the payload's time as its timestamp.
// The sequence is left for the store to assign. When runID or payload is
// invalid it returns the event as built, without proof, and every
// [*FieldError] of it: every sink refuses that event, and a caller can
// still report what it was.
func NewRunEvent(runID string, payload NegotiationDecided) (Event, error) {
	var e Event
	err := e.fill(&payload, runID, 1, "")
	return e, err
}

// NewHostEvent returns the durable host event that records payload outside
// any run (RFC 0242 §B), in workspace workspaceID when it is not empty,
// with a fresh ID and the payload's time as its timestamp. When payload is
// invalid it returns the event as built, without proof, and every
// [*FieldError] of it, as [NewRunEvent] does.
func NewHostEvent(workspaceID string, payload NegotiationDecided) (Event, error) {
	var e Event
	err := e.fill(&payload, "", 0, workspaceID)
	return e, err
}

// fill makes e the event of NewRunEvent when runID is set, and of
// NewHostEvent otherwise. It sets e's fields one by one where e stands,
// rather than build the event in a copy and return that: an event is a
// few hundred bytes, and a record runs deep in a server's answer.
func (e *Event) fill(payload *NegotiationDecided, runID string, schemaVersion int, workspaceID string) error {
	*e = Event{}
	e.ID, e.Time, e.Payload = newID(), payload.At, *payload
	e.RunID, e.SchemaVersion, e.WorkspaceID = runID, schemaVersion, workspaceID
	return e.validateAndSeal()
}

// idLen is the length of an event id newID makes: crypto/rand.Text's, 26
// characters of base32, 130 bits of randomness (unguessable, and unique
// in practice).
const idLen = 26

// ids holds random bytes from crypto/rand for the next ids: reading the
// source once per event cost more than the rest of making its id, so it
// is read for idBatch ids at a time.
var ids struct {
	sync.Mutex
	random [idLen * idBatch]byte
	left   int // the unused bytes are random[len(random)-left:]
}

const idBatch = 16

// newID returns a fresh event id, as crypto/rand.Text makes one: each
// character is a byte of crypto/rand taken to the base32 alphabet. The
// bytes an id was made from are cleared once it is made.
func newID() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	var id [idLen]byte
	ids.Lock()
	if ids.left == 0 {
		_, _ = rand.Read(ids.random[:]) // it never fails: a failing source crashes the program
		ids.left = len(ids.random)
	}
	src := ids.random[len(ids.random)-ids.left:][:idLen]
	for i, c := range src {
		id[i] = alphabet[c%32]
	}
	clear(src)
	ids.left -= idLen
	ids.Unlock()
	return string(id[:])
}

// validateAndSeal validates e and, when it is valid, gives it its proof.
func (e *Event) validateAndSeal() error {
	err := e.Validate()
	if err == nil {
		p := new(Event)
		*p = *e
		e.proof = p
	}
	return err
}

// sealed reports whether e is, field for field, the event its proof was
// made from. A string field is the proof's when it has the proof's bytes
// at the proof's address: the proof keeps its strings alive, and Go
// strings are immutable, so that is the same content, compared in a
// constant time that does not grow with the strings. A field set to an
// equal string held elsewhere drops the proof; the event is then
// validated, which is slower but no less right.
func (e *Event) sealed() bool {
	p := e.proof
	if p == nil {
		return false
	}
	return same(e.ID, p.ID) && e.Time == p.Time && samePayload(&e.Payload, &p.Payload) &&
		same(e.RunID, p.RunID) && e.SchemaVersion == p.SchemaVersion &&
		e.Sequence == p.Sequence && e.HasSequence == p.HasSequence &&
		same(e.NodeID, p.NodeID) && e.EngineVersion == p.EngineVersion && e.HasEngineVersion == p.HasEngineVersion &&
		same(e.CausationID, p.CausationID) && same(e.WorkspaceID, p.WorkspaceID)
}

func samePayload(a, b *NegotiationDecided) bool {
	return same(string(a.Protocol), string(b.Protocol)) && same(a.Outcome, b.Outcome) &&
		same(a.Version, b.Version) && same(a.Requested, b.Requested) && same(a.Reason, b.Reason) &&
		same(a.Floor, b.Floor) && same(a.PeerDigest, b.PeerDigest) && a.At == b.At
}

// same reports whether a and b are one string: the same bytes at the same
// address.
func same(a, b string) bool { return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b) }

// check is Validate for an event that does not carry a valid proof: what
// every sink calls on the request path.
func (e *Event) check() error {
	if e.sealed() {
		return nil
	}
	return e.Validate()
}

// Validate checks e against its envelope (the run event's when RunID is
// set, the host event's otherwise) and its payload against the
// negotiationDecided schema. It reports every problem, each as a
// [*FieldError] naming the field, joined with errors.Join. It does not
// require a sequence: a store assigns that when it records the event.
//
// Validate allocates nothing when e is valid.
func (e *Event) Validate() error {
	var errs []error
	if !validID(e.ID, 16) {
		errs = fieldErr(errs, "eventId", quoteTrunc(e.ID)+" is not 16 to 128 of [A-Za-z0-9._~-]")
	}
	if problem := timeProblem(e.Time); problem != "" {
		errs = fieldErr(errs, "timestamp", problem)
	}
	errs = e.Payload.problems(errs, "payload.")
	if e.RunID != "" {
		errs = e.runProblems(errs)
	} else {
		errs = e.hostProblems(errs)
	}
	return joinErrs(errs)
}

// runProblems appends what is wrong with the envelope of a run event.
func (e *Event) runProblems(errs []error) []error {
	if !validRunID(e.RunID) {
		errs = fieldErr(errs, "runId", quoteTrunc(e.RunID)+" is not [anon:]tenant/id (tenant 1 to 128, id 16 to 128 of [A-Za-z0-9._~-])")
	}
	if e.SchemaVersion < 1 {
		errs = fieldErr(errs, "schemaVersion", "must be at least 1")
	}
	if e.Sequence < 0 || !e.HasSequence && e.Sequence != 0 {
		errs = fieldErr(errs, "sequence", "must be at least 0, and 0 until a store assigns one (HasSequence)")
	}
	if e.EngineVersion < 0 || !e.HasEngineVersion && e.EngineVersion != 0 {
		errs = fieldErr(errs, "engineVersion", "must be at least 0, and 0 when absent (HasEngineVersion)")
	}
	if !utf8.ValidString(e.NodeID) {
		errs = fieldErr(errs, "nodeId", "is not valid UTF-8")
	}
	if !utf8.ValidString(e.CausationID) {
		errs = fieldErr(errs, "causationId", "is not valid UTF-8")
	}
	if e.WorkspaceID != "" {
		errs = fieldErr(errs, "workspaceId", "a run event never carries workspaceId (it is a host-event field)")
	}
	return errs
}

// hostProblems appends what is wrong with the envelope of a host event.
func (e *Event) hostProblems(errs []error) []error {
	if !utf8.ValidString(e.WorkspaceID) {
		errs = fieldErr(errs, "workspaceId", "is not valid UTF-8")
	}
	if e.HasSequence || e.Sequence != 0 {
		errs = fieldErr(errs, "sequence", "a host event never carries sequence (it is a run-event field)")
	}
	if e.SchemaVersion != 0 {
		errs = fieldErr(errs, "schemaVersion", "a host event never carries schemaVersion (it is a run-event field)")
	}
	if e.NodeID != "" {
		errs = fieldErr(errs, "nodeId", "a host event never carries nodeId (it is a run-event field)")
	}
	if e.HasEngineVersion || e.EngineVersion != 0 {
		errs = fieldErr(errs, "engineVersion", "a host event never carries engineVersion (it is a run-event field)")
	}
	if e.CausationID != "" {
		errs = fieldErr(errs, "causationId", "a host event never carries causationId (it is a run-event field)")
	}
	return errs
}

// fieldErr appends the [*FieldError] of field to errs.
func fieldErr(errs []error, field, reason string) []error {
	return append(errs, &FieldError{Field: field, Reason: reason})
}

// joinErrs returns nil, the one error, or all of them joined.
func joinErrs(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// Every instant in [safeMin, safeEnd) has a year RFC 3339 can write (0000
// to 9999) in any zone less than a year from UTC, which every real zone
// is, so the common case is two comparisons instead of a calendar
// computation; the rest is checked in the time's own zone, as it is
// written.
var (
	safeMin = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	safeEnd = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
)

// timeProblem says why t cannot be written as an RFC 3339 date-time, or "".
func timeProblem(t time.Time) string {
	if t.IsZero() {
		return "is required"
	}
	if !t.Before(safeMin) && t.Before(safeEnd) {
		return ""
	}
	if y := t.Year(); y < 0 || y > 9999 {
		return "year is outside 0000–9999, which RFC 3339 cannot write"
	}
	return ""
}

// idByte marks the bytes of [A-Za-z0-9._~-], the id alphabet of the v2
// envelopes.
var idByte = func() (t [256]bool) {
	for c := 'A'; c <= 'Z'; c++ {
		t[c], t[c+'a'-'A'] = true, true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "._~-" {
		t[c] = true
	}
	return t
}()

// validID reports whether s is between minLen and 128 id bytes.
func validID(s string, minLen int) bool {
	if len(s) < minLen || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !idByte[s[i]] {
			return false
		}
	}
	return true
}

// validRunID matches ^(anon:)?[A-Za-z0-9._~-]{1,128}/[A-Za-z0-9._~-]{16,128}$.
// ':' and '/' are outside the id alphabet, so the split is unambiguous.
func validRunID(s string) bool {
	tenant, id, ok := strings.Cut(strings.TrimPrefix(s, "anon:"), "/")
	return ok && validID(tenant, 1) && validID(id, 16)
}

// quoteTrunc quotes s for an error message, cut to a readable length: ids
// are short when valid, and a megabyte of junk should not fill a log.
func quoteTrunc(s string) string {
	const limit = 80
	if len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return quote(s[:cut]) + "…"
	}
	return quote(s)
}

func quote(s string) string {
	return string(appendJSONString(make([]byte, 0, len(s)+2), s))
}
