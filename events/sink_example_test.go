package events_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	slogmulti "github.com/samber/slog-multi"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
)

// exampleEvents returns an accepted run event and a refused host event with
// fixed ids, so that the examples' output never changes.
func exampleEvents() (run, host events.Event) {
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	run, err := events.NewRunEvent("acme/audit-0123456789abcdef", events.NegotiationDecided{
		Protocol: facets.ProtocolA2A, Outcome: "accepted", Version: "1.1", Requested: "1.1",
		Reason: events.ReasonOK, Floor: "1.1", At: at,
	})
	if err != nil {
		panic(err)
	}
	host, err = events.NewHostEvent("", events.NegotiationDecided{
		Protocol: facets.ProtocolMCP, Outcome: "refused", Requested: "2025-06-18",
		Reason: events.ReasonBelowFloor, Floor: "2025-11-25", At: at,
	})
	if err != nil {
		panic(err)
	}
	run.ID, host.ID = "evt-run-0000000001", "evt-host-000000001"
	return run, host
}

// The usual pipeline: a bounded buffer off the request path, then the
// store, which numbers run events as it writes them, one JSON line each.
func ExampleNewAsync() {
	sink := events.NewAsync(
		events.NewJSONLines(os.Stdout),
		events.AsyncOptions{Buffer: 1024, Drop: true},
	)
	run, host := exampleEvents()
	ctx := context.Background()
	for _, e := range []events.Event{run, host} {
		if err := sink.Emit(ctx, e); err != nil {
			fmt.Println("not recorded:", err) // ErrDropped when the buffer is full
		}
	}
	// Close writes everything accepted and reports the first failure.
	if err := sink.Close(); err != nil {
		fmt.Println(err)
	}
	s := sink.Stats()
	fmt.Printf("emitted %d, accepted %d, dropped %d, recorded %d\n", s.Emitted, s.Accepted, s.Dropped, s.Recorded)
	// Output:
	// {"eventId":"evt-run-0000000001","runId":"acme/audit-0123456789abcdef","type":"negotiation.decided","payload":{"protocol":"a2a","outcome":"accepted","version":"1.1","requested":"1.1","reason":"ok","floor":"1.1","at":"2026-11-29T12:00:00Z"},"timestamp":"2026-11-29T12:00:00Z","sequence":0,"schemaVersion":1}
	// {"eventId":"evt-host-000000001","type":"negotiation.decided","timestamp":"2026-11-29T12:00:00Z","delivery":"durable","payload":{"protocol":"mcp","outcome":"refused","requested":"2025-06-18","reason":"below-floor","floor":"2025-11-25","at":"2026-11-29T12:00:00Z"}}
	// emitted 2, accepted 2, dropped 0, recorded 2
}

// Refusals go to the security log and everything to the audit log, through
// slog-multi's Router; the same sink works over its Fanout and Failover.
func ExampleNewSlogSink() {
	var security, audit bytes.Buffer
	sink := events.NewSlogSink(slogmulti.Router().
		Add(slog.NewTextHandler(&security, nil), slogmulti.AttrValueIs("outcome", "refused")).
		Add(slog.NewTextHandler(&audit, nil)).
		Handler(), nil)
	run, host := exampleEvents()
	for _, e := range []events.Event{withSeq(run, 0), host} {
		if err := sink.Emit(context.Background(), e); err != nil {
			fmt.Println(err)
		}
	}
	fmt.Print("security:\n", security.String(), "audit:\n", audit.String())
	// Output:
	// security:
	// time=2026-11-29T12:00:00.000Z level=INFO msg=negotiation.decided eventId=evt-host-000000001 delivery=durable protocol=mcp outcome=refused requested=2025-06-18 reason=below-floor floor=2025-11-25 at=2026-11-29T12:00:00.000Z
	// audit:
	// time=2026-11-29T12:00:00.000Z level=INFO msg=negotiation.decided eventId=evt-run-0000000001 runId=acme/audit-0123456789abcdef sequence=0 schemaVersion=1 protocol=a2a outcome=accepted version=1.1 requested=1.1 reason=ok floor=1.1 at=2026-11-29T12:00:00.000Z
	// time=2026-11-29T12:00:00.000Z level=INFO msg=negotiation.decided eventId=evt-host-000000001 delivery=durable protocol=mcp outcome=refused requested=2025-06-18 reason=below-floor floor=2025-11-25 at=2026-11-29T12:00:00.000Z
}

// A fan-out reports every store that failed, not just the first.
func ExampleNewFanout() {
	down := events.SinkFunc(func(context.Context, events.Event) error { return fmt.Errorf("disk full") })
	sink := events.NewFanout(events.NewJSONLines(os.Stdout), down)
	run, _ := exampleEvents()
	fmt.Println(sink.Emit(context.Background(), run))
	// Output:
	// {"eventId":"evt-run-0000000001","runId":"acme/audit-0123456789abcdef","type":"negotiation.decided","payload":{"protocol":"a2a","outcome":"accepted","version":"1.1","requested":"1.1","reason":"ok","floor":"1.1","at":"2026-11-29T12:00:00Z"},"timestamp":"2026-11-29T12:00:00Z","sequence":0,"schemaVersion":1}
	// events: fan-out sink 1: disk full
}

// Constructors refuse what the envelope does not allow, naming the field.
func ExampleNewRunEvent() {
	_, err := events.NewRunEvent("audit-0123456789abcdef", events.NegotiationDecided{
		Protocol: facets.ProtocolA2A, Outcome: "refused", Reason: events.ReasonUnsupported,
		At: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC),
	})
	fmt.Println(err)
	// Output:
	// events: runId: "audit-0123456789abcdef" is not [anon:]tenant/id (tenant 1 to 128, id 16 to 128 of [A-Za-z0-9._~-])
}

// store stands for a database: its Emit returns once the event is
// committed, and it says so by being events.Durable. It is down for its
// first write.
type store struct{ writes int }

func (s *store) Emit(_ context.Context, e events.Event) error {
	if s.writes++; s.writes == 1 {
		return fmt.Errorf("connection refused: %w", events.ErrUnavailable)
	}
	fmt.Println("committed", e.ID)
	return nil
}

func (*store) Durable() bool { return true }

// The acknowledged mode, which a host requiring the audit runs: Emit
// returns once the event is committed (the store was down at first, and
// was written to again), at most a second after it was called, and the
// Async is then as durable as its store.
func ExampleAsync_Durable() {
	audit := events.NewAsync(&store{}, events.AsyncOptions{Acknowledge: time.Second})
	defer audit.Close()
	_, host := exampleEvents()
	if err := audit.Emit(context.Background(), host); err != nil {
		fmt.Println("not recorded, answer internal_error:", err)
	} else {
		fmt.Println("acknowledged")
	}
	queued := events.NewAsync(&store{}, events.AsyncOptions{})
	defer queued.Close()
	fmt.Println("acknowledged mode durable:", audit.Durable(), "- queued mode durable:", queued.Durable())
	// Output:
	// committed evt-host-000000001
	// acknowledged
	// acknowledged mode durable: true - queued mode durable: false
}
