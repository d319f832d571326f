package egress

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	wperrors "github.com/wopneg/wopneg/errors"
)

// TestKindNames: each kind's name is the envelope's details.reason, the
// log line's and the metric's label; the names are the package doc's.
func TestKindNames(t *testing.T) {
	want := map[Kind]string{
		Unreachable: "unreachable", Timeout: "timeout", HangUp: "hang-up", NotAnAnswer: "not-an-answer",
		TooLarge: "too-large", Denied: "egress-denied", RedirectRefused: "redirect-refused", Canceled: "canceled",
		0: "unknown", Canceled + 1: "unknown", 255: "unknown",
	}
	for k, name := range want {
		if k.Error() != name {
			t.Errorf("Kind(%d) = %q, want %q", k, k.Error(), name)
		}
	}
	seen := map[string]bool{}
	for k := Unreachable; k <= Canceled; k++ {
		if seen[k.Error()] {
			t.Errorf("two kinds are named %q", k.Error())
		}
		seen[k.Error()] = true
	}
}

// TestErrorSurface: the message, errors.Is on kinds, and what Unwrap
// gives: the cause and the v2 envelope.
func TestErrorSurface(t *testing.T) {
	cause := context.DeadlineExceeded
	for _, tc := range []struct {
		e    *Error
		text string
	}{
		{&Error{Kind: Timeout, URL: "http://peer/x", Err: cause}, "egress: http://peer/x: the peer did not answer in time: context deadline exceeded"},
		{&Error{Kind: NotAnAnswer, URL: "http://peer/x", Status: 502}, "egress: http://peer/x: the peer's answer is not a negotiation answer (status 502)"},
		{&Error{Kind: TooLarge, Err: &http.MaxBytesError{Limit: 5}}, "egress: the peer's answer is larger than its bound: http: request body too large"},
		{&Error{}, "egress: the fetch failed"},
	} {
		if got := tc.e.Error(); got != tc.text {
			t.Errorf("Error() = %q, want %q", got, tc.text)
		}
		var env *wperrors.Error
		if !errors.As(tc.e, &env) || env.Code != wperrors.Internal || !errors.Is(tc.e, wperrors.Internal) {
			t.Fatalf("%v: no internal_error envelope inside", tc.e)
		}
		if env.Details["reason"] != tc.e.Kind.Error() {
			t.Errorf("%v: details.reason %v, want %q", tc.e, env.Details["reason"], tc.e.Kind.Error())
		}
		if status, ok := env.Details["status"]; ok != (tc.e.Status != 0) || ok && status != tc.e.Status {
			t.Errorf("%v: details.status %v (present %v)", tc.e, status, ok)
		}
		if strings.Contains(env.Message, "peer/x") || !strings.HasPrefix(env.Message, "the negotiation reached no decision: ") {
			t.Errorf("envelope message %q: want no URL, and the no-decision reason", env.Message)
		}
		if _, err := env.MarshalJSON(); err != nil {
			t.Errorf("the envelope does not marshal: %v", err)
		}
		if (tc.e.Err != nil) != errors.Is(tc.e, tc.e.Err) || len(tc.e.Unwrap()) != 1+btoi(tc.e.Err != nil) {
			t.Errorf("%v: Unwrap = %v", tc.e, tc.e.Unwrap())
		}
	}
	e := &Error{Kind: HangUp}
	if !errors.Is(e, HangUp) || errors.Is(e, Timeout) || errors.Is(e, errors.New("hang-up")) {
		t.Error("errors.Is matches kinds by value, and nothing else")
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestLogValue: the log line's group holds what is known, and nothing
// that is not.
func TestLogValue(t *testing.T) {
	for _, tc := range []struct {
		e    *Error
		want string
	}{
		{&Error{Kind: NotAnAnswer, URL: "http://peer/x", Status: 502, Err: errors.New("boom")},
			`level=WARN msg="negotiation reached no decision" err.reason=not-an-answer err.url=http://peer/x err.status=502 err.cause=boom`},
		{&Error{Kind: Canceled},
			`level=WARN msg="negotiation reached no decision" err.reason=canceled`},
	} {
		var buf bytes.Buffer
		log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
		log.Warn("negotiation reached no decision", slog.Any("err", tc.e))
		if got := strings.TrimSpace(buf.String()); got != tc.want {
			t.Errorf("log line\n%s\nwant\n%s", got, tc.want)
		}
	}
}

// TestNotAnswer: the adapters' verdict on an answer they cannot read.
func TestNotAnswer(t *testing.T) {
	why := errors.New("not a JSON-RPC response")
	u, _ := url.Parse("http://user:secret@peer.example/mcp")
	e := NotAnswer(&http.Response{StatusCode: 200, Request: &http.Request{URL: u}}, why)
	if e.Kind != NotAnAnswer || e.Status != 200 || e.URL != "http://peer.example" || !errors.Is(e, why) {
		t.Errorf("NotAnswer = %+v", e)
	}
	if e := NotAnswer(&http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(""))}, why); e.URL != "" || e.Status != 200 {
		t.Errorf("NotAnswer of a response with no request = %+v", e)
	}
}

// TestKindOf: the classification of a failure, where the package's own
// tests cannot make the network produce it.
func TestKindOf(t *testing.T) {
	for _, tc := range []struct {
		err       error
		connected bool
		want      Kind
	}{
		{errors.New("dial tcp: connection refused"), false, Unreachable},
		{errors.New("EOF"), true, HangUp},
		{context.DeadlineExceeded, false, Timeout},
		{context.Canceled, true, Canceled},
		{&url.Error{Op: "Get", URL: "u", Err: context.Canceled}, false, Canceled},
	} {
		if got := kindOf(tc.err, tc.connected); got != tc.want {
			t.Errorf("kindOf(%v, %v) = %v, want %v", tc.err, tc.connected, got, tc.want)
		}
	}
	inner := &Error{Kind: Denied, Status: 7, Err: errors.New("x")}
	got := failed(&url.Error{Op: "Get", URL: "u", Err: inner}, "http://peer/", true)
	if got.Kind != Denied || got.URL != "http://peer/" || got.Status != 7 || got.Err != inner.Err {
		t.Errorf("failed of an *Error inside = %+v", got)
	}
}
