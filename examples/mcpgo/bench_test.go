package mcpgo

import (
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// The situation every benchmark measures: an MCP host offering 2025-06-18,
// 2025-11-25 and 2026-07-28 (preferred 2026-07-28, floor 2025-11-25) meets
// an authenticated peer that asks for 2026-07-28, the preferred revision.
// The answer is 2026-07-28 on both sides.
const (
	preferred = "2026-07-28"
	floor     = "2025-11-25"
	peerURL   = "https://client.example/mcp"
)

var hostRevisions = []string{"2025-06-18", "2025-11-25", "2026-07-28"}

func hostFacets() facets.Set {
	return facets.Set{MCP: &facets.MCP{
		Revisions:        hostRevisions,
		PreferredVersion: preferred,
		MinimumRevision:  floor,
		RefreshedAt:      "2026-11-01",
	}}
}

var user = &negotiate.Subject{
	Issuer: "https://idp.example", SubjectID: "u-42", Tenant: "acme",
	Lane: policy.LaneOIDC, Kind: policy.KindUser,
}

// compile returns the Negotiator the wopneg benchmarks use, under p: the
// zero Policy is the reference behaviour, stamped by the wall clock, as a
// host runs it.
func compile(tb testing.TB, p policy.Policy) *negotiate.Negotiator {
	tb.Helper()
	n, err := negotiate.Compile(hostFacets(), p)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// inbound is the Offer of a request that names requested: the peer speaks
// what it asked for.
func inbound(requested string) negotiate.Offer {
	adv, _ := hostFacets().Lookup(facets.ProtocolMCP)
	return negotiate.InboundOffer(adv, peerURL, requested)
}

// supportsServer is an mcp-go streamable HTTP transport restricted to the
// host's revisions, as a host serving only those would configure it.
func supportsServer() *server.StreamableHTTPServer {
	return server.NewStreamableHTTPServer(
		server.NewMCPServer("bench", "1.0.0"),
		server.WithStreamableHTTPProtocolVersions(hostRevisions...),
	)
}

// Each loop body calls the function under test and drops its results:
// b.Loop keeps every call and its results alive, so none is optimised
// away, and none of the benchmarks pays for copying results out.

// BenchmarkWopnegNegotiatorDecide is wopneg's hot path: the compiled
// Negotiator, the same peer URL every iteration (so its origin digest comes
// from the cache after the first), an authenticated Subject, and the
// accepted path. Each call also builds the negotiation.decided payload and
// reads the clock.
func BenchmarkWopnegNegotiatorDecide(b *testing.B) {
	benchmarkNegotiatorDecide(b, policy.Policy{})
}

// BenchmarkWopnegNegotiatorDecideFixedClock is the same under a Policy
// whose clock returns a fixed instant: what Decide costs besides reading
// the clock.
func BenchmarkWopnegNegotiatorDecideFixedClock(b *testing.B) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	benchmarkNegotiatorDecide(b, policy.Policy{Now: func() time.Time { return at }})
}

func benchmarkNegotiatorDecide(b *testing.B, p policy.Policy) {
	n := compile(b, p)
	offer := inbound(preferred)
	if o, _ := n.Decide(user, offer); o.Kind != negotiate.Accepted || o.Version != preferred {
		b.Fatalf("setup: got %v %q, want accepted %s", o.Kind, o.Version, preferred)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		n.Decide(user, offer)
	}
}

// BenchmarkTimeNow is time.Now().UTC(), the clock issue 10 states its goal
// against: measured in one run (go test -run '^$' -bench
// 'NegotiatorDecide|TimeNow|MutuallySupported' -count 10 .), the goal is
// NegotiatorDecide ≤ 2 × (TimeNow + MCPGoNegotiateMutuallySupportedVersion),
// with 0 allocations. The zero Policy's clock is cheaper than this on
// linux/amd64, where it reads the wall clock alone (policy.Policy.Time).
func BenchmarkTimeNow(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		time.Now().UTC()
	}
}

// BenchmarkWopnegDecide is the pure negotiate.Decide for the same offer: it
// parses the facet and hashes the peer's origin on every call.
func BenchmarkWopnegDecide(b *testing.B) {
	set, offer, p := hostFacets(), inbound(preferred), policy.Policy{}
	if o, _ := negotiate.Decide(user, set, offer, p); o.Kind != negotiate.Accepted || o.Version != preferred {
		b.Fatalf("setup: got %v %q, want accepted %s", o.Kind, o.Version, preferred)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		negotiate.Decide(user, set, offer, p)
	}
}

// BenchmarkMCPGoNegotiateMutuallySupportedVersion is the function the issue
// names, as it exists in mcp-go v1.2.1:
//
//	func mcp.NegotiateMutuallySupportedVersion(supported []string) string
//
// It returns the highest member of mcp.ValidProtocolVersions (the SDK's five
// revisions, 2024-11-05 to 2026-07-28, newest first) that supported also
// lists. mcp-go's client calls it with the server's list from an
// UnsupportedProtocolVersionError to settle a revision; here the other side
// lists the one revision it asked for, as in the wopneg benchmarks. It has
// no floor, no notion of the caller, and records nothing.
func BenchmarkMCPGoNegotiateMutuallySupportedVersion(b *testing.B) {
	peer := []string{preferred}
	if got := mcp.NegotiateMutuallySupportedVersion(peer); got != preferred {
		b.Fatalf("setup: got %q, want %s", got, preferred)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		mcp.NegotiateMutuallySupportedVersion(peer)
	}
}

