package events_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
)

func TestNewRunEvent(t *testing.T) {
	e, err := events.NewRunEvent("anon:acme/run-0123456789abcdef", sinkAccepted())
	if err != nil {
		t.Fatal(err)
	}
	if !e.IsRun() || e.RunID != "anon:acme/run-0123456789abcdef" {
		t.Errorf("IsRun %t, RunID %q", e.IsRun(), e.RunID)
	}
	if e.Type != events.TypeNegotiationDecided || e.SchemaVersion != 1 || !e.Time.Equal(sinkAt) {
		t.Errorf("type %q, schemaVersion %d, timestamp %v; want negotiation.decided, 1, the payload's at", e.Type, e.SchemaVersion, e.Time)
	}
	if n, ok := e.Sequence(); ok {
		t.Errorf("a new run event has sequence %d; the store assigns it", n)
	}
	if e.Delivery != "" || e.WorkspaceID != "" {
		t.Errorf("a run event carries host-event fields: %q %q", e.Delivery, e.WorkspaceID)
	}
}

func TestNewHostEvent(t *testing.T) {
	e, err := events.NewHostEvent("ws-1", sinkRefused())
	if err != nil {
		t.Fatal(err)
	}
	if e.IsRun() || e.Delivery != events.DeliveryDurable || e.WorkspaceID != "ws-1" {
		t.Errorf("IsRun %t, delivery %q, workspace %q; want a durable host event in ws-1", e.IsRun(), e.Delivery, e.WorkspaceID)
	}
	if e.SchemaVersion != 0 {
		t.Errorf("a host event carries schemaVersion %d", e.SchemaVersion)
	}
}

func TestConstructorsRefuseNamingTheField(t *testing.T) {
	bad := sinkAccepted()
	bad.Version = ""
	cases := []struct {
		name  string
		make  func() (events.Event, error)
		field string
	}{
		{"run id without tenant", func() (events.Event, error) { return events.NewRunEvent("run-0123456789abcdef", sinkAccepted()) }, "runId"},
		{"run id too short", func() (events.Event, error) { return events.NewRunEvent("acme/short", sinkAccepted()) }, "runId"},
		{"payload", func() (events.Event, error) { return events.NewRunEvent(sinkRunID(1), bad) }, "payload"},
		{"host payload", func() (events.Event, error) { return events.NewHostEvent("", bad) }, "payload"},
		{"workspace not UTF-8", func() (events.Event, error) { return events.NewHostEvent("\xff", sinkAccepted()) }, "workspaceId"},
	}
	for _, c := range cases {
		e, err := c.make()
		var fe *events.FieldError
		switch {
		case err == nil:
			t.Errorf("%s: no error", c.name)
		case !errors.As(err, &fe) || fe.Field != c.field:
			t.Errorf("%s: error %v does not name %s", c.name, err, c.field)
		case !errors.Is(err, events.ErrInvalidEvent):
			t.Errorf("%s: error %v does not wrap ErrInvalidEvent", c.name, err)
		case e != events.Event{}:
			t.Errorf("%s: an event came back with the error", c.name)
		}
	}
	// The payload's own error is reachable, and names the payload field.
	_, err := events.NewRunEvent(sinkRunID(1), bad)
	if !errors.Is(err, events.ErrInvalidPayload) || !strings.Contains(err.Error(), "version") {
		t.Errorf("payload error %v: want ErrInvalidPayload naming version", err)
	}
}

func TestNewEventID(t *testing.T) {
	seen := make(map[string]bool)
	for range 1000 {
		id := events.NewEventID()
		e := sinkRun(sinkRunID(1), sinkAccepted())
		e.ID = id
		if err := e.Validate(); err != nil {
			t.Fatalf("NewEventID() = %q does not validate: %v", id, err)
		}
		// 26 base32 characters carry 130 bits.
		if len(id) != 26 {
			t.Fatalf("NewEventID() = %q: %d characters, want 26", id, len(id))
		}
		if seen[id] {
			t.Fatalf("NewEventID() repeated %q", id)
		}
		seen[id] = true
	}
}

