// # Recording
//
// Every negotiation must be recorded on the host's event log (RFC 0175
// §D.3). [DecideAndRecord] and [Negotiator.DecideAndRecord] decide and
// record in one call, and emit the event before they return, as the
// reference host appends before it answers. Where the event goes is the
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
