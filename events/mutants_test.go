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

	"github.com/wopneg/wopneg/facets"
)

func mutantPayload() NegotiationDecided {
	return NegotiationDecided{
		Protocol: facets.ProtocolA2A, Outcome: "accepted", Version: "1.1", Requested: "1.2",
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
	want, err := e.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if got := w.String(); got != string(want)+"\n" {
		t.Errorf("wrote %q, want the one line %q", got, string(want)+"\n")
	}
}
