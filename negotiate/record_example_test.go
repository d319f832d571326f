package negotiate_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// A host that must keep a record of every negotiation decides and records
// in one call. When its event store is down, the outcome fails closed with
// internal_error (500, retriable), and the decision it would have been is
// still there for the host's log.
func ExampleNegotiator_DecideAndRecord() {
	set := facets.Set{A2A: &facets.A2A{
		Versions: []string{"1.0", "1.1", "1.2"}, PreferredVersion: "1.2", MinimumVersion: "1.1", RefreshedAt: "2026-11-01",
	}}
	p := policy.Policy{
		RequireAudit: true,
		Now:          func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) },
	}
	n, err := negotiate.Compile(set, p)
	if err != nil {
		panic(err)
	}
	store := &negotiatetest.Recorder{} // a host passes its own sink: a database, events.NewAsync(...)
	offer := negotiate.Offer{Protocol: facets.ProtocolA2A, Peer: "https://peer.example", PeerVersions: []string{"1.2"}}
	run := negotiate.Destination{RunID: "acme/audit-0123456789abcdef"}
	ctx := context.Background()

	outcome, err := n.DecideAndRecord(ctx, store, run, nil, offer)
	e := store.Events()[0]
	fmt.Printf("%s %s (err %v); recorded on %s as sequence %d: %s\n", outcome.Kind, outcome.Version, err, e.RunID, e.Sequence, e.Payload.Outcome)

	store.Fail(errors.New("event store unreachable"))
	outcome, err = n.DecideAndRecord(ctx, store, run, nil, offer)
	var audit *negotiate.AuditError
	if errors.As(err, &audit) {
		fmt.Printf("%s by rule %s: %v\n", outcome.Kind, outcome.Rule, outcome.Err())
		fmt.Printf("it would have been %s %s; %v\n", audit.Decided.Kind, audit.Decided.Version, audit.Err)
	}
	// Output:
	// accepted 1.2 (err <nil>); recorded on acme/audit-0123456789abcdef as sequence 0: accepted
	// refused by rule audit: internal_error: the negotiation could not be recorded; retry
	// it would have been accepted 1.2; event store unreachable
}

// Outside any run, the zero Destination records a durable host event
// (RFC 0242 §B); a run's id puts the event on that run's log.
func ExampleDestination() {
	set := facets.Set{MCP: &facets.MCP{
		Revisions: []string{"2025-11-25", "2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-11-25", RefreshedAt: "2026-11-01",
	}}
	n, err := negotiate.Compile(set, policy.Policy{})
	if err != nil {
		panic(err)
	}
	var store negotiatetest.Recorder
	offer := negotiate.Offer{Protocol: facets.ProtocolMCP, Requested: "2025-06-18", PeerVersions: []string{"2025-06-18"}}
	outcome, err := n.DecideAndRecord(context.Background(), &store, negotiate.Destination{}, nil, offer)
	e := store.Events()[0]
	fmt.Println(outcome.Kind, outcome.Reason, err)
	fmt.Printf("run %q, workspace %q: %s %s\n", e.RunID, e.WorkspaceID, e.Payload.Outcome, e.Payload.Reason)
	// Output:
	// refused below-floor <nil>
	// run "", workspace "": refused below-floor
}

// A host that must see the peer's answer before it knows what happened
// decides first and records that one decision once the peer has answered:
// here the peer refused the version decided, so the record says so.
func ExampleNegotiator_Record() {
	set := facets.Set{A2A: &facets.A2A{
		Versions: []string{"1.0", "1.1", "1.2"}, PreferredVersion: "1.2", MinimumVersion: "1.1", RefreshedAt: "2026-11-01",
	}}
	n, err := negotiate.Compile(set, policy.Policy{})
	if err != nil {
		panic(err)
	}
	var store negotiatetest.Recorder
	outcome, payload := n.Decide(nil, negotiate.Offer{Protocol: facets.ProtocolA2A, Requested: "1.2", PeerVersions: []string{"1.2"}})
	fmt.Println("decided:", outcome.Kind, outcome.Version)

	peerRefused := true // what the peer answered, at 1.2
	if peerRefused {
		payload.Outcome, payload.Version, payload.Reason = "refused", "", events.ReasonUnsupported
	}
	if _, err := n.Record(context.Background(), &store, negotiate.Destination{}, nil, outcome, payload); err != nil {
		panic(err)
	}
	e := store.Events()[0].Payload
	fmt.Println("recorded:", e.Outcome, e.Requested, e.Reason)
	// Output:
	// decided: accepted 1.2
	// recorded: refused 1.2 unsupported
}
