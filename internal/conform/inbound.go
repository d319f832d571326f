package conform

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/conform/verdict"
)

// inbound is v2-negotiation-decided-inbound (RFC 0242 §B): a host serving
// A2A or MCP inbound lists negotiation.decided as a durable host event
// type, and records each inbound exchange as one, with requested, on
// /host/events, delivered to the authenticated caller.
func (r *runner) inbound(ctx context.Context) []verdict.Result {
	listed := verdict.New(scInbound, "openwop.requirement.0242.inbound.listed")
	type leg struct {
		l        *verdict.Leg
		p        facets.Protocol
		accepted bool
	}
	legs := []leg{
		{verdict.New(scInbound, "openwop.requirement.0242.inbound.recorded"), facets.ProtocolA2A, true},
		{verdict.New(scInbound, "openwop.requirement.0242.inbound.refused"), facets.ProtocolA2A, false},
		{verdict.New(scInbound, "openwop.requirement.0242.inbound.recorded.mcp"), facets.ProtocolMCP, true},
		{verdict.New(scInbound, "openwop.requirement.0242.inbound.refused.mcp"), facets.ProtocolMCP, false},
	}
	all := []*verdict.Leg{listed}
	for _, g := range legs {
		all = append(all, g.l)
	}
	if !r.gateDoc(all...) {
		return settle(all...)
	}
	if !r.inboundServed(facets.ProtocolA2A) && !r.inboundServed(facets.ProtocolMCP) {
		listed.Inapplicable("the host advertises no inbound A2A or MCP surface (a2a.agentCardUrl, mcp.serverUrls, mcp.serverMount)")
	} else {
		msg := r.listed()
		listed.Wire(msg == "", "%s", msg)
	}
	for _, g := range legs {
		r.inboundLeg(ctx, g.l, g.p, g.accepted)
	}
	return settle(all...)
}

func (r *runner) inboundLeg(ctx context.Context, l *verdict.Leg, p facets.Protocol, accepted bool) {
	if !r.inboundServed(p) {
		l.Inapplicable(fmt.Sprintf("the host serves no inbound %s surface", p))
		return
	}
	if r.listed() != "" {
		l.Inapplicable("hostEvents.types[] does not list negotiation.decided as durable, so the host emits no such host event; inbound.listed records that failure")
		return
	}
	s := shapeOf(p, r.facet(p))
	named := s.preferred
	if !accepted {
		named = lowest(p)
		if !below(p, named, s.floor) {
			l.Inapplicable(fmt.Sprintf("the %s floor %s is at or below %s, the lowest version a client can name", p, s.floor, named))
			return
		}
	}
	if r.c.token == "" {
		l.Block("no bearer token (--token): an unauthenticated exchange's host event reaches no subscriber (RFC 0242 §B)")
		return
	}
	target, ok := r.inboundTarget(ctx, l, p, s)
	if !ok {
		return
	}
	match := func(rec record) bool { return rec.names(p, named) }
	seen, ans, err := r.watch(ctx, func() answer { return r.inboundCall(ctx, p, target, named) }, match)
	if err != nil {
		l.Wire(false, "%v", err)
		return
	}
	if ans.Err != nil {
		l.Block(fmt.Sprintf("the inbound %s exchange failed: %v", p, ans.Err))
		return
	}
	r.judgeInbound(l, p, accepted, named, seen, ans)
}

// judgeInbound judges the records seen on /host/events while one inbound
// exchange naming named ran, and the exchange's answer.
func (r *runner) judgeInbound(l *verdict.Leg, p facets.Protocol, accepted bool, named string, seen []record, ans answer) {
	code, _ := obj(ans.JSON, "error")["code"].(float64)
	refusal := map[facets.Protocol]float64{facets.ProtocolA2A: -32009, facets.ProtocolMCP: -32022}[p]
	if accepted {
		l.Wire(code != refusal && code != -32020, "the host refused the inbound %s exchange at its preferred %s (error %v)", p, named, code)
	} else {
		l.Wire(code == refusal, "the inbound %s exchange at %s, below the floor, was not refused with %v (error %v)", p, named, refusal, code)
	}
	var mine []record
	for _, rec := range seen {
		_, run := rec.Envelope["runId"]
		_, seq := rec.Envelope["sequence"]
		l.Wire(rec.Invalid == nil && !run && !seq, "a negotiation.decided frame on /host/events is not a valid host event (runId or sequence present, or %v)", rec.Invalid)
		if rec.names(p, named) {
			mine = append(mine, rec)
		}
	}
	if !l.Wire(len(mine) > 0, "an inbound %s exchange naming %s must leave a negotiation.decided host event with requested %s; %d frame(s) seen, none matching (RFC 0242 §B.2, §A.2)", p, named, named, len(seen)) {
		return
	}
	e := mine[len(mine)-1]
	want := "refused"
	if accepted {
		want = "accepted"
	}
	l.Wire(e.Envelope["delivery"] == "durable", "the host event's delivery is %v, not durable", e.Envelope["delivery"])
	l.Wire(e.Payload["outcome"] == want, "the exchange was %s, yet the record's outcome is %v", want, e.Payload["outcome"])
	if accepted {
		_, ok := str(e.Payload, "version")
		l.Wire(ok, "an accepted record names the version used")
	}
}

