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
