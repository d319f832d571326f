package negotiate

import (
	"cmp"
	"context"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/policy"
)

// Subject is the v2 caller identity; see [policy.Subject].
type Subject = policy.Subject

// Offer is what the requesting side put on the table.
type Offer struct {
	// Protocol is the protocol being negotiated, a2a or mcp.
	Protocol facets.Protocol `json:"protocol,omitzero"`
	// Peer is the peer's URL. Only the SHA-256 of its origin is kept; it
	// may be empty when the peer is not known by URL (most inbound requests).
	Peer string `json:"peer,omitzero"`
	// Requested is the version the requesting side named (A2A-Version,
	// MCP-Protocol-Version, initialize.protocolVersion, or the version a
	// host asks a peer for); empty when it named none.
	Requested string `json:"requested,omitzero"`
	// PeerVersions are the versions the peer speaks: outbound, from its
	// agent card or server/discover; inbound, just the requested version
	// (see [InboundOffer]). Members that are not versions of Protocol are
	// ignored. Empty means the peer offers nothing, which is refused.
	PeerVersions []string `json:"peerVersions"`
	// CounterOffer is true where the protocol lets the host answer with a
	// version of its own instead of refusing (MCP's legacy initialize).
	CounterOffer bool `json:"counterOffer,omitzero"`
}

// InboundOffer returns the Offer of a request that reached the host: the
// peer speaks what it requested, or, when it requested nothing, the host's
// preferred version (the v2 card rule).
func InboundOffer(a facets.Advertised, peer, requested string) Offer {
	return Offer{Protocol: a.Protocol, Peer: peer, Requested: requested, PeerVersions: []string{cmp.Or(requested, a.Preferred)}}
}

// Kind is the shape of an [Outcome]. The zero Kind is Refused, so a zero
// Outcome never reads as a success.
type Kind uint8

// The kinds of outcome.
const (
	Refused Kind = iota
	// Accepted settles at the preferred version, or at the version the
	// requesting side named when that is at or above preferred.
	Accepted
	// Downgraded settles below the preferred version (and at or above the
	// floor), which only an authenticated caller can reach. The audit event
	// records it as accepted, with the version it settled at.
	Downgraded
)

// String returns "accepted", "downgraded" or "refused".
func (k Kind) String() string {
	if k == Accepted {
		return "accepted"
	}
	if k == Downgraded {
		return "downgraded"
	}
	return "refused"
}

// Rule names the rule of the decision (see the package documentation,
// "The decision") that settled an Outcome, in the words the test vectors
// use, such as "floor" or "accept".
type Rule string

// The rules, in the order they are applied. Rule 1, choosing the
// candidate, never settles an outcome by itself.
const (
	// RuleInput: the inputs could not be decided on (an unadvertised
	// protocol, an invalid facet, a peer URL with no origin, or, as an
	// adapter reports it, a request whose headers and body disagree, MCP's
	// -32020, refused before any version is weighed); Outcome.Cause says
	// which. Always a refusal, reason unsupported.
	RuleInput Rule = "input"
	// RuleFloor (rule 2): the candidate is below the floor.
	RuleFloor Rule = "floor"
	// RuleOffered (rule 3): the candidate is not offered by the host.
	RuleOffered Rule = "offered"
	// RuleCommon (rule 4): no version both sides speak lies between the
	// floor and the candidate.
	RuleCommon Rule = "common"
	// RuleAuthenticated (rule 5): the version would be below preferred and
	// the caller is not authenticated.
	RuleAuthenticated Rule = "authenticated"
	// RulePolicy (rule 6): the version would be below preferred and the
	// policy denies that downgrade.
	RulePolicy Rule = "policy"
	// RuleAccept (rule 7): accepted at the chosen version.
	RuleAccept Rule = "accept"
	// RuleAudit: the decision could not be recorded under a policy that
	// requires the audit (policy.Policy.RequireAudit), so it was refused
	// with internal_error whatever it was; see [Negotiator.DecideAndRecord].
	// It is not a rule of the decision, and only recording produces it.
	RuleAudit Rule = "audit"
)

// Outcome is the result of one negotiation.
type Outcome struct {
	// Kind is accepted, downgraded or refused. A downgraded Outcome is
	// recorded as outcome "accepted" (the event's enum has no downgrade),
	// with the version it settled at: compare Version with the preferred
	// one to see it in the record.
	Kind Kind
	// Protocol is the protocol negotiated, the Offer's.
	Protocol facets.Protocol
	// Version is the version settled on; empty when refused.
	Version string
	// Requested is the version the requesting side named, as it named it.
	Requested string
	// Reason is the audit reason: ok when accepted, otherwise why not.
	Reason string
	// Rule is the rule that settled the outcome.
	Rule Rule
	// CounterOffered is true when the host answered with its preferred
	// version because the protocol allowed a counter-offer, instead of
	// refusing at Rule.
	CounterOffered bool
	// Error is the error to answer with when refused: code
	// interop_version_unsupported (HTTP 400), details {protocol, requested,
	// supported, reason}. Nil when accepted.
	Error *wperrors.Error
	// Cause is the host-side reason for a RuleInput refusal, for logs; it
	// is not meant for the peer.
	Cause error
}

// Err returns nil when o settled on a version (Accepted or Downgraded) and
// the refusal error otherwise; a refused Outcome without an Error (such as
// the zero Outcome) still returns an interop_version_unsupported error.
func (o Outcome) Err() error {
	if o.Kind == Accepted || o.Kind == Downgraded {
		return nil
	}
	if o.Error != nil {
		return o.Error
	}
	return wperrors.New(wperrors.InteropVersionUnsupported, "negotiation refused")
}

// Exchange is what an inbound adapter knows of a negotiated request beyond
// its negotiation.decided record, which is content-free by design: the
// method, the outcome as the request was answered (after the wrapped
// server and the audit had their say) and the JSON-RPC error code of the
// answer. mcphttp and a2ahttp hand one to their Options.Observe for each
// request they decide; the OpenTelemetry module's Telemetry.Observe puts it
// on the request's span.
type Exchange struct {
	// Method is the JSON-RPC method of the request ("initialize",
	// "tools/call", "server/discover" for MCP, "SendMessage" for A2A);
	// empty when it carried none the adapter read (an agent card GET, a
	// legacy session's GET or DELETE, a batch).
	Method string
	// Outcome is the outcome the request was answered with: a decision
	// the wrapped server contradicted reads as the refusal the record
	// says, and one whose required audit failed as the audit's refusal.
	Outcome Outcome
	// Code is the JSON-RPC error code of the answer (-32022, -32602,
	// -32009, -32603, …) as the adapter wrote or read it; 0 when the
	// answer carried none, or is no JSON-RPC answer.
	Code int
}

// TraceContext is the hook through which an outbound adapter (mcphttp,
// a2ahttp) asks the host for the W3C trace context of a request it sends:
// it is called with the request's context, once per negotiation request
// and per call a Transport of Connect stamps, and returns the traceparent
// and tracestate values to carry, or "" for none. The adapters check both
// before they send anything (a malformed traceparent is dropped with its
// tracestate, a malformed or longer than 512 bytes tracestate alone) and
// put them in the headers and in the message, as the OpenWOP reference
// host does (RFC 0207). Trace context is correlation only: it never
// confers authority, and never enters the negotiation.decided record. The
// OpenTelemetry module's Propagate has this shape; nil stamps nothing.
type TraceContext func(ctx context.Context) (traceparent, tracestate string)
