// Package errors holds the OpenWOP v2 error codes that version negotiation
// produces, with their HTTP status and retriability, and a typed [*Error]
// that carries one of them and is, in JSON, exactly the v2 error envelope
// `{error, message, details}`. The JSON-RPC errors that A2A and MCP peers
// read on the wire are the adapters' (negotiate/a2ahttp, negotiate/mcphttp).
//
// The package shadows the standard library's errors; import it under a name
// of your own:
//
//	import wperrors "github.com/wopneg/wopneg/errors"
//
// An [*Error] matches another [*Error] or a bare [Code] under [errors.Is] when
// the codes are equal, so callers test for a class of failure without caring
// about the message:
//
//	if errors.Is(err, wperrors.InteropVersionUnsupported) { ... }
package errors

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"

	"github.com/wopneg/wopneg/internal/strictjson"
)

// Code is a registered OpenWOP v2 error code (spec/v2/errors.json).
//
// A Code is itself an error, so it can be the target of [errors.Is]; its
// zero value is not a registered code and reports itself as such.
type Code string

// The codes this library produces. Their HTTP status and retriability are
// the registry's: see [Code.HTTPStatus] and [Code.Retriable].
const (
	// InteropVersionUnsupported refuses an A2A or MCP version negotiation:
	// below the floor, unsupported, or an unauthenticated downgrade.
	// HTTP 400, not retriable.
	InteropVersionUnsupported Code = "interop_version_unsupported"
	// MCPRoundsExceeded stops a multi-round MCP tool result after
	// mrtr.maxRounds rounds (RFC 0175 §E.1). HTTP 422, not retriable.
	MCPRoundsExceeded Code = "mcp_mrtr_rounds_exceeded"
	// Internal reports a failure of the host, not a decision: the audit
	// event could not be recorded under a policy that requires it, so the
	// outcome was refused; or an outbound negotiation got no answer from
	// the peer (unreachable, a timeout, a hang-up, a 5xx...), which
	// details.reason names and nothing records. HTTP 500, retriable.
	Internal Code = "internal_error"
)

// registry mirrors the rows of spec/v2/errors.json for the codes above.
var registry = map[Code]struct {
	status    int
	retriable bool
}{
	InteropVersionUnsupported: {http.StatusBadRequest, false},
	MCPRoundsExceeded:         {http.StatusUnprocessableEntity, false},
	Internal:                  {http.StatusInternalServerError, true},
}

// HTTPStatus is the status a host answers with for c. An unregistered code
// answers 500: a host must never turn an unknown failure into a success.
func (c Code) HTTPStatus() int {
	if row, ok := registry[c]; ok {
		return row.status
	}
	return http.StatusInternalServerError
}

// Retriable reports the registry's retriable flag for c; false for an
// unregistered code.
func (c Code) Retriable() bool { return registry[c].retriable }

// Error makes a Code usable as an [errors.Is] target.
func (c Code) Error() string {
	if c == "" {
		return "wopneg: empty error code"
	}
	return string(c)
}

// Error is a failure carrying a registered [Code]. Its JSON form is exactly
// the v2 error envelope: `{"error": code, "message": text, "details": {...}}`,
// with details omitted when nil.
type Error struct {
	// Code is the registered error code.
	Code Code
	// Message is a sentence for people; never empty on the wire.
	Message string
	// Details is the envelope's open details object. Hosts put the audit
	// run id here (details.runId), never at the top level.
	Details map[string]any
}

// New returns an *Error with the given code and message and no details.
func New(code Code, message string) *Error {
	return &Error{Code: code, Message: message}
}

// Error returns "code: message".
func (e *Error) Error() string {
	if e.Message == "" {
		return e.Code.Error()
	}
	return string(e.Code) + ": " + e.Message
}

// Is reports whether target is an *Error or a Code with the same code.
func (e *Error) Is(target error) bool {
	switch t := target.(type) {
	case *Error:
		return t != nil && t.Code == e.Code
	case Code:
		return t == e.Code
	}
	return false
}

// WithDetail returns a copy of e with details[key] = value; e is not changed.
func (e *Error) WithDetail(key string, value any) *Error {
	c := *e
	c.Details = maps.Clone(e.Details)
	if c.Details == nil {
		c.Details = make(map[string]any, 1)
	}
	c.Details[key] = value
	return &c
}

type envelope struct {
	Error   Code           `json:"error"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitzero"`
}

// MarshalJSON writes the v2 envelope. It refuses an empty code or message,
// which the envelope schema forbids, rather than emit an invalid body.
func (e Error) MarshalJSON() ([]byte, error) {
	if e.Code == "" {
		return nil, fmt.Errorf("wopneg/errors: envelope has an empty error code")
	}
	if e.Message == "" {
		return nil, fmt.Errorf("wopneg/errors: envelope %q has an empty message", e.Code)
	}
	return json.Marshal(envelope{e.Code, e.Message, e.Details})
}

// UnmarshalJSON reads a v2 envelope. The envelope is closed: a key other
// than exactly error, message and details is an error, as is a repeated
// one, a null, and a missing or empty error or message. Codes this package does not register are kept as read.
func (e *Error) UnmarshalJSON(data []byte) error {
	var raw envelope
	if err := strictjson.Decode(data, &raw); err != nil {
		return fmt.Errorf("wopneg/errors: envelope: %w", err)
	}
	if raw.Error == "" {
		return fmt.Errorf("wopneg/errors: envelope: error is missing or empty")
	}
	if raw.Message == "" {
		return fmt.Errorf("wopneg/errors: envelope: message is missing or empty")
	}
	*e = Error{Code: raw.Error, Message: raw.Message, Details: raw.Details}
	return nil
}
