package negotiatetest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// A Recorder stands in for a host's event store: it numbers run events as
// a store does, and can be made to fail to check that the host fails
// closed.
func ExampleRecorder() {
	set := facets.Set{A2A: &facets.A2A{
		Versions: []string{"1.1", "1.2"}, PreferredVersion: "1.2", MinimumVersion: "1.1", RefreshedAt: "2026-11-01",
	}}
	p := policy.Policy{RequireAudit: true, Now: func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }}
	n, err := negotiate.Compile(set, p)
	if err != nil {
		panic(err)
	}
	var rec negotiatetest.Recorder
	offer := negotiate.Offer{Protocol: facets.ProtocolA2A, PeerVersions: []string{"1.2"}}
	run := negotiate.Destination{RunID: "acme/run-0123456789abcdef"}
	for range 2 {
		if _, err := n.DecideAndRecord(context.Background(), &rec, run, nil, offer); err != nil {
			panic(err)
		}
	}
	rec.Fail(errors.New("store down"))
	o, _ := n.DecideAndRecord(context.Background(), &rec, run, nil, offer)
	for _, e := range rec.Events() {
		fmt.Println(e.RunID, e.Sequence, e.Payload.Outcome, e.Payload.Version)
	}
	fmt.Println(o.Err())
	// Output:
	// acme/run-0123456789abcdef 0 accepted 1.2
	// acme/run-0123456789abcdef 1 accepted 1.2
	// internal_error: the negotiation could not be recorded; retry
}

// A custom sink runs the conformance kit from its own tests, as a
// slog.Handler runs testing/slogtest.
func ExampleTestSink() {
	_ = func(t *testing.T) {
		negotiatetest.TestSink(t, func(t *testing.T, fault error) (events.Sink, func() []events.Event) {
			// A fresh sink over fresh storage; when fault is set, over
			// storage that fails with it (or return nil to skip that check).
			store := &negotiatetest.Recorder{} // stands for the host's own store
			if fault != nil {
				store.Fail(fault)
			}
			return events.SinkFunc(store.Emit), store.Events
		})
	}
}
