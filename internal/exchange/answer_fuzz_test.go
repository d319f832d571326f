package exchange

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"
)

// refusesOn is a Classify that refuses any complete message holding
// "NO", for the differential fuzz target: what matters there is which
// bytes reach the protocol, not how it reads them.
func refusesOn(msg []byte, complete bool) Verdict {
	switch {
	case !complete:
		return Undecided
	case bytes.Contains(msg, []byte("NO")):
		return Refused
	}
	return Served
}

// reference reads an answer the plain way a client does: decompress the
// whole body, strip a BOM, and read it as one JSON text or as an event
// stream (plainEvents), an event not every client takes as a message
// read for a refusal alone.
func reference(body []byte, coded, sse bool, limit int64) Verdict {
	if coded {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return Unreadable
		}
		plain, err := io.ReadAll(zr)
		if err != nil || int64(len(plain)) > limit {
			return Unreadable
		}
		body = plain
	}
	body = bytes.TrimPrefix(body, []byte(bom))
	if !sse {
		return refusesOn(body, true)
	}
	for _, e := range plainEvents(string(body)) {
		if v := refusesOn([]byte(e.data), true); v == Refused || v != Undecided && e.message {
			return v
		}
	}
	return Undecided
}

// plainEvent is an event of a stream: its data, and whether every client
// takes it as a message.
type plainEvent struct {
	data    string
	message bool
}

// plainEvents reads a whole event stream as the SDKs' clients do, and
// apart from EventScanner, whose witness it is: lines end at \r\n, \n or
// \r; a data field adds its value, less one leading space, to the event's
// data, each after a \n but the first, and an event field sets its type; a
// blank line ends an event, and an event with no data field is none. The
// event the stream's end cuts off is one too, which those clients read and
// the format drops; it, and one with a type other than message, is no
// message every client takes.
func plainEvents(stream string) (events []plainEvent) {
	stream = strings.ReplaceAll(strings.ReplaceAll(stream, "\r\n", "\n"), "\r", "\n")
	lines := strings.Split(stream, "\n")
	var data []string
	typed := false
	for i, line := range lines {
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch {
		case line == "" && i < len(lines)-1:
			if data != nil {
				events = append(events, plainEvent{strings.Join(data, "\n"), !typed})
			}
			data, typed = nil, false
		case field == "data": // the last line too, which the end cuts off
			data = append(data, value)
		case field == "event":
			typed = value != "message"
		}
	}
	if data != nil {
		events = append(events, plainEvent{strings.Join(data, "\n"), false})
	}
	return events
}

// FuzzAnswer is the differential target of the engine's one answer
// reader: written in two pieces cut anywhere, gzip-coded or not, JSON or
// an event stream, an answer within the bound reads as the reference
// reads it whole.
func FuzzAnswer(f *testing.F) {
	for _, seed := range []string{
		`{"result":{}}`, "\xEF\xBB\xBF{\"error\":\"NO\"}", "data: {\"a\":1}\n\ndata: NO\n\n",
		"\xEF\xBB\xBFdata: NO\r\n\r\n", "data: x\n", "[", "\xEF\xBB", "data: {}\n\ndata: NO", "data: NO\r", "event: x\ndata: OK\n\ndata: NO\n\n", "event: message\ndata: OK\n\n",
		"data: OK\n\ndata: a\n\ndata: NO", "data: OK\r\rdata: NO\r\n\r\n", "data:\n\r",
	} {
		f.Add([]byte(seed), uint16(1), false, false)
		f.Add([]byte(seed), uint16(3), true, true)
	}
	f.Fuzz(func(t *testing.T, body []byte, cut uint16, coded, sse bool) {
		const limit = 1 << 12
		raw := body
		h := http.Header{"Content-Type": {"application/json"}}
		if sse {
			h.Set("Content-Type", "text/event-stream")
		}
		if coded {
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			_, _ = zw.Write(body)
			_ = zw.Close()
			raw = b.Bytes()
			h.Set("Content-Encoding", "gzip")
		}
		if len(raw) > limit {
			return
		}
		at := int(cut) % (len(raw) + 1)
		var a Answer
		a.Start(h, limit, refusesOn, nil)
		v, written := a.Write(raw[:at]), raw[:at]
		if v == Undecided {
			v, written = a.Write(raw[at:]), raw
		}
		if v == Undecided {
			v = a.End()
		}
		if want := reference(raw, coded, sse, limit); v != want {
			t.Fatalf("%q (gzip %t, stream %t) cut at %d: %d, want %d", body, coded, sse, at, v, want)
		}
		if !bytes.Equal(a.Held(), written) {
			t.Fatalf("held %q, want the answer as sent", a.Held())
		}
		if v != Served || !sse {
			return
		}
		// Followed on, in two more pieces, the stream refuses later as
		// the reference reads it.
		rest := raw[len(written):]
		at = int(cut/7) % (len(rest) + 1)
		later := a.Follow(rest[:at], false)
		later = a.Follow(rest[at:], false) || later
		later = a.Follow(nil, true) || later
		if want := referenceLater(raw, coded); later != want {
			t.Fatalf("%q (gzip %t) followed from %d, cut at %d: refused later %t, want %t", body, coded, len(written), at, later, want)
		}
	})
}

// referenceLater reads a whole stream as reference does, and reports
// whether an event refuses after the first message that serves.
func referenceLater(body []byte, coded bool) bool {
	if coded {
		zr, _ := gzip.NewReader(bytes.NewReader(body))
		body, _ = io.ReadAll(zr)
	}
	settled := false
	for _, e := range plainEvents(string(bytes.TrimPrefix(body, []byte(bom)))) {
		v := refusesOn([]byte(e.data), true)
		if settled && v == Refused {
			return true
		}
		settled = settled || v == Served && e.message
	}
	return false
}
