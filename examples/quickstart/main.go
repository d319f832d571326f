// Command quickstart is the shortest tour of wopneg: it has a host's
// facets dated by a facets.Refresher, compiles a Negotiator, decides three
// offers and prints, for each, the Outcome, the negotiation.decided event
// the host must record, and for a refusal the v2 error envelope and HTTP
// status it answers with.
//
//	cd examples && go run ./quickstart
//
// The clock is fixed, so the output is the same on every run.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// hostFacets is what the host advertises: A2A 1.0 and three MCP
// revisions, floor 2025-11-25 below preferred 2026-07-28 so that an
// authenticated caller has room to be downgraded. It says nothing of
// refreshedAt: that is the day the versions were last checked against
// upstream, and a facets.Refresher finds it.
func hostFacets() facets.Set {
	return facets.Set{
		A2A: &facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0"},
		MCP: &facets.MCP{
			Revisions:        []string{"2025-06-18", "2025-11-25", "2026-07-28"},
			PreferredVersion: "2026-07-28",
			MinimumRevision:  "2025-11-25",
		},
	}
}

// now is the fixed clock every decision is stamped with, and the
// Refresher's.
var now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// run does the whole tour, writing to w.
func run(w io.Writer) error {
	// The zero Refresher checks against the release list embedded in
	// wopneg, and dates the facets no later than the day it was taken
	// from upstream; a host runs it daily (facets.Handler.Run), against
	// its own mirror to stay fresh between upgrades.
	clock := func() time.Time { return now }
	rep, err := (&facets.Refresher{Now: clock}).Check(context.Background(), hostFacets())
	if err != nil {
		return err
	}
	if !rep.Passed() {
		return fmt.Errorf("the facets' check against upstream failed: %v", rep.Findings)
	}
	set := rep.Set
	fmt.Fprintf(w, "0. facets checked against upstream: refreshedAt a2a %s, mcp %s\n", set.A2A.RefreshedAt, set.MCP.RefreshedAt)
	for _, f := range rep.Findings {
		fmt.Fprintf(w, "   %s [%s]: %s\n", f.Path, f.Rule, f.Message)
	}
	n, err := negotiate.Compile(set, policy.Policy{Now: clock})
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
			// Outbound: the host calls an MCP server that speaks only
			// 2025-11-25. The caller is authenticated, 2025-11-25 is at
			// the floor: downgraded.
			"authenticated caller, MCP peer speaks only 2025-11-25",
			user,
			negotiate.Offer{Protocol: facets.ProtocolMCP, Peer: "https://peer.example/mcp", PeerVersions: []string{"2025-11-25"}},
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
