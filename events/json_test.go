package events_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
)

func TestRunEventJSONIsTheClosedEnvelope(t *testing.T) {
	e := withEngine(withSeq(sinkRun(sinkRunID(7), sinkAccepted()), 4), 0)
	e.ID = "evt-0123456789abcdef"
	e.NodeID = "node-1"
	e.CausationID = "evt-fedcba9876543210"
	got, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"eventId":"evt-0123456789abcdef","runId":"acme/run-0000000000000007","type":"negotiation.decided",` +
		`"payload":{"protocol":"a2a","outcome":"accepted","version":"1.1","requested":"1.2","reason":"ok","floor":"1.1",` +
		`"peerDigest":"` + sinkPeerDigest + `","at":"2026-11-29T12:00:00.123Z"},` +
		`"timestamp":"2026-11-29T12:00:00.123Z","sequence":4,"schemaVersion":1,"nodeId":"node-1","engineVersion":0,"causationId":"evt-fedcba9876543210"}`
	if string(got) != want {
		t.Errorf("run event JSON\n got %s\nwant %s", got, want)
	}
}

func TestHostEventJSONIsTheClosedEnvelope(t *testing.T) {
	e := sinkHost("ws-1", sinkRefused())
	e.ID = "evt-0123456789abcdef"
	got, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"eventId":"evt-0123456789abcdef","type":"negotiation.decided","timestamp":"2026-11-29T12:00:00.123Z","delivery":"durable",` +
		`"payload":{"protocol":"mcp","outcome":"refused","requested":"2025-06-18","reason":"below-floor","floor":"2025-11-25","at":"2026-11-29T12:00:00.123Z"},` +
		`"workspaceId":"ws-1"}`
	if string(got) != want {
		t.Errorf("host event JSON\n got %s\nwant %s", got, want)
	}
}

// An event whose timestamp is not its payload's at writes each time as it
// is: the encoding formats the timestamp once and copies it for at only
// when they are the same time.
func TestJSONWritesTimestampAndAtApart(t *testing.T) {
	run := withSeq(sinkRun(sinkRunID(7), sinkAccepted()), 0)
	for _, e := range []events.Event{run, sinkHost("", sinkRefused())} {
		e.Time = e.Payload.At.Add(1500 * time.Millisecond)
		got, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(got, []byte(`"timestamp":"2026-11-29T12:00:01.623Z"`)) || !bytes.Contains(got, []byte(`"at":"2026-11-29T12:00:00.123Z"`)) {
			t.Errorf("timestamp 1.5s after at: %s", got)
		}
	}
}

// The hand-written payload encoding is encoding/json's, byte for byte.
func TestPayloadJSONMatchesEncodingJSON(t *testing.T) {
	for _, p := range []events.NegotiationDecided{sinkAccepted(), sinkRefused()} {
		want, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(sinkHost("", p))
		if err != nil {
			t.Fatal(err)
		}
		var env map[string]json.RawMessage
		if err := json.Unmarshal(b, &env); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(env["payload"], want) {
			t.Errorf("payload\n got %s\nwant %s", env["payload"], want)
		}
	}
}

