package events_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
)

// digest is a valid peerDigest; it uses each hex class boundary.
const digest = "09af09af09af09af09af09af09af09af09af09af09af09af09af09af09af09af"

var at = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func accepted() events.NegotiationDecided {
	return events.NegotiationDecided{Protocol: facets.ProtocolA2A, Outcome: "accepted", Version: "1.1", Requested: "1.2",
		Reason: events.ReasonOK, Floor: "1.0", PeerDigest: digest, At: at}
}

func refused() events.NegotiationDecided {
	return events.NegotiationDecided{Protocol: facets.ProtocolMCP, Outcome: "refused", Reason: events.ReasonBelowFloor,
		Floor: "2026-07-28", PeerDigest: digest, At: at}
}

func mod(p events.NegotiationDecided, f func(*events.NegotiationDecided)) events.NegotiationDecided {
	f(&p)
	return p
}

func TestConstants(t *testing.T) {
	if events.ReasonOK != "ok" || events.ReasonBelowFloor != "below-floor" || events.ReasonUnauthenticated != "unauthenticated" ||
		events.ReasonUnsupported != "unsupported" {
		t.Fatal("a wire constant changed")
	}
	for _, r := range []string{"ok", "below-floor", "unauthenticated", "unsupported"} {
		if p := mod(refused(), func(p *events.NegotiationDecided) { p.Reason = r }); p.Validate() != nil {
			t.Errorf("reason %q is not valid", r)
		}
	}
	for _, r := range []string{"OK", "downgraded", "below_floor", "ok "} {
		if p := mod(refused(), func(p *events.NegotiationDecided) { p.Reason = r }); p.Validate() == nil {
			t.Errorf("reason %q is valid", r)
		}
	}
}

