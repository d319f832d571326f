package a2ahttp

import (
	"errors"
	"net/http"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/internal/rpcerr"
	"github.com/wopneg/wopneg/internal/strictjson"
)

// The google.rpc statuses the middleware answers with. Its JSON-RPC codes
// are the version refusal's -32009 ([rpcerr.RPCA2AVersionNotSupported])
// and JSON-RPC 2.0's -32603 Internal error, written where it is answered.
const (
	// statusFailedPrecondition is the google.rpc status a2a-go gives
	// VersionNotSupported on the HTTP+JSON binding (internal/rest, v2.4.0),
	// and the A2A 1.0.1 interop map gives it on gRPC.
	statusFailedPrecondition = "FAILED_PRECONDITION"
	statusInternal           = "INTERNAL"
	reasonInternal           = "INTERNAL_ERROR"
)

// nullID is the id of a JSON-RPC error answered to a request whose id could
// not be read (JSON-RPC 2.0 §5).
var nullID = jsontext.Value("null")

// statusError is the error of a google.rpc.Status error response as the
// A2A HTTP+JSON binding sends it (AIP-193): {"error": {code, status,
// message, details}}.
type statusError struct {
	Code    int                `json:"code"`
	Status  string             `json:"status"`
	Message string             `json:"message"`
	Details []rpcerr.ErrorInfo `json:"details"`
}

// writeStatus answers with a google.rpc.Status body.
func writeStatus(w http.ResponseWriter, code int, status, message string, info rpcerr.ErrorInfo) {
	exchange.WriteJSON(w, code, map[string]statusError{"error": {Code: code, Status: status, Message: message, Details: []rpcerr.ErrorInfo{info}}})
}

// sniffID returns the id of a JSON-RPC request body exactly as it was
// written, or null when there is none to echo: the body is not one JSON
// object as this module reads JSON (member names matched exactly, as
// JSON-RPC requires, none repeated at any depth, valid UTF-8, nesting at
// most strictjson.MaxDepth deep, nothing after it), or its id is missing
// or neither a string nor a number (JSON-RPC 2.0 §4).
func sniffID(body []byte) jsontext.Value {
	r := strictjson.NewReaderRefusingRepeats(body, 0)
	defer r.Release()
	var id jsontext.Value
	err := r.Object(func(key string) error {
		if k, _ := r.Next(); key == "id" && (k == strictjson.String || k == strictjson.Number) {
			var err error
			id, err = r.Raw()
			return err
		}
		return nil // another member, or an id of a kind that is no id: skipped
	})
	if err != nil || id == nil || r.End() != nil {
		return nullID
	}
	return id
}

// errMethodRead ends the walk of a request at its method member.
var errMethodRead = errors.New("method read")

// sniffMethod returns the method of the JSON-RPC request whose body
// begins with prefix, read as sniffID reads the id but only as far as
// its method member; "" when prefix names none before it ends or breaks.
func sniffMethod(prefix []byte) string {
	r := strictjson.NewReaderRefusingRepeats(prefix, 0)
	defer r.Release()
	method := ""
	_ = r.Object(func(key string) error {
		if key != "method" {
			return nil
		}
		method, _ = r.String()
		return errMethodRead
	})
	return method
}