// Strings the id patterns do not govern are escaped as encoding/json
// escapes them (HTML escaping aside), so every reader reads them back.
func TestJSONStringEscaping(t *testing.T) {
	for _, s := range []string{"plain", `q"b\s`, "ctl\x00\x01\x1f\x7f", "nl\n\r\t\b\f", "js\u2028\u2029", "é漢字🙂", "<&>"} {
		e := withSeq(sinkRun(sinkRunID(1), sinkAccepted()), 0)
		e.NodeID = s
		// MarshalJSON itself: json.Marshal would add HTML escaping on top.
		b, err := e.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if want := `"nodeId":` + strings.TrimSuffix(buf.String(), "\n"); !bytes.Contains(b, []byte(want)) {
			t.Errorf("nodeId %q: %s does not contain %s", s, b, want)
		}
		var back events.Event
		if err := json.Unmarshal(b, &back); err != nil || back.NodeID != s {
			t.Errorf("nodeId %q came back as %q (%v)", s, back.NodeID, err)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	run := withEngine(withSeq(sinkRun(sinkRunID(3), sinkAccepted()), 9), 2)
	run.NodeID, run.CausationID = "n", "c"
	for _, e := range []events.Event{run, withSeq(sinkRun(sinkRunID(4), sinkRefused()), 0), sinkHost("", sinkAccepted()), sinkHost("ws", sinkRefused())} {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var back events.Event
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		// Time zones aside, the event comes back equal.
		back.Time, back.Payload.At = e.Time, e.Payload.At
		if plain(back) != plain(e) {
			t.Errorf("round trip\n got %+v\nwant %+v", back, e)
		}
	}
}

func TestMarshalJSONRefusesAnUnsequencedRunEvent(t *testing.T) {
	e := sinkRun(sinkRunID(1), sinkAccepted())
	b, err := e.MarshalJSON()
	var fe *events.FieldError
	if !errors.As(err, &fe) || fe.Field != "sequence" {
		t.Errorf("MarshalJSON of an unsequenced run event: %v, want a sequence error", err)
	}
	if b != nil {
		t.Errorf("MarshalJSON wrote %q on error", b)
	}
	if _, err := json.Marshal(events.Event{}); !errors.As(err, &fe) {
		t.Errorf("Marshal(zero Event) = %v, want a *FieldError", err)
	}
}

func TestUnmarshalRefuses(t *testing.T) {
	valid := func(run bool) map[string]any {
		var e events.Event
		if run {
			e = withSeq(sinkRun(sinkRunID(1), sinkAccepted()), 0)
		} else {
			e = sinkHost("", sinkAccepted())
		}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	type edit func(m map[string]any)
	set := func(k string, v any) edit { return func(m map[string]any) { m[k] = v } }
	del := func(k string) edit { return func(m map[string]any) { delete(m, k) } }
	cases := []struct {
		name  string
		run   bool
		edit  edit
		field string
	}{
		{"unknown key", true, set("tenant", "acme"), "tenant"},
		{"id, not eventId", false, set("id", "x"), "id"},
		{"run with delivery", true, set("delivery", "durable"), "delivery"},
		{"run with workspaceId", true, set("workspaceId", "w"), "workspaceId"},
		{"host with sequence", false, set("sequence", 0), "sequence"},
		{"host with schemaVersion", false, set("schemaVersion", 1), "schemaVersion"},
		{"host with nodeId", false, set("nodeId", "n"), "nodeId"},
		{"run without sequence", true, del("sequence"), "sequence"},
		{"run without schemaVersion", true, del("schemaVersion"), "schemaVersion"},
		{"host without delivery", false, del("delivery"), "delivery"},
		{"without payload", false, del("payload"), "payload"},
		{"without timestamp", true, del("timestamp"), "timestamp"},
		{"null eventId", true, set("eventId", nil), "eventId"},
		{"negative sequence", true, set("sequence", -1), "sequence"},
		{"fractional sequence", true, set("sequence", 1.5), "sequence"},
		{"sequence as string", true, set("sequence", "1"), "sequence"},
		{"schemaVersion 0", true, set("schemaVersion", 0), "schemaVersion"},
		{"negative engineVersion", true, set("engineVersion", -1), "engineVersion"},
		{"eventId as number", true, set("eventId", 12), "eventId"},
		{"timestamp not RFC 3339", false, set("timestamp", "29 Nov 2026"), "timestamp"},
		{"short eventId", false, set("eventId", "abc"), "eventId"},
		{"bad runId", true, set("runId", "acme"), "runId"},
		{"ephemeral", false, set("delivery", "ephemeral"), "delivery"},
		{"another run event type", true, set("type", "run.started"), "type"},
		{"another host event type", false, set("type", "negotiation.requested"), "type"},
		{"payload with an unknown key", false, func(m map[string]any) { m["payload"].(map[string]any)["peer"] = "x" }, "payload"},
		{"payload refused as accepted without version", true, func(m map[string]any) { delete(m["payload"].(map[string]any), "version") }, "payload.version"},
	}
	for _, c := range cases {
		m := valid(c.run)
		c.edit(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var e events.Event
		err = json.Unmarshal(b, &e)
		var fe *events.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: Unmarshal = %v, want an error for field %s", c.name, err, c.field)
		}
	}
}

func TestUnmarshalRefusesMalformedObjects(t *testing.T) {
	good, err := json.Marshal(sinkHost("", sinkAccepted()))
	if err != nil {
		t.Fatal(err)
	}
	s := string(good)
	for name, in := range map[string]string{
		"not an object":        `[]`,
		"trailing data":        s + `{}`,
		"repeated key":         strings.Replace(s, `{"eventId":`, `{"type":"negotiation.decided","eventId":`, 1),
		"key in another case":  strings.Replace(s, `"eventId"`, `"EventId"`, 1),
		"truncated":            s[:len(s)-1],
		"delivery is a number": strings.Replace(s, `"delivery":"durable"`, `"delivery":1`, 1),
	} {
		// Called directly: json.Unmarshal would catch the syntax errors
		// before UnmarshalJSON sees them.
		var e events.Event
		if err := e.UnmarshalJSON([]byte(in)); !errors.As(err, new(*events.FieldError)) {
			t.Errorf("%s: UnmarshalJSON = %v, want it refused", name, err)
		}
		if e != (events.Event{}) {
			t.Errorf("%s: UnmarshalJSON changed the event on error", name)
		}
	}
}

// runJSON is a valid run event with a nodeId, as JSON.
func runJSON(t *testing.T) string {
	t.Helper()
	e := withSeq(sinkRun(sinkRunID(7), sinkAccepted()), 4)
	e.ID = "evt-0123456789abcdef"
	e.NodeID = "node-1"
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Issue 8 item 6: the event is read with the strict reader, which refuses
// a string that is not UTF-8. On main before this change encoding/json's
// Decoder replaced the bad bytes with U+FFFD, so a nodeId Validate would
// refuse came back as a different, valid one.
func TestUnmarshalRefusesInvalidUTF8(t *testing.T) {
	s := runJSON(t)
	for name, in := range map[string]string{
		"nodeId":  strings.Replace(s, `"node-1"`, "\"node-\xff\"", 1),
		"payload": strings.Replace(s, `"requested":"1.2"`, "\"requested\":\"1.2\xff\"", 1),
		"key":     strings.Replace(s, `"nodeId"`, "\"node\xffId\"", 1),
	} {
		var e events.Event
		err := e.UnmarshalJSON([]byte(in))
		if !errors.As(err, new(*events.FieldError)) || !strings.Contains(err.Error(), "invalid UTF-8") {
			t.Errorf("%s: UnmarshalJSON = %v, want invalid UTF-8 refused", name, err)
		}
		if e != (events.Event{}) {
			t.Errorf("%s: decoded %+v", name, e)
		}
	}
}

// The envelope nests two levels: a value deeper than that, even one that
// is only skipped because it has the wrong type, is refused while reading.
func TestUnmarshalRefusesDeepValues(t *testing.T) {
	s := runJSON(t)
	deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	var e events.Event
	err := e.UnmarshalJSON([]byte(strings.Replace(s, `"node-1"`, deep, 1)))
	if !errors.As(err, new(*events.FieldError)) || !strings.Contains(err.Error(), "nested deeper than 2 levels") {
		t.Errorf("UnmarshalJSON = %v, want it refused as too deep", err)
	}
}

// A problem inside the payload is the payload's: a *FieldError for
// "payload" or one of its fields, saying what it was.
func TestUnmarshalPayloadErrors(t *testing.T) {
	s := runJSON(t)
	for name, c := range map[string]struct{ from, to, want string }{
		"unknown key":  {`"requested":"1.2"`, `"peer":"x"`, `unknown field "peer"`},
		"repeated key": {`"requested":"1.2"`, `"reason":"ok"`, `the key "reason" appears twice`},
		"not a string": {`"requested":"1.2"`, `"requested":12`, `payload.requested: want a string, got a number`},
		"bad at":       {`"at":"2026-11-29T12:00:00.123Z"`, `"at":"2026-11-29"`, `at: parsing time`},
		"at not text":  {`"at":"2026-11-29T12:00:00.123Z"`, `"at":1`, `payload.at: want a string, got a number`},
		"not object":   {`"payload":{`, `"payload":[{`, `payload: want an object, got an array`},
		"validated":    {`"version":"1.1",`, ``, `payload.version: is required when the outcome is accepted`},
	} {
		in := strings.Replace(s, c.from, c.to, 1)
		var e events.Event
		err := e.UnmarshalJSON([]byte(in))
		var fe *events.FieldError
		if !errors.As(err, &fe) || !strings.HasPrefix(fe.Field, "payload") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: UnmarshalJSON(%s) = %v, want a payload error containing %q", name, in, err, c.want)
		}
	}
}

// Every field is read into its place, and a host event's too.
func TestUnmarshalReadsEveryField(t *testing.T) {
	run := withEngine(withSeq(sinkRun(sinkRunID(7), sinkAccepted()), 4), 3)
	run.ID, run.NodeID, run.CausationID = "evt-0123456789abcdef", "node-1", "evt-fedcba9876543210"
	run.SchemaVersion = 2
	host := sinkHost("ws-1", sinkRefused())
	host.ID = "evt-0123456789abcdef"
	for _, want := range []events.Event{run, host} {
		b, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		var got events.Event
		if err := got.UnmarshalJSON(b); err != nil {
			t.Fatalf("UnmarshalJSON(%s): %v", b, err)
		}
		if !got.Time.Equal(want.Time) || !got.Payload.At.Equal(want.Payload.At) {
			t.Errorf("times of %s: %v, %v", b, got.Time, got.Payload.At)
		}
		got.Time, got.Payload.At = want.Time, want.Payload.At
		if plain(got) != plain(want) {
			t.Errorf("UnmarshalJSON(%s)\n got %+v\nwant %+v", b, got, want)
		}
	}
	for name, c := range map[string]struct{ from, to, field string }{
		"sequence too big":       {`"sequence":4`, `"sequence":9223372036854775808`, "sequence"},
		"schemaVersion 1.0":      {`"schemaVersion":2`, `"schemaVersion":2.0`, "schemaVersion"},
		"engineVersion 1e0":      {`"engineVersion":3`, `"engineVersion":3e0`, "engineVersion"},
		"engineVersion a string": {`"engineVersion":3`, `"engineVersion":"3"`, "engineVersion"},
		"nodeId a number":        {`"nodeId":"node-1"`, `"nodeId":1`, "nodeId"},
	} {
		b, _ := json.Marshal(run)
		in := strings.Replace(string(b), c.from, c.to, 1)
		var e events.Event
		err := e.UnmarshalJSON([]byte(in))
		var fe *events.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: UnmarshalJSON(%s) = %v, want an error for %s", name, in, err, c.field)
		}
	}
}

// FuzzEventJSON checks that the event reader never panics, refuses with
// a *FieldError, and that what it accepts is valid and
// survives a round trip unchanged.
func FuzzEventJSON(f *testing.F) {
	for _, e := range []events.Event{withEngine(withSeq(sinkRun(sinkRunID(1), sinkAccepted()), 3), 1), sinkHost("ws", sinkRefused())} {
		b, err := json.Marshal(e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(bytes.Replace(b, []byte(`"type"`), []byte(`"Type"`), 1))
		f.Add(append(b, '}'))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var e events.Event
		if err := e.UnmarshalJSON(data); err != nil {
			if !errors.As(err, new(*events.FieldError)) {
				t.Fatalf("error %v is not a *FieldError", err)
			}
			if e != (events.Event{}) {
				t.Fatalf("changed on error: %+v", e)
			}
			return
		}
		if err := e.Validate(); err != nil {
			t.Fatalf("accepted an invalid event: %v", err)
		}
		if !json.Valid(data) {
			t.Fatalf("accepted what encoding/json calls invalid: %q", data)
		}
		out, err := e.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON: %v", err)
		}
		var back events.Event
		if err := back.UnmarshalJSON(out); err != nil {
			t.Fatalf("re-read of %s: %v", out, err)
		}
		if !back.Time.Equal(e.Time) || !back.Payload.At.Equal(e.Payload.At) {
			t.Fatalf("times changed via %s", out)
		}
		back.Time, back.Payload.At = e.Time, e.Payload.At
		if plain(back) != plain(e) {
			t.Fatalf("round trip\n got %+v\nwant %+v", back, e)
		}
	})
}
