package cli

import (
	_ "embed"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// defaultFacets advertise real, non-legacy releases only, as the example
// host does: A2A 1.0 (its one release besides the legacy 0.3) and MCP
// 2025-11-25 and 2026-07-28, with MCP's floor below its preferred revision
// so that the authenticated-downgrade rule (RFC 0175 §D.1) has room to act.
//
//go:embed default-facets.json
var defaultFacets []byte

// demoRow is one negotiation of the demo, and why it ends as it does, in
// words for someone who has not read the rules.
type demoRow struct {
	subject   *negotiate.Subject
	protocol  facets.Protocol
	requested string
	peer      []string
	counter   bool
	policy    policy.Policy
	why       string
}

// ruleNumbers are the numbers of the rules in the README's "The decision"
// (and the negotiate package's), by the name an Outcome gives them. Rule
// 1 picks the candidate and settles nothing; RuleInput and RuleAudit are
// not rules of the decision and never settle a demo row.
var ruleNumbers = map[negotiate.Rule]int{
	negotiate.RuleFloor: 2, negotiate.RuleOffered: 3, negotiate.RuleCommon: 4,
	negotiate.RuleAuthenticated: 5, negotiate.RulePolicy: 6, negotiate.RuleAccept: 7,
}

// demoIntro opens the demo: what it shows and where the rules are.
const demoIntro = `Which A2A or MCP version a host speaks with a caller, one negotiation per row,
decided by the rules of "The decision" in the README (go doc ./negotiate has
them too). The columns are explained below the tables.
`

// demoColumns explains the tables' columns and rules.
const demoColumns = `Columns:
  CALLER         authenticated (a valid Subject, not anonymous) or anonymous (none)
  REQUESTS       the version the caller named; - when it named none, which means the preferred one
  PEER SPEAKS    the versions the other side speaks (from its agent card or server/discover;
                 a request that reached the host speaks what it requested)
  COUNTER-OFFER  yes where the protocol lets the host answer with its own version instead
                 of refusing (MCP's legacy initialize handshake)
  OUTCOME        what the host does (negotiate.Outcome.Kind): accepted, downgraded (accepted
                 below the preferred version) or refused
  VERSION        the version spoken from then on; - when refused
  RECORD         the negotiation.decided record written for it: outcome and reason. A record
                 says accepted or refused only, so a downgrade is recorded as accepted, at
                 the lower version
  RULE           the rule of "The decision" that settled it: 2 below the floor, 3 not offered,
                 4 no version both sides speak, 5 caller not authenticated, 6 the policy
                 denies the downgrade, 7 accepted (rule 1 only picks the candidate)
  WHY            the row's decision in words

wopneg decide prints one decision in full, with its record.
`

// demo prints what the built-in facets decide for a spread of callers and
// offers, with the columns and rules explained.
func demo(stdout, stderr io.Writer) int {
	set, err := facets.Parse(defaultFacets)
	if err != nil {
		return fail(stderr, 1, err)
	}
	user := &negotiate.Subject{Issuer: "https://idp.example", SubjectID: "u-42", Tenant: "acme", Lane: policy.LaneOIDC, Kind: policy.KindUser}
	deny := policy.Policy{DenyDowngrade: true}
	a2a, mcp := facets.ProtocolA2A, facets.ProtocolMCP
	rows := []demoRow{
		{user, a2a, "", []string{"1.0"}, false, policy.Policy{}, "named nothing: the preferred version, which the peer speaks"},
		{nil, a2a, "1.0", []string{"1.0"}, false, policy.Policy{}, "asked for the preferred version: anyone may have it"},
		{user, a2a, "", []string{"0.3", "1.0"}, false, policy.Policy{}, "the newest version both sides speak"},
		{user, a2a, "0.3", []string{"0.3"}, false, policy.Policy{}, "0.3 is below the floor: refused, even to an authenticated caller"},
		{user, a2a, "", []string{"0.3"}, false, policy.Policy{}, "the peer speaks only 0.3, below the floor"},
		{user, a2a, "1.1", []string{"1.1"}, false, policy.Policy{}, "1.1 is not offered (hypothetical: A2A has no 1.1 release)"},
		{user, mcp, "", []string{"2026-07-28"}, false, policy.Policy{}, "named nothing: the preferred revision, which the peer speaks"},
		{user, mcp, "", []string{"2025-11-25"}, false, policy.Policy{}, "the peer speaks only 2025-11-25: an authenticated caller may have it"},
		{nil, mcp, "2025-11-25", []string{"2025-11-25"}, false, policy.Policy{}, "an anonymous caller never gets less than preferred (RFC 0175 §D.1)"},
		{nil, mcp, "2025-11-25", []string{"2025-11-25"}, true, policy.Policy{}, "the same, in a legacy initialize: the host answers with its preferred revision"},
		{user, mcp, "2025-11-25", []string{"2025-11-25"}, false, deny, "authenticated, but this host's policy denies every downgrade"},
		{user, mcp, "2025-06-18", []string{"2025-06-18"}, true, policy.Policy{}, "below the floor: refused even where a counter-offer is allowed"},
	}

	fmt.Fprint(stdout, demoIntro, "\n")
	for _, p := range set.Protocols() {
		a, _ := set.Lookup(p)
		fmt.Fprintf(stdout, "%s: the host offers %s, preferred %s, floor %s.\n", strings.ToUpper(string(p)),
			strings.Join(a.Versions, " and "), a.Preferred, a.Floor)
		fmt.Fprintln(stdout, protocolNote[p])
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "CALLER\tREQUESTS\tPEER SPEAKS\tCOUNTER-OFFER\tOUTCOME\tVERSION\tRECORD\tRULE\tWHY")
		for _, r := range rows {
			if r.protocol != p {
				continue
			}
			o, e := negotiate.Decide(r.subject, set, negotiate.Offer{
				Protocol: r.protocol, Peer: "https://peer.example", Requested: r.requested,
				PeerVersions: r.peer, CounterOffer: r.counter,
			}, r.policy)
			caller := "authenticated"
			if r.subject == nil {
				caller = "anonymous"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", caller, dash(r.requested),
				strings.Join(r.peer, ","), yesNo(r.counter), o.Kind, dash(o.Version),
				e.Outcome+", "+e.Reason, ruleNumber(o.Rule), r.why)
		}
		tw.Flush()
		fmt.Fprintln(stdout)
	}
	fmt.Fprint(stdout, demoColumns)
	return 0
}

// protocolNote says why each protocol's facet is what it is.
var protocolNote = map[facets.Protocol]string{
	facets.ProtocolA2A: `A2A's releases are 1.0 and the legacy 0.3, which RFC 0175 keeps out of a v2
advertisement: floor = preferred, so no A2A caller is ever served below 1.0.
`,
	facets.ProtocolMCP: `2025-06-18 and older revisions are below the floor. Between floor and preferred,
only an authenticated caller may be served the older revision.
`,
}

// ruleNumber is the README's number of rule, or its name for the rules
// outside the decision.
func ruleNumber(rule negotiate.Rule) string {
	if n, ok := ruleNumbers[rule]; ok {
		return strconv.Itoa(n)
	}
	return string(rule)
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
