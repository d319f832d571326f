package exchange

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// Defaults returns the Negotiator a binding's one-call constructor
// ([Mount], a2agrpc.NewServer) builds its Middleware from: one for s,
// which must hold the facet of p, under pol. An empty refreshedAt is dated
// by negotiate.Compile against the release list embedded in the module;
// the window of the date is [Refreshed]'s, which the Middleware's New
// applies.
func Defaults(pkg string, s facets.Set, p facets.Protocol, pol policy.Policy) (*negotiate.Negotiator, error) {
	if _, ok := s.Lookup(p); !ok {
		return nil, errors.New(pkg + ": the " + string(p) + " facet is nil")
	}
	n, err := negotiate.Compile(s, pol)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pkg, err)
	}
	return n, nil
}

// Starts is what a Middleware's New refuses where the host starts, for
// every binding: [Check] (the Negotiator, its facet of p, the sink, a
// required audit's durable sink), then [Refreshed] (the facet's date).
func Starts(pkg string, n *negotiate.Negotiator, sink events.Sink, p facets.Protocol, log *slog.Logger) (facets.Advertised, error) {
	adv, err := Check(pkg, n, sink, p)
	if err != nil {
		return adv, err
	}
	return adv, Refreshed(pkg, n, p, log)
}

// Refreshed is the rule for the refreshedAt of n's facet of p where a host
// starts (the adapters' New, and so their Handler), on the clock of n's
// policy: it must lie in its refresh window (RFC 0175 §D.4: at most 90
// days old, at most a day ahead), or the error names the fix. A date
// written by hand is the obvious way past dating, and nothing else reads
// it when the host starts.
//
// The one exception is the day the release list embedded in the module
// vouches for, which negotiate.Compile gives an empty refreshedAt, and so
// does a facets.Refresher checking against that list, whoever runs it. It
// ages with the build: when it is already past the window, the host still
// starts (a host that did what the module asks never stops starting
// because its dependency aged), and log (nil: slog.Default()) is told, at
// Warn, that its discovery is non-conformant until the module is upgraded
// or a facets.Refresher checks it against a mirror of upstream.
func Refreshed(pkg string, n *negotiate.Negotiator, p facets.Protocol, log *slog.Logger) error {
	s := n.Facets()
	adv, _ := s.Lookup(p)
	// The decision's record carries the time of the policy's clock.
	_, e := n.Decide(nil, negotiate.InboundOffer(adv, "", adv.Preferred))
	err := facets.CheckRefresh(adv, e.At)
	if err == nil {
		return nil
	}
	if adv.RefreshedAt != listDay(s, p, e.At) {
		return fmt.Errorf("%s: %w; %s", pkg, err, refreshFix)
	}
	dated, _ := time.Parse(time.DateOnly, adv.RefreshedAt) // a date Compile accepted
	cmp.Or(log, slog.Default()).LogAttrs(context.Background(), slog.LevelWarn,
		"wopneg: the release list embedded in the module is older than the refresh window, so the facet it dated is non-conformant (RFC 0175 §D.4): upgrade the module, or run a facets.Refresher against a mirror of upstream's list",
		slog.String("protocol", string(p)), slog.String("refreshedAt", adv.RefreshedAt),
		slog.Time("closed", dated.Add(facets.RefreshWindow)))
	return nil
}

// listDay is the refreshedAt that a check of the facet of p in s against
// the release list embedded in the module gives on now: the day that list
// was taken, or now's when that is earlier; "" when the list does not
// vouch for the facet's versions.
func listDay(s facets.Set, p facets.Protocol, now time.Time) string {
	// A passing check gives the day it vouches for whatever the facet's
	// refreshedAt was.
	rep, err := (&facets.Refresher{Now: func() time.Time { return now }}).Check(context.Background(), s)
	dated, _ := rep.Set.Lookup(p)
	if err != nil || !slices.Contains(rep.Refreshed, p) {
		return ""
	}
	return dated.RefreshedAt
}

// refreshFix is what to do about a refreshedAt outside its window.
const refreshFix = "write the day the facet's versions were last checked against upstream, or leave refreshedAt empty and it is dated from the release list embedded in the module"

// OneCall is what a binding's one-call constructor (mcphttp.Handler,
// a2ahttp.Handler) was given: its facet, the policy and caller it was
// given, how many sets of options, and where in them the caller and the
// sink are, which [Mount] fills in.
type OneCall struct {
	Pkg      string
	Facets   facets.Set
	Protocol facets.Protocol
	Policy   policy.Policy
	Options  int                                     // the sets of options given
	Caller   func(*http.Request) *negotiate.Subject  // the constructor's own argument
	Subject  *func(*http.Request) *negotiate.Subject // the options' caller
	Sink     *events.Sink                            // the options' sink
}

// Mount is the order of every binding's one-call constructor, written
// once: at most one set of options; the caller given once, as the
// constructor's argument or as the options' Subject (giving both is
// ambiguous), and put in the options; a nil sink the [DefaultSink]; the
// facet compiled under the policy ([Defaults]); the Middleware start makes
// of it; server checked by it; and server behind it. Any failure is an
// error, so that a host that cannot serve what its facet advertises does
// not start.
func Mount[M interface {
	Check(context.Context, http.Handler) error
	Wrap(http.Handler) http.Handler
}](c OneCall, server http.Handler, start func(*negotiate.Negotiator) (M, error)) (http.Handler, error) {
	if c.Options > 1 {
		return nil, fmt.Errorf("%s: Handler takes at most one HandlerOptions, got %d", c.Pkg, c.Options)
	}
	if c.Caller != nil && *c.Subject != nil {
		return nil, errors.New(c.Pkg + ": the caller is given twice, as Handler's caller and as Options.Subject; give one")
	}
	if c.Caller != nil {
		*c.Subject = c.Caller
	}
	if *c.Sink == nil {
		*c.Sink = DefaultSink()
	}
	n, err := Defaults(c.Pkg, c.Facets, c.Protocol, c.Policy)
	if err != nil {
		return nil, err
	}
	m, err := start(n)
	if err != nil {
		return nil, err
	}
	if err := m.Check(context.Background(), server); err != nil {
		return nil, err
	}
	return m.Wrap(server), nil
}

// DefaultSink is the sink of a one-call constructor given none: every
// decision through slog.Default() at Info.
func DefaultSink() events.Sink {
	return events.NewSlogSink(slog.Default().Handler(), slog.LevelInfo)
}
