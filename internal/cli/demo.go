package cli

import (
	_ "embed"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// defaultFacets advertise a floor below the preferred version, so that the
// authenticated-downgrade rule (RFC 0175 §D.1) has room to act.
//
//go:embed default-facets.json
var defaultFacets []byte

// demo prints what the built-in facets decide for a spread of offers.
func demo(stdout, stderr io.Writer) int {
	set, err := facets.Parse(defaultFacets)
	if err != nil {
		return fail(stderr, 1, err)
	}
	n, err := negotiate.Compile(set, policy.Policy{})
	if err != nil {
		return fail(stderr, 1, err)
	}
	user := &negotiate.Subject{Issuer: "https://idp.example", SubjectID: "u-42", Tenant: "acme", Lane: policy.LaneOIDC, Kind: policy.KindUser}
	rows := []struct {
		subject   *negotiate.Subject
		protocol  facets.Protocol
		requested string
		peer      []string
		counter   bool
	}{
		{user, facets.ProtocolA2A, "", []string{"1.0", "1.1", "1.2"}, false},
		{user, facets.ProtocolA2A, "", []string{"1.1"}, false},
		{nil, facets.ProtocolA2A, "", []string{"1.1"}, false},
		{user, facets.ProtocolA2A, "", []string{"1.0"}, false},
		{user, facets.ProtocolA2A, "1.1", []string{"1.1", "1.2"}, false},
		{nil, facets.ProtocolA2A, "1.0", []string{"1.0"}, false},
		{user, facets.ProtocolA2A, "1.3", []string{"1.3"}, false},
		{user, facets.ProtocolA2A, "", []string{"1.2", "2.0"}, false},
		{user, facets.ProtocolMCP, "", []string{"2026-07-28"}, false},
		{user, facets.ProtocolMCP, "", []string{"2025-11-25"}, false},
		{nil, facets.ProtocolMCP, "2025-11-25", []string{"2025-11-25"}, false},
		{nil, facets.ProtocolMCP, "2025-11-25", []string{"2025-11-25"}, true},
		{user, facets.ProtocolMCP, "2025-06-18", []string{"2025-06-18"}, true},
		{user, facets.ProtocolMCP, "2024-11-05", []string{"2024-11-05"}, true},
	}

	for _, p := range set.Protocols() {
		a, _ := set.Lookup(p)
		fmt.Fprintf(stdout, "%s offers %s, preferred %s, floor %s\n", p, strings.Join(a.Versions, " "), a.Preferred, a.Floor)
	}
	fmt.Fprintln(stdout)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROTOCOL\tCALLER\tREQUESTED\tPEER SPEAKS\tCOUNTER\tOUTCOME\tVERSION\tREASON\tRULE")
	for _, r := range rows {
		o, _ := n.Decide(r.subject, negotiate.Offer{
			Protocol: r.protocol, Peer: "https://peer.example", Requested: r.requested,
			PeerVersions: r.peer, CounterOffer: r.counter,
		})
		caller := "authenticated"
		if r.subject == nil {
			caller = "anonymous"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.protocol, caller, dash(r.requested),
			strings.Join(r.peer, ","), yesNo(r.counter), o.Kind, dash(o.Version), o.Reason, o.Rule)
	}
	tw.Flush()
	fmt.Fprintln(stdout, "\nEvery row also yields one negotiation.decided event; `wopneg decide` prints it.")
	return 0
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
