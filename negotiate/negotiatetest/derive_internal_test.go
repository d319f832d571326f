package negotiatetest

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/wopneg/wopneg/facets"
)

// derived is what a test reads of a derived vector: the version header
// sent ("-" for none), whether authenticated, and what it must get.
type derived struct {
	header        string
	authenticated bool
	status, code  int
	outcome       string
	version       string
	requested     string
	reason        string
}

func summary(v wireVector) derived {
	h, ok := v.Header["A2A-Version"]
	if v.Protocol == facets.ProtocolMCP {
		h, ok = v.Header["MCP-Protocol-Version"]
	}
	if !ok {
		h = "-"
	}
	e := v.Want.Event
	return derived{h, v.Authenticated, v.Want.Status, v.Want.Error, e.Outcome, e.Version, e.Requested, e.Reason}
}

// TestDeriveWire pins the vectors derived from facets of each shape:
// which rules get a vector, at which version, and what the rules decide.
func TestDeriveWire(t *testing.T) {
	for _, tc := range []struct {
		name string
		adv  facets.Advertised
		want map[string]derived
	}{
		{"a2a 1.0 only", facets.Advertised{Protocol: facets.ProtocolA2A, Versions: []string{"1.0"}, Preferred: "1.0", Floor: "1.0"}, map[string]derived{
			"a2a/preferred-accepted":      {"1.0", false, 200, 0, "accepted", "1.0", "1.0", "ok"},
			"a2a/below-floor-refused":     {"0.3", true, 200, -32009, "refused", "", "0.3", "below-floor"},
			"a2a/unsupported-refused":     {"1.1", true, 200, -32009, "refused", "", "1.1", "unsupported"},
			"a2a/no-header-authenticated": {"-", true, 200, -32009, "refused", "", "0.3", "below-floor"},
			"a2a/no-header-anonymous":     {"-", false, 200, -32009, "refused", "", "0.3", "below-floor"},
			"a2a/malformed-refused":       {"1.0.0", true, 200, -32009, "refused", "", "", "unsupported"},
		}},
		{"a2a 0.2 to 1.9, floor 0.3", facets.Advertised{Protocol: facets.ProtocolA2A, Versions: []string{"1.9", "0.2", "0.3", "1.0"}, Preferred: "1.0", Floor: "0.3"}, map[string]derived{
			"a2a/preferred-accepted":                {"1.0", false, 200, 0, "accepted", "1.0", "1.0", "ok"},
			"a2a/authenticated-downgrade":           {"0.3", true, 200, 0, "accepted", "0.3", "0.3", "ok"},
			"a2a/unauthenticated-downgrade-refused": {"0.3", false, 200, -32009, "refused", "", "0.3", "unauthenticated"},
			"a2a/below-floor-refused":               {"0.2", true, 200, -32009, "refused", "", "0.2", "below-floor"},
			"a2a/unsupported-refused":               {"1.10", true, 200, -32009, "refused", "", "1.10", "unsupported"},
			"a2a/no-header-authenticated":           {"-", true, 200, 0, "accepted", "0.3", "0.3", "ok"},
			"a2a/no-header-anonymous":               {"-", false, 200, -32009, "refused", "", "0.3", "unauthenticated"},
			"a2a/malformed-refused":                 {"1.0.0", true, 200, -32009, "refused", "", "", "unsupported"},
		}},
		{"a2a first release", facets.Advertised{Protocol: facets.ProtocolA2A, Versions: []string{"0.1", "0.3"}, Preferred: "0.3", Floor: "0.1"}, map[string]derived{
			"a2a/preferred-accepted":                {"0.3", false, 200, 0, "accepted", "0.3", "0.3", "ok"},
			"a2a/authenticated-downgrade":           {"0.1", true, 200, 0, "accepted", "0.1", "0.1", "ok"},
			"a2a/unauthenticated-downgrade-refused": {"0.1", false, 200, -32009, "refused", "", "0.1", "unauthenticated"},
			"a2a/unsupported-refused":               {"0.4", true, 200, -32009, "refused", "", "0.4", "unsupported"},
			"a2a/no-header-authenticated":           {"-", true, 200, 0, "accepted", "0.3", "0.3", "ok"},
			"a2a/no-header-anonymous":               {"-", false, 200, 0, "accepted", "0.3", "0.3", "ok"},
			"a2a/malformed-refused":                 {"0.3.0", true, 200, -32009, "refused", "", "", "unsupported"},
		}},
		{"mcp legacy", facets.Advertised{Protocol: facets.ProtocolMCP, Versions: []string{"2025-03-26", "2025-06-18", "2025-11-25"}, Preferred: "2025-11-25", Floor: "2025-03-26"}, map[string]derived{
			"mcp/preferred-accepted":                {"2025-11-25", false, 200, 0, "accepted", "2025-11-25", "2025-11-25", "ok"},
			"mcp/authenticated-downgrade":           {"2025-06-18", true, 200, 0, "accepted", "2025-06-18", "2025-06-18", "ok"},
			"mcp/unauthenticated-downgrade-refused": {"2025-06-18", false, 400, -32022, "refused", "", "2025-06-18", "unauthenticated"},
			"mcp/below-floor-refused":               {"2024-11-05", true, 400, -32022, "refused", "", "2024-11-05", "below-floor"},
			"mcp/unsupported-refused":               {"2099-01-01", true, 400, -32022, "refused", "", "2099-01-01", "unsupported"},
			"mcp/no-header-authenticated":           {"-", true, 200, 0, "accepted", "2025-03-26", "2025-03-26", "ok"},
			"mcp/no-header-anonymous":               {"-", false, 400, -32022, "refused", "", "2025-03-26", "unauthenticated"},
			"mcp/batch-at-2025-03-26":               {"2025-03-26", true, 200, 0, "accepted", "2025-03-26", "2025-03-26", "ok"},
			"mcp/batch-at-2025-06-18-refused":       {"2025-06-18", true, 400, -32600, "refused", "", "2025-06-18", "unsupported"},
		}},
		{"mcp stateless, floor 2025-03-26 not served", facets.Advertised{Protocol: facets.ProtocolMCP, Versions: []string{"2025-03-26", "2026-07-28"}, Preferred: "2026-07-28", Floor: "2026-07-28"}, map[string]derived{
			"mcp/preferred-accepted":      {"2026-07-28", false, 200, 0, "accepted", "2026-07-28", "2026-07-28", "ok"},
			"mcp/below-floor-refused":     {"2025-11-25", true, 400, -32022, "refused", "", "2025-11-25", "below-floor"},
			"mcp/unsupported-refused":     {"2099-01-01", true, 400, -32022, "refused", "", "2099-01-01", "unsupported"},
			"mcp/no-header-authenticated": {"-", true, 400, -32022, "refused", "", "2025-03-26", "below-floor"},
			"mcp/no-header-anonymous":     {"-", false, 400, -32022, "refused", "", "2025-03-26", "below-floor"},
			"mcp/header-body-mismatch":    {"2026-07-28", true, 400, -32020, "refused", "", "2026-07-28", "unsupported"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]derived{}
			for _, v := range deriveWire(facets.Set{}, tc.adv) {
				if _, dup := got[v.Name]; dup {
					t.Errorf("%s derived twice", v.Name)
				}
				got[v.Name] = summary(v)
				if err := v.complete(); err != nil && !strings.Contains(err.Error(), "a facet set advertising") {
					t.Errorf("%s: %v", v.Name, err)
				}
				if v.Source == "" || !v.Body.IsValid() {
					t.Errorf("%s: source %q, body %s", v.Name, v.Source, v.Body)
				}
			}
			for _, name := range slices.Sorted(maps.Keys(got)) {
				if got[name] != tc.want[name] {
					t.Errorf("%s = %+v, want %+v", name, got[name], tc.want[name])
				}
			}
			for name := range tc.want {
				if _, ok := got[name]; !ok {
					t.Errorf("no vector %s", name)
				}
			}
		})
	}
}

