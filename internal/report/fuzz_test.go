package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/events"
)

// FuzzReadLine holds the fast path to the strict reader: a line the fast
// path takes is one events.Event.UnmarshalJSON takes, with the same
// payload; and reading any input as JSON lines counts every line that is
// not blank once, as an event or as bad.
func FuzzReadLine(f *testing.F) {
	data, _ := newGenerator(3, 5).write(f, 64, 5)
	for line := range bytes.Lines(data) {
		f.Add(line)
	}
	for _, s := range []string{
		`{"eventId":"AAAAAAAAAAAAAAAAAAAAAAAAAA","type":"negotiation.decided","timestamp":"2026-11-30T00:00:00Z","delivery":"durable","payload":{"protocol":"a2a","outcome":"accepted","version":"1.0","at":"2026-11-30T00:00:00Z"},"workspaceId":"w\u00e9"}`,
		`{"eventId":"AAAAAAAAAAAAAAAAAAAAAAAAAA","runId":"t/AAAAAAAAAAAAAAAA","type":"negotiation.decided","payload":{"protocol":"mcp","outcome":"refused","reason":"below-floor","at":"2026-11-30T00:00:00Z"},"timestamp":"2026-11-30T00:00:00Z","sequence":-0,"schemaVersion":1e0,"engineVersion":0}`,
		`{"eventId":"AAAAAAAAAAAAAAAAAAAAAAAAAA","type":"negotiation.decided","timestamp":"0001-01-01T00:00:00Z","delivery":"durable","payload":{"protocol":"a2a","outcome":"accepted","version":"1.0","at":"2026-11-30T00:00:00Z"}}`,
		"{\"eventId\":null}\r\n\n   \n[1,2]\n" + strings.Repeat("x", 300),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var r reader
		line := data
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
		fast, ok := r.fast(line)
		var e events.Event
		strictErr := e.UnmarshalJSON(line)
		if ok {
			if strictErr != nil {
				t.Fatalf("the fast path read %q, which the strict reader refuses: %v", line, strictErr)
			}
			if !samePayload(fast, e.Payload) {
				t.Fatalf("%q: fast path read %+v, strict reader %+v", line, fast, e.Payload)
			}
		}
		var tally Tally
		if err := tally.ReadLines(bytes.NewReader(data), "fuzz"); err != nil {
			t.Fatal(err)
		}
		var lines int64
		for l := range bytes.Lines(data) {
			if len(bytes.Trim(l, " \t\r\n")) > 0 {
				lines++
			}
		}
		r2 := tally.Report()
		if r2.Lines != lines || r2.Events+r2.Bad.NotJSON+r2.Bad.NotDecided != lines {
			t.Fatalf("%d lines not blank; the report read %d: %d events, %d + %d bad", lines, r2.Lines, r2.Events, r2.Bad.NotJSON, r2.Bad.NotDecided)
		}
	})
}

func samePayload(a, b events.NegotiationDecided) bool {
	at := a.At.Equal(b.At)
	a.At = b.At
	return at && a == b
}
