package exchange

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// An event stream fed one byte at a time, as a slow server sends it, gives
// each event's data as it does in one piece: a \r at the end of one write
// and its \n in the next included; comments and events with no data are
// passed over.
func TestEventScannerByteByByte(t *testing.T) {
	for _, tc := range []struct {
		stream string
		want   []string
	}{
		{"event: message\r\ndata: a\r\n\r\n", []string{"a"}},
		{": note\n\nid: 1\n\ndata: a\ndata:b\n\ndata: c\n\n", []string{"a\nb", "c"}},
		{"data: a\r\r\ndata: b\r\rdata", []string{"a", "b"}},
		{"data", nil},
	} {
		var s EventScanner
		var got []string
		for i := 1; i <= len(tc.stream); i++ {
			for {
				data, ok := s.Next([]byte(tc.stream[:i]))
				if !ok {
					break
				}
				got = append(got, string(data))
			}
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%q: %q, want %q", tc.stream, got, tc.want)
		}
	}
}

// At the end of an answer, the event its end cuts off is read whole, as
// the SDKs' clients read it: its last line unterminated, or ended with no
// blank line after it; End then has nothing more. An event whose blank
// line ends with the answer's last byte, a \r, is whole: not cut off.
func TestEventScannerEnd(t *testing.T) {
	for stream, want := range map[string][]string{
		"data: a":                         {"a cut"},
		"data: a\n":                       {"a cut"},
		"data: a\r":                       {"a cut"},
		"data: a\n\r":                     {"a whole"},
		"data: a\r\r":                     {"a whole"},
		"data: a\n\ndata: b\r\ndata:c":    {"a", "b\nc cut"},
		"data: a\n\n":                     {"a"},
		"data:":                           {" cut"},
		"data:\n\r":                       {" whole"},
		"event: message\nid: 1\n: a note": nil,
		"event: message\r\r":              nil,
		"":                                nil,
	} {
		var s EventScanner
		var got []string
		for {
			data, ok := s.Next([]byte(stream))
			if !ok {
				break
			}
			got = append(got, string(data))
		}
		if data, ok, whole := s.End([]byte(stream)); ok {
			got = append(got, string(data)+map[bool]string{true: " whole", false: " cut"}[whole])
		}
		if _, ok, _ := s.End([]byte(stream)); ok || strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("%q: %q (End again %v), want %q", stream, got, ok, want)
		}
	}
}

// scanAll hands each every event of the whole stream s reads, the one its
// end leaves included.
func scanAll(s *EventScanner, stream []byte, each func(data []byte)) {
	for {
		data, ok := s.Next(stream)
		if !ok {
			data, ok, _ = s.End(stream)
		}
		if !ok {
			return
		}
		each(data)
	}
}

// Pass drops the event being read, and with midline the line being read
// too: the line's end is then no blank line, and the event after the
// passed one reads whole.
func TestEventScannerPass(t *testing.T) {
	for _, c := range []struct {
		name    string
		before  string // read before Pass
		midline bool
		after   string // read after it, from the start of the line being read, or past what Pass dropped
		want    []string
	}{
		{"the event's data", "data: a\ndata: b\n", false, "data: c\n\ndata: d\n\n", []string{"d"}},
		{"the line being read", "data: a", true, "aaa\n\ndata: d\n\n", []string{"d"}},
		{"the line being read, then its event's data", "data: a", true, "aaa\ndata: c\n\ndata: d\n\n", []string{"d"}},
		{"the line being read, to the end", "data: a", true, "aaa\ndata: c", nil},
	} {
		var s EventScanner
		if _, ok := s.Next([]byte(c.before)); ok {
			t.Fatalf("%s: an event before Pass", c.name)
		}
		s.Pass(c.midline)
		stream := []byte(c.after)
		s.pos, s.searched = 0, 0
		var got []string
		scanAll(&s, stream, func(data []byte) { got = append(got, string(data)) })
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// An event's type is its last event field's value, less one leading
// space; Named reports one other than message, of the event returned last,
// and a blank line ends the type with the event.
func TestEventScannerNamed(t *testing.T) {
	stream := []byte("event: other\ndata: a\n\ndata: b\n\nevent:message\ndata: c\n\nevent: x\n\ndata: d\n\nevent: x\nevent: message\ndata: e\n\nevent: message\nevent:  message\ndata: f")
	var s EventScanner
	var got []string
	scanAll(&s, stream, func(data []byte) { got = append(got, fmt.Sprintf("%s:%t", data, s.Named())) })
	if want := "a:true b:false c:false d:false e:false f:true"; strings.Join(got, " ") != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// Each write resumes the search where the last one stopped (at the \r that
// ended it, when a \n may follow), so a long line arriving in many writes
// is searched once rather than once a write.
func TestEventScannerSearchesEachByteOnce(t *testing.T) {
	stream := []byte("data: " + strings.Repeat("x", 64) + "\r\nid: 7\r\n\r\n")
	var s EventScanner
	for n := 1; n < len(stream); n++ {
		if _, ok := s.Next(stream[:n]); ok {
			t.Fatalf("an event in %q", stream[:n])
		}
		want := n
		if stream[n-1] == '\r' {
			want = n - 1
		}
		if s.searched != want {
			t.Fatalf("after %d bytes the search resumes at %d, want %d", n, s.searched, want)
		}
	}
}

// FuzzEventScanner: a stream reads the same however it is split in two,
// the event its end cuts off included.
func FuzzEventScanner(f *testing.F) {
	for _, seed := range []string{"data: a\r\n\r\ndata: b\n\n", ": x\rdata:\r\r", "data"} {
		f.Add([]byte(seed), uint16(3))
	}
	f.Fuzz(func(t *testing.T, b []byte, cut uint16) {
		all := func(parts ...[]byte) (out [][]byte) {
			var s EventScanner
			for _, p := range parts {
				for {
					data, ok := s.Next(p)
					if !ok {
						break
					}
					out = append(out, data)
				}
			}
			if data, ok, _ := s.End(b); ok {
				out = append(out, data)
			}
			return out
		}
		at := int(cut) % (len(b) + 1)
		whole, split := all(b), all(b[:at], b)
		if len(whole) != len(split) {
			t.Fatalf("split at %d: %q, whole: %q", at, split, whole)
		}
		for i := range whole {
			if !bytes.Equal(whole[i], split[i]) {
				t.Fatalf("split at %d: %q, whole: %q", at, split, whole)
			}
		}
	})
}

// TestIsEventStream: every spelling a client takes for an event stream is
// one, whatever its case and parameters (a parameter mime.ParseMediaType
// refuses included), and nothing else is.
func TestIsEventStream(t *testing.T) {
	for ct, want := range map[string]bool{
		"text/event-stream":                   true,
		"Text/Event-Stream":                   true,
		" text/event-stream \t":               true,
		"text/event-stream; charset=utf-8":    true,
		"text/event-stream;charset=utf-8":     true,
		"text/event-stream ; =":               true,
		"text/event-streams":                  false,
		"text/event-stream-x; a=b":            false,
		"text/event":                          false,
		"application/json":                    false,
		"":                                    false,
		"application/json, text/event-stream": false,
	} {
		if got := IsEventStream(ct); got != want {
			t.Errorf("IsEventStream(%q) = %v, want %v", ct, got, want)
		}
	}
}
