package negotiatetest_test

import (
	"testing"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// TestRun runs the decision vectors against the pure decision (nil), and
// against the compiled Negotiator, which must give the same answers.
func TestRun(t *testing.T) {
	t.Run("Decide", func(t *testing.T) { negotiatetest.Run(t, nil) })
	t.Run("Negotiator", func(t *testing.T) {
		negotiatetest.Run(t, func(s *negotiate.Subject, set facets.Set, o negotiate.Offer, p policy.Policy) (negotiate.Outcome, events.NegotiationDecided) {
			n, err := negotiate.Compile(set, p)
			if err != nil {
				return negotiate.Decide(s, set, o, p)
			}
			return n.Decide(s, o)
		})
	})
}
