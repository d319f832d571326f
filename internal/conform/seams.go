package conform

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/conform/verdict"
)

const (
	seamsProfile = "openwop-conformance-seams-v2"
	seamsPrefix  = "/conformance/seams/sample/"
	codeVersion  = "interop_version_unsupported"
	codeRounds   = "mcp_mrtr_rounds_exceeded"
	// FloorIsPreferred is why negotiation-authenticated is blocked on a
	// host whose floor is its preferred version: no version between them
	// can be offered, so no unauthenticated downgrade can be refused.
	FloorIsPreferred = "floor equals preferred: §D.1 not witnessable"
)

// requirement ids per protocol.
func reqID(base string, p facets.Protocol) string {
	if p == facets.ProtocolMCP {
		return base + ".mcp"
	}
	return base
}

// lowest is the lowest version a suite peer of p can offer.
func lowest(p facets.Protocol) string {
	if p == facets.ProtocolA2A {
		return a2aLegacy
	}
	return mcpLegacy
}

// newPeer starts the fake of p speaking versions.
func newPeer(p facets.Protocol, versions ...string) (*fake, error) {
	if p == facets.ProtocolA2A {
		return newA2APeer(versions...)
	}
	return newMCPServer(versions...)
}

// seamBody is the invoke request for the fake at peer, with more fields.
func seamBody(p facets.Protocol, peer string, more map[string]any) map[string]any {
	b := map[string]any{}
	for k, v := range more {
		b[k] = v
	}
	if p == facets.ProtocolA2A {
		b["peerUrl"] = peer
	} else {
		b["serverUrl"] = peer
	}
	return b
}

// gateSeams checks what every seam leg of p needs: discovery, the facet, the
// seams profile. It returns the facet's shape when the legs can run.
func (r *runner) gateSeams(p facets.Protocol, legs ...*verdict.Leg) (shape, bool) {
	if !r.gateDoc(legs...) {
		return shape{}, false
	}
	f := r.facet(p)
	if f == nil {
		for _, l := range legs {
			l.Inapplicable(fmt.Sprintf("the host does not advertise %s", p))
		}
		return shape{}, false
	}
	if prof, _ := str(obj(r.doc, "conformance"), "seamsProfile"); prof != seamsProfile {
		for _, l := range legs {
			l.Block("the exchange is driven through the invoke seams, and conformance.seamsProfile is not " + seamsProfile)
		}
		return shape{}, false
	}
	return shapeOf(p, f), true
}

// exchange is one seam invocation toward a fake.
type exchange struct {
	p    facets.Protocol
	peer *fake
	a    answer
	// calls are what the fake received.
	calls []call
}

// invoke starts a fake of p speaking versions, drives the seam at it with
// body fields more, and stops the fake. It blocks l and returns false when
// the fake cannot start, the seam is unreachable or absent.
func (r *runner) invoke(ctx context.Context, l *verdict.Leg, p facets.Protocol, versions []string, more map[string]any) (exchange, bool) {
	f, err := newPeer(p, versions...)
	if err != nil {
		l.Block(err.Error())
		return exchange{}, false
	}
	defer f.close()
	path := seamsPrefix + string(p) + "/invoke"
	a := r.c.do(ctx, http.MethodPost, path, seamBody(p, f.url, more), nil)
	x := exchange{p: p, peer: f, a: a, calls: f.calls()}
	if a.Err != nil {
		l.Block(fmt.Sprintf("POST %s: %v", path, a.Err))
		return x, false
	}
	if a.Status == http.StatusUnauthorized {
		l.Block(fmt.Sprintf("%s answered 401: the seams need an authenticated caller (wopneg conform --token)", path))
		return x, false
	}
	if a.Status == http.StatusNotFound || a.Status == http.StatusForbidden || a.Status == http.StatusMethodNotAllowed {
		l.Block(fmt.Sprintf("the host advertises %s but %s answered %d (host-sample-test-seams.md §22/§23)", p, path, a.Status))
		return x, false
	}
	return x, true
}

// contacted blocks l, and returns false, when x's fake received nothing:
// a row about an exchange that did not reach the peer observed nothing.
func contacted(l *verdict.Leg, x exchange) bool {
	if len(x.calls) > 0 {
		return true
	}
	l.Block(fmt.Sprintf("the seam answered %d and the fake %s peer received no request: the exchange this row measures did not reach it", x.a.Status, x.p))
	return false
}

