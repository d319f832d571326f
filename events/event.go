package events

import (
	"crypto/rand"
	"errors"
	"strings"
	"time"
	"unicode/utf8"
)

// CurrentSchemaVersion is the schemaVersion the constructors stamp on a run
// event: the v2 run-event schema starts at 1.
const CurrentSchemaVersion = 1

// Delivery is the delivery enum of a host event (RFC 0242): durable events
// are kept and replayed to subscribers, ephemeral ones are not.
type Delivery string

// The deliveries the host-event schema admits.
const (
	DeliveryDurable   Delivery = "durable"
	DeliveryEphemeral Delivery = "ephemeral"
)

// Valid reports whether d is durable or ephemeral.
func (d Delivery) Valid() bool { return d == DeliveryDurable || d == DeliveryEphemeral }

// ErrInvalidEvent is wrapped by every [*FieldError], so that callers can
// tell a refused event from a sink that failed with errors.Is.
var ErrInvalidEvent = errors.New("events: invalid event")

// FieldError names one field of an event that is wrong and says why. Field
// is the field's JSON name in the envelope ("eventId", "runId", "payload").
// It unwraps to [ErrInvalidEvent] and, for the payload, to the payload's own
// error (which wraps [ErrInvalidPayload] and names the payload field).
type FieldError struct {
	Field  string
	Reason string
	// Err is the underlying error, when there is one.
	Err error
}

// Error names the field and what is wrong with it.
func (e *FieldError) Error() string {
	if e.Err != nil {
		return "events: " + e.Field + ": " + e.Err.Error()
	}
	return "events: " + e.Field + ": " + e.Reason
}

// Unwrap returns [ErrInvalidEvent] and, when set, Err.
func (e *FieldError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalidEvent, e.Err}
	}
	return []error{ErrInvalidEvent}
}

// Event is one negotiation.decided record on its way to a [Sink]: a run
// event when RunID is set, a host event (RFC 0242 §B) when it is not. It is
// a plain value, passed to sinks by value as slog passes a slog.Record, so
// that queueing one costs a copy and never an allocation.
//
// The two envelopes are closed and disjoint: a run event never carries
// Delivery or WorkspaceID, a host event never carries RunID, a sequence,
// SchemaVersion, NodeID, EngineVersion or CausationID. [Event.Validate]
// enforces that, and every sink in this package refuses an event that does
// not pass it, with a [*FieldError] naming the field.
//
// The sequence is not the caller's to choose: the store that records a run
// event assigns it (see [Sequencer]), so the zero Event has none, and
// [Event.Sequence] says whether one was assigned. EngineVersion is held the
// same way because 0 is a valid engine version and absent is not 0.
type Event struct {
	// ID is eventId: 16 to 128 of [A-Za-z0-9._~-]. [NewEventID] makes one.
	ID string
	// Type is the event type. This package carries only negotiation.decided
	// payloads, so it must be [TypeNegotiationDecided].
	Type string
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
	// SchemaVersion is the run event's schemaVersion, at least 1.
	SchemaVersion int
	// NodeID is the run event's optional nodeId.
	NodeID string
	// CausationID is the run event's optional causationId.
	CausationID string

	// Delivery is the host event's delivery. A negotiation.decided host
	// event is durable (RFC 0242 §B).
	Delivery Delivery
	// WorkspaceID is the host event's optional workspaceId.
	WorkspaceID string

	// Tenant is the tenant the event belongs to, for routing only: it is
	// never serialized (both envelopes are closed) and Validate does not
	// read it. A run event belongs to its runId's tenant, whatever Tenant
	// says; a host event belongs to Tenant, which negotiate sets from the
	// authenticated Subject of the exchange. An empty Tenant is an
	// unauthenticated exchange: its host event is recorded and delivered
	// to no subscriber.
	Tenant string

	// seq is the sequence plus one, so that the zero Event has none.
	seq int64
	// engine is engineVersion plus one, for the same reason.
	engine int64
}

// NewEventID returns a fresh eventId: 26 characters of base32 carrying 130
// bits from crypto/rand, so that ids never collide across hosts and cannot
// be guessed from one another.
func NewEventID() string { return rand.Text() }

// NewRunEvent returns the run event that records payload on the run runID,
// with a fresh ID, schemaVersion 1 and the payload's time as its timestamp.
// It refuses an invalid runID or payload with a [*FieldError] naming the
// field. The sequence is left for the store to assign.
func NewRunEvent(runID string, payload NegotiationDecided) (Event, error) {
	e := Event{
		ID:            NewEventID(),
		Type:          TypeNegotiationDecided,
		Time:          payload.At,
		Payload:       payload,
		RunID:         runID,
		SchemaVersion: CurrentSchemaVersion,
	}
	if err := e.Validate(); err != nil {
		return Event{}, err
	}
	return e, nil
}

// NewHostEvent returns the durable host event that records payload outside
// any run (RFC 0242 §B), in workspace workspaceID when it is not empty,
// with a fresh ID and the payload's time as its timestamp. It refuses an
// invalid payload with a [*FieldError] naming the field.
func NewHostEvent(workspaceID string, payload NegotiationDecided) (Event, error) {
	e := Event{
		ID:          NewEventID(),
		Type:        TypeNegotiationDecided,
		Time:        payload.At,
		Payload:     payload,
		Delivery:    DeliveryDurable,
		WorkspaceID: workspaceID,
	}
	if err := e.Validate(); err != nil {
		return Event{}, err
	}
	return e, nil
}

