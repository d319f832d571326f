package a2ahttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/wopneg/wopneg/internal/rpcerr"
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

// rpcResponse is a JSON-RPC 2.0 error response. The id is the request's,
// byte for byte: a2a-go's client decodes it into a string, so it must come
// back as the type it was sent as.
type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      jsontext.Value  `json:"id"`
	Error   rpcerr.RPCError `json:"error"`
}

// statusBody is a google.rpc.Status error response as the A2A HTTP+JSON
// binding sends it (AIP-193): {"error": {code, status, message, details}}.
type statusBody struct {
	Error statusError `json:"error"`
}

type statusError struct {
	Code    int                `json:"code"`
	Status  string             `json:"status"`
	Message string             `json:"message"`
	Details []rpcerr.ErrorInfo `json:"details"`
}

// writeJSON writes v as the JSON body of a response with the given status.
// The values written here are built by this package and always marshal.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		// Unreachable with the types above; answer something a client can
		// read rather than an empty 200.
		http.Error(w, "a2ahttp: cannot encode the error response", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body) // the client is gone if this fails; nothing to do.
}

// writeRPCError answers a JSON-RPC request with e, on HTTP 200 as the
// JSON-RPC binding does for every error.
func writeRPCError(w http.ResponseWriter, id jsontext.Value, e rpcerr.RPCError) {
	writeJSON(w, http.StatusOK, rpcResponse{JSONRPC: "2.0", ID: id, Error: e})
}

// writeStatus answers with a google.rpc.Status body.
func writeStatus(w http.ResponseWriter, code int, status, message string, info rpcerr.ErrorInfo) {
	writeJSON(w, code, statusBody{statusError{Code: code, Status: status, Message: message, Details: []rpcerr.ErrorInfo{info}}})
}

// errTooLarge reports a body that was not read to its end because it is
// larger than the bound.
var errTooLarge = errors.New("request body exceeds the bound")

// readBounded reads all of r, up to max bytes; more is errTooLarge.
func readBounded(r io.Reader, max int64) ([]byte, error) {
	if r == nil || r == http.NoBody {
		return nil, nil
	}
	body, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > max {
		return nil, errTooLarge
	}
	return body, nil
}

// maxDepth bounds the nesting of a request body read for its id, the
// module's rule for every JSON it reads: the object itself is depth 1.
const maxDepth = 64

// sniffID returns the id of a JSON-RPC request body exactly as it was
// written, or null when there is none to echo: the body is not one JSON
// object as this module reads JSON (member names matched exactly, as
// JSON-RPC requires, none repeated, valid UTF-8, nesting at most 64 deep,
// nothing after it), or its id is missing or neither a string nor a number
// (JSON-RPC 2.0 §4).
func sniffID(body []byte) jsontext.Value {
	d := jsontext.NewDecoder(bytes.NewBuffer(body)) // repeated names and invalid UTF-8 are errors by default
	if t, err := d.ReadToken(); err != nil || t.Kind() != '{' {
		return nullID
	}
	var id jsontext.Value
	for d.PeekKind() != '}' {
		name, err := d.ReadToken()
		if err != nil {
			return nullID
		}
		if name.String() != "id" {
			if !skip(d) {
				return nullID
			}
			continue
		}
		v, err := d.ReadValue()
		if err != nil || v.Kind() != '"' && v.Kind() != '0' {
			return nullID
		}
		id = v.Clone()
	}
	if _, err := d.ReadToken(); err != nil || id == nil {
		return nullID
	}
	if _, err := d.ReadToken(); err != io.EOF {
		return nullID // something after the object
	}
	return id
}

// skip reads the value that comes next, token by token so that its nesting
// is bounded as it is read, and reports whether it was well formed.
func skip(d *jsontext.Decoder) bool {
	depth := d.StackDepth()
	for {
		t, err := d.ReadToken()
		if err != nil || d.StackDepth() > maxDepth {
			return false
		}
		if k := t.Kind(); d.StackDepth() == depth && k != '{' && k != '[' {
			return true
		}
	}
}

// sniffMethod returns the method of the JSON-RPC request whose body
// begins with prefix, read as sniffID reads the id but only as far as
// its method member; "" when prefix names none before it ends or breaks.
func sniffMethod(prefix []byte) string {
	d := jsontext.NewDecoder(bytes.NewBuffer(prefix))
	if t, err := d.ReadToken(); err != nil || t.Kind() != '{' {
		return ""
	}
	for d.PeekKind() == '"' {
		name, err := d.ReadToken()
		if err != nil {
			return ""
		}
		if name.String() != "method" {
			if !skip(d) {
				return ""
			}
			continue
		}
		if t, err := d.ReadToken(); err == nil && t.Kind() == '"' {
			return t.String()
		}
		return ""
	}
	return ""
}
