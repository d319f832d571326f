// Package negotiate decides which A2A or MCP version a host speaks with a
// peer, as OpenWOP v2 requires (RFC 0175 §D, spec/v2/core/interop.md), and
// produces the negotiation.decided payload that records the decision.
//
// [Decide] is a pure function: it takes the caller's [Subject], the
// advertised [facets.Set], the [Offer] on the table and a [policy.Policy],
// and returns an [Outcome] (accepted, downgraded or refused, with the reason,
// the rule that settled it and, when refused, the error to answer with) and
// an [events.NegotiationDecided]. It does no I/O; recording the payload is
// the caller's job, through a sink. [Compile] builds a [Negotiator] that
// gives the same answers for hot paths, and records them
// ([Negotiator.DecideAndRecord]): those are the two ways to decide.
//
// # The decision
//
// With the offered versions V, preferred P and floor F of the facet, the
// version R the requesting side named (possibly none), the versions O the
// peer speaks, and whether the protocol allows a counter-offer:
//
//  1. candidate = R, or P when R is absent. A malformed R is a version the
//     host does not speak: it skips rule 2 and meets rule 3.
//  2. candidate < F: refused, below-floor.
//  3. candidate ∉ V: with a counter-offer, accepted at P; otherwise
//     refused, unsupported.
//  4. chosen = the highest member of V ∩ O with F ≤ chosen ≤ candidate.
//     None: refused, below-floor when every member of O is below F (an
//     empty O included), else unsupported.
//  5. chosen < P and the Subject is not authenticated: with a
//     counter-offer, accepted at P; otherwise refused, unauthenticated.
//  6. chosen < P and the policy denies the downgrade: with a counter-offer,
//     accepted at P; otherwise refused, unsupported (Outcome.Rule is
//     RulePolicy).
//  7. accepted at chosen, reason ok; the Outcome is Downgraded when
//     chosen < P.
//
// Every refusal carries an interop_version_unsupported error (HTTP 400, not
// retriable) with details {protocol, requested, supported, reason}, where
// requested is R, or P when R is absent. Every call yields exactly one
// payload; the peer appears in it only as the SHA-256 digest of its origin.
//
// # Stricter readings
//
// Where the specification is ambiguous this package takes the stricter
// reading:
//
//   - The floor is checked before authentication, as the reference host
//     does: an unauthenticated request below the floor is refused
//     below-floor, not unauthenticated. Either way it is refused.
//   - Authenticated means a present, valid Subject that is anonymous
//     nowhere in its actor chain; the reference host's seam flag has no
//     counterpart. A policy hook may only narrow this.
//   - Members of O that are not versions of the protocol are ignored, as
//     the reference host drops card versions that do not match its
//     pattern; so an O of nothing but malformed versions is below-floor.
//   - A downgrade is recorded as accepted with the version it settled at
//     (the v2 schema and RFC 0242), never as "downgraded"; the Outcome
//     still says Downgraded.
//   - An unadvertised protocol, a facet the decision cannot rely on, or a
//     peer URL without an http(s) or ws(s) origin refuses the exchange
//     (RuleInput) instead of guessing; Outcome.Cause says which.
//   - MRTR: the Nth input_required result is round N; round maxRounds+1 is
//     refused before its retry is sent (see [Rounds]).
//
// # Recording
//
// Every negotiation must be recorded on the host's event log (RFC 0175
// §D.3). [Negotiator.DecideAndRecord] decides and records in one call,
// and emits the event before it returns, as the reference host appends
// before it answers. A host that must see the peer's answer before it
// knows what happened (the adapters record the refusal of a server that
// contradicts the decision) decides with [Negotiator.Decide] and records
// that one decision with [Negotiator.Record], never deciding twice. Where the event goes is the
// caller's choice, through a [Destination]: a run's log when the exchange
// happens in a run (or in the audit run the reference host opens per
// exchange), otherwise a durable host event (RFC 0242 §B).
//
// A failure to record is never swallowed. It comes back as an
// [*AuditError] holding the outcome the decision reached and the event
// that was not recorded. When the policy requires the audit
// (policy.Policy.RequireAudit), the outcome is then refused with
// internal_error (HTTP 500, retriable) by [RuleAudit], whatever the
// decision was: the host fails closed, and answers nothing authoritative
// about an exchange it has no record of. Without that policy the outcome
// stands and the error is returned beside it. A drop in an asynchronous
// sink, a canceled context, a nil sink, an invalid destination and a
// panicking sink are failures to record like any other.
package negotiate