// inboundTarget is where an inbound exchange of p goes: mcp.serverUrls[0],
// or the JSON-RPC interface of the advertised agent card.
func (r *runner) inboundTarget(ctx context.Context, l *verdict.Leg, p facets.Protocol, s shape) (string, bool) {
	f := r.facet(p)
	if p == facets.ProtocolMCP {
		urls := strs(f, "serverUrls")
		if len(urls) == 0 || urls[0] == "" {
			l.Block("mcp is served inbound with no mcp.serverUrls[0]: the mount is unaddressable")
			return "", false
		}
		return urls[0], true
	}
	card, _ := str(f, "agentCardUrl")
	a := r.c.do(ctx, http.MethodGet, card, nil, http.Header{"A2A-Version": {s.preferred}})
	if a.Err != nil || a.Status != http.StatusOK {
		l.Block(fmt.Sprintf("the advertised agentCardUrl answered %d %v", a.Status, a.Err))
		return "", false
	}
	ifaces, _ := a.JSON["supportedInterfaces"].([]any)
	for _, i := range ifaces {
		m, _ := i.(map[string]any)
		if b, _ := str(m, "protocolBinding"); b == "JSONRPC" {
			if u, ok := str(m, "url"); ok {
				return u, true
			}
		}
	}
	l.Block("the agent card lists no JSONRPC interface to send an inbound request to")
	return "", false
}

// inboundCall makes one inbound exchange naming version: A2A GetTask of a
// task that does not exist, or MCP tools/list. Neither changes host state.
func (r *runner) inboundCall(ctx context.Context, p facets.Protocol, target, version string) answer {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	h := http.Header{"Accept": {"application/json, text/event-stream"}}
	var body map[string]any
	if p == facets.ProtocolA2A {
		h.Set("A2A-Version", version)
		body = map[string]any{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": map[string]any{"id": "conform-0242-" + hex.EncodeToString(b)}}
	} else {
		h.Set("MCP-Protocol-Version", version)
		h.Set("Mcp-Method", "tools/list")
		body = map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": map[string]any{"_meta": map[string]any{metaVersion: version, metaClientCap: map[string]any{}}}}
	}
	return r.c.do(ctx, http.MethodPost, target, body, h)
}

// watch opens /host/events, runs do, and returns the negotiation.decided
// records seen until one matches or the stream window closes. A host that
// answers the stream with JSON ({"events": [...]}) is read again after do.
func (r *runner) watch(ctx context.Context, do func() answer, match func(record) bool) ([]record, answer, error) {
	sctx, cancel := context.WithTimeout(ctx, r.stream)
	defer cancel()
	target, err := r.c.resolve("/host/events")
	if err != nil {
		return nil, answer{}, err
	}
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, answer{}, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("OpenWOP-Version", "2.0")
	r.c.authorize(req)
	res, err := r.c.send(req)
	if err != nil {
		return nil, answer{}, fmt.Errorf("GET /host/events: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		return nil, answer{}, fmt.Errorf("GET /host/events answered %d", res.StatusCode)
	}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		res.Body.Close()
		ans := do()
		a := r.c.do(ctx, http.MethodGet, "/host/events", nil, http.Header{"OpenWOP-Version": {"2.0"}})
		if a.Err != nil {
			return nil, ans, a.Err
		}
		recs, err := parsePoll(a.Body)
		return recs, ans, err
	}
	var (
		mu   sync.Mutex
		seen []record
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		defer res.Body.Close()
		_ = readSSE(res.Body, func(f frame) bool {
			rec, ok := parseRecord([]byte(f.Data))
			if !ok && f.Event != decidedType {
				return true
			}
			if !ok {
				rec = record{Invalid: errNotObject}
			}
			mu.Lock()
			seen = append(seen, rec)
			n := len(seen)
			mu.Unlock()
			if match(rec) {
				cancel()
				return false
			}
			return n < maxFrames
		})
	}()
	ans := do()
	<-done
	mu.Lock()
	defer mu.Unlock()
	return seen, ans, nil
}
