// Package negotiatetest is a fixtures kit for hosts built on negotiate, in
// the spirit of net/http/httptest: the test vectors of the OpenWOP v2
// negotiation contract as embedded JSON data, and [Run], which runs all of
// them against any decide function from a host's own tests.
//
// A host that wraps the decision (in middleware, or with its own policy
// plumbing) exposes it as a [DecideFunc] and runs:
//
//	func TestNegotiationVectors(t *testing.T) {
//		negotiatetest.Run(t, myhost.Decide)
//	}
//
// The vectors cover tables A and C of the conformance digest, every rule of
// the decision from both sides of its boundary, counter-offers, the refresh
// SLA, peer origin digests and Subjects. Each one states what it expects;
// a vector whose expectation is empty is a failure, never a silent pass.
// The same data drives `wopneg vectors`, for hosts in other languages.
//
// # Sinks
//
// For hosts that record decisions (Negotiator.DecideAndRecord), the kit has
// a [Recorder], an in-memory events.Sink that numbers run events as a store
// does and can be told to fail, so that a test can check a host fails
// closed; and [TestSink], which checks that any custom events.Sink keeps
// the Sink contract, as testing/slogtest checks a slog.Handler:
//
//	func TestMySink(t *testing.T) {
//		negotiatetest.TestSink(t, func(t *testing.T, fault error) (events.Sink, func() []events.Event) {
//			store := mystore.Open(t.TempDir(), fault) // failing with fault when it is set
//			return store, store.ReadAll
//		})
//	}
//
// TestSink checks a run and a host event field for field, per-run
// numbering and order, eight concurrent writers, refusal of invalid events
// and of done contexts, Close, and that a storage fault reaches the caller.
package negotiatetest

import "testing"

// Run runs every shipped vector against decide, one subtest each. A nil
// decide means [negotiate.Decide].
func Run(t *testing.T, decide DecideFunc) {
	t.Helper()
	vs, err := Vectors()
	if err != nil {
		t.Fatalf("loading vectors: %v", err)
	}
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			if err := v.Check(decide); err != nil {
				t.Errorf("%s (%s):\n%v", v.Name, v.Source, err)
			}
		})
	}
}