// records reads the negotiation.decided records of the run x's answer
// names. It blocks l and returns false when the answer names no run.
func (r *runner) records(ctx context.Context, l *verdict.Leg, x exchange) ([]record, bool) {
	runID, ok := runIDOf(x.a.JSON)
	if !ok {
		l.Block(fmt.Sprintf("the seam answered %d without a runId (nor details.runId): the log carrying negotiation.decided is not addressable", x.a.Status))
		return nil, false
	}
	a := r.c.do(ctx, http.MethodGet, "/runs/"+url.PathEscape(runID)+"/events/poll?timeout=1", nil, nil)
	var recs []record
	var err error
	if a.Err != nil {
		err = a.Err
	} else if a.Status != http.StatusOK {
		err = fmt.Errorf("answered %d", a.Status)
	} else {
		recs, err = parsePoll(a.Body)
	}
	l.Wire(err == nil, "GET /runs/%s/events/poll: %v", runID, err)
	l.Wire(len(recs) > 0, "run %s carries no negotiation.decided: every outcome must be recorded (RFC 0175 §D.3)", runID)
	return recs, len(recs) > 0
}

// last is the payload of the last record.
func last(recs []record) map[string]any { return recs[len(recs)-1].Payload }

// wireVersion is the version a call names: A2A-Version, or
// MCP-Protocol-Version.
func wireVersion(p facets.Protocol, c call) string {
	if p == facets.ProtocolA2A {
		return c.Header.Get("A2A-Version")
	}
	return c.Header.Get("MCP-Protocol-Version")
}

// acting are the calls that act at a version: A2A's non-GET calls; MCP's
// calls other than server/discover.
func acting(p facets.Protocol, calls []call) []call {
	var out []call
	for _, c := range calls {
		if p == facets.ProtocolA2A && c.Method != http.MethodGet || p == facets.ProtocolMCP && c.RPC != "server/discover" {
			out = append(out, c)
		}
	}
	return out
}

// countBelow counts the acting calls that name a version below v.
func countBelow(p facets.Protocol, calls []call, v string) int {
	n := 0
	for _, c := range acting(p, calls) {
		if w := wireVersion(p, c); w != "" && below(p, w, v) {
			n++
		}
	}
	return n
}

// lastBelow asserts that no call to x's peer named a version below v (what
// says which bound v is), and returns the payload of the last record of
// x's run.
func (r *runner) lastBelow(ctx context.Context, l *verdict.Leg, x exchange, v, what string) (map[string]any, bool) {
	n := countBelow(x.p, x.calls, v)
	l.Wire(n == 0, "%d call(s) to the peer carried a version below %s %s", n, what, v)
	recs, ok := r.records(ctx, l, x)
	if !ok {
		return nil, false
	}
	return last(recs), true
}

// emitted is v2-negotiation-decided-emitted and RFC 0242's requested legs.
func (r *runner) emitted(ctx context.Context) []verdict.Result {
	var out []verdict.Result
	for _, p := range protocols {
		l := verdict.New(scEmitted, reqID("openwop.requirement.0175.negotiation-decided-emitted", p))
		rq := verdict.New(scEmitted, reqID("openwop.requirement.0242.requested.outbound", p))
		r.emittedLegs(ctx, p, l, rq)
		out = append(out, settle(l, rq)...)
	}
	return out
}

func (r *runner) emittedLegs(ctx context.Context, p facets.Protocol, l, rq *verdict.Leg) {
	s, ok := r.gateSeams(p, l, rq)
	if !ok {
		return
	}
	x, ok := r.invoke(ctx, l, p, s.versions, nil)
	if !ok || !contacted(l, x) {
		rq.Block("the outbound exchange could not be observed")
		return
	}
	recs, ok := r.records(ctx, l, x)
	if !ok {
		if l.Failed() {
			rq.Wire(false, "the exchange left no negotiation.decided record, so none names requested (RFC 0242 §A.2)")
		} else {
			rq.Block("no negotiation.decided record to read requested from")
		}
		return
	}
	digest, _ := events.PeerDigest(x.peer.url)
	host := strings.TrimPrefix(x.peer.url, "http://")
	for _, rec := range recs {
		pl := rec.Payload
		l.Wire(rec.Invalid == nil, "a negotiation.decided record does not validate: %v", rec.Invalid)
		l.Wire(pl["protocol"] == string(p), "a record's protocol is %v, not %s", pl["protocol"], p)
		if d, ok := pl["peerDigest"]; ok {
			l.Wire(d == digest, "peerDigest %v is not the SHA-256 of the peer origin (%s)", d, digest)
		}
		for k, v := range pl {
			s, _ := v.(string)
			l.Wire(!strings.Contains(s, host), "the record's %s carries the peer host %s in clear", k, host)
		}
	}
	want := "refused"
	if x.a.Status < 400 {
		want = "accepted"
	}
	lp := last(recs)
	l.Wire(lp["outcome"] == want, "the seam answered %d, so the last record's outcome must be %s, not %v", x.a.Status, want, lp["outcome"])
	if want == "accepted" {
		nv, _ := str(x.a.JSON, "negotiatedVersion")
		l.Wire(nv != "" && lp["version"] == nv, "the record's version %v is not the negotiatedVersion %q the seam reported", lp["version"], nv)
		act := acting(p, x.calls)
		l.Wire(len(act) > 0, "the seam reported %s negotiated but the peer received no call at any version", nv)
		for _, c := range act {
			l.Wire(wireVersion(p, c) == nv, "a %s call to the peer carried version %q, not the negotiated %s", c.RPC, wireVersion(p, c), nv)
			if mv, ok := obj(c.Params, "_meta")[metaVersion]; p == facets.ProtocolMCP && ok {
				l.Wire(mv == nv, "a %s call's _meta revision %v is not the negotiated %s", c.RPC, mv, nv)
			}
		}
	}
	named := ""
	for _, c := range x.calls {
		if named = wireVersion(p, c); named != "" {
			break
		}
	}
	if named == "" {
		rq.Inapplicable("the host named no version to the peer, so RFC 0242 §A.2 does not require requested")
		return
	}
	got, _ := lp["requested"]
	rq.Wire(got == named, "the record's requested is %v, but the host asked the peer for %s (RFC 0242 §A.2)", got, named)
}

