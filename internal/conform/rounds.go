package conform

import (
	"context"
	"fmt"
	"net/http"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/conform/verdict"
)

// rounds is v2-mrtr-rounds-ceiling (RFC 0175 §E.1): maxRounds is an integer
// in 1..16, and round maxRounds+1 of needs_input_loop is refused 422
// mcp_mrtr_rounds_exceeded with the server having seen maxRounds+1
// tools/call. The suite accepts fewer calls; the runner requires exactly
// maxRounds+1, since a host that stops early does not honour the ceiling it
// advertises, and adds a control: maxRounds rounds complete.
func (r *runner) rounds(ctx context.Context) []verdict.Result {
	l := verdict.New(scRounds, "openwop.requirement.0175.mrtr-rounds-ceiling")
	rl := verdict.New(scRounds, "openwop.requirement.0175.mrtr-rounds-ceiling.refused")
	if !r.gateDoc(l, rl) {
		return settle(l, rl)
	}
	f := r.facet(facets.ProtocolMCP)
	s := shapeOf(facets.ProtocolMCP, f)
	if f == nil || !s.hasMRTR {
		for _, x := range []*verdict.Leg{l, rl} {
			x.Inapplicable("the host advertises no mcp.mrtr: it offers no multi-round tool results")
		}
		return settle(l, rl)
	}
	n, isNum := s.maxRounds.(float64)
	max := int(n)
	ok := isNum && float64(max) == n && max >= 1 && max <= 16
	l.Wire(ok, "mcp.mrtr.maxRounds must be an integer in 1..16, got %v", s.maxRounds)
	if !ok {
		rl.Block("no valid maxRounds to exceed")
		return settle(l, rl)
	}
	if _, ok := r.gateSeams(facets.ProtocolMCP, rl); ok {
		r.ceiling(ctx, rl, s, max)
	}
	return settle(l, rl)
}

// loopBody is the seam request for needs_input_loop with rounds rounds.
func loopBody(rounds int) map[string]any {
	return map[string]any{
		"tool": loopTool, "arguments": map[string]any{"rounds": rounds},
		"clientCapabilities": map[string]any{"elicitation": map[string]any{}},
		"elicitationAnswer":  map[string]any{"name": "Ada"},
	}
}

// loopCalls counts the tools/call of needs_input_loop in calls.
func loopCalls(calls []call) int {
	n := 0
	for _, c := range calls {
		if name, _ := str(c.Params, "name"); c.RPC == "tools/call" && name == loopTool {
			n++
		}
	}
	return n
}

func (r *runner) ceiling(ctx context.Context, l *verdict.Leg, s shape, max int) {
	x, ok := r.invoke(ctx, l, facets.ProtocolMCP, s.versions, loopBody(max+1))
	if !ok {
		return
	}
	served := loopCalls(x.calls)
	if served == 0 {
		l.Block(fmt.Sprintf("the seam answered %d and the fake MCP server received no tools/call of %s", x.a.Status, loopTool))
		return
	}
	l.Wire(x.a.Status == http.StatusUnprocessableEntity, "round %d (maxRounds + 1) must be refused with 422, the seam answered %d", max+1, x.a.Status)
	l.Wire(x.a.JSON["error"] == codeRounds, "the refusal must carry %s, got %v", codeRounds, x.a.JSON["error"])
	l.Wire(served == max+1, "the server saw %d tools/call for a ceiling of %d: rounds 1..%d are retried and round %d is not", served, max, max, max+1)
	c, ok := r.invoke(ctx, l, facets.ProtocolMCP, s.versions, loopBody(max))
	if !ok {
		return
	}
	served = loopCalls(c.calls)
	l.Wire(c.a.Status == http.StatusOK, "%d rounds are within the ceiling of %d, yet the seam answered %d", max, max, c.a.Status)
	l.Wire(served == max+1, "%d rounds take %d tools/call, the server saw %d", max, max+1, served)
}
