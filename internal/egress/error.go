package egress

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	neturl "net/url"
	"strconv"

	wperrors "github.com/wopneg/wopneg/errors"
)

// Kind says which failure an [*Error] is. A Kind is itself an error, so
// that errors.Is(err, egress.Timeout) asks for one; its name is the
// details.reason of the envelope the error unwraps to, and the label of
// the log line and the metric.
type Kind uint8

// The failures that leave a negotiation without a decision.
const (
	_ Kind = iota // the zero Kind is no failure this package names

	// Unreachable: no connection was made (a refused connection, a name
	// that does not resolve, no route, a failed TLS handshake).
	Unreachable
	// Timeout: a bound on time ran out (Options.Timeout,
	// Options.HeaderTimeout, or the caller's context deadline).
	Timeout
	// HangUp: the connection was made, and closed or reset before the
	// answer was complete (its headers, or its body short of its end).
	HangUp
	// NotAnAnswer: the peer answered, but not with a negotiation answer: a
	// 5xx, or, as the adapters judge with [NotAnswer], a body that is not
	// JSON-RPC or not an agent card.
	NotAnAnswer
	// TooLarge: the answer's body is larger than its bound.
	TooLarge
	// Denied: the egress policy refused the address or the URL.
	Denied
	// RedirectRefused: the peer redirected to another origin, or more
	// times than the bound, or the client handed back a redirect.
	RedirectRefused
	// Canceled: the caller's context was canceled.
	Canceled
)

// kinds holds each Kind's name and what it means to the operator.
var kinds = [...]struct{ name, says string }{
	{"unknown", "the fetch failed"},
	Unreachable:     {"unreachable", "the peer could not be reached"},
	Timeout:         {"timeout", "the peer did not answer in time"},
	HangUp:          {"hang-up", "the peer hung up before its answer was complete"},
	NotAnAnswer:     {"not-an-answer", "the peer's answer is not a negotiation answer"},
	TooLarge:        {"too-large", "the peer's answer is larger than its bound"},
	Denied:          {"egress-denied", "the egress policy refused to reach the peer"},
	RedirectRefused: {"redirect-refused", "the peer's redirect was not followed"},
	Canceled:        {"canceled", "the fetch was canceled"},
}

func (k Kind) row() struct{ name, says string } {
	if int(k) < len(kinds) {
		return kinds[k]
	}
	return kinds[0]
}

// Error returns the kind's name, such as "hang-up"; an unknown Kind is
// "unknown".
func (k Kind) Error() string { return k.row().name }

// Error is a negotiation fetch that got no negotiation answer. Nothing was
// decided, so nothing is recorded: it is returned, and logged.
//
// It matches its [Kind] under errors.Is, unwraps to its cause (a
// context.DeadlineExceeded, an *http.MaxBytesError, a *net.OpError...) and
// to the v2 envelope *wperrors.Error of code internal_error whose
// details.reason is the kind's name and details.status the peer's HTTP
// status, when it sent one.
type Error struct {
	// Kind is which failure it was.
	Kind Kind
	// URL is the origin fetched ([Where]): never its path, query or
	// credentials; empty when not known (a [ReadBody] of a bare reader).
	URL string
	// Status is the HTTP status of the peer's answer; 0 when there was
	// none.
	Status int
	// Err is the underlying failure; nil when the status says it all.
	Err error
}

// Error returns "egress: URL: what happened (status N): cause".
func (e *Error) Error() string {
	s := "egress: "
	if e.URL != "" {
		s += e.URL + ": "
	}
	s += e.Kind.row().says
	if e.Status != 0 {
		s += " (status " + strconv.Itoa(e.Status) + ")"
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is reports whether target is e's Kind.
func (e *Error) Is(target error) bool {
	k, ok := target.(Kind)
	return ok && k == e.Kind
}

// Unwrap returns the cause, if any, and the v2 envelope: code
// internal_error, details.reason and, when the peer sent one,
// details.status. The envelope holds no URL and nothing the peer sent.
func (e *Error) Unwrap() []error {
	env := wperrors.New(wperrors.Internal, "the negotiation reached no decision: "+e.Kind.row().says).
		WithDetail("reason", e.Kind.Error())
	if e.Status != 0 {
		env = env.WithDetail("status", e.Status)
	}
	if e.Err == nil {
		return []error{env}
	}
	return []error{e.Err, env}
}

// LogValue is the group a log line shows: reason, url, status and cause,
// each when known.
func (e *Error) LogValue() slog.Value {
	attrs := []slog.Attr{slog.String("reason", e.Kind.Error())}
	if e.URL != "" {
		attrs = append(attrs, slog.String("url", e.URL))
	}
	if e.Status != 0 {
		attrs = append(attrs, slog.Int("status", e.Status))
	}
	if e.Err != nil {
		attrs = append(attrs, slog.String("cause", e.Err.Error()))
	}
	return slog.GroupValue(attrs...)
}

// NotAnswer is the [*Error] of kind [NotAnAnswer] for an answer the
// adapter could not read as one (not JSON-RPC, not an agent card), with
// why as its cause. Its URL is the request's, and its Status the
// answer's.
func NotAnswer(resp *http.Response, why error) *Error {
	e := &Error{Kind: NotAnAnswer, Status: resp.StatusCode, Err: why}
	if resp.Request != nil {
		e.URL = Where(resp.Request.URL)
	}
	return e
}

// kindOf says which failure err is, for a request that had a connection
// to the peer when it failed (connected) or not.
func kindOf(err error, connected bool) Kind {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return Timeout
	case errors.Is(err, context.Canceled):
		return Canceled
	case !connected:
		return Unreachable
	}
	return HangUp
}

// failed returns the [*Error] of err, a failure of the request to url:
// the one inside it, given the URL, or a new one of the kind kindOf
// finds with err as its cause.
func failed(err error, url string, connected bool) *Error {
	var ue *neturl.Error
	if errors.As(err, &ue) {
		err = ue.Err // its message repeats the whole URL, path and query included
	}
	var e *Error
	if errors.As(err, &e) {
		return &Error{Kind: e.Kind, URL: url, Status: e.Status, Err: e.Err}
	}
	return &Error{Kind: kindOf(err, connected), URL: url, Err: err}
}
