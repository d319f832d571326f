package wopneg_test

import (
	"fmt"
	"time"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// A host offering A2A 1.0 to 1.2, preferring 1.2 with floor 1.1, meets a
// peer that speaks only 1.1: an authenticated caller is downgraded, an
// anonymous one is refused, and both decisions are recorded.
func Example() {
	set, err := facets.Parse([]byte(`{"a2a": {"versions": ["1.0", "1.1", "1.2"],
		"preferredVersion": "1.2", "minimumVersion": "1.1", "refreshedAt": "2026-11-01"}}`))
	if err != nil {
		panic(err)
	}
	clock := policy.Policy{Now: func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }}
	offer := negotiate.Offer{Protocol: facets.ProtocolA2A, Peer: "https://peer.example", PeerVersions: []string{"1.1"}}
	user := &negotiate.Subject{Issuer: "https://idp.example", SubjectID: "u-42", Tenant: "acme", Lane: "oidc", Kind: "user"}

	for _, caller := range []*negotiate.Subject{user, nil} {
		outcome, event := negotiate.Decide(caller, set, offer, clock)
		fmt.Println(outcome.Kind, outcome.Version, outcome.Reason, "| event:", event.Outcome, event.Version, event.Reason)
	}
	// Output:
	// downgraded 1.1 ok | event: accepted 1.1 ok
	// refused  unauthenticated | event: refused  unauthenticated
}
