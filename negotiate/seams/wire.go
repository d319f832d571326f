package seams

import (
	"bytes"
	"errors"
	"io"
	"net/http"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/adapter"
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
	Error  *rpcError      `json:"error"`
}

type rpcError struct {
	Code int            `json:"code"`
	Data jsontext.Value `json:"data"`
}

// versionNotSupported reports whether e is A2A's VersionNotSupportedError:
// by its code, or by the reason of an ErrorInfo in its data (an array of
// details, or one bare object).
func (e *rpcError) versionNotSupported() bool {
	if e.Code == -32009 { // A2A's VersionNotSupportedError
		return true
	}
	type info struct {
		Reason string `json:"reason"`
	}
	var list []info
	if strictjson.DecodeOpen(e.Data, &list) == nil {
		for _, i := range list {
			if i.Reason == "VERSION_NOT_SUPPORTED" {
				return true
			}
		}
		return false
	}
	var one info
	return strictjson.DecodeOpen(e.Data, &one) == nil && one.Reason == "VERSION_NOT_SUPPORTED"
}

// unsupported is the refusal of a version the peer would not serve after
// all, with the host's own versions as what it supports: the peer's error
// body is never relayed.
func unsupported(proto facets.Protocol, version string, supported []string, runID string) *httpError {
	e := &wperrors.Error{Code: wperrors.InteropVersionUnsupported, Message: string(proto) + " negotiation refused: unsupported",
		Details: map[string]any{"protocol": string(proto), "requested": version, "supported": supported, "reason": "unsupported", "runId": runID}}
	return &httpError{status: e.Code.HTTPStatus(), err: e}
}

// readBounded reads r to its end, refusing more than max bytes with an
// *http.MaxBytesError.
func readBounded(r io.Reader, max int64) ([]byte, error) {
	return io.ReadAll(http.MaxBytesReader(nil, io.NopCloser(r), max))
}

// readReply reads the JSON-RPC response of an answer, up to maxPeerBytes:
// the body, or the first event of an event stream whose data is a
// response.
func readReply(resp *http.Response) (rpcReply, error) {
	body, err := readBounded(resp.Body, maxPeerBytes)
	if err != nil {
		return rpcReply{}, err
	}
	if !adapter.IsEventStream(resp.Header.Get("Content-Type")) {
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

// eventData splits an event stream into the data of its events.
func eventData(stream []byte) [][]byte {
	var out [][]byte
	var cur []byte
	for line := range bytes.Lines(stream) {
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			if cur != nil {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			v = bytes.TrimPrefix(v, []byte(" "))
			if cur != nil {
				cur = append(cur, '\n')
			}
			cur = append(cur, v...)
		}
	}
	if cur != nil {
		out = append(out, cur)
	}
	return out
}

// bytesReader is a request body over data.
func bytesReader(data []byte) io.Reader { return bytes.NewReader(data) }
