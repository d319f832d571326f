package conform

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
)

// validEnvelope is a host event of the module, as JSON.
func validEnvelope(t testing.TB, requested string) string {
	t.Helper()
	p := events.NegotiationDecided{Protocol: "a2a", Outcome: "refused", Requested: requested, Reason: "below-floor", Floor: "1.0", At: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	e, err := events.NewHostEvent("", p)
	if err != nil {
		t.Fatal(err)
	}
	data, err := e.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestReadSSE(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []frame
	}{
		{"one frame", "event: negotiation.decided\ndata: {}\n\n", []frame{{"negotiation.decided", "{}"}}},
		{"default event, CRLF", "data: a\r\n\r\n", []frame{{"message", "a"}}},
		{"multi-line data, comment, id", ": hi\nid: 1\ndata: a\ndata:b\n\n", []frame{{"message", "a\nb"}}},
		{"no data no frame", "event: x\n\nevent: y\ndata: z\n\n", []frame{{"y", "z"}}},
		{"unterminated last frame", "data: a\n\ndata: b", []frame{{"message", "a"}, {"message", "b"}}},
		{"field without colon", "data\n\n", []frame{{"message", ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []frame
			if err := readSSE(strings.NewReader(tc.in), func(f frame) bool { got = append(got, f); return true }); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestReadSSEStops(t *testing.T) {
	n := 0
	_ = readSSE(strings.NewReader("data: a\n\ndata: b\n\ndata: c"), func(frame) bool { n++; return false })
	if n != 1 {
		t.Fatalf("%d frames after a stop", n)
	}
}

func TestReadSSEBounds(t *testing.T) {
	if err := readSSE(strings.NewReader("data: "+strings.Repeat("x", maxSSELine)+"\n\n"), func(frame) bool { return true }); err == nil {
		t.Fatal("a line over the bound was read")
	}
	big := strings.Repeat("data: x\n\n", maxSSEBytes/9+10)
	n := 0
	if err := readSSE(strings.NewReader(big), func(frame) bool { n++; return true }); err != nil {
		t.Fatal(err)
	}
	if n > maxSSEBytes/9+1 {
		t.Fatalf("read %d frames past the byte bound", n)
	}
}

func TestParsePoll(t *testing.T) {
	env := validEnvelope(t, "1.1")
	for _, tc := range []struct {
		name, in string
		n        int
		err      bool
	}{
		{"empty", `{"events":[]}`, 0, false},
		{"one, others skipped", `{"events":[` + env + `,{"type":"run.completed"}],"next":1}`, 1, false},
		{"not JSON", `{`, 0, true},
		{"no events", `{"items":[]}`, 0, true},
		{"event not an object", `{"events":[1]}`, 0, true},
		{"repeated key", `{"events":[],"events":[]}`, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := parsePoll([]byte(tc.in))
			if (err != nil) != tc.err || len(recs) != tc.n {
				t.Fatalf("%d records, %v", len(recs), err)
			}
		})
	}
}

func TestParseRecord(t *testing.T) {
	rec, ok := parseRecord([]byte(validEnvelope(t, "0.3")))
	if !ok || rec.Invalid != nil || rec.Payload["requested"] != "0.3" {
		t.Fatalf("valid host event: %v %v %v", ok, rec.Invalid, rec.Payload)
	}
	bad := strings.Replace(validEnvelope(t, "0.3"), `"durable"`, `"durable","runId":"acme/0123456789abcdef"`, 1)
	if rec, ok := parseRecord([]byte(bad)); !ok || rec.Invalid == nil {
		t.Fatalf("a host event with runId validated: %v %v", ok, rec.Invalid)
	}
	for _, in := range []string{`[]`, `{"type":"other"}`, `nope`} {
		if _, ok := parseRecord([]byte(in)); ok {
			t.Errorf("%s read as a record", in)
		}
	}
}

// TestRecordNames: a record names an exchange by its protocol and its
// requested version, both (RFC 0242's suite matches on the two).
func TestRecordNames(t *testing.T) {
	rec, _ := parseRecord([]byte(validEnvelope(t, "0.3")))
	for _, tc := range []struct {
		p     facets.Protocol
		named string
		want  bool
	}{
		{facets.ProtocolA2A, "0.3", true},
		{facets.ProtocolA2A, "1.0", false},
		{facets.ProtocolMCP, "0.3", false},
	} {
		if got := rec.names(tc.p, tc.named); got != tc.want {
			t.Errorf("a record of a2a requesting 0.3 names %s %s: %v, want %v", tc.p, tc.named, got, tc.want)
		}
	}
}

func TestRunIDOf(t *testing.T) {
	for _, tc := range []struct {
		body map[string]any
		id   string
		ok   bool
	}{
		{map[string]any{"runId": "a/b"}, "a/b", true},
		{map[string]any{"details": map[string]any{"runId": "c/d"}}, "c/d", true},
		{map[string]any{"runId": 1}, "", false},
		{nil, "", false},
	} {
		if id, ok := runIDOf(tc.body); id != tc.id || ok != tc.ok {
			t.Errorf("runIDOf(%v) = %q %v", tc.body, id, ok)
		}
	}
}

func TestReadCapped(t *testing.T) {
	if _, err := readCapped(strings.NewReader("abcd"), 3); !errors.Is(err, errTooLarge) {
		t.Fatalf("4 bytes read under a cap of 3: %v", err)
	}
	if data, err := readCapped(strings.NewReader("abc"), 3); err != nil || string(data) != "abc" {
		t.Fatalf("%q %v", data, err)
	}
}

func FuzzReadSSE(f *testing.F) {
	f.Add("event: negotiation.decided\ndata: {}\n\n")
	f.Add(": c\r\ndata: a\ndata: b\n\ndata")
	f.Fuzz(func(t *testing.T, in string) {
		total := 0
		_ = readSSE(strings.NewReader(in), func(fr frame) bool {
			total += len(fr.Data)
			return true
		})
		if total > len(in) {
			t.Fatalf("frames hold %d bytes of data from %d bytes of input", total, len(in))
		}
	})
}

func FuzzParsePoll(f *testing.F) {
	f.Add(`{"events":[]}`)
	f.Add(`{"events":[{"type":"negotiation.decided","payload":{}}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		recs, err := parsePoll([]byte(in))
		if err != nil && recs != nil {
			t.Fatal("records beside an error")
		}
		for _, r := range recs {
			if r.Envelope["type"] != decidedType {
				t.Fatalf("a record of type %v", r.Envelope["type"])
			}
		}
	})
}

func FuzzParseRecord(f *testing.F) {
	f.Add(`{"type":"negotiation.decided","payload":{"protocol":"a2a"}}`)
	f.Add(`{"eventId":"x","type":"negotiation.decided","timestamp":"2026-01-01T00:00:00Z","delivery":"durable","payload":{}}`)
	f.Fuzz(func(t *testing.T, in string) {
		rec, ok := parseRecord([]byte(in))
		if ok && rec.Invalid == nil {
			if _, run := rec.Envelope["runId"]; !run && rec.Envelope["delivery"] != "durable" {
				t.Fatalf("a valid negotiation.decided host event that is not durable: %s", in)
			}
		}
	})
}

func TestAnswerOf(t *testing.T) {
	for _, tc := range []struct {
		ct, body string
		id       any
	}{
		{"application/json", `{"id":1}`, float64(1)},
		{"application/json", `{"id":1,"id":2}`, nil},
		{"text/event-stream", "event: message\ndata: nope\n\ndata: {\"id\":3}\n\ndata: {\"id\":4}\n\n", float64(3)},
		{"text/event-stream", "data: [1]\n\n", nil},
	} {
		a := answerOf(200, http.Header{"Content-Type": {tc.ct}}, []byte(tc.body))
		if a.JSON["id"] != tc.id {
			t.Errorf("%s %q: %v", tc.ct, tc.body, a.JSON)
		}
	}
}
