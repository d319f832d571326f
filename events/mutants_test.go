package events

// Tests that pin down behaviour the rest of the suite left loose, each
// named after what it guards. They are white-box where the behaviour is
// only visible inside the package (which wake-ups the recording goroutine
// gets, what quoteTrunc writes).

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/wopneg/wopneg/facets"
)

func mutantPayload() NegotiationDecided {
	return NegotiationDecided{
		Protocol: facets.ProtocolA2A, Outcome: Accepted, Version: "1.1", Requested: "1.2",
		Reason: ReasonOK, Floor: "1.1", At: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC),
	}
}

func mutantHostEvent(t *testing.T) Event {
	t.Helper()
	e, err := NewHostEvent("", mutantPayload())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestDeliveryValid(t *testing.T) {
	for d, want := range map[Delivery]bool{
		DeliveryDurable:   true,
		DeliveryEphemeral: true,
		"":                false,
		"Durable":         false,
		"eventual":        false,
	} {
		if got := d.Valid(); got != want {
			t.Errorf("Delivery(%q).Valid() = %t, want %t", d, got, want)
		}
	}
}

func TestEventTypePatternEdges(t *testing.T) {
	for s, want := range map[string]bool{
		"a.a":          true,
		"z.z":          true,
		"az09.za90":    true,
		"a-z.z-a":      true,
		"a-0-9.b-a-z":  true,
		"a9-0z.x":      true,
		"`.a":          false, // '`' is just below 'a'
		"{.a":          false, // '{' is just above 'z'
		"a.`":          false,
		"a.{":          false,
		"a`.a":         false,
		"a{.a":         false,
		"a/.a":         false, // '/' is just below '0'
		"a:.a":         false, // ':' is just above '9'
		"0a.a":         false,
		"a.9":          false,
		"-a.a":         false,
		"a-.a":         false,
		"a.a-":         false,
		"a--b.a":       false,
		"a.b--c":       false,
		"a-b-.c":       false,
		"a":            false,
		".a":           false,
		"a.":           false,
		".":            false,
		"":             false,
		"a.b.c":        false,
		"ab.cd-ef-gh0": true,
	} {
		if got := validEventType(s); got != want {
			t.Errorf("validEventType(%q) = %t, want %t", s, got, want)
		}
	}
}

func TestRunIDPatternEdges(t *testing.T) {
	id := strings.Repeat("i", 16)
	for s, want := range map[string]bool{
		"t/" + id:           true,
		"anon:t/" + id:      true,
		"/" + id:            false,
		"anon:/" + id:       false,
		"t" + id:            false,
		"t/" + id[1:]:       false,
		"t/" + id + "/":     false,
		"t/" + id + "/x":    false,
		"anon:anon:t/" + id: false,
		"":                  false,
	} {
		if got := validRunID(s); got != want {
			t.Errorf("validRunID(%q) = %t, want %t", s, got, want)
		}
	}
}

func TestQuoteTruncCutsAtARuneStart(t *testing.T) {
	a79 := strings.Repeat("a", 79)
	for _, tc := range []struct{ in, want string }{
		// Exactly the limit is written whole.
		{a79 + "b", `"` + a79 + `b"`},
		// One past it is cut to 80 bytes.
		{a79 + "bc", `"` + a79 + `b"…`},
		// Never inside a rune: "é" starts at byte 79, so the cut moves
		// back to it.
		{a79 + "éz", `"` + a79 + `"…`},
		// A string of nothing but continuation bytes is cut to nothing.
		{strings.Repeat("\x80", 81), `""…`},
	} {
		if got := quoteTrunc(tc.in); got != tc.want {
			t.Errorf("quoteTrunc(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestJSONStringEdgeBytes(t *testing.T) {
	for in, want := range map[string]string{
		" ":           `" "`,
		"a b":         `"a b"`,
		"\x1f":        `"\u001f"`,
		"\x7f":        "\"\x7f\"",
		"\x80":        `"\ufffd"`,
		"a\x80b":      `"a\ufffdb"`,
		"\xc3":        `"\ufffd"`,
		"é":           `"é"`,
		"\u2028x":     `"\u2028x"`,
		"x\u2029":     `"x\u2029"`,
		"\U0001F642!": "\"\U0001F642!\"",
	} {
		if got := string(appendJSONString(nil, in)); got != want {
			t.Errorf("appendJSONString(%q) = %s, want %s", in, got, want)
		}
	}
	// The same bytes reach a refused event's error message.
	e := mutantHostEvent(t)
	e.ID = "bad id\x80"
	var fe *FieldError
	if err := e.Validate(); !errors.As(err, &fe) || fe.Reason != `"bad id\ufffd" is not 16 to 128 of [A-Za-z0-9._~-]` {
		t.Errorf("Validate() = %v, want the id quoted with U+FFFD", err)
	}
}

// failOnceWriter fails its first write having written nothing, then
// writes normally.
type failOnceWriter struct {
	bytes.Buffer
	failed bool
}

func (w *failOnceWriter) Write(p []byte) (int, error) {
	if !w.failed {
		w.failed = true
		return 0, errors.New("EAGAIN")
	}
	return w.Buffer.Write(p)
}

// A write that failed before writing anything left no fragment, so the next
// line needs no repair newline.
func TestJSONLinesAfterAnUntornFailure(t *testing.T) {
	w := &failOnceWriter{}
	j := NewJSONLines(w)
	e := mutantHostEvent(t)
	if err := j.Emit(context.Background(), e); err == nil {
		t.Fatal("the failed write was not reported")
	}
	if err := j.Emit(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	want, err := e.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.String(); got != string(want)+"\n" {
		t.Errorf("wrote %q, want the one line %q", got, string(want)+"\n")
	}
}

// was, not a copy.
func TestOriginOfACanonicalOriginIsTheInput(t *testing.T) {
	for _, url := range []string{"https://peer.example", "http://a:8080", "ws://[::1]"} {
		got, err := Origin(url)
		if err != nil || got != url {
			t.Fatalf("Origin(%q) = %q, %v; want it unchanged", url, got, err)
		}
		if unsafe.StringData(got) != unsafe.StringData(url) {
			t.Errorf("Origin(%q) returned a copy, want the input itself", url)
		}
	}
}

func TestOriginEdgeCases(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		// Trailing spaces and C0 controls are stripped, the space included.
		{"http://a.example ", "http://a.example"},
		{" \x1fhttp://a.example\x00 ", "http://a.example"},
		// The letters at either end of the alphabet, in either case, in a
		// scheme and in a host.
		{"HTTPS://ZA.example", "https://za.example"},
		{"wSs://az.example", "wss://az.example"},
		// The largest port.
		{"http://a:65535", "http://a:65535"},
		{"http://a:065535", "http://a:65535"},
		// A run of zero pieces at the end of an IPv6 address.
		{"http://[1::]", "http://[1::]"},
		{"http://[1:2:3:4:5:6::]", "http://[1:2:3:4:5:6::]"},
		{"http://[1:2:3:4:5:6:7:0]", "http://[1:2:3:4:5:6:7:0]"},
		{"http://[::]", "http://[::]"},
		// Percent escapes whose digits are 9, a and A.
		{"http://%39a.example", "http://9a.example"},
		{"http://%6a%6A.example", "http://jj.example"},
		{"http://%4a%4A%5a.example", "http://jjz.example"},
		// A Cypriot letter (the first of its right-to-left block) is
		// right-to-left, as a Hebrew one is.
		{"http://\u05d0\U00010800.example", "http://xn--4db6033k.example"},
	} {
		if got, err := Origin(tc.url); err != nil || got != tc.want {
			t.Errorf("Origin(%q) = %q, %v; want %q", tc.url, got, err, tc.want)
		}
	}
}

func TestOriginErrorReasons(t *testing.T) {
	for _, tc := range []struct{ url, reason string }{
		{"/relative", "no scheme: a relative reference has no origin (want http://, https://, ws:// or wss://)"},
		{"1http://a", "no scheme: a relative reference has no origin (want http://, https://, ws:// or wss://)"},
		{"about:blank", `scheme "about" has no origin (want http, https, ws or wss)`},
		{"Zz://a", `scheme "zz" has no origin (want http, https, ws or wss)`},
		{"za+A://a", `scheme "za+a" has no origin (want http, https, ws or wss)`},
		{"http://a:655350", `port "655350" is out of range (max 65535)`},
		{"http://a:65536", `port "65536" is out of range (max 65535)`},
		{"http://[", `IPv6 literal "[" has no closing ']'`},
		{"http://[]", "invalid IPv6 address []"},
		{"http://[%eth0]", `IPv6 zone "%eth0" is not allowed in a URL`},
		{"http://%3a.example", `host contains forbidden code point U+003A ':'`},
		{"http://%39%3.example", `host contains forbidden code point U+0025 '%'`},
		{"http://\x80.example", "host is not valid UTF-8"},
		{"http://a%80.example", "host is not valid UTF-8"},
		{"http://\u0080.example", `host contains disallowed code point U+0080 '\u0080'`},
		{"http://xn--ü.example", `host label "xn--ü" starts with xn-- but is not ASCII`},
		{"http://xn--9.example", `host label "xn--9" is not valid Punycode: punycode: truncated input`},
		// "ü\u0080": a C1 control hidden behind Punycode.
		{"http://xn--a1w.example", `host label "xn--a1w" is not valid Punycode: decodes to disallowed code point U+0080`},
		// "xn--ü" encoded again.
		{"http://xn--xn---3ra.example", `host label "xn--xn---3ra" is not valid Punycode: decodes to another xn-- label`},
		// U+FDFF, the last of its right-to-left block, is a symbol whose
		// direction the tables cannot tell.
		{"http://\ufdff.example", "host \"\ufdff.example\" breaks the RFC 5893 bidi rule: label \"\ufdff\" does not start with a letter"},
	} {
		_, err := Origin(tc.url)
		var oe *OriginError
		if !errors.As(err, &oe) || oe.Reason != tc.reason {
			t.Errorf("Origin(%q) = %v, want the reason %q", tc.url, err, tc.reason)
		}
	}
}

func TestBidiClassOfEdges(t *testing.T) {
	for r, want := range map[rune]bidiClass{
		'a': bidiL, 'Z': bidiL, '0': bidiEN, '9': bidiEN, '-': bidiES, '.': bidiCS, '%': bidiET, '_': bidiON, 0x7f: bidiON,
		0x80:    bidiUnknown, // a C1 control, not ASCII
		0x058f:  bidiUnknown, // just before the Hebrew block
		0x05d0:  bidiR,
		0x0660:  bidiAN,
		0x06f0:  bidiEN,
		0x10800: bidiR, // the first of a right-to-left block
		0xfdff:  bidiUnknownRTL,
		0x0300:  bidiNSM,
		0x00e9:  bidiL,
	} {
		if got := bidiClassOf(r); got != want {
			t.Errorf("bidiClassOf(%U) = %d, want %d", r, got, want)
		}
	}
}
