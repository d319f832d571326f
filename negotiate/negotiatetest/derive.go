package negotiatetest

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
)

// Versions the derived vectors pick a version below a facet's floor from:
// the releases of each protocol, oldest first, so that a host is asked
// for a version a real peer could still send.
var releasedVersions = map[facets.Protocol][]string{
	facets.ProtocolA2A: {"0.1", "0.2", "0.3", "1.0"},
	facets.ProtocolMCP: {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"},
}

// What a request without a version header is read as: A2A §3.6.2 reads
// 0.3, and MCP's streamable HTTP 2025-03-26.
var headerlessVersion = map[facets.Protocol]string{facets.ProtocolA2A: "0.3", facets.ProtocolMCP: "2025-03-26"}

// unofferedMCP is a well-formed MCP revision no host offers.
const unofferedMCP = "2099-01-01"

// statelessMCP is the first MCP revision whose requests carry their
// revision in _meta and the method in Mcp-Method.
var statelessMCP = facets.MustParseVersion(facets.ProtocolMCP, "2026-07-28")

// deriveWire returns the wire vectors of the facet adv, which set (the
// whole set the host advertises) holds: each rule the kit checks, asked
// at versions taken from the facet itself, so that a host is asked only
// what its own advertisement says it serves or refuses. A rule the facet
// gives no version to (no downgrade when it offers one version) has no
// vector.
func deriveWire(set facets.Set, adv facets.Advertised) []wireVector {
	d := deriver{set: set, adv: adv}
	p := adv.Protocol
	d.add("preferred-accepted", "rule 7: the preferred version named is served", adv.Preferred, false, nil)
	if down := d.downgrade(); down != "" {
		d.add("authenticated-downgrade", "rules 4, 5, 7: an authenticated caller may have "+down+", at or above the floor", down, true, nil)
		d.add("unauthenticated-downgrade-refused", "rule 5 (RFC 0175 §D.1): no downgrade for an anonymous caller", down, false, nil)
	}
	if below := d.belowFloor(); below != "" {
		d.add("below-floor-refused", "rule 2: "+below+" is below the floor "+adv.Floor+", even authenticated", below, true, nil)
	}
	d.add("unsupported-refused", "rule 3: a version the facet does not offer", d.unoffered(), true, nil)
	absent := headerlessVersion[p]
	d.add("no-header-authenticated", "an absent version header is "+absent+", decided by the rules for an authenticated caller", absent, true, nil)
	d.add("no-header-anonymous", "an absent version header is "+absent+", decided by the rules for an anonymous caller", absent, false, nil)
	if p == facets.ProtocolA2A {
		d.add("malformed-refused", "a version that is not major.minor is never read as another: refused, no version requested",
			adv.Preferred+".0", true, nil)
		return d.vs
	}
	d.mcpOnly()
	return d.vs
}

// deriver builds the vectors of one facet.
type deriver struct {
	set facets.Set
	adv facets.Advertised
	vs  []wireVector
}

// add appends the vector asking for version, with no header when version
// is the header-less one and the name says so, its expectation by the
// rules; body, when not nil, replaces the request the protocol's shape
// gives.
func (d *deriver) add(name, source, version string, authenticated bool, body jsontext.Value) {
	p := d.adv.Protocol
	v := wireVector{Name: string(p) + "/" + name, Source: source, Protocol: p, Authenticated: authenticated,
		Header: map[string]string{}, set: d.set}
	headerless := name == "no-header-authenticated" || name == "no-header-anonymous"
	e := expect(d.adv, version, authenticated)
	v.Want.Event = e
	v.Want.Status = http.StatusOK
	if p == facets.ProtocolA2A {
		if !headerless {
			v.Header["A2A-Version"] = version
		}
		v.Body = a2aRequest(version)
		v.Want.Header = map[string]string{"A2A-Version": cmp.Or(e.Version, d.adv.Preferred)}
		if e.Outcome == "refused" {
			v.Want.Error = -32009
		}
	} else {
		v.Header["Accept"] = "application/json, text/event-stream"
		v.Body = mcpRequest(version, headerless)
		if !headerless {
			v.Header["MCP-Protocol-Version"] = version
			if isStateless(version) {
				v.Header["Mcp-Method"] = "tools/list"
			}
		}
		if e.Outcome == "refused" {
			v.Want.Status, v.Want.Error = http.StatusBadRequest, -32022
		}
	}
	if body != nil {
		v.Body = body
	}
	d.vs = append(d.vs, v)
}

// mcpOnly adds what only MCP has: a version header the body contradicts
// (when the preferred revision carries its revision in the body), and
// JSON-RPC batches, which 2025-03-26 allows and the revisions after it
// refuse.
func (d *deriver) mcpOnly() {
	pref := d.adv.Preferred
	if isStateless(pref) {
		other := "2025-06-18"
		d.add("header-body-mismatch", "the MCP-Protocol-Version header and _meta disagree: -32020, HTTP 400", pref, true,
			jsontext.Value(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"`+other+`"}}}`))
		d.mismatch(-32020)
	}
	const legacy = "2025-03-26"
	if e := expect(d.adv, legacy, true); e.Outcome == "accepted" {
		d.add("batch-at-2025-03-26", "2025-03-26 allows JSON-RPC batches: served", legacy, true,
			jsontext.Value(`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`))
	}
	for _, r := range d.adv.Versions {
		if cmpVersion(facets.ProtocolMCP, r, legacy) <= 0 || isStateless(r) || expect(d.adv, r, true).Outcome != "accepted" {
			continue
		}
		d.add("batch-at-"+r+"-refused", "only 2025-03-26 allows JSON-RPC batches: -32600, HTTP 400", r, true,
			jsontext.Value(`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`))
		d.mismatch(-32600)
		break
	}
}

// mismatch turns the last vector added into a refusal of its request by
// the transport's rules, on HTTP 400 with code: the event records the
// revision requested, refused as unsupported.
func (d *deriver) mismatch(code int) {
	v := &d.vs[len(d.vs)-1]
	requested := v.Header["MCP-Protocol-Version"]
	v.Want = wireWant{Status: http.StatusBadRequest, Error: code,
		Event: &wireEvent{Outcome: "refused", Requested: requested, Reason: events.ReasonUnsupported}}
}

// downgrade returns the newest version the facet offers below preferred
// and at or above the floor: the one an authenticated caller may be
// downgraded to. "" when there is none.
func (d *deriver) downgrade() string {
	best := ""
	for _, s := range d.adv.Versions {
		if cmpVersion(d.adv.Protocol, s, d.adv.Preferred) < 0 && cmpVersion(d.adv.Protocol, s, d.adv.Floor) >= 0 &&
			(best == "" || cmpVersion(d.adv.Protocol, s, best) > 0) {
			best = s
		}
	}
	return best
}

// belowFloor returns the newest release below the facet's floor; "" when
// the floor is the protocol's first release.
func (d *deriver) belowFloor() string {
	below := ""
	for _, s := range releasedVersions[d.adv.Protocol] {
		if cmpVersion(d.adv.Protocol, s, d.adv.Floor) < 0 {
			below = s
		}
	}
	return below
}

// unoffered returns a well-formed version the facet does not offer, newer
// than all it does: on A2A the minor version after its newest.
func (d *deriver) unoffered() string {
	if d.adv.Protocol == facets.ProtocolMCP {
		return unofferedMCP
	}
	newest := facets.MustParseVersion(facets.ProtocolA2A, d.adv.Preferred)
	for _, s := range d.adv.Versions {
		if v := facets.MustParseVersion(facets.ProtocolA2A, s); v.Compare(newest) > 0 {
			newest = v
		}
	}
	major, minor, _ := strings.Cut(newest.String(), ".")
	n, _ := strconv.Atoi(minor) // it parsed: digits
	return major + "." + strconv.Itoa(n+1)
}

// expect is what the rules decide for a caller asking the facet for
// requested, the peer speaking what it asks for, under the zero policy:
// a version that does not parse is refused as unsupported and not
// recorded as requested; one below the floor is refused below-floor,
// offered or not (rule 2); one not offered is unsupported (rule 3); one
// below preferred is refused to an anonymous caller (rule 5); any other
// is served.
func expect(adv facets.Advertised, requested string, authenticated bool) *wireEvent {
	if _, err := facets.ParseVersion(adv.Protocol, requested); err != nil {
		return &wireEvent{Outcome: "refused", Reason: events.ReasonUnsupported}
	}
	e := &wireEvent{Outcome: "refused", Requested: requested}
	switch {
	case cmpVersion(adv.Protocol, requested, adv.Floor) < 0:
		e.Reason = events.ReasonBelowFloor
	case !slices.Contains(adv.Versions, requested):
		e.Reason = events.ReasonUnsupported
	case !authenticated && cmpVersion(adv.Protocol, requested, adv.Preferred) < 0:
		e.Reason = events.ReasonUnauthenticated
	default:
		e.Outcome, e.Version, e.Reason = "accepted", requested, events.ReasonOK
	}
	return e
}

// cmpVersion compares two versions of p that parse.
func cmpVersion(p facets.Protocol, a, b string) int {
	return facets.MustParseVersion(p, a).Compare(facets.MustParseVersion(p, b))
}

// isStateless reports whether an MCP revision is 2026-07-28 or later.
func isStateless(rev string) bool {
	v, err := facets.ParseVersion(facets.ProtocolMCP, rev)
	return err == nil && v.Compare(statelessMCP) >= 0
}

// a2aRequest is a message to send, in the shape of the version's
// JSON-RPC binding: 0.x's message/send, or SendMessage from 1.0 on.
func a2aRequest(version string) jsontext.Value {
	if strings.HasPrefix(version, "0.") {
		return jsontext.Value(`{"jsonrpc":"2.0","id":"wire-1","method":"message/send","params":{"message":{"kind":"message","messageId":"m-1","role":"user","parts":[{"kind":"text","text":"hello"}]}}}`)
	}
	return jsontext.Value(`{"jsonrpc":"2.0","id":"wire-1","method":"SendMessage","params":{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}`)
}

// mcpRequest is a tools/list at rev: from 2026-07-28 on with the revision
// and the client's capabilities in _meta, before it a plain one.
func mcpRequest(rev string, headerless bool) jsontext.Value {
	if headerless || !isStateless(rev) {
		return jsontext.Value(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	}
	return jsontext.Value(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + rev + `","io.modelcontextprotocol/clientCapabilities":{}}}}`)
}

// dateFacets returns a copy of s whose facets are refreshed on the kit's
// clock's day: the kit checks negotiation, not the refresh SLA, so a
// host's own facet is taken whatever its refreshedAt.
func dateFacets(s facets.Set) facets.Set {
	s = s.Clone()
	day := wireNow.Format(time.DateOnly)
	if s.A2A != nil {
		s.A2A.RefreshedAt = day
	}
	if s.MCP != nil {
		s.MCP.RefreshedAt = day
	}
	return s
}
