package exchange

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// Defaults returns what the adapters' one-call constructors (mcphttp.Handler,
// a2ahttp.Handler) build a Middleware from: a Negotiator for s, which
// must hold the facet of p, under the zero policy, and a sink that
// records every decision through slog.Default() at Info. A facet without
// refreshedAt is dated by the zero facets.Refresher, against the release
// list embedded in the module, which never moves it later than the day
// that list was taken; one whose versions that list does not vouch for
// is an error, naming each finding.
func Defaults(pkg string, s facets.Set, p facets.Protocol) (*negotiate.Negotiator, events.Sink, error) {
	adv, ok := s.Lookup(p)
	if !ok {
		return nil, nil, errors.New(pkg + ": the " + string(p) + " facet is nil")
	}
	if adv.RefreshedAt == "" {
		rep, err := (&facets.Refresher{}).Check(context.Background(), s)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: the facet could not be dated: %w", pkg, err)
		}
		if !slices.Contains(rep.Refreshed, p) {
			return nil, nil, fmt.Errorf("%s: the module's release list does not vouch for the %s facet: %w", pkg, p, errors.Join(violations(rep.Findings)...))
		}
		s = rep.Set
	}
	n, err := negotiate.Compile(s, policy.Policy{})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", pkg, err)
	}
	return n, events.NewSlogSink(slog.Default().Handler(), slog.LevelInfo), nil
}

func violations(vs []facets.Violation) []error {
	errs := make([]error, len(vs))
	for i := range vs {
		errs[i] = &vs[i]
	}
	return errs
}
