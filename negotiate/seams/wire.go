package seams

import (
	"errors"
	"net/http"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/internal/rpcerr"
	"github.com/wopneg/wopneg/internal/strictjson"

	"github.com/go-json-experiment/json/jsontext"
)

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
	// lenient is the response as the Transports read it, for an MCP
	// refusal (exchange.Refusal.Read).
	lenient exchange.Reading
}

// mcpRefusal is MCP's refusal of a revision, as mcphttp gives it to the
// engine's lenient reader.
var mcpRefusal = exchange.Refusal{Code: rpcerr.RPCMCPUnsupportedProtocolVersion}

// refusal reads the reply for an MCP runtime refusal as the Transports
// read one (exchange.Refusal.Read): -32022 in any spelling and what it
// lists, or a v2 envelope interop_version_unsupported, which lists
// nothing.
func (r rpcReply) refusal() exchange.Reading {
	var code string
	if strictjson.DecodeOpen(r.Error, &code) == nil && code == string(wperrors.InteropVersionUnsupported) {
		return exchange.Reading{Verdict: exchange.Refused}
	}
	return r.lenient
}

// unsupported is the refusal of a version the peer would not serve after
// all, for reason, the recorded refusal's (so that the answer and the run
// say the same), with the host's own versions as what it supports: the
// peer's error body is never relayed.
func unsupported(proto facets.Protocol, version, reason string, supported []string, runID string) *httpError {
	return onRun(&wperrors.Error{Code: wperrors.InteropVersionUnsupported, Message: string(proto) + " negotiation refused: " + reason,
		Details: map[string]any{"protocol": string(proto), "requested": version, "supported": supported, "reason": reason}}, runID)
}

// readReply reads the JSON-RPC response of an answer with the engine's
// one reader, as the answer's clients read it (its Content-Encoding, a
// byte-order mark), up to maxPeerBytes: the body, or the first event of an
// event stream whose data is a response as the Transports read one (a
// result or an error, and no method), to the request id when id is not
// nil (as an MCP client matches one), or refuses.
func readReply(resp *http.Response, id jsontext.Value) (rpcReply, error) {
	var rep rpcReply
	var bad error
	sse := exchange.IsEventStream(resp.Header.Get("Content-Type"))
	v, err := exchange.Read(resp, maxPeerBytes, func(msg []byte, complete bool) exchange.Verdict {
		if !complete {
			return exchange.Undecided
		}
		r := rpcReply{lenient: mcpRefusal.Read(msg, true)}
		if sse && r.lenient.Verdict != exchange.Refused && (r.lenient.Responses == 0 || id != nil && len(exchange.Answered([]jsontext.Value{id}, r.lenient.IDs)) > 0) {
			return exchange.Undecided // an event that is no response, or answers another request
		}
		bad = strictjson.DecodeOpen(msg, &r)
		rep = r
		if r.refusal().Verdict == exchange.Refused {
			return exchange.Refused // read wherever it stands: in an event the stream's end cuts off too
		}
		return exchange.Served
	}, nil)
	if err != nil {
		return rpcReply{}, err
	}
	if v == exchange.Undecided {
		return rpcReply{}, errors.New("the event stream holds no JSON-RPC response")
	}
	return rep, bad
}
