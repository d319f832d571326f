package negotiate_test

import (
	"fmt"
	"time"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// An MCP host whose floor lies below its preferred revision answers a
// legacy initialize for a revision it does not serve with its own
// preferred one (a counter-offer), and refuses one below its floor.
func ExampleNegotiator_Decide() {
	set := facets.Set{MCP: &facets.MCP{
		Revisions:        []string{"2025-06-18", "2025-11-25", "2026-07-28"},
		PreferredVersion: "2026-07-28",
		MinimumRevision:  "2025-11-25",
		RefreshedAt:      "2026-11-01",
	}}
	stopped := policy.Policy{Now: func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }}
	n, err := negotiate.Compile(set, stopped)
	if err != nil {
		panic(err)
	}
	for _, requested := range []string{"2026-01-01", "2025-06-18"} {
		outcome, _ := n.Decide(nil, negotiate.Offer{
			Protocol: facets.ProtocolMCP, Requested: requested,
			PeerVersions: []string{requested}, CounterOffer: true,
		})
		fmt.Printf("%s: %s %s (rule %s, counter-offered %t)\n", requested, outcome.Kind, outcome.Version, outcome.Rule, outcome.CounterOffered)
	}
	// Output:
	// 2026-01-01: accepted 2026-07-28 (rule offered, counter-offered true)
	// 2025-06-18: refused  (rule floor, counter-offered false)
}
