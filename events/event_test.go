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
	if e.RunID == "" || e.RunID != "anon:acme/run-0123456789abcdef" {
		t.Errorf("IsRun %t, RunID %q", e.RunID != "", e.RunID)
	}
	if e.SchemaVersion != 1 || !e.Time.Equal(sinkAt) {
		t.Errorf("schemaVersion %d, timestamp %v; want 1, the payload's at", e.SchemaVersion, e.Time)
	}
	if e.HasSequence || e.Sequence != 0 {
		t.Errorf("a new run event has sequence %d; the store assigns it", e.Sequence)
	}
	if e.WorkspaceID != "" {
		t.Errorf("a run event carries a workspace: %q", e.WorkspaceID)
	}
}

func TestNewHostEvent(t *testing.T) {
	e, err := events.NewHostEvent("ws-1", sinkRefused())
	if err != nil {
		t.Fatal(err)
	}
	if e.RunID != "" || e.WorkspaceID != "ws-1" {
		t.Errorf("run %q, workspace %q; want a host event in ws-1", e.RunID, e.WorkspaceID)
	}
	if e.SchemaVersion != 0 {
		t.Errorf("a host event carries schemaVersion %d", e.SchemaVersion)
	}
}

func TestConstructorsRefuseNamingTheField(t *testing.T) {
	bad := sinkAccepted()
	bad.Version = ""
	cases := []struct {
		name    string
		make    func() (events.Event, error)
		field   string
		payload func() events.NegotiationDecided
	}{
		{"run id without tenant", func() (events.Event, error) { return events.NewRunEvent("run-0123456789abcdef", sinkAccepted()) }, "runId", sinkAccepted},
		{"run id too short", func() (events.Event, error) { return events.NewRunEvent("acme/short", sinkAccepted()) }, "runId", sinkAccepted},
		{"payload", func() (events.Event, error) { return events.NewRunEvent(sinkRunID(1), bad) }, "payload.version", func() events.NegotiationDecided { return bad }},
		{"host payload", func() (events.Event, error) { return events.NewHostEvent("", bad) }, "payload.version", func() events.NegotiationDecided { return bad }},
		{"workspace not UTF-8", func() (events.Event, error) { return events.NewHostEvent("\xff", sinkAccepted()) }, "workspaceId", sinkAccepted},
	}
	for _, c := range cases {
		e, err := c.make()
		var fe *events.FieldError
		switch {
		case err == nil:
			t.Errorf("%s: no error", c.name)
		case !errors.As(err, &fe) || fe.Field != c.field:
			t.Errorf("%s: error %v does not name %s", c.name, err, c.field)
		case e.ID == "" || e.Payload != c.payload():
			t.Errorf("%s: the event did not come back, as built, with the error", c.name)
		}
	}
}

func TestEventIDs(t *testing.T) {
	seen := make(map[string]bool)
	for range 1000 {
		id := sinkRun(sinkRunID(1), sinkAccepted()).ID
		// 26 base32 characters carry 130 bits.
		if len(id) != 26 {
			t.Fatalf("event id %q: %d characters, want 26", id, len(id))
		}
		if seen[id] {
			t.Fatalf("event id %q repeated", id)
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

// Each envelope is closed: the other's fields are refused, each by name.
func TestValidateEnvelopesAreDisjoint(t *testing.T) {
	run := sinkRun(sinkRunID(1), sinkAccepted())
	run.WorkspaceID = "ws"
	assertFields(t, "run event with host fields", run.Validate(), "workspaceId")

	host := withEngine(withSeq(sinkHost("", sinkAccepted()), 0), 0)
	host.SchemaVersion = 1
	host.NodeID = "n"
	host.CausationID = "c"
	assertFields(t, "host event with run fields", host.Validate(), "sequence", "schemaVersion", "nodeId", "engineVersion", "causationId")

	// A sequence or engine version of 0 that is not marked present is
	// still refused on a host event.
	host = sinkHost("", sinkAccepted())
	host.Sequence, host.EngineVersion = 1, 2
	assertFields(t, "host event with unmarked run numbers", host.Validate(), "sequence", "engineVersion")
}

func TestValidateRunEventFields(t *testing.T) {
	e := sinkRun(sinkRunID(1), sinkAccepted())
	e.SchemaVersion = 0
	e.NodeID = "\xc3"
	e.CausationID = "ok\xff"
	assertFields(t, "run event", e.Validate(), "schemaVersion", "nodeId", "causationId")
}

func TestValidateRunNumbers(t *testing.T) {
	e := withEngine(withSeq(sinkRun(sinkRunID(1), sinkAccepted()), 0), 0)
	if err := e.Validate(); err != nil {
		t.Fatalf("sequence 0 and engine version 0: %v", err)
	}
	for _, c := range []struct {
		name  string
		mod   func(*events.Event)
		field string
	}{
		{"negative sequence", func(e *events.Event) { e.Sequence = -1 }, "sequence"},
		{"sequence not marked present", func(e *events.Event) { e.Sequence, e.HasSequence = 1, false }, "sequence"},
		{"negative engine version", func(e *events.Event) { e.EngineVersion = -1 }, "engineVersion"},
		{"engine version not marked present", func(e *events.Event) { e.EngineVersion, e.HasEngineVersion = 1, false }, "engineVersion"},
	} {
		bad := e
		c.mod(&bad)
		assertFields(t, c.name, bad.Validate(), c.field)
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
	assertFields(t, "zero run event", e.Validate(), "eventId", "timestamp", "payload.protocol", "payload.outcome", "payload.at", "runId", "schemaVersion")
}

func TestValidateAllocatesNothing(t *testing.T) {
	run := withSeq(sinkRun(sinkRunID(1), sinkAccepted()), 3)
	host := sinkHost("ws", sinkRefused())
	if n := testing.AllocsPerRun(100, func() {
		if run.Validate() != nil || host.Validate() != nil {
			panic("invalid")
		}
	}); n != 0 {
		t.Errorf("Validate allocates %.1f times per valid event; sinks call it on the request path", n)
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
}

// Event ids are made as crypto/rand.Text makes them: 26 characters of the
// base32 alphabet, none twice, across several reads of the random source.
func TestEventIDsAreRandomBase32(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		e, err := events.NewHostEvent("", sinkAccepted())
		if err != nil {
			t.Fatal(err)
		}
		if len(e.ID) != 26 || strings.Trim(e.ID, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") != "" || seen[e.ID] {
			t.Fatalf("event id %q: want 26 of the base32 alphabet, not seen before", e.ID)
		}
		seen[e.ID] = true
	}
}
