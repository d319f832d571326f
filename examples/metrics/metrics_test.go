package metrics

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate/mrtr"
)

var at = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func decided(p facets.Protocol, o string, r string) events.Event {
	d := events.NegotiationDecided{Protocol: p, Outcome: o, Requested: "2025-06-18", Reason: r, Floor: "2025-11-25", At: at}
	if o == "accepted" {
		d.Version = "2025-11-25"
	}
	e, err := events.NewHostEvent("", d)
	if err != nil {
		panic(err)
	}
	return e
}

// Every decision is counted under its labels, recorded or not, and the
// wrapped sink's answer is returned.
func TestDecisions(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	fault := errors.New("audit down")
	var seen int
	s, err := Decisions(reg, events.SinkFunc(func(_ context.Context, e events.Event) error {
		seen++
		if e.Payload.Outcome == "refused" {
			return fault
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		e    events.Event
		want error
	}{
		{decided(facets.ProtocolMCP, "accepted", events.ReasonOK), nil},
		{decided(facets.ProtocolMCP, "accepted", events.ReasonOK), nil},
		{decided(facets.ProtocolMCP, "refused", events.ReasonBelowFloor), fault},
	} {
		if err := s.Emit(ctx, tc.e); !errors.Is(err, tc.want) {
			t.Errorf("Emit = %v, want %v", err, tc.want)
		}
	}
	if seen != 3 {
		t.Errorf("the wrapped sink saw %d events, want 3", seen)
	}
	want := `
# HELP wopneg_decisions_total Negotiation decisions, by protocol, outcome and reason.
# TYPE wopneg_decisions_total counter
wopneg_decisions_total{outcome="accepted",protocol="mcp",reason="ok"} 2
wopneg_decisions_total{outcome="refused",protocol="mcp",reason="below-floor"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "wopneg_decisions_total"); err != nil {
		t.Error(err)
	}
	if _, err := Decisions(reg, s); err == nil {
		t.Error("registering the counter twice succeeded")
	}
}

// The counting sink is durable exactly when the sink it wraps is.
func TestDecisionsIsAsDurableAsItsSink(t *testing.T) {
	durable := events.NewAsync(durableSink{}, events.AsyncOptions{Acknowledge: time.Second})
	defer durable.Close()
	for _, tc := range []struct {
		next events.Sink
		want bool
	}{
		{durable, true},
		{events.NewJSONLines(&strings.Builder{}), false},
		{events.SinkFunc(func(context.Context, events.Event) error { return nil }), false},
	} {
		s, err := Decisions(prometheus.NewRegistry(), tc.next)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.(events.Durable).Durable(); got != tc.want {
			t.Errorf("Decisions over %T: Durable = %v, want %v", tc.next, got, tc.want)
		}
	}
}

// durableSink records nothing, and says it is durable.
type durableSink struct{}

func (durableSink) Emit(context.Context, events.Event) error { return nil }
func (durableSink) Durable() bool                            { return true }

// The audit metrics read the stats at each scrape.
func TestAudit(t *testing.T) {
	for _, withErrors := range []bool{false, true} {
		t.Run(fmt.Sprint("writeErrors=", withErrors), func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			st := events.AsyncStats{Pending: 7, Dropped: 3, Failed: 2, PendingBytes: 4096, Waiting: 4, Unacknowledged: 6, Retries: 8}
			var writeErrors func() uint64
			if withErrors {
				writeErrors = func() uint64 { return 5 }
			}
			if err := Audit(reg, func() events.AsyncStats { return st }, writeErrors); err != nil {
				t.Fatal(err)
			}
			st.Pending = 9 // read at the scrape, not at registration
			want := `
# HELP wopneg_audit_dropped_total Audit events refused for want of room in the buffer.
# TYPE wopneg_audit_dropped_total counter
wopneg_audit_dropped_total 3
# HELP wopneg_audit_failed_total Audit events accepted and then given up on: not written.
# TYPE wopneg_audit_failed_total counter
wopneg_audit_failed_total 2
# HELP wopneg_audit_queue_bytes The size of the audit events accepted and not yet written.
# TYPE wopneg_audit_queue_bytes gauge
wopneg_audit_queue_bytes 4096
# HELP wopneg_audit_queue_depth Audit events accepted and not yet written.
# TYPE wopneg_audit_queue_depth gauge
wopneg_audit_queue_depth 9
# HELP wopneg_audit_retries_total Audit writes tried again because the store was unavailable.
# TYPE wopneg_audit_retries_total counter
wopneg_audit_retries_total 8
# HELP wopneg_audit_unacknowledged_total Requests whose audit event was not written in time, or failed: answered internal_error when the audit is required.
# TYPE wopneg_audit_unacknowledged_total counter
wopneg_audit_unacknowledged_total 6
# HELP wopneg_audit_waiting Requests waiting for room in the audit buffer or for their event to be written.
# TYPE wopneg_audit_waiting gauge
wopneg_audit_waiting 4
`
			names := []string{"wopneg_audit_queue_depth", "wopneg_audit_queue_bytes", "wopneg_audit_waiting", "wopneg_audit_unacknowledged_total",
				"wopneg_audit_retries_total", "wopneg_audit_dropped_total", "wopneg_audit_failed_total", "wopneg_audit_write_errors_total"}
			if withErrors {
				want += `# HELP wopneg_audit_write_errors_total Failed writes of the audit store, retries included.
# TYPE wopneg_audit_write_errors_total counter
wopneg_audit_write_errors_total 5
`
			}
			if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
				t.Error(err)
			}
			if err := Audit(reg, func() events.AsyncStats { return st }, writeErrors); err == nil {
				t.Error("registering the audit metrics twice succeeded")
			}
		})
	}
}

// Each refusal of a Sealer is counted under its kind.
func TestRefusals(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	onRefuse, err := Refusals(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("%w: forgotten", mrtr.ErrReplayed), "replayed"},
		{mrtr.ErrSignature, "signature"},
		{mrtr.ErrExpired, "expired"},
		{mrtr.ErrMalformed, "malformed"},
		{fmt.Errorf("%w: run", mrtr.ErrBinding), "binding"},
		{&wperrors.Error{Code: wperrors.MCPRoundsExceeded}, "round"},
		{mrtr.ErrNonceStoreFull, "store"},
		{errors.New("connection refused"), "store"},
	} {
		if got := refusal(tc.err); got != tc.want {
			t.Errorf("refusal(%v) = %q, want %q", tc.err, got, tc.want)
		}
		onRefuse(tc.err)
	}
	want := `
# HELP wopneg_mrtr_refusals_total MRTR requestStates refused, by kind; replayed is the nonce store's refusal.
# TYPE wopneg_mrtr_refusals_total counter
wopneg_mrtr_refusals_total{reason="binding"} 1
wopneg_mrtr_refusals_total{reason="expired"} 1
wopneg_mrtr_refusals_total{reason="malformed"} 1
wopneg_mrtr_refusals_total{reason="replayed"} 1
wopneg_mrtr_refusals_total{reason="round"} 1
wopneg_mrtr_refusals_total{reason="signature"} 1
wopneg_mrtr_refusals_total{reason="store"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "wopneg_mrtr_refusals_total"); err != nil {
		t.Error(err)
	}
	if _, err := Refusals(reg); err == nil {
		t.Error("registering the counter twice succeeded")
	}
}
