package strictjson

import (
	"bytes"
	"errors"
	"fmt"
)

// Syntax returns nil when data is one JSON value in UTF-8, nested no
// deeper than the Reader's default bound, with nothing but white space
// after it; otherwise the first fault, as an *Error whose Path is the
// value at fault ("" at the top level), whose Offset is where it broke,
// and whose Msg says what, where and how long the input is: "not JSON:
// MSG at byte N of M (in PATH)", or for an input that holds no value at
// all "empty: no JSON value in M bytes". A reader of user input checks
// this first, so that a document that does not parse yields this one
// error and no finding about a value it half read.
func Syntax(data []byte) *Error {
	if len(bytes.TrimLeft(data, " \t\r\n")) == 0 {
		return &Error{Offset: len(data), Msg: fmt.Sprintf("empty: no JSON value in %d bytes", len(data))}
	}
	r := NewReader(data, 0)
	err := r.Skip()
	if err == nil {
		err = r.End()
	}
	if err == nil {
		return nil
	}
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Offset: r.Offset(), Msg: err.Error()}
	}
	where := "at the top level"
	if e.Path != "" {
		where = "in " + e.Path
	}
	return &Error{Path: e.Path, Offset: e.Offset, Msg: fmt.Sprintf("not JSON: %s at byte %d of %d (%s)", e.Msg, e.Offset, len(data), where)}
}
