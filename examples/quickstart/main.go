// Command quickstart is the shortest tour of wopneg: it parses a host's
// facets, compiles a Negotiator, decides three offers and prints, for each,
// the Outcome, the negotiation.decided event the host must record, and for
// a refusal the v2 error envelope and HTTP status it answers with.
//
//	cd examples && go run ./quickstart
//
// The clock is fixed, so the output is the same on every run.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// hostFacets is what the host advertises: A2A 1.0 to 1.2 and three MCP
// revisions, each with a floor below its preferred version so that an
// authenticated caller has room to be downgraded.
const hostFacets = `{
  "a2a": {
    "versions": ["1.0", "1.1", "1.2"],
    "preferredVersion": "1.2",
    "minimumVersion": "1.1",
    "refreshedAt": "2026-11-01"
  },
  "mcp": {
    "revisions": ["2025-06-18", "2025-11-25", "2026-07-28"],
    "preferredVersion": "2026-07-28",
    "minimumRevision": "2025-11-25",
    "refreshedAt": "2026-11-01"
  }
}`

// now is the fixed clock every decision is stamped with.
var now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// run does the whole tour, writing to w.
func run(w io.Writer) error {
	set, err := facets.Parse([]byte(hostFacets))
	if err != nil {
		return err
	}
	n, err := negotiate.Compile(set, policy.Policy{Now: func() time.Time { return now }})
	if err != nil {
		return err
	}
	mcp, _ := set.Lookup(facets.ProtocolMCP)

	// An authenticated user, resolved by the host's OIDC lane.
	user := &negotiate.Subject{
		Issuer: "https://idp.example", SubjectID: "u-42", Tenant: "acme",
		Lane: policy.LaneOIDC, Kind: policy.KindUser,
	}

	cases := []struct {
		title   string
		subject *negotiate.Subject
		offer   negotiate.Offer
	}{
		{
			// Outbound: the host calls a peer whose agent card lists only
			// A2A 1.1. The caller is authenticated, 1.1 is at the floor:
			// downgraded.
			"authenticated caller, A2A peer speaks only 1.1",
			user,
			negotiate.Offer{Protocol: facets.ProtocolA2A, Peer: "https://peer.example/a2a", PeerVersions: []string{"1.1"}},
		},
		{
			// Inbound: an anonymous MCP client asks for 2025-11-25. It is
			// offered and at the floor, but below preferred, and only an
			// authenticated caller may settle below preferred.
			"anonymous caller, MCP client requests 2025-11-25",
			nil,
			negotiate.InboundOffer(mcp, "", "2025-11-25"),
		},
		{
			// Inbound: an authenticated MCP client asks for 2025-06-18. The
			// host offers it, but it is below the floor: nobody gets it.
			"authenticated caller, MCP client requests 2025-06-18",
			user,
			negotiate.InboundOffer(mcp, "", "2025-06-18"),
		},
	}

	for i, c := range cases {
		outcome, event := n.Decide(c.subject, c.offer)
		fmt.Fprintf(w, "%d. %s\n", i+1, c.title)
		fmt.Fprintf(w, "   outcome: %s", outcome.Kind)
		if outcome.Version != "" {
			fmt.Fprintf(w, " %s %s", outcome.Protocol, outcome.Version)
		} else {
			fmt.Fprintf(w, " %s", outcome.Protocol)
		}
		fmt.Fprintf(w, " (reason %s, rule %s)\n", outcome.Reason, outcome.Rule)

		line, err := json.Marshal(event)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "   %s: %s\n", "negotiation.decided", line)

		if outcome.Error != nil {
			envelope, err := json.Marshal(outcome.Error)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "   HTTP %d: %s\n", outcome.Error.Code.HTTPStatus(), envelope)
		}
	}
	return nil
}