func TestNegotiationDecidedValidate(t *testing.T) {
	digestWith := func(c byte) string { return digest[:10] + string(c) + digest[11:] }
	cases := []struct {
		name string
		p    events.NegotiationDecided
		want []string // the problems, exactly; a trailing "*" matches a prefix
	}{
		{"accepted", accepted(), nil},
		{"refused", refused(), nil},
		{"minimal accepted", events.NegotiationDecided{Protocol: "mcp", Outcome: "accepted", Version: "2026-07-28", At: at}, nil},
		{"minimal refused", events.NegotiationDecided{Protocol: "a2a", Outcome: "refused", At: at}, nil},
		{"each reason", mod(refused(), func(p *events.NegotiationDecided) { p.Reason = events.ReasonUnauthenticated }), nil},
		{"unsupported", mod(refused(), func(p *events.NegotiationDecided) { p.Reason = events.ReasonUnsupported }), nil},
		{"ok", mod(accepted(), func(p *events.NegotiationDecided) { p.Reason = events.ReasonOK }), nil},
		{"no reason", mod(accepted(), func(p *events.NegotiationDecided) { p.Reason = "" }), nil},
		{"at in another zone", mod(accepted(), func(p *events.NegotiationDecided) { p.At = at.In(time.FixedZone("X", 3600)) }), nil},

		{"accepted without version", mod(accepted(), func(p *events.NegotiationDecided) { p.Version = "" }),
			[]string{"version is required when the outcome is accepted"}},
		{"refused with version", mod(refused(), func(p *events.NegotiationDecided) { p.Version = "2026-07-28" }),
			[]string{`version "2026-07-28" must be absent when the outcome is refused`}},
		{"bad protocol", mod(accepted(), func(p *events.NegotiationDecided) { p.Protocol = "grpc"; p.Version = "not checked" }),
			[]string{`protocol "grpc" is not a2a or mcp`}},
		{"empty protocol", mod(refused(), func(p *events.NegotiationDecided) { p.Protocol = "" }),
			[]string{`protocol "" is not a2a or mcp`}},
		{"bad outcome", mod(accepted(), func(p *events.NegotiationDecided) { p.Outcome = "downgraded" }),
			[]string{`outcome "downgraded" is not accepted or refused`}},
		{"empty outcome", mod(refused(), func(p *events.NegotiationDecided) { p.Outcome = "" }),
			[]string{`outcome "" is not accepted or refused`}},
		{"bad reason", mod(refused(), func(p *events.NegotiationDecided) { p.Reason = "version-downgrade-forbidden" }),
			[]string{`reason "version-downgrade-forbidden" is not ok, below-floor, unauthenticated or unsupported`}},
		{"zero at", mod(accepted(), func(p *events.NegotiationDecided) { p.At = time.Time{} }), []string{"at is required"}},

		{"digest absent", mod(accepted(), func(p *events.NegotiationDecided) { p.PeerDigest = "" }), nil},
		{"digest 63", mod(accepted(), func(p *events.NegotiationDecided) { p.PeerDigest = digest[:63] }),
			[]string{`peerDigest "` + digest[:63] + `" is not 64 lowercase hex characters`}},
		{"digest 65", mod(accepted(), func(p *events.NegotiationDecided) { p.PeerDigest = digest + "0" }),
			[]string{`peerDigest "` + digest + `0" is not 64 lowercase hex characters`}},
		{"digest uppercase", mod(accepted(), func(p *events.NegotiationDecided) { p.PeerDigest = strings.ToUpper(digest) }),
			[]string{`peerDigest "` + strings.ToUpper(digest) + `" is not 64 lowercase hex characters`}},
		{"digest sha256: prefix", mod(accepted(), func(p *events.NegotiationDecided) { p.PeerDigest = "sha256:" + digest[7:] }),
			[]string{`peerDigest "sha256:` + digest[7:] + `" is not 64 lowercase hex characters`}},

		{"a2a version grammar", mod(accepted(), func(p *events.NegotiationDecided) { p.Version = "2026-07-28" }), []string{`version a2a version "2026-07-28": *`}},
		{"a2a leading zero", mod(accepted(), func(p *events.NegotiationDecided) { p.Version = "01.1" }), []string{`version a2a version "01.1": *`}},
		{"mcp version grammar", mod(refused(), func(p *events.NegotiationDecided) { p.Outcome, p.Version = "accepted", "1.0" }), []string{`version mcp version "1.0": *`}},
		{"mcp impossible day", mod(refused(), func(p *events.NegotiationDecided) { p.Outcome, p.Version = "accepted", "2026-02-29" }), []string{`version mcp version "2026-02-29": *`}},
		{"requested grammar", mod(accepted(), func(p *events.NegotiationDecided) { p.Requested = "1.x" }), []string{`requested a2a version "1.x": *`}},
		{"floor grammar", mod(refused(), func(p *events.NegotiationDecided) { p.Floor = "2026-7-28" }), []string{`floor mcp version "2026-7-28": *`}},

		{"everything at once", events.NegotiationDecided{Protocol: "mcp", Outcome: "refused", Version: "x", Requested: "y", Reason: "why",
			Floor: "z", PeerDigest: "00"}, []string{
			`version "x" must be absent when the outcome is refused`,
			`version mcp version "x": *`,
			`requested mcp version "y": *`,
			`floor mcp version "z": *`,
			`reason "why" is not ok, below-floor, unauthenticated or unsupported`,
			`peerDigest "00" is not 64 lowercase hex characters`,
			"at is required",
		}},
	}
	// Every character just outside a hex range, and each bound inside.
	for _, c := range []byte{'/', ':', '`', 'g', 'A', 'F', 'G', ' ', 0xff} {
		d := digestWith(c)
		cases = append(cases, struct {
			name string
			p    events.NegotiationDecided
			want []string
		}{"digest with " + string(rune(c)), mod(accepted(), func(p *events.NegotiationDecided) { p.PeerDigest = d }),
			[]string{"peerDigest " + jsonQuote(d) + " is not 64 lowercase hex characters"}})
	}
	for _, c := range []byte{'0', '9', 'a', 'f', '5', 'c'} {
		cases = append(cases, struct {
			name string
			p    events.NegotiationDecided
			want []string
		}{"digest with " + string(rune(c)), mod(accepted(), func(p *events.NegotiationDecided) { p.PeerDigest = digestWith(c) }), nil})
	}

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.p.Validate()
			if c.want == nil {
				if err != nil {
					t.Fatalf("Validate() = %v", err)
				}
				return
			}
			msg, ok := fieldProblems(err)
			if !ok {
				t.Fatalf("Validate() = %q, want *FieldErrors only", err)
			}
			// Problems are joined by "; ", which some problems from
			// facets also contain: match the wanted ones in order.
			exact := !strings.Contains(strings.Join(c.want, ""), "*")
			if exact {
				if want := strings.Join(c.want, "; "); msg != want {
					t.Fatalf("problems\n got %q\nwant %q", msg, want)
				}
				return
			}
			rest := msg
			for i, w := range c.want {
				w = strings.TrimSuffix(w, "*")
				j := strings.Index(rest, w)
				if j < 0 || i == 0 && j != 0 {
					t.Fatalf("problem %d %q not found in order in\n%q", i, w, msg)
				}
				rest = rest[j+len(w):]
			}
			if n := strings.Count(msg, "; ") + 1; n < len(c.want) {
				t.Fatalf("%d problems, want %d: %q", n, len(c.want), msg)
			}
		})
	}
}