func TestValidateRunIDPattern(t *testing.T) {
	long := strings.Repeat("a", 128)
	for id, want := range map[string]bool{
		"acme/0123456789abcdef":             true,
		"anon:acme/0123456789abcdef":        true,
		"a/0123456789abcdef":                true,
		long + "/" + long:                   true,
		"A-Z._~/0123456789ABCDEF.-_~":       true,
		"/0123456789abcdef":                 false, // empty tenant
		"acme/0123456789abcde":              false, // id of 15
		long + "a/0123456789abcdef":         false, // tenant of 129
		"acme/" + long + "a":                false, // id of 129
		"anon:/0123456789abcdef":            false,
		"anon:anon:acme/0123456789abcdef":   false,
		"acme/0123456789abcdef/x":           false,
		"ac me/0123456789abcdef":            false,
		"acme/0123456789abcdéf":             false,
		"ANON:acme/0123456789abcdef":        false,
		"acme:x/0123456789abcdef":           false,
		"acme\x00/0123456789abcdef":         false,
		"acme/0123456789abcdef\n":           false,
		"acme/%30123456789abcdef":           false,
		"acme/0123456789abcdef0123456789ab": true,
	} {
		e := sinkRun(sinkRunID(1), sinkAccepted())
		e.RunID = id
		err := e.Validate()
		if (err == nil) != want {
			t.Errorf("runId %q: Validate() = %v, want valid %t", id, err, want)
		}
	}
}

func TestValidateEventIDPattern(t *testing.T) {
	for id, want := range map[string]bool{
		"0123456789abcdef":       true,
		strings.Repeat("x", 128): true,
		"A.b_c~d-e0123456":       true,
		"0123456789abcde":        false,
		strings.Repeat("x", 129): false,
		"0123456789abcde/":       false,
		"0123456789abcde:":       false,
		"":                       false,
		"0123456789 abcdef":      false,
	} {
		e := sinkRun(sinkRunID(1), sinkAccepted())
		e.ID = id
		if err := e.Validate(); (err == nil) != want {
			t.Errorf("eventId %q: Validate() = %v, want valid %t", id, err, want)
		}
	}
}

func TestValidateType(t *testing.T) {
	for typ, field := range map[string]string{
		"":                       "does not match",
		"negotiation":            "does not match",
		"Negotiation.decided":    "does not match",
		"negotiation.decided.x":  "does not match",
		"negotiation-.decided":   "does not match",
		"negotiation--x.decided": "does not match",
		"1negotiation.decided":   "does not match",
		"run.started":            "only type",
		"host-event.a-1":         "only type",
	} {
		e := sinkHost("", sinkAccepted())
		e.Type = typ
		err := e.Validate()
		var fe *events.FieldError
		if !errors.As(err, &fe) || fe.Field != "type" || !strings.Contains(err.Error(), field) {
			t.Errorf("type %q: Validate() = %v, want a type error saying %q", typ, err, field)
		}
	}
}

// Each envelope is closed: the other's fields are refused, each by name.
func TestValidateEnvelopesAreDisjoint(t *testing.T) {
	run := sinkRun(sinkRunID(1), sinkAccepted())
	run.Delivery = events.DeliveryDurable
	run.WorkspaceID = "ws"
	assertFields(t, "run event with host fields", run.Validate(), "delivery", "workspaceId")

	host := sinkHost("", sinkAccepted()).WithSequence(0).WithEngineVersion(0)
	host.SchemaVersion = 1
	host.NodeID = "n"
	host.CausationID = "c"
	assertFields(t, "host event with run fields", host.Validate(), "sequence", "schemaVersion", "nodeId", "engineVersion", "causationId")

	// Without a runId and without a delivery, the event is neither.
	neither := sinkRun(sinkRunID(1), sinkAccepted())
	neither.RunID = ""
	neither.SchemaVersion = 0
	assertFields(t, "event with no run and no delivery", neither.Validate(), "delivery")
}

func TestValidateRunEventFields(t *testing.T) {
	e := sinkRun(sinkRunID(1), sinkAccepted())
	e.SchemaVersion = 0
	e.NodeID = "\xc3"
	e.CausationID = "ok\xff"
	assertFields(t, "run event", e.Validate(), "schemaVersion", "nodeId", "causationId")
}

