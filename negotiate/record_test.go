package negotiate_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// The recording tests use their own fixtures, so that they do not depend
// on the decision tests' helpers.

var recNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

const recRun = "acme/audit-0123456789abcdef"

func recSet() facets.Set {
	return facets.Set{A2A: &facets.A2A{
		Versions: []string{"1.0", "1.1", "1.2"}, PreferredVersion: "1.2", MinimumVersion: "1.1", RefreshedAt: "2026-11-01",
	}}
}

func recPolicy(requireAudit bool) policy.Policy {
	return policy.Policy{RequireAudit: requireAudit, Now: func() time.Time { return recNow }}
}

func recUser() *negotiate.Subject {
	return &negotiate.Subject{Issuer: "https://idp.example", SubjectID: "u-42", Tenant: "acme", Lane: policy.LaneOIDC, Kind: policy.KindUser}
}

// recDowngrade is an authenticated downgrade to 1.1: accepted.
func recDowngrade() negotiate.Offer {
	return negotiate.Offer{Protocol: facets.ProtocolA2A, Peer: "https://peer.example/a2a", PeerVersions: []string{"1.1"}}
}

// recordBoth compiles recSet under p and records one decision.
func recordOnce(t *testing.T, sink events.Sink, dest negotiate.Destination, offer negotiate.Offer, p policy.Policy) (negotiate.Outcome, error) {
	t.Helper()
	return decideAndRecord(t, context.Background(), sink, dest, recUser(), recSet(), offer, p)
}

// decideAndRecord compiles set under p and decides and records one offer.
func decideAndRecord(t *testing.T, ctx context.Context, sink events.Sink, dest negotiate.Destination, subject *negotiate.Subject, set facets.Set, offer negotiate.Offer, p policy.Policy) (negotiate.Outcome, error) {
	t.Helper()
	n, err := negotiate.Compile(set, p)
	if err != nil {
		t.Fatal(err)
	}
	return n.DecideAndRecord(ctx, sink, dest, subject, offer)
}

func TestDecideAndRecordWritesARunEvent(t *testing.T) {
	rec := &negotiatetest.Recorder{}
	n, err := negotiate.Compile(recSet(), recPolicy(true))
	if err != nil {
		t.Fatal(err)
	}
	var o negotiate.Outcome
	for range 2 {
		if o, err = n.DecideAndRecord(context.Background(), rec, negotiate.Destination{RunID: recRun}, recUser(), recDowngrade()); err != nil {
			t.Fatal(err)
		}
	}
	if o.Kind != negotiate.Downgraded || o.Version != "1.1" {
		t.Errorf("outcome %v %q, want downgraded to 1.1", o.Kind, o.Version)
	}
	// Recorded before the call returned: the recorder is synchronous.
	got := rec.Events()
	if len(got) != 2 {
		t.Fatalf("recorded %d events, want one per call", len(got))
	}
	_, want := negotiate.Decide(recUser(), recSet(), recDowngrade(), recPolicy(true))
	for i, e := range got {
		if e.RunID != recRun || e.SchemaVersion != 1 {
			t.Errorf("event %d: run %q schemaVersion %d, want a run event on %s", i, e.RunID, e.SchemaVersion, recRun)
		}
		if !e.HasSequence || e.Sequence != int64(i) {
			t.Errorf("event %d has sequence %d (%t)", i, e.Sequence, e.HasSequence)
		}
		if e.Payload != want || !e.Time.Equal(want.At) {
			t.Errorf("event %d payload %+v at %v, want the decision's %+v", i, e.Payload, e.Time, want)
		}
	}
}

func TestDecideAndRecordWritesAHostEventWhenThereIsNoRun(t *testing.T) {
	rec := &negotiatetest.Recorder{}
	if _, err := recordOnce(t, rec, negotiate.Destination{WorkspaceID: "ws-9"}, recDowngrade(), recPolicy(false)); err != nil {
		t.Fatal(err)
	}
	for _, e := range rec.Events() {
		if e.RunID != "" || e.WorkspaceID != "ws-9" {
			t.Errorf("event %+v, want a host event in ws-9", e)
		}
	}
}