// TestDeriveRequests pins what the derived requests carry on each shape
// of request: 0.x's message/send or 1.0's SendMessage on A2A; on MCP
// from 2026-07-28 on the revision in _meta and Mcp-Method, before it a
// plain request, and none of either without a header.
func TestDeriveRequests(t *testing.T) {
	a2a := deriveWire(facets.Set{}, facets.Advertised{Protocol: facets.ProtocolA2A, Versions: []string{"0.3", "1.0"}, Preferred: "1.0", Floor: "0.3"})
	mcp := deriveWire(facets.Set{}, facets.Advertised{Protocol: facets.ProtocolMCP, Versions: []string{"2025-11-25", "2026-07-28"}, Preferred: "2026-07-28", Floor: "2025-11-25"})
	byName := map[string]wireVector{}
	for _, v := range append(a2a, mcp...) {
		byName[v.Name] = v
	}
	for name, want := range map[string]string{
		"a2a/preferred-accepted":          `"method":"SendMessage"`,
		"a2a/authenticated-downgrade":     `"method":"message/send"`,
		"a2a/no-header-anonymous":         `"method":"message/send"`,
		"mcp/preferred-accepted":          `"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`,
		"mcp/unsupported-refused":         `"io.modelcontextprotocol/protocolVersion":"2099-01-01"`,
		"mcp/header-body-mismatch":        `"io.modelcontextprotocol/protocolVersion":"2025-06-18"`,
		"mcp/batch-at-2025-11-25-refused": `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`,
	} {
		if v := byName[name]; !strings.Contains(string(v.Body), want) {
			t.Errorf("%s body %s, want %s in it", name, v.Body, want)
		}
	}
	for name, want := range map[string]map[string]string{
		"mcp/preferred-accepted":      {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"},
		"mcp/authenticated-downgrade": {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"},
		"mcp/no-header-anonymous":     {"Accept": "application/json, text/event-stream"},
		"a2a/no-header-anonymous":     {},
		"a2a/preferred-accepted":      {"A2A-Version": "1.0"},
	} {
		if got := byName[name].Header; !maps.Equal(got, want) {
			t.Errorf("%s headers %v, want %v", name, got, want)
		}
	}
	if got := string(byName["mcp/authenticated-downgrade"].Body); got != `{"jsonrpc":"2.0","id":1,"method":"tools/list"}` {
		t.Errorf("a 2025-11-25 request %s", got)
	}
	if got := string(byName["mcp/no-header-anonymous"].Body); got != `{"jsonrpc":"2.0","id":1,"method":"tools/list"}` {
		t.Errorf("a header-less request %s", got)
	}
	if w := byName["a2a/unauthenticated-downgrade-refused"].Want.Header; !maps.Equal(w, map[string]string{"A2A-Version": "1.0"}) {
		t.Errorf("a refusal must name %v", w)
	}
	if w := byName["a2a/authenticated-downgrade"].Want.Header; !maps.Equal(w, map[string]string{"A2A-Version": "0.3"}) {
		t.Errorf("a downgrade must name %v", w)
	}
}

// TestDeriveMatchesShipped: from the facets of the shipped A2A vectors,
// the kit derives those vectors, request and expectation alike; and each
// derived MCP vector of the shipped facets that the shipped file also
// has is the same.
func TestDeriveMatchesShipped(t *testing.T) {
	shipped, err := loadWire(wireFiles, "wire")
	if err != nil {
		t.Fatal(err)
	}
	key := func(v wireVector) string {
		body := jsontext.Value(slices.Clone(v.Body))
		if err := body.Canonicalize(); err != nil {
			t.Fatal(err)
		}
		return string(v.Protocol) + " " + strings.Join(slices.Sorted(maps.Values(v.Header)), ",") + " " +
			string(body) + " " + strings.Repeat("authenticated", map[bool]int{true: 1}[v.Authenticated])
	}
	byRequest := map[string]wireVector{}
	for _, v := range shipped {
		byRequest[key(v)+" "+v.Facets] = v
	}
	set := shipped[0].set
	var a2aMatched, mcpMatched int
	for _, p := range set.Protocols() {
		adv, _ := set.Lookup(p)
		for _, d := range deriveWire(set, adv) {
			s, ok := byRequest[key(d)+" host"]
			if !ok {
				continue
			}
			if !reflect.DeepEqual(s.Want, d.Want) {
				t.Errorf("%s derived wants %+v %+v, shipped %s %+v %+v", d.Name, d.Want, d.Want.Event, s.Name, s.Want, s.Want.Event)
			}
			if p == facets.ProtocolA2A {
				a2aMatched++
			} else {
				mcpMatched++
			}
		}
	}
	if a2aMatched != 8 || mcpMatched < 6 {
		t.Errorf("derived %d of the 8 shipped A2A vectors and %d MCP ones", a2aMatched, mcpMatched)
	}
}
