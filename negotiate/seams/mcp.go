package seams

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"net/http"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/internal/strictjson"
	"github.com/wopneg/wopneg/internal/tracectx"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/mrtr"
)

// The _meta keys of an MCP 2026-07-28 request.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
)

// inputRequired is what the seam reads of an input_required result.
type inputRequired struct {
	InputRequests map[string]jsontext.Value `json:"inputRequests"`
	RequestState  jsontext.Value            `json:"requestState"`
}

// mcp runs the §23 seam: server/discover, the decision, one tools/call and
// its MRTR rounds.
func (x *invocation) mcp(ctx context.Context) (map[string]any, *httpError) {
	set := x.h.Negotiator.Facets()
	if set.MCP == nil {
		return nil, envelope(http.StatusNotFound, "not_found", "the host does not advertise mcp", nil)
	}
	// A server that cannot be asked offers nothing, which the decision
	// refuses.
	o, _, err := mcphttp.Negotiate(ctx, x.h.Negotiator, x.peer, mcphttp.OutboundOptions{
		Sink: x.h.Sink, Subject: x.subject(), Destination: x.destination(), Client: via(x.client, x.discoveryTap()), Requested: x.req.RequestVersion,
		TraceContext: x.trace,
	})
	if fail := x.decided(o, err); fail != nil {
		return nil, fail
	}
	t, err := mcphttp.NewTransport(x.outcome, x.client.Transport)
	if err != nil {
		return nil, x.peerFailure(0, "no transport for the decided revision")
	}
	var guard *mrtr.Guard // nil: the host advertises no rounds, so it runs none
	if set.MCP.MRTR != nil {
		guard, _ = mrtr.NewGuard(set.MCP.MRTR.MaxRounds) // nil for a bound out of range: none
	}
	meta := map[string]any{metaProtocolVersion: x.outcome.Version, metaClientCapabilities: x.req.ClientCapabilities}
	params := map[string]any{"name": x.req.Tool, "arguments": x.req.Arguments, "_meta": meta}
	echoed := false
	rounds := 0 // the input_required results the guard let through, each retried
	for id := 2; ; id++ {
		// Each call continues the seam request's trace under a span id
		// of its own, in the headers and in _meta, as Negotiate's
		// requests do.
		trace, h := tracectx.From(ctx, x.trace), http.Header{"Mcp-Method": {"tools/call"}, "Mcp-Name": {x.req.Tool}}
		trace.SetHeader(h)
		maps.Copy(meta, trace.Map())
		rep, status, err := x.post(ctx, t, x.peer, map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}, h, jsontext.Value(strconv.Itoa(id)))
		if fail := x.callFailure(err, facets.ProtocolMCP, set.MCP.Revisions); fail != nil {
			return nil, fail
		}
		if refusal := rep.refusal(); refusal.Verdict == exchange.Refused {
			// The server refused at runtime the revision server/discover
			// offered: the record follows it, even when the strict
			// reading below cannot take the answer.
			return nil, x.refusedAtRuntime(ctx, facets.ProtocolMCP, set.MCP.Revisions, refusal.Listed)
		}
		if err != nil {
			return nil, x.peerFailure(status, "no JSON-RPC answer")
		}
		if rep.Error != nil || rep.Result == nil {
			return nil, x.peerFailure(status, "the server refused tools/call")
		}
		retry, fail := x.observe(guard, rep.Result)
		if fail != nil {
			return nil, fail
		}
		if !retry {
			body := x.success(rep.Result)
			if rounds > 0 {
				body["mrtr"] = map[string]any{"inputRequiredSeen": true, "retried": true, "requestStateEchoed": echoed,
					"rounds": rounds, "result": rep.Result}
			}
			return body, nil
		}
		rounds++
		var ir inputRequired
		if err := strictjson.DecodeOpen(rep.Result, &ir); err != nil {
			return nil, x.peerFailure(status, "an input_required result that cannot be read")
		}
		responses := make(map[string]any, len(ir.InputRequests))
		for key := range ir.InputRequests {
			if x.req.ElicitationAnswer != nil {
				responses[key] = map[string]any{"action": "accept", "content": x.req.ElicitationAnswer}
			} else {
				responses[key] = map[string]any{"action": "decline"}
			}
		}
		params = map[string]any{"name": x.req.Tool, "arguments": x.req.Arguments, "inputResponses": responses, "_meta": meta}
		// requestState is echoed as the server wrote it, never parsed.
		echoed = len(ir.RequestState) > 0 && ir.RequestState[0] == '"'
		if echoed {
			params["requestState"] = ir.RequestState
		}
	}
}