func TestValidateHostDelivery(t *testing.T) {
	e := sinkHost("", sinkAccepted())
	e.Delivery = "eventual"
	assertFields(t, "unknown delivery", e.Validate(), "delivery")
	e.Delivery = events.DeliveryEphemeral
	err := e.Validate()
	assertFields(t, "ephemeral negotiation.decided", err, "delivery")
	if !strings.Contains(err.Error(), "durable") {
		t.Errorf("ephemeral: %v does not say it must be durable", err)
	}
}

func TestValidateTimestamp(t *testing.T) {
	for _, tm := range []time.Time{{}, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 12, 31, 0, 0, 0, 0, time.UTC)} {
		e := sinkHost("", sinkAccepted())
		e.Time = tm
		assertFields(t, "timestamp "+tm.String(), e.Validate(), "timestamp")
	}
	// The last and first writable years, in zones that move them.
	east := time.FixedZone("east", 14*3600)
	west := time.FixedZone("west", -12*3600)
	for _, c := range []struct {
		tm    time.Time
		valid bool
	}{
		{time.Date(9999, 12, 31, 23, 59, 59, 999999999, east), true},
		{time.Date(9999, 12, 31, 23, 59, 59, 0, west), true},
		{time.Date(0, 1, 1, 0, 0, 0, 0, west), true},
		{time.Date(0, 1, 1, 0, 0, 0, 0, east), true},
		{time.Date(10000, 1, 1, 0, 0, 0, 0, east), false},
		{time.Date(-1, 12, 31, 23, 0, 0, 0, west), false},
	} {
		e := sinkHost("", sinkAccepted())
		e.Time = c.tm
		if err := e.Validate(); (err == nil) != c.valid {
			t.Errorf("timestamp %v: Validate() = %v, want valid %t", c.tm, err, c.valid)
		}
	}
}

// Validate reports every problem at once, as decided.go's Validate does.
func TestValidateReportsEverything(t *testing.T) {
	var e events.Event
	e.RunID = "x"
	assertFields(t, "zero run event", e.Validate(), "eventId", "type", "timestamp", "payload", "runId", "schemaVersion")
}

func TestValidateAllocatesNothing(t *testing.T) {
	run := sinkRun(sinkRunID(1), sinkAccepted()).WithSequence(3)
	host := sinkHost("ws", sinkRefused())
	if n := testing.AllocsPerRun(100, func() {
		if run.Validate() != nil || host.Validate() != nil {
			panic("invalid")
		}
	}); n != 0 {
		t.Errorf("Validate allocates %.1f times per valid event; sinks call it on the request path", n)
	}
}

func TestSequenceAndEngineVersion(t *testing.T) {
	e := sinkRun(sinkRunID(1), sinkAccepted())
	for _, n := range []int64{0, 1, 1 << 40} {
		if got, ok := e.WithSequence(n).Sequence(); !ok || got != n {
			t.Errorf("WithSequence(%d).Sequence() = %d, %t", n, got, ok)
		}
		if got, ok := e.WithEngineVersion(n).EngineVersion(); !ok || got != n {
			t.Errorf("WithEngineVersion(%d).EngineVersion() = %d, %t", n, got, ok)
		}
	}
	if _, ok := e.WithSequence(5).WithSequence(-1).Sequence(); ok {
		t.Error("WithSequence(-1) did not remove the sequence")
	}
	if _, ok := e.WithEngineVersion(5).WithEngineVersion(-7).EngineVersion(); ok {
		t.Error("WithEngineVersion(-7) did not remove the engine version")
	}
	if _, ok := (events.Event{}).Sequence(); ok {
		t.Error("the zero Event has a sequence")
	}
}

// assertFields checks that err holds a *FieldError for each field, and for
// no other.
func assertFields(t *testing.T, what string, err error, fields ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: Validate() = nil, want errors for %v", what, fields)
		return
	}
	var got []string
	var collect func(error)
	collect = func(err error) {
		if fe, ok := err.(*events.FieldError); ok {
			got = append(got, fe.Field)
			return
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				collect(e)
			}
		}
	}
	collect(err)
	if strings.Join(got, ",") != strings.Join(fields, ",") {
		t.Errorf("%s: errors name %v, want %v:\n%v", what, got, fields, err)
	}
	if !errors.Is(err, events.ErrInvalidEvent) {
		t.Errorf("%s: %v does not wrap ErrInvalidEvent", what, err)
	}
}
