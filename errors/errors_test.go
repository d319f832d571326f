package errors_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	wperrors "github.com/wopneg/wopneg/errors"
)

func TestCodes(t *testing.T) {
	for _, c := range []struct {
		code      wperrors.Code
		text      string
		status    int
		retriable bool
	}{
		{wperrors.InteropVersionUnsupported, "interop_version_unsupported", 400, false},
		{wperrors.MCPRoundsExceeded, "mcp_mrtr_rounds_exceeded", 422, false},
		{wperrors.Internal, "internal_error", 500, true},
		{"protocol_version_unsupported", "protocol_version_unsupported", 500, false},
		{"rate_limited", "rate_limited", 500, false},
		{"", "wopneg: empty error code", 500, false},
	} {
		if string(c.code) != c.text && c.code != "" {
			t.Errorf("code %q, want %q", c.code, c.text)
		}
		if got := c.code.Error(); got != c.text {
			t.Errorf("%q.Error() = %q, want %q", c.code, got, c.text)
		}
		if got := c.code.HTTPStatus(); got != c.status {
			t.Errorf("%q.HTTPStatus() = %d, want %d", c.code, got, c.status)
		}
		if got := c.code.Retriable(); got != c.retriable {
			t.Errorf("%q.Retriable() = %v, want %v", c.code, got, c.retriable)
		}
	}
}

func TestErrorString(t *testing.T) {
	if got := wperrors.New(wperrors.InteropVersionUnsupported, "a2a negotiation refused: below-floor").Error(); got != "interop_version_unsupported: a2a negotiation refused: below-floor" {
		t.Errorf("Error() = %q", got)
	}
	if got := wperrors.New(wperrors.Internal, "").Error(); got != "internal_error" {
		t.Errorf("no message: %q", got)
	}
	if got := (&wperrors.Error{}).Error(); got != "wopneg: empty error code" {
		t.Errorf("zero: %q", got)
	}
	if e := wperrors.New(wperrors.Internal, "x"); e.Code != wperrors.Internal || e.Message != "x" || e.Details != nil {
		t.Errorf("New = %#v", e)
	}
}

func TestIsAndAs(t *testing.T) {
	refused := wperrors.New(wperrors.InteropVersionUnsupported, "one message")
	other := wperrors.New(wperrors.InteropVersionUnsupported, "another message").WithDetail("reason", "below-floor")
	rounds := wperrors.New(wperrors.MCPRoundsExceeded, "one message")
	wrapped := fmt.Errorf("outbound a2a: %w", refused)
	twice := fmt.Errorf("host: %w", wrapped)
	joined := errors.Join(errors.New("x"), rounds)

	for _, c := range []struct {
		name   string
		err    error
		target error
		want   bool
	}{
		{"*Error vs *Error, same code", refused, other, true},
		{"*Error vs *Error, other code", refused, rounds, false},
		{"*Error vs Code", refused, wperrors.InteropVersionUnsupported, true},
		{"*Error vs other Code", refused, wperrors.MCPRoundsExceeded, false},
		{"*Error vs empty Code", refused, wperrors.Code(""), false},
		{"*Error vs nil *Error", refused, (*wperrors.Error)(nil), false},
		{"*Error vs itself", refused, refused, true},
		{"*Error vs plain error", refused, errors.New("interop_version_unsupported"), false},
		{"wrapped vs Code", wrapped, wperrors.InteropVersionUnsupported, true},
		{"wrapped vs *Error", wrapped, other, true},
		{"wrapped twice vs Code", twice, wperrors.InteropVersionUnsupported, true},
		{"wrapped vs other Code", twice, wperrors.Internal, false},
		{"joined", joined, wperrors.MCPRoundsExceeded, true},
		{"joined vs other", joined, wperrors.InteropVersionUnsupported, false},
		{"Code vs Code", wperrors.Internal, wperrors.Internal, true},
		{"plain error vs Code", errors.New("internal_error"), wperrors.Internal, false},
	} {
		if got := errors.Is(c.err, c.target); got != c.want {
			t.Errorf("%s: errors.Is = %v, want %v", c.name, got, c.want)
		}
	}

	var e *wperrors.Error
	if !errors.As(twice, &e) || e != refused {
		t.Errorf("errors.As = %v", e)
	}
	var code wperrors.Code
	if errors.As(twice, &code) {
		t.Errorf("errors.As found a Code in %v", twice)
	}
	if !errors.As(fmt.Errorf("x: %w", wperrors.Internal), &code) || code != wperrors.Internal {
		t.Errorf("errors.As(Code) = %q", code)
	}
}