// floorRefused is v2-minimum-version-refused: a peer that offers only a
// version below the floor is refused 400 interop_version_unsupported,
// recorded refused below-floor, and never spoken to below the floor. Beside
// the suite's exchange, which names the lower version in the seam request
// (and which a host may refuse without asking the peer), the runner drives
// one without it, which the host can only settle by asking the peer, so
// the row observes a refusal the peer took part in.
func (r *runner) floorRefused(ctx context.Context) []verdict.Result {
	return r.eachProtocol(ctx, scFloor, "openwop.requirement.0175.minimum-version-refused", r.floorLegs)
}

// legFunc runs legs of one row of protocol p, whose facet is s.
type legFunc func(ctx context.Context, l *verdict.Leg, p facets.Protocol, s shape)

// eachProtocol settles the row (scenario, base id) of each protocol,
// running legs in turn on the rows that pass the seams gate.
func (r *runner) eachProtocol(ctx context.Context, scenario, base string, legs ...legFunc) []verdict.Result {
	var out []verdict.Result
	for _, p := range protocols {
		l := verdict.New(scenario, reqID(base, p))
		if s, ok := r.gateSeams(p, l); ok {
			for _, leg := range legs {
				leg(ctx, l, p, s)
			}
		}
		out = append(out, settle(l)...)
	}
	return out
}

func (r *runner) floorLegs(ctx context.Context, l *verdict.Leg, p facets.Protocol, s shape) {
	low := lowest(p)
	if !below(p, low, s.floor) {
		l.Block(fmt.Sprintf("the %s floor %s is at or below %s, the lowest version a peer can offer: nothing below the floor can be offered", p, s.floor, low))
		return
	}
	named := map[string]any{"authenticated": true, "peerOffersOnly": low}
	if p == facets.ProtocolMCP {
		named = map[string]any{"requestVersion": low}
	}
	for i, more := range []map[string]any{named, {"authenticated": true}} {
		x, ok := r.invoke(ctx, l, p, []string{low}, more)
		if !ok || i == 1 && !contacted(l, x) {
			return
		}
		r.assertRefused(ctx, l, x, s.floor)
	}
}

// assertRefused judges one below-floor exchange.
func (r *runner) assertRefused(ctx context.Context, l *verdict.Leg, x exchange, floor string) {
	p := x.p
	l.Wire(x.a.Status == http.StatusBadRequest, "a negotiation below the %s floor %s must fail closed with 400, the seam answered %d", p, floor, x.a.Status)
	l.Wire(x.a.JSON["error"] == codeVersion, "the refusal must carry %s, got %v", codeVersion, x.a.JSON["error"])
	if dp, ok := obj(x.a.JSON, "details")["protocol"]; ok {
		l.Wire(dp == string(p), "details.protocol is %v, not %s", dp, p)
	}
	lp, ok := r.lastBelow(ctx, l, x, floor, "the floor")
	if !ok {
		return
	}
	l.Wire(lp["outcome"] == "refused", "the record's outcome is %v, not refused", lp["outcome"])
	l.Wire(lp["reason"] == "below-floor", "the record's reason is %v, not below-floor", lp["reason"])
	if f, ok := lp["floor"]; ok {
		l.Wire(f == floor, "the record's floor %v is not the advertised %s", f, floor)
	}
}

