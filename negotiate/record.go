package negotiate

import (
	"context"
	"runtime/debug"
	"strings"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/policy"
)

// Destination says where the negotiation.decided event of a decision is
// written: that choice is the host's, because only the host knows whether
// the exchange happens inside a run. The zero Destination is a durable host
// event with no workspace (RFC 0242 §B), the record of an exchange outside
// any run, such as an inbound card fetch or MCP request.
type Destination struct {
	// RunID puts the event on that run's log as a run event, as a host does
	// for a negotiation inside a run or for the audit run the reference
	// host opens per exchange. It is tenant-bound: [anon:]tenant/id.
	RunID string
	// WorkspaceID names the workspace of a host event; it must be empty
	// when RunID is set.
	WorkspaceID string
}

// event sets *e to the event that records payload at d, with a fresh
// event id and the payload's time as its timestamp, and returns the
// [*events.FieldError]s of what is wrong with it, if anything. The event
// is set even when it is invalid, so that a failure to record it can still
// show what it was. It writes through pointers, as [Negotiator.Record]'s
// helpers all do: a record runs deep in a server's answer, and each copy
// of an event passed by value is stack that every request must have.
func (d *Destination) event(e *events.Event, payload *events.NegotiationDecided) (err error) {
	if d.RunID != "" {
		return d.runEvent(e, payload)
	}
	*e, err = events.NewHostEvent(d.WorkspaceID, *payload)
	return err
}

// runEvent is event at a run, in a frame of its own: event's frame holds
// one event as it is made, not one for each kind.
func (d *Destination) runEvent(e *events.Event, payload *events.NegotiationDecided) (err error) {
	*e, err = events.NewRunEvent(d.RunID, *payload)
	if d.WorkspaceID != "" {
		e.WorkspaceID = d.WorkspaceID // refused by Validate: a run event has no workspace
		err = e.Validate()
	}
	return err
}

// AuditError reports that the negotiation.decided event of a decision was
// not recorded. It carries the outcome the decision reached, so that a host
// whose policy turned it into an internal_error refusal can still log what
// it would have been, and the event that was not recorded.
type AuditError struct {
	// Decided is the outcome of the decision itself, before recording.
	Decided Outcome
	// Event is the event that was not recorded.
	Event events.Event
	// Err is why: the sink's error, an invalid [Destination], or a
	// [*events.PanicError] from a sink that panicked.
	Err error
}

// Error says the decision was not recorded, and why.
func (e *AuditError) Error() string {
	return "negotiate: negotiation.decided was not recorded: " + e.Err.Error()
}

// Unwrap returns Err.
func (e *AuditError) Unwrap() error { return e.Err }

// DecideAndRecord decides as [Negotiator.Decide] does and records the
// decision's event at dest through sink before it returns, as the reference
// host appends the event before it answers. The event is a run event when
// dest names a run, and a durable host event otherwise.
//
// When the event is recorded it returns the outcome and nil. When it is not
// (the sink failed, refused, panicked or is nil, ctx is done, or dest is
// invalid) it returns an [*AuditError] holding the outcome the decision
// reached, and then:
//
//   - if n's policy sets RequireAudit, the outcome is refused with
//     internal_error (HTTP 500, retriable), [RuleAudit], and the
//     AuditError as its Cause, whatever the decision was: a host that
//     must keep a record of every negotiation answers nothing authoritative
//     about one it has no record of, and tells the peer to come back;
//   - otherwise the outcome stands and the error is returned beside it, for
//     the host to log or act on; it is never swallowed.
func (n *Negotiator) DecideAndRecord(ctx context.Context, sink events.Sink, dest Destination, subject *Subject, offer Offer) (Outcome, error) {
	o, payload := n.Decide(subject, offer)
	return n.Record(ctx, sink, dest, subject, o, payload)
}

// Record records a decision n made earlier for subject: o and payload are
// what [Negotiator.Decide] returned, and payload may since have been
// changed to say what the peer then did (an adapter whose server refused
// the version decided records that refusal). It is the second half of
// DecideAndRecord, for a host that must see the peer's answer before it
// knows what to record, and it treats a failure to record as
// DecideAndRecord does: under RequireAudit the outcome becomes a refusal.
// The event is validated as any other, so a payload changed into one that
// breaks the schema is not recorded.
func (n *Negotiator) Record(ctx context.Context, sink events.Sink, dest Destination, subject *Subject, o Outcome, payload events.NegotiationDecided) (Outcome, error) {
	ae := n.record(ctx, sink, &dest, subject, &o, &payload)
	if ae == nil {
		return o, nil
	}
	if !n.policy.RequireAudit {
		return o, ae
	}
	return auditRefusal(&o, ae), ae
}

// record records payload, and returns the *AuditError of an event that
// was not recorded.
func (n *Negotiator) record(ctx context.Context, sink events.Sink, dest *Destination, subject *Subject, o *Outcome, payload *events.NegotiationDecided) *AuditError {
	var e events.Event
	err := dest.event(&e, payload)
	e.Tenant = tenantOf(subject, n.policy)
	if e.RunID != "" {
		e.Tenant = runTenant(e.RunID)
	}
	if err == nil {
		err = emit(ctx, sink, &e)
	}
	if err == nil {
		return nil
	}
	return &AuditError{Decided: *o, Event: e, Err: err}
}

// auditRefusal is the outcome of o when its record failed (ae) under
// RequireAudit.
func auditRefusal(o *Outcome, ae *AuditError) Outcome {
	return Outcome{
		Kind:      Refused,
		Protocol:  o.Protocol,
		Requested: o.Requested,
		Rule:      RuleAudit,
		Error:     wperrors.New(wperrors.Internal, "the negotiation could not be recorded; retry"),
		Cause:     ae,
	}
}

// emit calls sink.Emit. A nil sink is [events.ErrClosed] and a panic is an
// [*events.PanicError], so that a custom sink cannot take the request down
// or make a required audit pass.
func emit(ctx context.Context, sink events.Sink, e *events.Event) (err error) {
	if sink == nil {
		return events.ErrClosed
	}
	defer func() {
		if r := recover(); r != nil {
			err = &events.PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return sink.Emit(ctx, *e)
}

// tenantOf is the tenant a host event of subject's exchange belongs to:
// the Subject's, when it is authenticated under p, and "" otherwise, so
// that an unauthenticated exchange reaches no subscriber.
func tenantOf(subject *Subject, p policy.Policy) string {
	if !p.IsAuthenticated(subject) {
		return ""
	}
	return subject.Tenant
}

// runTenant is the tenant of a tenant-bound run id, [anon:]tenant/id: its
// first segment, without the anon: mark.
func runTenant(runID string) string {
	tenant, _, _ := strings.Cut(strings.TrimPrefix(runID, "anon:"), "/")
	return tenant
}
