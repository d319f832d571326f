package exchange

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// Defaults returns the Negotiator the adapters' one-call constructors
// (mcphttp.Handler, a2ahttp.Handler) build a Middleware from: one for s,
// which must hold the facet of p, under pol.
//
// A refreshedAt the host wrote must lie in its refresh window on pol's
// clock (RFC 0175 §D.4: at most 90 days old, at most a day ahead): a date
// written by hand is the obvious way past dating, and nothing else reads
// it when the host starts, so one outside the window is an error that
// names the fix. An empty one is dated by negotiate.Compile against the
// release list embedded in the module. That list ages with the build:
// when the day it vouches for is already past the window, the host still
// starts (a host that did what the module asks never stops starting
// because its dependency aged), and log is told, at Warn, that its
// discovery is non-conformant until the module is upgraded or a
// facets.Refresher checks it against a mirror of upstream.
func Defaults(pkg string, s facets.Set, p facets.Protocol, pol policy.Policy, log *slog.Logger) (*negotiate.Negotiator, error) {
	adv, ok := s.Lookup(p)
	if !ok {
		return nil, errors.New(pkg + ": the " + string(p) + " facet is nil")
	}
	now := pol.Time()
	if adv.RefreshedAt != "" {
		if err := facets.CheckRefresh(adv, now); err != nil {
			return nil, fmt.Errorf("%s: %w; %s", pkg, err, refreshFix)
		}
	}
	n, err := negotiate.Compile(s, pol)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pkg, err)
	}
	if adv.RefreshedAt == "" {
		dated, _ := n.Facets().Lookup(p)
		if err := facets.CheckRefresh(dated, now); err != nil {
			if log == nil {
				log = slog.Default()
			}
			log.LogAttrs(context.Background(), slog.LevelWarn,
				"wopneg: the release list embedded in the module is older than the refresh window, so the facet it dated is non-conformant (RFC 0175 §D.4): upgrade the module, or run a facets.Refresher against a mirror of upstream's list",
				slog.String("protocol", string(p)), slog.String("refreshedAt", dated.RefreshedAt),
				slog.Time("closed", mustDate(dated.RefreshedAt).Add(facets.RefreshWindow)))
		}
	}
	return n, nil
}

// refreshFix is what to do about a refreshedAt outside its window.
const refreshFix = "write the day the facet's versions were last checked against upstream, or leave refreshedAt empty and it is dated from the release list embedded in the module"

// Ahead returns an error naming the fix when adv's refreshedAt lies more
// than a day after now, and nil otherwise. Dating never moves refreshedAt
// past the day of the check, so such a date was written by hand; a stale
// one may be the embedded release list's own, which must not stop a host,
// so Ahead leaves it alone.
func Ahead(pkg string, adv facets.Advertised, now time.Time) error {
	err := facets.CheckRefresh(adv, now)
	var v *facets.Violation
	if errors.As(err, &v) && v.Rule == "refresh-future" {
		return fmt.Errorf("%s: %w; %s", pkg, err, refreshFix)
	}
	return nil
}

// Caller is the caller function of a one-call constructor that was given
// options options (at most one set) and the caller both as its own
// argument and as the options' Subject: the one that was given, since
// giving both is ambiguous and giving more than one set of options is too.
func Caller(pkg string, options int, caller, subject func(*http.Request) *negotiate.Subject) (func(*http.Request) *negotiate.Subject, error) {
	switch {
	case options > 1:
		return nil, fmt.Errorf("%s: Handler takes at most one HandlerOptions, got %d", pkg, options)
	case caller != nil && subject != nil:
		return nil, errors.New(pkg + ": the caller is given twice, as Handler's caller and as Options.Subject; give one")
	case subject != nil:
		return subject, nil
	}
	return caller, nil
}

// DefaultSink is the sink of a one-call constructor given none: every
// decision through slog.Default() at Info.
func DefaultSink() events.Sink {
	return events.NewSlogSink(slog.Default().Handler(), slog.LevelInfo)
}

// mustDate reads a refreshedAt that Compile accepted.
func mustDate(s string) time.Time {
	t, _ := time.Parse(time.DateOnly, s)
	return t
}
