package exchange

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
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
// stream (events end at a blank line; data lines joined by "\n").
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
	var s EventScanner
	for {
		data, ok := s.Next(body)
		if !ok {
			return Undecided
		}
		if v := refusesOn(data, true); v != Undecided {
			return v
		}
	}
}

// FuzzAnswer is the differential target of the engine's one answer
// reader: written in two pieces cut anywhere, gzip-coded or not, JSON or
// an event stream, an answer within the bound reads as the reference
// reads it whole.
func FuzzAnswer(f *testing.F) {
	for _, seed := range []string{
		`{"result":{}}`, "\xEF\xBB\xBF{\"error\":\"NO\"}", "data: {\"a\":1}\n\ndata: NO\n\n",
		"\xEF\xBB\xBFdata: NO\r\n\r\n", "data: x\n", "[", "\xEF\xBB",
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
	})
}