// authenticated is v2-negotiation-authenticated (RFC 0175 §D.1): an
// unauthenticated exchange never lowers the version below preferred. The
// suite's leg offers the legacy version, which a floored host refuses
// below-floor, so it cannot show §D.1 itself; the witness leg offers only
// the floor when it is below preferred, which must be refused
// unauthenticated, and a control leg makes the same offer authenticated,
// which must be accepted at the floor — otherwise the refusal isolates
// nothing. A host whose floor is its preferred version is blocked with
// FloorIsPreferred.
func (r *runner) authenticated(ctx context.Context) []verdict.Result {
	return r.eachProtocol(ctx, scAuthenticated, "openwop.requirement.0175.negotiation-authenticated", r.lowerLeg, r.witnessLeg)
}

// lowerLeg is the suite's leg: the peer offers only the legacy version.
func (r *runner) lowerLeg(ctx context.Context, l *verdict.Leg, p facets.Protocol, s shape) {
	low := lowest(p)
	if !below(p, low, s.preferred) {
		l.Block(fmt.Sprintf("%s.preferredVersion %s is at or below %s, the lowest version a peer can offer", p, s.preferred, low))
		return
	}
	more := map[string]any{"authenticated": false}
	if p == facets.ProtocolA2A {
		more["peerOffersOnly"] = low
	}
	x, ok := r.invoke(ctx, l, p, []string{low}, more)
	if !ok || x.a.Status < 400 && !contacted(l, x) {
		return
	}
	r.notLowered(ctx, l, x, s.preferred, []string{"unauthenticated", "below-floor", "unsupported"})
}

// notLowered judges an unauthenticated exchange with a peer offering only
// versions below preferred: a success is at preferred, a refusal is
// recorded with one of reasons, and no call to the peer is below preferred.
func (r *runner) notLowered(ctx context.Context, l *verdict.Leg, x exchange, preferred string, reasons []string) {
	if x.a.Status < 400 {
		nv := x.a.JSON["negotiatedVersion"]
		l.Wire(nv == preferred, "an unauthenticated exchange was settled at %v, below preferredVersion %s (RFC 0175 §D.1)", nv, preferred)
	}
	lp, ok := r.lastBelow(ctx, l, x, preferred, "preferred")
	if !ok {
		return
	}
	if x.a.Status >= 400 {
		l.Wire(lp["outcome"] == "refused", "the refused unauthenticated exchange is recorded %v", lp["outcome"])
		reason, _ := lp["reason"].(string)
		l.Wire(slices.Contains(reasons, reason), "the record's reason is %v, not one of %v", lp["reason"], reasons)
	} else {
		l.Wire(lp["version"] == preferred, "the accepted unauthenticated exchange is recorded at %v, not preferred %s", lp["version"], preferred)
	}
}

// witnessLeg witnesses §D.1: the peer offers only the floor, below
// preferred.
func (r *runner) witnessLeg(ctx context.Context, l *verdict.Leg, p facets.Protocol, s shape) {
	if s.floor == s.preferred {
		l.Block(FloorIsPreferred)
		return
	}
	x, ok := r.invoke(ctx, l, p, []string{s.floor}, map[string]any{"authenticated": false})
	if !ok || !contacted(l, x) {
		return
	}
	r.notLowered(ctx, l, x, s.preferred, []string{"unauthenticated"})
	c, ok := r.invoke(ctx, l, p, []string{s.floor}, map[string]any{"authenticated": true})
	if !ok || !contacted(l, c) {
		return
	}
	if c.a.Status >= 400 {
		l.Block(fmt.Sprintf("the host refused the authenticated downgrade to %s as well (%d), so refusing the unauthenticated one does not isolate §D.1", s.floor, c.a.Status))
		return
	}
	nv := c.a.JSON["negotiatedVersion"]
	l.Wire(nv == s.floor, "the authenticated exchange with a peer offering only %s was settled at %v", s.floor, nv)
	spoke := false
	for _, call := range acting(p, c.calls) {
		spoke = spoke || wireVersion(p, call) == s.floor
	}
	l.Wire(spoke, "the authenticated downgrade to %s was reported but no call to the peer carried it", s.floor)
	if recs, ok := r.records(ctx, l, c); ok {
		lp := last(recs)
		l.Wire(lp["outcome"] == "accepted" && lp["version"] == s.floor, "the authenticated downgrade is recorded %v at %v, not accepted at %s", lp["outcome"], lp["version"], s.floor)
	}
}

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
