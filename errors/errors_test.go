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
		code       wperrors.Code
		text       string
		status     int
		retriable  bool
		registered bool
	}{
		{wperrors.InteropVersionUnsupported, "interop_version_unsupported", 400, false, true},
		{wperrors.MCPRoundsExceeded, "mcp_mrtr_rounds_exceeded", 422, false, true},
		{wperrors.Internal, "internal_error", 500, true, true},
		{"protocol_version_unsupported", "protocol_version_unsupported", 500, false, false},
		{"rate_limited", "rate_limited", 500, false, false},
		{"", "wopneg: empty error code", 500, false, false},
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
		if got := c.code.Registered(); got != c.registered {
			t.Errorf("%q.Registered() = %v, want %v", c.code, got, c.registered)
		}
		e := wperrors.New(c.code, "m")
		if e.HTTPStatus() != c.status || e.Retriable() != c.retriable {
			t.Errorf("*Error with %q: status %d retriable %v", c.code, e.HTTPStatus(), e.Retriable())
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

func TestRPCCodes(t *testing.T) {
	if wperrors.RPCA2AVersionNotSupported != -32009 || wperrors.RPCMCPHeaderMismatch != -32020 ||
		wperrors.RPCMCPUnsupportedProtocolVersion != -32022 || wperrors.RPCInvalidParams != -32602 {
		t.Fatal("JSON-RPC codes changed")
	}
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestA2AVersionNotSupported(t *testing.T) {
	supported := []string{"1.0", "1.1"}
	e := wperrors.A2AVersionNotSupported("2.0", supported)
	want := wperrors.RPCError{
		Code:    -32009,
		Message: `A2A-Version "2.0" is not served; this interface serves 1.0, 1.1`,
		Data: []wperrors.ErrorInfo{{
			Type:     "type.googleapis.com/google.rpc.ErrorInfo",
			Reason:   "VERSION_NOT_SUPPORTED",
			Domain:   "a2a-protocol.org",
			Metadata: map[string]string{"supportedVersions": "1.0,1.1"},
		}},
	}
	if !reflect.DeepEqual(e, want) {
		t.Fatalf("A2AVersionNotSupported = %#v\nwant %#v", e, want)
	}
	wantJSON := `{"code":-32009,"message":"A2A-Version \"2.0\" is not served; this interface serves 1.0, 1.1",` +
		`"data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED","domain":"a2a-protocol.org","metadata":{"supportedVersions":"1.0,1.1"}}]}`
	if got := marshal(t, e); got != wantJSON {
		t.Errorf("JSON\n got %s\nwant %s", got, wantJSON)
	}
	if got := e.Error(); got != `json-rpc error -32009: A2A-Version "2.0" is not served; this interface serves 1.0, 1.1` {
		t.Errorf("Error() = %q", got)
	}
	// WithoutData drops data for older clients and leaves e alone.
	bare := e.WithoutData()
	if got := marshal(t, bare); got != `{"code":-32009,"message":"A2A-Version \"2.0\" is not served; this interface serves 1.0, 1.1"}` {
		t.Errorf("WithoutData JSON = %s", got)
	}
	if e.Data == nil || bare.Code != e.Code || bare.Message != e.Message {
		t.Errorf("WithoutData changed its receiver or lost fields: %#v / %#v", e, bare)
	}
	// No version named.
	if got := wperrors.A2AVersionNotSupported("", []string{"1.0"}).Message; got != "A2A-Version (none) is not served; this interface serves 1.0" {
		t.Errorf("absent: %q", got)
	}
}

func TestMCPUnsupportedProtocolVersion(t *testing.T) {
	supported := []string{"2025-11-25", "2026-07-28"}
	e := wperrors.MCPUnsupportedProtocolVersion("2025-06-18", supported)
	supported[0] = "changed"
	want := `{"code":-32022,"message":"unsupported MCP protocol version \"2025-06-18\"","data":{"supported":["2025-11-25","2026-07-28"],"requested":"2025-06-18"}}`
	if got := marshal(t, e); got != want {
		t.Errorf("JSON\n got %s\nwant %s", got, want)
	}
	e = wperrors.MCPUnsupportedProtocolVersion("", []string{"2026-07-28"})
	want = `{"code":-32022,"message":"unsupported MCP protocol version (none)","data":{"supported":["2026-07-28"],"requested":null}}`
	if got := marshal(t, e); got != want {
		t.Errorf("absent JSON\n got %s\nwant %s", got, want)
	}
	d, ok := e.Data.(wperrors.VersionData)
	if !ok || d.Requested != nil || !reflect.DeepEqual(d.Supported, []string{"2026-07-28"}) {
		t.Errorf("Data = %#v", e.Data)
	}
	// No supported list is still a list on the wire.
	if got := marshal(t, wperrors.MCPUnsupportedProtocolVersion("x", nil)); got != `{"code":-32022,"message":"unsupported MCP protocol version \"x\"","data":{"supported":[],"requested":"x"}}` {
		t.Errorf("nil supported: %s", got)
	}
	if got := e.WithoutData(); got.Data != nil || got.Code != -32022 {
		t.Errorf("WithoutData = %#v", got)
	}
}

func TestMCPHeaderMismatch(t *testing.T) {
	e := wperrors.MCPHeaderMismatch("MCP-Protocol-Version and params._meta")
	if got := marshal(t, e); got != `{"code":-32020,"message":"header mismatch: MCP-Protocol-Version and params._meta"}` {
		t.Errorf("JSON = %s", got)
	}
	if e.Error() != "json-rpc error -32020: header mismatch: MCP-Protocol-Version and params._meta" {
		t.Errorf("Error() = %q", e.Error())
	}
}

func TestMCPLegacyInitializeUnsupported(t *testing.T) {
	e := wperrors.MCPLegacyInitializeUnsupported("2024-11-05", []string{"2025-06-18"})
	want := `{"code":-32602,"message":"Unsupported protocol version","data":{"supported":["2025-06-18"],"requested":"2024-11-05"}}`
	if got := marshal(t, e); got != want {
		t.Errorf("JSON\n got %s\nwant %s", got, want)
	}
	e = wperrors.MCPLegacyInitializeUnsupported("", []string{"2025-06-18"})
	want = `{"code":-32602,"message":"Unsupported protocol version","data":{"supported":["2025-06-18"],"requested":null}}`
	if got := marshal(t, e); got != want {
		t.Errorf("absent JSON\n got %s\nwant %s", got, want)
	}
	if e.Error() != "json-rpc error -32602: Unsupported protocol version" {
		t.Errorf("Error() = %q", e.Error())
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
	if got := marshal(t, &e); got != `{"error":"e","message":"m","details":{}}` {
		t.Errorf("round trip = %s", got)
	}
}

func TestEnvelopeByValue(t *testing.T) {
	if got, err := json.Marshal(wperrors.Error{Code: "e", Message: "m"}); err != nil || string(got) != `{"error":"e","message":"m"}` {
		t.Errorf("Marshal(Error value) = %s, %v", got, err)
	}
}