// IsRun reports whether e is a run event, that is, whether it names a run.
func (e Event) IsRun() bool { return e.RunID != "" }

// Sequence returns the run event's sequence and whether a store has
// assigned one.
func (e Event) Sequence() (int64, bool) { return e.seq - 1, e.seq > 0 }

// WithSequence returns e with sequence n; a negative n removes it. It is
// for stores that assign sequences (a [Sink] receives its own copy, so
// this changes nothing the caller holds) and for decoders.
func (e Event) WithSequence(n int64) Event {
	e.seq = max(n, -1) + 1
	return e
}

// EngineVersion returns the run event's engineVersion and whether it has
// one.
func (e Event) EngineVersion() (int64, bool) { return e.engine - 1, e.engine > 0 }

// WithEngineVersion returns e with engineVersion v; a negative v removes it.
func (e Event) WithEngineVersion(v int64) Event {
	e.engine = max(v, -1) + 1
	return e
}

// Validate checks e against its envelope (the run event's when RunID is
// set, the host event's otherwise) and its payload against the
// negotiationDecided schema. It reports every problem, each as a
// [*FieldError] naming the field, joined with errors.Join. It does not
// require a sequence: a store assigns that when it records the event.
//
// Validate allocates nothing when e is valid, so sinks can afford it on the
// request path.
func (e *Event) Validate() error {
	var errs []error
	bad := func(field, reason string) { errs = append(errs, &FieldError{Field: field, Reason: reason}) }

	if !validID(e.ID, 16) {
		bad("eventId", quoteTrunc(e.ID)+" is not 16 to 128 of [A-Za-z0-9._~-]")
	}
	switch {
	case e.Type == TypeNegotiationDecided:
	case !validEventType(e.Type):
		bad("type", quoteTrunc(e.Type)+" does not match ^[a-z][a-z0-9]*(-[a-z0-9]+)*\\.[a-z][a-z0-9]*(-[a-z0-9]+)*$")
	default:
		bad("type", quoteTrunc(e.Type)+" is not negotiation.decided, the only type whose payload this package carries")
	}
	if problem := timeProblem(e.Time); problem != "" {
		bad("timestamp", problem)
	}
	if err := e.Payload.Validate(); err != nil {
		errs = append(errs, &FieldError{Field: "payload", Err: err})
	}

	if e.IsRun() {
		if !validRunID(e.RunID) {
			bad("runId", quoteTrunc(e.RunID)+" is not [anon:]tenant/id (tenant 1 to 128, id 16 to 128 of [A-Za-z0-9._~-])")
		}
		if e.SchemaVersion < 1 {
			bad("schemaVersion", "must be at least 1")
		}
		if !utf8.ValidString(e.NodeID) {
			bad("nodeId", "is not valid UTF-8")
		}
		if !utf8.ValidString(e.CausationID) {
			bad("causationId", "is not valid UTF-8")
		}
		if e.Delivery != "" {
			bad("delivery", "a run event never carries delivery (it is a host-event field)")
		}
		if e.WorkspaceID != "" {
			bad("workspaceId", "a run event never carries workspaceId (it is a host-event field)")
		}
	} else {
		switch {
		case !e.Delivery.Valid():
			bad("delivery", quoteTrunc(string(e.Delivery))+" is not durable or ephemeral (a host event needs one; an event meant for a run needs a runId)")
		case e.Delivery != DeliveryDurable && e.Type == TypeNegotiationDecided:
			bad("delivery", "negotiation.decided is a durable host event (RFC 0242 §B)")
		}
		if !utf8.ValidString(e.WorkspaceID) {
			bad("workspaceId", "is not valid UTF-8")
		}
		if e.seq != 0 {
			bad("sequence", "a host event never carries sequence (it is a run-event field)")
		}
		if e.SchemaVersion != 0 {
			bad("schemaVersion", "a host event never carries schemaVersion (it is a run-event field)")
		}
		if e.NodeID != "" {
			bad("nodeId", "a host event never carries nodeId (it is a run-event field)")
		}
		if e.engine != 0 {
			bad("engineVersion", "a host event never carries engineVersion (it is a run-event field)")
		}
		if e.CausationID != "" {
			bad("causationId", "a host event never carries causationId (it is a run-event field)")
		}
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
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
	switch {
	case t.IsZero():
		return "is required"
	case !t.Before(safeMin) && t.Before(safeEnd):
		return ""
	case t.Year() < 0 || t.Year() > 9999:
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

// validEventType matches the host-event type pattern: two segments joined
// by one '.', each ^[a-z][a-z0-9]*(-[a-z0-9]+)*$.
func validEventType(s string) bool {
	first, second, ok := strings.Cut(s, ".")
	return ok && validTypeSegment(first) && validTypeSegment(second)
}

func validTypeSegment(s string) bool {
	// A hyphen must be followed by a letter or digit: no "--", no trailing
	// '-'.
	if s == "" || s[0] < 'a' || s[0] > 'z' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
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
