package seams

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/strictjson"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
)

// scenarioPeerAuthority is the §22 scenario in which the peer's answer
// asserts authority it does not have.
const scenarioPeerAuthority = "peer-asserts-authority"

// card is what the seam reads of an agent card besides its offers: where
// its JSON-RPC interface is.
type card struct {
	URL                 string `json:"url"`
	SupportedInterfaces []struct {
		URL             string `json:"url"`
		ProtocolBinding string `json:"protocolBinding"`
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"supportedInterfaces"`
}

// a2a runs the §22 seam: the agent card and the decision, then one
// SendMessage through the stamping transport (a2ahttp.Connect).
func (x *invocation) a2a(ctx context.Context) (map[string]any, *httpError) {
	adv, ok := x.h.Negotiator.Facets().Lookup(facets.ProtocolA2A)
	if !ok {
		return nil, envelope(http.StatusNotFound, "not_found", "the host does not advertise a2a", nil)
	}
	// The tap reads the card requests (GET) only; the call goes through
	// Connect's recording transport as it came: a peer that refuses at
	// runtime the version its card offered has the refusal recorded on
	// the run, after the card's acceptance.
	tap := x.discoveryTap()
	tap.getOnly = true
	t, o, err := a2ahttp.Connect(ctx, x.h.Negotiator, x.peer, a2ahttp.OutboundOptions{
		Sink: x.h.Sink, Subject: x.subject(), Destination: x.destination(), Client: via(x.client, tap), Requested: x.req.RequestVersion,
		TraceContext: x.trace,
	})
	if fail := x.decided(o, err); fail != nil {
		return nil, fail
	}
	_, id, _ := strings.Cut(x.runID, "/")
	message := map[string]any{"messageId": "wopneg-" + id, "role": "ROLE_USER", "parts": []any{map[string]any{"text": "ping"}}}
	method := "SendMessage"
	if x.outcome.Version == "0.3" {
		method = "message/send"
		message = map[string]any{"kind": "message", "messageId": message["messageId"], "role": "user", "parts": []any{map[string]any{"kind": "text", "text": "ping"}}}
	}
	rpc := map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": map[string]any{"message": message}}
	rep, status, err := x.post(ctx, t, x.interfaceURL(tap.body), rpc, http.Header{}, nil)
	if fail := x.callFailure(err, facets.ProtocolA2A, adv.Versions); fail != nil {
		return nil, fail
	}
	if err != nil {
		return nil, x.peerFailure(status, "no JSON-RPC answer")
	}
	if rep.Error != nil || status >= 400 || rep.Result == nil {
		return nil, x.peerFailure(status, "the peer answered an error")
	}
	body := x.success(rep.Result)
	if x.req.Scenario == scenarioPeerAuthority {
		// Nothing in a peer's answer is acted on, so nothing it asserts
		// can advance an approval, widen a scope or reach a task.
		body["peerAuthority"] = map[string]bool{"approvalAdvanced": false, "scopesWidened": false, "referencedTaskDereferenced": false}
	}
	return body, nil
}

// interfaceURL is where SendMessage goes: the card's JSON-RPC interface at
// the decided version, or its first JSON-RPC interface, or its url, when
// that is on the peer's own origin; otherwise <peerUrl>/a2a/jsonrpc. A card
// never sends the host to another origin.
func (x *invocation) interfaceURL(raw []byte) string {
	var c card
	_ = strictjson.DecodeOpen(raw, &c)
	var atVersion, jsonRPC []string
	for _, i := range c.SupportedInterfaces {
		if i.ProtocolBinding == "JSONRPC" && i.ProtocolVersion == x.outcome.Version {
			atVersion = append(atVersion, i.URL)
		}
		if i.ProtocolBinding == "JSONRPC" {
			jsonRPC = append(jsonRPC, i.URL)
		}
	}
	own, _ := events.Origin(x.peer)
	for _, u := range slices.Concat(atVersion, jsonRPC, []string{c.URL}) {
		if o, err := events.Origin(u); err == nil && o == own {
			return u
		}
	}
	u, _ := url.Parse(x.peer)
	return u.JoinPath("a2a", "jsonrpc").String()
}