// Under RequireAudit, an outcome whose event was not recorded is refused
// with internal_error, and what the decision would have been stays
// reachable.
func TestDecideAndRecordFailsClosed(t *testing.T) {
	down := errors.New("event store down")
	failing := &negotiatetest.Recorder{}
	failing.Fail(down)
	_, decided := negotiate.Decide(recUser(), recSet(), recDowngrade(), recPolicy(true))
	cases := []struct {
		name string
		sink events.Sink
		dest negotiate.Destination
		ctx  context.Context
		want error
	}{
		{"sink fails", failing, negotiate.Destination{RunID: recRun}, context.Background(), down},
		{"nil sink", nil, negotiate.Destination{}, context.Background(), events.ErrClosed},
		{"sink panics", events.SinkFunc(func(context.Context, events.Event) error { panic("bug") }), negotiate.Destination{}, context.Background(), nil},
		{"context canceled", &negotiatetest.Recorder{}, negotiate.Destination{}, recCanceled(), context.Canceled},
		{"invalid run id", &negotiatetest.Recorder{}, negotiate.Destination{RunID: "acme"}, context.Background(), errInvalidEvent},
		{"run with a workspace", &negotiatetest.Recorder{}, negotiate.Destination{RunID: recRun, WorkspaceID: "ws"}, context.Background(), errInvalidEvent},
	}
	for _, c := range cases {
		o, err := decideAndRecord(t, c.ctx, c.sink, c.dest, recUser(), recSet(), recDowngrade(), recPolicy(true))
		var ae *negotiate.AuditError
		if !errors.As(err, &ae) {
			t.Errorf("%s: error %v, want an *AuditError", c.name, err)
			continue
		}
		if c.want == errInvalidEvent && !errors.As(err, new(*events.FieldError)) || c.want != errInvalidEvent && c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s: error %v does not wrap %v", c.name, err, c.want)
		}
		if ae.Decided.Kind != negotiate.Downgraded || ae.Decided.Version != "1.1" || ae.Event.Payload != decided {
			t.Errorf("%s: AuditError holds %v %q and payload %+v, want the decision's downgrade to 1.1", c.name, ae.Decided.Kind, ae.Decided.Version, ae.Event.Payload)
		}
		if o.Err() == nil || o.Rule != negotiate.RuleAudit || o.Version != "" || o.Cause != error(ae) {
			t.Errorf("%s: outcome %v %q rule %v cause %v, want refused by the audit rule with the AuditError as cause", c.name, o.Kind, o.Version, o.Rule, o.Cause)
		}
		var we *wperrors.Error
		if !errors.As(o.Err(), &we) || we.Code != wperrors.Internal || we.Code.HTTPStatus() != http.StatusInternalServerError || !we.Code.Retriable() {
			t.Errorf("%s: outcome error %v, want internal_error, 500, retriable", c.name, o.Err())
		}
		if we != nil && strings.Contains(we.Message, "down") {
			t.Errorf("%s: the peer-facing message leaks the host's failure: %q", c.name, we.Message)
		}
	}
	var pe *events.PanicError
	if _, err := decideAndRecord(t, context.Background(), cases[2].sink, negotiate.Destination{}, recUser(), recSet(), recDowngrade(), recPolicy(true)); !errors.As(err, &pe) {
		t.Errorf("a panicking sink gave %v, want a PanicError", err)
	}
}

// Record records the decision it is handed, as it was changed after the
// decision (the peer refused the version decided), on the subject's
// tenant, without deciding again; a payload changed into one the schema
// refuses is not recorded, and under RequireAudit the outcome is then the
// audit's refusal.
func TestRecord(t *testing.T) {
	later := recPolicy(true)
	calls := 0
	later.Now = func() time.Time { calls++; return recNow.Add(time.Duration(calls) * time.Hour) }
	n, err := negotiate.Compile(recSet(), later)
	if err != nil {
		t.Fatal(err)
	}
	o, e := n.Decide(recUser(), recDowngrade())
	refused := e
	refused.Outcome, refused.Version, refused.Reason = "refused", "", events.ReasonUnsupported
	rec := &negotiatetest.Recorder{}
	got, err := n.Record(context.Background(), rec, negotiate.Destination{}, recUser(), o, refused)
	if err != nil || got.Kind != negotiate.Downgraded || got.Version != "1.1" {
		t.Fatalf("Record: %v %q, %v; want the outcome handed in, recorded", got.Kind, got.Version, err)
	}
	if evs := rec.Events(); len(evs) != 1 || evs[0].Payload != refused || evs[0].Tenant != "acme" || !evs[0].Time.Equal(e.At) || calls != 1 {
		t.Errorf("recorded %+v after %d decisions; want the changed payload once, at the decision's time, on tenant acme, decided once", evs, calls)
	}
	broken := e
	broken.Outcome = "maybe"
	rec = &negotiatetest.Recorder{}
	got, err = n.Record(context.Background(), rec, negotiate.Destination{}, recUser(), o, broken)
	var ae *negotiate.AuditError
	if !errors.As(err, &ae) || !errors.As(err, new(*events.FieldError)) || ae.Decided.Version != "1.1" || got.Rule != negotiate.RuleAudit || len(rec.Events()) != 0 {
		t.Errorf("an invalid payload: %v %v, %d recorded; want an AuditError of its field, the audit's refusal, nothing recorded", got.Rule, err, len(rec.Events()))
	}
}

