// Package negotiatetest is a fixtures kit for hosts built on negotiate, in
// the spirit of net/http/httptest and testing/slogtest. It has three
// checks, each run from a host's own tests:
//
//   - [RunWire] drives the host's own http.Handler — its authentication,
//     router and SDK in front, the module's middleware inside — with the
//     A2A and MCP requests of the wire vectors, and checks the answer on
//     the wire (HTTP status, JSON-RPC error code, version header), that
//     every request it accepts is served, and the negotiation.decided
//     event the host recorded; [WireOptions] says which protocols the
//     host serves, at which paths, the bearer token it accepts, and the
//     facets it advertises, from which the vectors are then derived;
//   - [Run] runs the decision vectors (tables A and C of the conformance
//     digest, every rule of the decision from both sides of its boundary,
//     counter-offers, the refresh SLA, peer origin digests and Subjects)
//     against a function shaped like [negotiate.Decide], for a host that
//     wraps the decision itself;
//   - [TestSink] checks that a custom events.Sink keeps the Sink contract,
//     as testing/slogtest checks a slog.Handler.
//
// [Recorder] is an in-memory events.Sink that numbers run events as a
// store does and can be told to fail, so that a test can check a host
// fails closed.
//
// The vectors are embedded JSON whose format is not part of the API: each
// states what it expects, and one whose expectation is empty is refused
// when it is loaded, never passed. The decision vectors also drive
// `wopneg vectors`, for hosts in other languages.
//
//	func TestNegotiationOnTheWire(t *testing.T) {
//		negotiatetest.RunWire(t, func(set facets.Set, p policy.Policy, sink events.Sink) (http.Handler, error) {
//			return myhost.NewHandler(myhost.Config{Facets: set, Policy: p, Audit: sink,
//				Tokens: map[string]string{"negotiatetest": "kit-user"}})
//		})
//	}
package negotiatetest

import (
	"testing"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/vectors"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// Run runs every shipped decision vector against decide, one subtest each.
// decide has the shape of [negotiate.Decide], which a nil decide means: a
// host that wraps the decision (with its own policy plumbing, say) passes
// its wrapper. Each vector states what it expects; a failure names the
// vector, where its expectation comes from, and every difference.
func Run(t *testing.T, decide func(*negotiate.Subject, facets.Set, negotiate.Offer, policy.Policy) (negotiate.Outcome, events.NegotiationDecided)) {
	t.Helper()
	vs, err := vectors.Shipped()
	if err != nil {
		t.Fatalf("negotiatetest: loading the vectors: %v", err)
	}
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			if err := v.Check(decide); err != nil {
				t.Errorf("%s (%s):\n%v", v.Name, v.Source, err)
			}
		})
	}
}
