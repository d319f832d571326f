package seams

import (
	"bytes"
	"errors"
	"io"
	"net/http"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/egress"
	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/internal/strictjson"

	"github.com/go-json-experiment/json/jsontext"
)

// decodeRequest reads a seam request strictly: only its fields, each once.
func decodeRequest(raw []byte, req *request) error { return strictjson.Decode(raw, req) }

// rpcReply is a JSON-RPC response, as far as the seams read one. Peers'
// answers are read with the module's strict reader, as the adapters read
// them, except that members the seams do not read are skipped
// (strictjson.DecodeOpen): an answer the adapter took is never one the
// seam cannot read.
type rpcReply struct {
	Result jsontext.Value `json:"result"`
	// Error is a JSON-RPC error object, or the string code of a v2 error
	// envelope ({"error":"interop_version_unsupported",...}).
	Error jsontext.Value `json:"error"`
}

// versionRefused reports whether the reply refuses the MCP revision it
// was sent at: JSON-RPC -32022 UnsupportedProtocolVersionError (in any
// spelling of the number), or a v2 envelope interop_version_unsupported.
func (r rpcReply) versionRefused() bool {
	var code string
	if strictjson.DecodeOpen(r.Error, &code) == nil {
		return code == string(wperrors.InteropVersionUnsupported)
	}
	var e rpcError
	return strictjson.DecodeOpen(r.Error, &e) == nil && e.Code == -32022
}

type rpcError struct {
	Code float64 `json:"code"` // a number in any spelling: -32022.0 is -32022
}

// unsupported is the refusal of a version the peer would not serve after
// all, with the host's own versions as what it supports: the peer's error
// body is never relayed.
func unsupported(proto facets.Protocol, version string, supported []string, runID string) *httpError {
	e := &wperrors.Error{Code: wperrors.InteropVersionUnsupported, Message: string(proto) + " negotiation refused: unsupported",
		Details: map[string]any{"protocol": string(proto), "requested": version, "supported": supported, "reason": "unsupported", "runId": runID}}
	return &httpError{status: e.Code.HTTPStatus(), err: e}
}

// readReply reads the JSON-RPC response of an answer, up to maxPeerBytes:
// the body, or the first event of an event stream whose data is a
// response.
func readReply(resp *http.Response) (rpcReply, error) {
	body, err := egress.ReadBody(resp.Body, maxPeerBytes)
	if err != nil {
		return rpcReply{}, err
	}
	if !exchange.IsEventStream(resp.Header.Get("Content-Type")) {
		var rep rpcReply
		err := strictjson.DecodeOpen(body, &rep)
		return rep, err
	}
	for _, data := range eventData(body) {
		var rep rpcReply
		if strictjson.DecodeOpen(data, &rep) == nil && (rep.Result != nil || rep.Error != nil) {
			return rep, nil
		}
	}
	return rpcReply{}, errors.New("the event stream holds no JSON-RPC response")
}

// eventData returns the data of the events of a whole event stream, as
// exchange.EventScanner reads them (the adapters' one reader): an event
// ends at a blank line, its data lines joined by "\n", and one the stream
// ends inside is no event, as the event-stream format says.
func eventData(stream []byte) [][]byte {
	var s exchange.EventScanner
	var out [][]byte
	for {
		data, ok := s.Next(stream)
		if !ok {
			return out
		}
		out = append(out, data)
	}
}

// bytesReader is a request body over data.
func bytesReader(data []byte) io.Reader { return bytes.NewReader(data) }