func TestEnvelopeJSON(t *testing.T) {
	for _, c := range []struct {
		e    *wperrors.Error
		want string
	}{
		{wperrors.New(wperrors.InteropVersionUnsupported, "a2a negotiation refused: unsupported"),
			`{"error":"interop_version_unsupported","message":"a2a negotiation refused: unsupported"}`},
		{&wperrors.Error{Code: wperrors.InteropVersionUnsupported, Message: "mcp negotiation refused: below-floor", Details: map[string]any{
			"protocol": "mcp", "requested": "2025-06-18", "supported": []string{"2026-07-28"}, "reason": "below-floor", "runId": "acme/0123456789abcdef"}},
			`{"error":"interop_version_unsupported","message":"mcp negotiation refused: below-floor","details":{"protocol":"mcp","reason":"below-floor","requested":"2025-06-18","runId":"acme/0123456789abcdef","supported":["2026-07-28"]}}`},
		{&wperrors.Error{Code: wperrors.MCPRoundsExceeded, Message: "m", Details: map[string]any{"rounds": 5, "maxRounds": 4}},
			`{"error":"mcp_mrtr_rounds_exceeded","message":"m","details":{"maxRounds":4,"rounds":5}}`},
		{&wperrors.Error{Code: "vendor.thing_failed", Message: "m", Details: map[string]any{}},
			`{"error":"vendor.thing_failed","message":"m","details":{}}`},
	} {
		b, err := json.Marshal(c.e)
		if err != nil || string(b) != c.want {
			t.Errorf("Marshal\n got %s, %v\nwant %s", b, err, c.want)
		}
		// Inside another value, through the pointer.
		b, err = json.Marshal(struct {
			E *wperrors.Error `json:"e"`
		}{c.e})
		if err != nil || string(b) != `{"e":`+c.want+`}` {
			t.Errorf("nested Marshal = %s, %v", b, err)
		}
	}
}

func TestEnvelopeMarshalRefusesInvalid(t *testing.T) {
	for _, c := range []struct {
		e    *wperrors.Error
		want string
	}{
		{&wperrors.Error{Message: "m"}, "wopneg/errors: envelope has an empty error code"},
		{&wperrors.Error{Code: wperrors.Internal}, `wopneg/errors: envelope "internal_error" has an empty message`},
		{&wperrors.Error{}, "wopneg/errors: envelope has an empty error code"},
	} {
		b, err := json.Marshal(c.e)
		if err == nil || b != nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Marshal(%#v) = %s, %v; want an error %q", c.e, b, err, c.want)
		}
		b, err = c.e.MarshalJSON()
		if err == nil || b != nil || err.Error() != c.want {
			t.Errorf("MarshalJSON(%#v) = %s, %v; want %q", c.e, b, err, c.want)
		}
	}
}

func TestEnvelopeUnmarshal(t *testing.T) {
	good := []struct {
		in   string
		want wperrors.Error
	}{
		{`{"error":"interop_version_unsupported","message":"m"}`, wperrors.Error{Code: wperrors.InteropVersionUnsupported, Message: "m"}},
		{`{"message":"m","error":"vendor.x_y","details":{"runId":"acme/r","n":1,"l":[true,null]}}`,
			wperrors.Error{Code: "vendor.x_y", Message: "m", Details: map[string]any{"runId": "acme/r", "n": 1.0, "l": []any{true, nil}}}},
		{`{"error":"e","message":"m","details":null}`, wperrors.Error{Code: "e", Message: "m"}},
		{` {"error":"e","message":"m"} `, wperrors.Error{Code: "e", Message: "m"}},
	}
	for _, c := range good {
		var e wperrors.Error
		if err := json.Unmarshal([]byte(c.in), &e); err != nil || !reflect.DeepEqual(e, c.want) {
			t.Errorf("Unmarshal(%s) = %#v, %v; want %#v", c.in, e, err, c.want)
		}
	}
	bad := []struct{ in, want string }{
		{`{"error":"e","message":"m","runId":"acme/r"}`, `unknown field "runId"`},
		{`{"error":"e","message":"m","retriable":false}`, `unknown field "retriable"`},
		{`{"error":"e"}`, "message is missing or empty"},
		{`{"error":"e","message":""}`, "message is missing or empty"},
		{`{"message":"m"}`, "error is missing or empty"},
		{`{"error":"","message":"m"}`, "error is missing or empty"},
		{`{}`, "error is missing or empty"},
		{`{"error":"e","message":"m","details":[]}`, "wopneg/errors: envelope:"},
		{`{"error":"e","message":"m","details":"x"}`, "wopneg/errors: envelope:"},
		{`{"error":5,"message":"m"}`, "wopneg/errors: envelope:"},
		{`[]`, "wopneg/errors: envelope:"},
	}
	for _, c := range bad {
		e := wperrors.Error{Code: "untouched", Message: "untouched"}
		err := json.Unmarshal([]byte(c.in), &e)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Unmarshal(%s) = %v, want an error containing %q", c.in, err, c.want)
		}
		if e.Code != "untouched" || e.Message != "untouched" || e.Details != nil {
			t.Errorf("Unmarshal(%s) changed the value on error: %#v", c.in, e)
		}
	}
	// Called directly, UnmarshalJSON also refuses a second value.
	var e wperrors.Error
	if err := e.UnmarshalJSON([]byte(`{"error":"e","message":"m"} {"error":"f","message":"n"}`)); err == nil ||
		err.Error() != "wopneg/errors: envelope: data after the JSON value" {
		t.Errorf("trailing object: %v", err)
	}
}

