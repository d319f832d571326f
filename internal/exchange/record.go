package exchange

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
)

// Recorder records the decisions of one place exchanges happen. It holds
// the rules of the record that every place shares, so that none keeps a
// copy of its own:
//
//   - a record is written with the exchange's context values but never its
//     cancellation: the decision happened whether or not the client is
//     still connected or the caller still waiting, and a record that
//     depended on them would vanish with a hang-up;
//   - an event that was not recorded is logged, content-free, only while
//     the audit is not required: under RequireAudit the refusal the host
//     answers is its record;
//   - a server's or peer's refusal of a version the decision accepted is
//     recorded as that decision changed to the refusal (Contradicted).
type Recorder struct {
	// Pkg names the package in log lines and errors.
	Pkg string
	// N decides and records.
	N *negotiate.Negotiator
	// Sink receives the events.
	Sink events.Sink
	// Log receives the line of an event that was not recorded, and of a
	// negotiation that reached no decision; nil is slog.Default().
	Log *slog.Logger
}

// Record records o, decided for subject, with its event payload at dest.
// It returns the outcome that stands, which under RequireAudit is the
// audit's refusal when the event was not recorded, and the error of a
// record that failed.
// It takes the outcome and the event by pointer, as the rest of the
// record's path does (see "The record runs deep" in the package doc).
func (r *Recorder) Record(ctx context.Context, dest negotiate.Destination, subject *negotiate.Subject, o *negotiate.Outcome, payload *events.NegotiationDecided) (negotiate.Outcome, error) {
	ctx = context.WithoutCancel(ctx)
	stands, err := r.N.Record(ctx, r.Sink, dest, subject, *o, *payload)
	if err != nil && !r.N.RequiresAudit() {
		r.unrecorded(ctx, o, err)
	}
	return stands, err
}

// unrecorded logs the line of o's event, which was not recorded for err,
// in a frame of its own (the record runs deep).
func (r *Recorder) unrecorded(ctx context.Context, o *negotiate.Outcome, err error) {
	r.logger().LogAttrs(ctx, slog.LevelError, r.Pkg+": negotiation.decided was not recorded",
		slog.String("protocol", string(o.Protocol)),
		slog.String("requested", Bounded(o.Requested)),
		slog.String("decided", o.Kind.String()),
		slog.String("version", o.Version),
		slog.Any("error", err))
}

// DecideAndRecord decides offer for subject and records it at dest.
func (r *Recorder) DecideAndRecord(ctx context.Context, dest negotiate.Destination, subject *negotiate.Subject, offer negotiate.Offer) (negotiate.Outcome, error) {
	o, payload := r.N.Decide(subject, offer)
	return r.Record(ctx, dest, subject, &o, &payload)
}

// Decided decides offer, a request that reached the host, for subject,
// and records now what must be on the record before anything is served:
// a refusal, and an acceptance the middleware answers itself (own: a card
// it serves), which are what the host answers; and, under RequireAudit, an
// acceptance of a request that may act (acts: a tools/call runs a tool, a
// SendMessage the agent; a discover or an initialize acts on nothing),
// since nothing may act unrecorded. The server's refusal of such a
// recorded acceptance is then recorded in a second event (Settled). It
// sets *o to the outcome that stands (the audit's refusal when a required
// record failed) and *payload to the decision's event, and returns
// whether it was recorded. It writes through pointers, so that the
// caller's frame, under the record, holds no copy of them (the record
// runs deep).
func (r *Recorder) Decided(ctx context.Context, dest negotiate.Destination, subject *negotiate.Subject, offer negotiate.Offer, own, acts bool, o *negotiate.Outcome, payload *events.NegotiationDecided) (recorded bool) {
	*o, *payload = r.N.Decide(subject, offer)
	if o.Err() == nil && !own && !(acts && r.N.RequiresAudit()) {
		return false
	}
	*o, _ = r.Record(ctx, dest, subject, o, payload)
	return true
}

// Contradicted records that the server or peer refused the version the
// decision o accepted: payload, the decision's event (its time, requested
// version, floor and peer kept), becomes a refusal, and the outcome that
// stands is the decision for a peer that serves none of the host's
// versions, or the audit's refusal when the record failed under
// RequireAudit.
func (r *Recorder) Contradicted(ctx context.Context, dest negotiate.Destination, subject *negotiate.Subject, o *negotiate.Outcome, payload *events.NegotiationDecided) (negotiate.Outcome, error) {
	refusal := *payload
	refusal.Outcome, refusal.Version, refusal.Reason = "refused", "", events.ReasonUnsupported
	refused, _ := r.N.Decide(subject, negotiate.Offer{Protocol: o.Protocol, Requested: o.Requested, PeerVersions: []string{Unserved(o.Protocol)}})
	return r.Record(ctx, dest, subject, &refused, &refusal)
}

// Settled records what the server's answer showed of o, an accepted
// decision, and returns the decision that stands: the refusal, in an
// event of its own, when the answer contradicted o (v is not Served); the
// acceptance when it was not recorded before the handler ran (recorded
// is false); nothing else. Both inbound watchers settle through it, so
// that what a required audit holds is the same for every protocol.
func (r *Recorder) Settled(ctx context.Context, dest negotiate.Destination, subject *negotiate.Subject, o *negotiate.Outcome, payload *events.NegotiationDecided, v Verdict, recorded bool) negotiate.Outcome {
	var stands negotiate.Outcome
	switch {
	case v != Served:
		stands, _ = r.Contradicted(ctx, dest, subject, o, payload)
	case !recorded:
		stands, _ = r.Record(ctx, dest, subject, o, payload)
	default:
		stands = *o
	}
	return stands
}

// Unserved is a version of p no host offers, the offer of a peer that
// serves none of the host's versions.
func Unserved(p facets.Protocol) string {
	if p == facets.ProtocolA2A {
		return "65535.0"
	}
	return "9999-12-31"
}

// NoDecision logs the one line of a negotiation that reached no decision
// and returns err with what was being done. The line is as content-free as
// the record: the protocol, the peer's digest, and why, whose
// *egress.Error names the peer by origin at most ([egress.Where]), never by
// the path or query hosted servers put keys in.
func (r *Recorder) NoDecision(ctx context.Context, p facets.Protocol, peerURL string, err error) error {
	digest, _ := events.PeerDigest(peerURL)
	r.logger().LogAttrs(ctx, slog.LevelWarn, "negotiation reached no decision",
		slog.String("protocol", string(p)), slog.String("peerDigest", digest), slog.Any("err", err))
	return fmt.Errorf("%s: the negotiation reached no decision: %w", r.Pkg, err)
}

func (r *Recorder) logger() *slog.Logger { return cmp.Or(r.Log, slog.Default()) }

// maxLogged bounds a caller's value written to a log line or handed to
// telemetry.
const maxLogged = 32

// Bounded is s as a log line or telemetry may carry it: at most maxLogged
// bytes, cut at a character boundary and marked "..." when cut.
func Bounded(s string) string {
	if len(s) <= maxLogged {
		return s
	}
	cut := maxLogged
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "..."
}