func TestNegotiationDecidedJSON(t *testing.T) {
	p := accepted()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"protocol":"a2a","outcome":"accepted","version":"1.1","requested":"1.2","reason":"ok","floor":"1.0","peerDigest":"` + digest + `","at":"2026-11-29T12:00:00Z"}`
	if string(b) != want {
		t.Errorf("accepted\n got %s\nwant %s", b, want)
	}
	b, err = json.Marshal(refused())
	if err != nil {
		t.Fatal(err)
	}
	want = `{"protocol":"mcp","outcome":"refused","reason":"below-floor","floor":"2026-07-28","peerDigest":"` + digest + `","at":"2026-11-29T12:00:00Z"}`
	if string(b) != want {
		t.Errorf("refused\n got %s\nwant %s", b, want)
	}
	b, err = json.Marshal(events.NegotiationDecided{Protocol: "a2a", Outcome: "refused", At: at.Add(time.Nanosecond)})
	if want := `{"protocol":"a2a","outcome":"refused","at":"2026-11-29T12:00:00.000000001Z"}`; err != nil || string(b) != want {
		t.Errorf("minimal\n got %s\nwant %s", b, want)
	}
	// A pointer marshals the same way.
	if b, err := json.Marshal(&p); err != nil || !strings.HasPrefix(string(b), `{"protocol":"a2a","outcome":"accepted",`) {
		t.Errorf("pointer: %s, %v", b, err)
	}

	for _, p := range []events.NegotiationDecided{accepted(), refused(), mod(accepted(), func(p *events.NegotiationDecided) { p.Requested, p.PeerDigest, p.Reason = "", "", "" })} {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var back events.NegotiationDecided
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, p) {
			t.Errorf("round trip of %s: %+v, %v", b, back, err)
		}
	}
}

func TestNegotiationDecidedUnmarshalRefuses(t *testing.T) {
	const tail = `"at":"2026-11-29T12:00:00Z"`
	for _, c := range []struct{ in, want string }{
		{`{"protocol":"a2a","outcome":"refused","peer":"https://peer.example",` + tail + `}`, `unknown field "peer"`},
		{`{"protocol":"a2a","outcome":"accepted","version":"1.0","negotiated":"1.0",` + tail + `}`, `unknown field "negotiated"`},
		{`{"protocol":"a2a","outcome":"refused","runId":"acme/x",` + tail + `}`, `unknown field "runId"`},
		{`{"protocol":"a2a","outcome":"downgraded","version":"1.0",` + tail + `}`, `outcome: "downgraded" is not accepted or refused`},
		{`{"protocol":"a2a","outcome":"accepted",` + tail + `}`, "version: is required when the outcome is accepted"},
		{`{"protocol":"a2a","outcome":"refused","peerDigest":"ABC",` + tail + `}`, `peerDigest: "ABC" is not 64 lowercase hex characters`},
		{`{"protocol":"a2a","outcome":"refused"}`, "at: is required"},
		{`{"protocol":"a2a","outcome":"refused","at":"yesterday"}`, "events: payload: "},
		{`{"protocol":"a2a","outcome":"refused","at":"2026-11-29"}`, "events: payload: "},
		{`{"protocol":1,"outcome":"refused",` + tail + `}`, "events: payload: "},
		{`[]`, "events: payload: "},
	} {
		p := accepted()
		err := json.Unmarshal([]byte(c.in), &p)
		if !errors.As(err, new(*events.FieldError)) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Unmarshal(%s) = %v, want a *FieldError containing %q", c.in, err, c.want)
		}
		if !reflect.DeepEqual(p, accepted()) {
			t.Errorf("Unmarshal(%s) changed the value on error: %+v", c.in, p)
		}
	}
	var p events.NegotiationDecided
	in := `{"at":"2026-11-29T13:00:00+01:00","peerDigest":"` + digest + `","floor":"1.0","reason":"ok","requested":"1.2","version":"1.1","outcome":"accepted","protocol":"a2a"}`
	if err := json.Unmarshal([]byte(in), &p); err != nil {
		t.Fatal(err)
	}
	if !p.At.Equal(at) {
		t.Errorf("at = %v", p.At)
	}
	p.At = at
	if !reflect.DeepEqual(p, accepted()) {
		t.Errorf("any key order: %+v", p)
	}
}

func TestNegotiationDecidedKeysAreCaseSensitive(t *testing.T) {
	for _, in := range []string{
		`{"Protocol":"a2a","outcome":"refused","at":"2026-11-29T12:00:00Z"}`,
		`{"protocol":"a2a","outcome":"refused","PeerDigest":"` + digest + `","at":"2026-11-29T12:00:00Z"}`,
	} {
		var p events.NegotiationDecided
		if err := json.Unmarshal([]byte(in), &p); err == nil {
			t.Errorf("Unmarshal(%s) accepted a key the schema does not have", in)
		}
	}
}

func FuzzNegotiationDecidedJSON(f *testing.F) {
	for _, p := range []events.NegotiationDecided{accepted(), refused()} {
		b, _ := json.Marshal(p)
		f.Add(b)
	}
	for _, s := range []string{
		`{"protocol":"mcp","outcome":"accepted","version":"2026-07-28","requested":"2026-07-28","at":"2026-11-29T12:00:00.5+05:30"}`,
		`{"protocol":"a2a","outcome":"refused","reason":"unauthenticated","at":"2026-11-29T12:00:00Z","at":"2026-11-30T12:00:00Z"}`,
		`{"protocol":"a2a","outcome":"refused","peer":"x","at":"2026-11-29T12:00:00Z"}`,
		`{"protocol":"a2a","outcome":"refused","at":"0001-01-01T00:00:00Z"}`,
		`{"protocol":"a2a","outcome":"refused","at":"9999-12-31T23:59:59.999999999-23:59"}`,
		`{"PROTOCOL":"a2a","outcome":"refused","at":"2026-11-29T12:00:00Z"}`,
		`{}`, `null`, `[]`, `"x"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p events.NegotiationDecided
		if err := json.Unmarshal(data, &p); err != nil {
			if !errors.As(err, new(*events.FieldError)) {
				var syntax *json.SyntaxError
				if !errors.As(err, &syntax) {
					t.Fatalf("error %v is not a *FieldError", err)
				}
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("accepted an invalid payload: %v", err)
		}
		out, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("Marshal(%+v): %v", p, err)
		}
		var back events.NegotiationDecided
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("Unmarshal(%s): %v", out, err)
		}
		if !back.At.Equal(p.At) {
			t.Fatalf("at %v became %v via %s", p.At, back.At, out)
		}
		back.At, p.At = time.Time{}, time.Time{}
		if back != p {
			t.Fatalf("round trip\n got %+v\nwant %+v\nvia %s", back, p, out)
		}
	})
}

// fieldProblems writes each *FieldError in err as "field reason", joined
// by "; ", and reports whether err held nothing else.
func fieldProblems(err error) (string, bool) {
	var problems []string
	ok := err != nil
	var walk func(error)
	walk = func(err error) {
		if fe, is := err.(*events.FieldError); is {
			problems = append(problems, fe.Field+" "+fe.Reason)
			return
		}
		j, is := err.(interface{ Unwrap() []error })
		if !is {
			ok = false
			return
		}
		for _, e := range j.Unwrap() {
			walk(e)
		}
	}
	if err != nil {
		walk(err)
	}
	return strings.Join(problems, "; "), ok
}

// jsonQuote quotes s as the package's messages do, as JSON does.
func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