func TestWithDetail(t *testing.T) {
	orig := wperrors.New(wperrors.InteropVersionUnsupported, "m")
	one := orig.WithDetail("runId", "acme/r1")
	if orig.Details != nil {
		t.Errorf("WithDetail changed the original: %v", orig.Details)
	}
	if one == orig || one.Code != orig.Code || one.Message != orig.Message || !reflect.DeepEqual(one.Details, map[string]any{"runId": "acme/r1"}) {
		t.Errorf("WithDetail = %#v", one)
	}
	two := one.WithDetail("reason", "unsupported").WithDetail("runId", "acme/r2")
	if !reflect.DeepEqual(one.Details, map[string]any{"runId": "acme/r1"}) {
		t.Errorf("WithDetail changed its receiver: %v", one.Details)
	}
	if !reflect.DeepEqual(two.Details, map[string]any{"runId": "acme/r2", "reason": "unsupported"}) {
		t.Errorf("chained WithDetail = %v", two.Details)
	}
	if !errors.Is(two, orig) {
		t.Error("a copy with details is not the same class of error")
	}
}

func FuzzEnvelope(f *testing.F) {
	for _, seed := range []string{
		`{"error":"interop_version_unsupported","message":"m"}`,
		`{"error":"interop_version_unsupported","message":"m","details":{"protocol":"a2a","supported":["1.0"],"requested":"2.0"}}`,
		`{"error":"e","message":"m","details":{"n":1e300,"big":12345678901234567890,"s":"\ud800"}}`,
		`{"error":"e","message":"m","details":{}}`,
		`{"error":"e","message":"m","details":null}`,
		`{"error":"e","message":"m","runId":"x"}`,
		`{"ERROR":"e","Message":"m"}`,
		`{"error":"e","message":"\u0000<>&"}`,
		`{"error":"e"}`, `{}`, `null`, `[]`, `"x"`, `{"error":"e","message":"m"}x`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var e wperrors.Error
		if err := json.Unmarshal(data, &e); err != nil {
			return
		}
		if e.Code == "" || e.Message == "" {
			t.Fatalf("accepted an envelope without code or message: %#v", e)
		}
		out, err := json.Marshal(&e)
		if err != nil {
			t.Fatalf("Marshal(%#v): %v", e, err)
		}
		var back wperrors.Error
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("Unmarshal(%s): %v", out, err)
		}
		if !reflect.DeepEqual(back, e) {
			t.Fatalf("round trip\n got %#v\nwant %#v\nvia %s", back, e, out)
		}
	})
}

func TestEnvelopeKeysAreCaseSensitive(t *testing.T) {
	for _, in := range []string{`{"ERROR":"e","message":"m"}`, `{"error":"e","Message":"m"}`, `{"error":"e","message":"m","Details":{}}`} {
		var e wperrors.Error
		if err := json.Unmarshal([]byte(in), &e); err == nil {
			t.Errorf("Unmarshal(%s) accepted a key the envelope does not have", in)
		}
	}
}

func TestEnvelopeEmptyDetailsRoundTrip(t *testing.T) {
	var e wperrors.Error
	if err := json.Unmarshal([]byte(`{"error":"e","message":"m","details":{}}`), &e); err != nil {
		t.Fatal(err)
	}
	if got, err := json.Marshal(&e); err != nil || string(got) != `{"error":"e","message":"m","details":{}}` {
		t.Errorf("round trip = %s", got)
	}
}

func TestEnvelopeByValue(t *testing.T) {
	if got, err := json.Marshal(wperrors.Error{Code: "e", Message: "m"}); err != nil || string(got) != `{"error":"e","message":"m"}` {
		t.Errorf("Marshal(Error value) = %s, %v", got, err)
	}
}