// A refusal that cannot be recorded is refused with internal_error too.
func TestDecideAndRecordFailsClosedOnRefusals(t *testing.T) {
	failing := &negotiatetest.Recorder{}
	failing.Fail(errors.New("down"))
	below := negotiate.Offer{Protocol: facets.ProtocolA2A, Requested: "1.0", PeerVersions: []string{"1.0"}}
	o, err := decideAndRecord(t, context.Background(), failing, negotiate.Destination{}, recUser(), recSet(), below, recPolicy(true))
	var ae *negotiate.AuditError
	if !errors.As(err, &ae) || ae.Decided.Rule != negotiate.RuleFloor {
		t.Fatalf("error %v, want an AuditError holding the below-floor refusal", err)
	}
	if !errors.Is(o.Err(), wperrors.Internal) {
		t.Errorf("outcome error %v, want internal_error", o.Err())
	}
}

// Without RequireAudit the outcome stands and the failure comes back
// beside it.
func TestDecideAndRecordReturnsTheFailureBesideTheOutcome(t *testing.T) {
	down := errors.New("event store down")
	failing := &negotiatetest.Recorder{}
	failing.Fail(down)
	o, err := recordOnce(t, failing, negotiate.Destination{RunID: recRun}, recDowngrade(), recPolicy(false))
	if !errors.Is(err, down) {
		t.Errorf("error %v, want the sink's failure", err)
	}
	if o.Kind != negotiate.Downgraded || o.Version != "1.1" || o.Err() != nil {
		t.Errorf("outcome %v %q (%v), want the downgrade to stand", o.Kind, o.Version, o.Err())
	}
}

// A dropped event in an asynchronous sink is a failure to record, and a
// host that requires the audit fails closed on it.
func TestDecideAndRecordFailsClosedOnADrop(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	store := events.SinkFunc(func(context.Context, events.Event) error {
		arrived <- struct{}{}
		<-release
		return nil
	})
	// Room for the event being recorded and one more.
	a := events.NewAsync(store, events.AsyncOptions{Buffer: 2, Drop: true})
	ctx := context.Background()
	dest := negotiate.Destination{}
	if _, err := decideAndRecord(t, ctx, a, dest, recUser(), recSet(), recDowngrade(), recPolicy(true)); err != nil {
		t.Fatal(err)
	}
	<-arrived // the recording goroutine holds the first event in its slot
	if _, err := decideAndRecord(t, ctx, a, dest, recUser(), recSet(), recDowngrade(), recPolicy(true)); err != nil {
		t.Fatal(err)
	}
	o, err := decideAndRecord(t, ctx, a, dest, recUser(), recSet(), recDowngrade(), recPolicy(true))
	if !errors.Is(err, events.ErrDropped) || o.Err() == nil || o.Rule != negotiate.RuleAudit {
		t.Errorf("third decision: %v %v (%v), want refused by the audit rule for ErrDropped", o.Kind, o.Rule, err)
	}
	close(release)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestDestinationEvent(t *testing.T) {
	_, payload := negotiate.Decide(recUser(), recSet(), recDowngrade(), recPolicy(false))
	e, err := negotiate.Destination{RunID: "bad"}.Event(payload)
	var fe *events.FieldError
	if !errors.As(err, &fe) || fe.Field != "runId" {
		t.Errorf("Event with a bad run id: %v, want a runId error", err)
	}
	if e.Payload != payload || e.ID == "" {
		t.Error("the invalid event was not returned for the log")
	}
}

func TestRuleAuditName(t *testing.T) {
	if negotiate.RuleAudit != "audit" {
		t.Errorf("RuleAudit = %q", negotiate.RuleAudit)
	}
}

func recCanceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// RequiresAudit is the compiled policy's RequireAudit, and an AuditError
// says what was not recorded and why.
func TestRequiresAuditAndAuditErrorText(t *testing.T) {
	for _, want := range []bool{false, true} {
		n, err := negotiate.Compile(recSet(), recPolicy(want))
		if err != nil {
			t.Fatal(err)
		}
		if got := n.RequiresAudit(); got != want {
			t.Errorf("RequireAudit %v: RequiresAudit() = %v", want, got)
		}
	}
	failing := &negotiatetest.Recorder{}
	failing.Fail(errors.New("event store down"))
	_, err := recordOnce(t, failing, negotiate.Destination{}, recDowngrade(), recPolicy(false))
	if got, want := fmt.Sprint(err), "negotiate: negotiation.decided was not recorded: event store down"; got != want {
		t.Errorf("AuditError = %q, want %q", got, want)
	}
}

// errInvalidEvent stands, in a table, for any *events.FieldError.
var errInvalidEvent = errors.New("an invalid event")