// refusedAtRuntime records the peer's refusal, at runtime, of the version
// the exchange was accepted at, on the exchange's run after the
// acceptance, as every Transport records one (exchange.Peer.Refused, by
// what the refusal listed), and answers interop_version_unsupported with
// the host's supported versions; a record that cannot be written is an
// internal_error naming the run.
func (x *invocation) refusedAtRuntime(ctx context.Context, proto facets.Protocol, supported, listed []string) *httpError {
	peer := exchange.Peer{Recorder: exchange.Recorder{Pkg: "seams", N: x.h.Negotiator, Sink: x.h.Sink}, URL: x.peer, Subject: x.subject(), Dest: x.destination()}
	o, err := peer.Refused(ctx, proto, x.outcome.Version, listed)
	if err != nil {
		return unrecorded(x.runID)
	}
	return unsupported(proto, x.outcome.Version, o.Reason, supported, x.runID)
}

// observe counts one result with the guard: whether to retry, or the 422
// for a round past the ceiling. A host that advertises no mrtr runs no
// rounds, so its first input_required is past the ceiling.
func (x *invocation) observe(guard *mrtr.Guard, result jsontext.Value) (bool, *httpError) {
	if guard == nil {
		var r struct {
			ResultType string `json:"resultType"`
		}
		if strictjson.DecodeOpen(result, &r) != nil || r.ResultType != "input_required" {
			return false, nil
		}
		return false, onRun(&wperrors.Error{Code: wperrors.MCPRoundsExceeded,
			Message: "the MCP server asked for input; this host advertises no mcp.mrtr rounds", Details: map[string]any{"rounds": 1, "maxRounds": 0}}, x.runID)
	}
	retry, err := guard.Observe(result)
	var e *wperrors.Error
	if errors.As(err, &e) && e.Code == wperrors.MCPRoundsExceeded {
		return false, onRun(e, x.runID)
	}
	if err != nil {
		return false, x.peerFailure(http.StatusOK, "a tools/call result that is not a JSON object with a string resultType")
	}
	return retry, nil
}

// checkFields checks the fields of one seam: the MCP seam's defaults and
// shapes, and that neither seam is given the other's fields.
func (x *invocation) checkFields(proto facets.Protocol) *httpError {
	r := &x.req
	if proto == facets.ProtocolA2A {
		if r.Tool != "" || r.Arguments != nil || r.ClientCapabilities != nil || r.ElicitationAnswer != nil {
			return envelope(http.StatusBadRequest, "validation_error", "tool, arguments, clientCapabilities and elicitationAnswer are fields of the mcp seam", nil)
		}
		if r.Scenario != "" && r.Scenario != scenarioPeerAuthority {
			return envelope(http.StatusBadRequest, "validation_error", "scenario is "+scenarioPeerAuthority+" or absent", nil)
		}
		return nil
	}
	if r.Scenario != "" {
		return envelope(http.StatusBadRequest, "validation_error", "scenario is a field of the a2a seam", nil)
	}
	r.Tool = cmp.Or(r.Tool, "echo")
	if len(r.Tool) > maxToolName {
		return envelope(http.StatusBadRequest, "validation_error", "tool is longer than 128 bytes", nil)
	}
	if r.Arguments == nil {
		r.Arguments = jsontext.Value(`{"text":"ping"}`)
	}
	if r.ClientCapabilities == nil {
		r.ClientCapabilities = jsontext.Value(`{}`)
	}
	if r.ElicitationAnswer != nil && string(r.ElicitationAnswer) == "null" {
		r.ElicitationAnswer = nil
	}
	for name, v := range map[string]jsontext.Value{"arguments": r.Arguments, "clientCapabilities": r.ClientCapabilities, "elicitationAnswer": r.ElicitationAnswer} {
		if v != nil && v.Kind() != '{' {
			return envelope(http.StatusBadRequest, "validation_error", name+" must be a JSON object", nil)
		}
	}
	return nil
}