// BenchmarkMCPGoSupportsProtocolVersion is the check mcp-go v1.2.1's
// streamable HTTP server applies to the revision a 2026-07-28-era request
// names (validateModernRequest):
//
//	func (*server.StreamableHTTPServer).SupportsProtocolVersion(version string) bool
//
// that is, slices.Contains(mcp.ValidProtocolVersions, v) and then, because
// the transport is restricted to the host's revisions with
// WithStreamableHTTPProtocolVersions, slices.Contains of that list. When it
// is true the request is served at the revision it named.
func BenchmarkMCPGoSupportsProtocolVersion(b *testing.B) {
	s := supportsServer()
	if !s.SupportsProtocolVersion(preferred) {
		b.Fatalf("setup: %s not supported", preferred)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s.SupportsProtocolVersion(preferred)
	}
}

// TestSameAnswer checks that, for an authenticated peer and revisions both
// sides support at or above the floor, wopneg and mcp-go settle on the same
// revision, so the benchmarks compare like with like.
func TestSameAnswer(t *testing.T) {
	n := compile(t, policy.Policy{})
	srv := supportsServer()

	// A peer that asks for a revision: wopneg settles at it, mcp-go's
	// server accepts it, and mcp-go's negotiation, given that one
	// revision, picks it.
	for _, tc := range []struct{ requested, want string }{
		{"2026-07-28", "2026-07-28"},
		{"2025-11-25", "2025-11-25"},
	} {
		o, e := n.Decide(user, inbound(tc.requested))
		if o.Err() != nil || o.Version != tc.want || e.Outcome != "accepted" || e.Version != tc.want {
			t.Errorf("wopneg, requested %s: got %v %q (event %s %q), want %s", tc.requested, o.Kind, o.Version, e.Outcome, e.Version, tc.want)
		}
		if got := mcp.NegotiateMutuallySupportedVersion([]string{tc.requested}); got != tc.want {
			t.Errorf("mcp-go NegotiateMutuallySupportedVersion([%s]) = %q, want %s", tc.requested, got, tc.want)
		}
		if !srv.SupportsProtocolVersion(tc.requested) {
			t.Errorf("mcp-go SupportsProtocolVersion(%s) = false, want true", tc.requested)
		}
	}

	// A peer that lists what it speaks and names nothing: both take the
	// highest revision in common.
	for _, tc := range []struct {
		peer []string
		want string
		kind negotiate.Kind
	}{
		{[]string{"2026-07-28"}, "2026-07-28", negotiate.Accepted},
		{[]string{"2025-11-25", "2026-07-28"}, "2026-07-28", negotiate.Accepted},
		{[]string{"2026-07-28", "2025-11-25", "2025-06-18"}, "2026-07-28", negotiate.Accepted},
		{[]string{"2025-11-25"}, "2025-11-25", negotiate.Downgraded},
		{[]string{"2025-03-26", "2025-11-25"}, "2025-11-25", negotiate.Downgraded},
	} {
		o, _ := n.Decide(user, negotiate.Offer{Protocol: facets.ProtocolMCP, Peer: peerURL, PeerVersions: tc.peer})
		if o.Kind != tc.kind || o.Version != tc.want {
			t.Errorf("wopneg, peer speaks %v: got %v %q, want %v %s", tc.peer, o.Kind, o.Version, tc.kind, tc.want)
		}
		if got := mcp.NegotiateMutuallySupportedVersion(tc.peer); got != tc.want {
			t.Errorf("mcp-go NegotiateMutuallySupportedVersion(%v) = %q, want %s", tc.peer, got, tc.want)
		}
	}
}

// TestWhereTheyDiffer pins down what the comparison leaves out: the cases
// where wopneg refuses and mcp-go's negotiation settles anyway, because it
// has no floor and does not know who is asking.
func TestWhereTheyDiffer(t *testing.T) {
	n := compile(t, policy.Policy{})
	for _, tc := range []struct {
		name    string
		subject *negotiate.Subject
		peer    []string
		reason  string
		mcpgo   string
	}{
		{"anonymous peer below preferred", nil, []string{"2025-11-25"}, events.ReasonUnauthenticated, "2025-11-25"},
		{"offered but below the floor", user, []string{"2025-06-18"}, events.ReasonBelowFloor, "2025-06-18"},
		{"not offered, below the floor", user, []string{"2024-11-05"}, events.ReasonBelowFloor, "2024-11-05"},
	} {
		o, e := n.Decide(tc.subject, negotiate.Offer{Protocol: facets.ProtocolMCP, Peer: peerURL, PeerVersions: tc.peer})
		if o.Kind != negotiate.Refused || o.Reason != tc.reason || e.Outcome != "refused" {
			t.Errorf("%s: wopneg got %v %q (%s), want refused %s", tc.name, o.Kind, o.Version, o.Reason, tc.reason)
		}
		if got := mcp.NegotiateMutuallySupportedVersion(tc.peer); got != tc.mcpgo {
			t.Errorf("%s: mcp-go got %q, want %s", tc.name, got, tc.mcpgo)
		}
	}
}
