package facets

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"
)

// Defaults of a zero [Refresher].
const (
	// DefaultRefreshInterval is how often Run checks when the host gives no
	// Interval: daily, so that one failed check (upstream unreachable) costs
	// a day of the 90-day window, not the window.
	DefaultRefreshInterval = 24 * time.Hour
	// DefaultRefreshWarning is how long before the window closes a
	// Refresher starts warning: two weeks, time for a person to act.
	DefaultRefreshWarning = 14 * 24 * time.Hour
)

// ErrSchedule is wrapped by the error a [Refresher] returns when its
// Interval or WarnBefore is out of range, so a misconfigured host fails at
// start rather than running with a schedule it did not ask for.
var ErrSchedule = errors.New("refresh schedule out of range")

// Refresher keeps the refreshedAt of a host's facets honest (RFC 0175
// §D.4): it re-evaluates the offered versions against an upstream release
// list, moves refreshedAt to the day of the check when the check passes,
// and warns before the 90-day window closes. The check passes when
// upstream still publishes every offered version. A version upstream has
// superseded but still publishes passes, with a warning: a host whose
// floor is below its preferred version (the posture the authenticated
// downgrade of §D.1 needs) offers an older release on purpose, and it
// must be able to refresh. It never changes what a host offers: dropping
// a superseded version is the host's decision, and the report and the
// log give it what it needs to make it.
//
// The zero Refresher is ready to use: it checks against
// [PublishedReleases] daily, warns 14 days before the window closes, reads
// time.Now and logs nothing. A Refresher must not be changed while Check
// or Run is using it; it may be used by several goroutines at once.
type Refresher struct {
	// Upstream is where the release list comes from; nil means the list
	// embedded in this package.
	Upstream Upstream
	// Interval is the time between two checks of Run; zero means
	// DefaultRefreshInterval. More than RefreshWindow, or negative, is
	// refused with ErrSchedule: a check less often than the window cannot
	// keep it.
	Interval time.Duration
	// WarnBefore is how long before the window closes the report says
	// WindowClosing and the log warns; zero means DefaultRefreshWarning.
	// Negative or more than RefreshWindow is refused with ErrSchedule.
	WarnBefore time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// After waits between checks, as time.After does, which nil means.
	// Tests substitute a channel they control.
	After func(time.Duration) <-chan time.Time
	// Logger receives a record for each finding, each refresh and each
	// window warning; nil means no logging.
	Logger *slog.Logger
}

// Window says how much of the refresh window a facet has left.
type Window int

const (
	// WindowOpen: more than WarnBefore left.
	WindowOpen Window = iota
	// WindowClosing: the window closes within WarnBefore.
	WindowClosing
	// WindowClosed: the window has closed; the advertisement is
	// non-conformant until a check passes.
	WindowClosed
)

// String names the window state as logs and reports show it: "open",
// "closing" or "closed".
func (w Window) String() string {
	switch w {
	case WindowOpen:
		return "open"
	case WindowClosing:
		return "closing"
	case WindowClosed:
		return "closed"
	}
	return fmt.Sprintf("Window(%d)", int(w))
}

// Report is what one check found.
type Report struct {
	// At is when the check ran, by the Refresher's clock.
	At time.Time
	// Set is a copy of the checked facets, sharing no memory with them,
	// with refreshedAt moved to At's UTC date in every facet whose check
	// passed. Nothing else differs.
	Set Set
	// Facets has one entry per advertised facet, a2a first.
	Facets []FacetReport
}

// Passed reports whether every facet's check passed.
func (r Report) Passed() bool {
	return len(r.Facets) > 0 && !slices.ContainsFunc(r.Facets, func(f FacetReport) bool { return !f.Refreshed })
}

// FacetReport is what one check found for one facet.
type FacetReport struct {
	Protocol Protocol
	// Unlisted are the offered versions upstream does not list, in the
	// order offered.
	Unlisted []string
	// Superseded are upstream's entries for the offered versions it has
	// superseded but still publishes, in the order offered. They do not
	// fail the check; they are what the host may want to drop next.
	Superseded []Release
	// Refreshed is true when the check passed: upstream answered and
	// lists every offered version (superseded or not). Then RefreshedAt
	// is the day of the check.
	Refreshed bool
	// RefreshedAt is the facet's refreshedAt after the check.
	RefreshedAt string
	// Closes is the last instant RefreshedAt keeps the facet conformant:
	// refreshedAt at midnight UTC plus RefreshWindow.
	Closes time.Time
	// Window is how Closes stands against the check's time.
	Window Window
	// SLA is [CheckRefresh] of RefreshedAt at the check's time: nil, or a
	// *RefreshError (stale, or more than a day in the future).
	SLA error
}

// Check runs one check of s. s must be valid ([Set.Validate]); if it is
// not, Check returns that error and a Report with only At set. When
// upstream fails, Check returns its error (a [*UpstreamError] from the
// sources in this package) together with a Report in which no facet was
// refreshed, so the window warnings still reach the host. s itself is
// never changed.
func (r *Refresher) Check(ctx context.Context, s Set) (Report, error) {
	warn, err := r.warnBefore()
	if err != nil {
		return Report{}, err
	}
	now := r.now()
	rep := Report{At: now}
	if err := s.Validate(); err != nil {
		return rep, err
	}
	rep.Set = s.Clone()
	upstream := r.Upstream
	if upstream == nil {
		upstream = StaticUpstream(PublishedReleases())
	}
	rel, err := upstream.Releases(ctx)
	if err == nil {
		if verr := rel.Validate(); verr != nil {
			err = &UpstreamError{fmt.Sprintf("%T", upstream), verr}
		}
	}
	if err != nil {
		r.log(ctx, slog.LevelError, "refresh check failed: no upstream release list", slog.String("error", err.Error()))
	}
	today := now.UTC().Format(time.DateOnly)
	for _, p := range s.Protocols() {
		adv, _ := rep.Set.Lookup(p)
		fr := FacetReport{Protocol: p}
		if err == nil {
			for _, v := range adv.Versions {
				switch found, ok := rel.Lookup(p, v); {
				case !ok:
					fr.Unlisted = append(fr.Unlisted, v)
					r.log(ctx, slog.LevelWarn, "advertised version not listed upstream",
						slog.String("protocol", string(p)), slog.String("version", v))
				case found.Superseded():
					fr.Superseded = append(fr.Superseded, found)
					r.log(ctx, slog.LevelWarn, "advertised version superseded upstream",
						slog.String("protocol", string(p)), slog.String("version", v),
						slog.String("supersededBy", found.SupersededBy))
				}
			}
			fr.Refreshed = len(fr.Unlisted) == 0
		}
		if fr.Refreshed {
			rep.Set.setRefreshedAt(p, today)
			r.log(ctx, slog.LevelInfo, "refresh check passed",
				slog.String("protocol", string(p)), slog.String("from", adv.RefreshedAt), slog.String("refreshedAt", today))
			adv.RefreshedAt = today
		}
		fr.RefreshedAt = adv.RefreshedAt
		day, _ := ParseDate(adv.RefreshedAt) // valid: s passed Validate
		fr.Closes = day.Add(RefreshWindow)
		fr.SLA = CheckRefresh(adv, now)
		switch left := fr.Closes.Sub(now); {
		case left < 0:
			fr.Window = WindowClosed
			r.log(ctx, slog.LevelError, "refresh window closed: the advertisement is non-conformant",
				slog.String("protocol", string(p)), slog.String("refreshedAt", fr.RefreshedAt), slog.Time("closed", fr.Closes))
		case left <= warn:
			fr.Window = WindowClosing
			r.log(ctx, slog.LevelWarn, "refresh window closing",
				slog.String("protocol", string(p)), slog.String("refreshedAt", fr.RefreshedAt),
				slog.Time("closes", fr.Closes), slog.Duration("left", left))
		}
		rep.Facets = append(rep.Facets, fr)
	}
	return rep, err
}

// Run checks at once and then every Interval until ctx is done, handing
// each report, and the error of its check, to publish (which may be nil
// when the log is enough). current is called before every check for the
// facets to check, so a host that changes its offer is checked on what
// it offers now; publish is where it takes the refreshed copy. Both are
// called on Run's goroutine, one at a time.
//
// Run starts no goroutine. It returns ctx's error when ctx is done,
// without publishing a check that the cancellation cut short, and at once
// with an [ErrSchedule] error when Interval or WarnBefore is out of range.
// So a host runs it with `go`, and cancelling ctx and waiting for Run to
// return leaves nothing of it running.
func (r *Refresher) Run(ctx context.Context, current func() Set, publish func(Report, error)) error {
	every, err := r.interval()
	if err != nil {
		return err
	}
	if _, err := r.warnBefore(); err != nil {
		return err
	}
	if current == nil {
		return errors.New("facets: Refresher.Run needs a current func")
	}
	after := r.After
	if after == nil {
		after = time.After
	}
	for {
		rep, err := r.Check(ctx, current())
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if publish != nil {
			publish(rep, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-after(every):
		}
	}
}

func (r *Refresher) now() time.Time {
	if r.Now == nil {
		return time.Now()
	}
	return r.Now()
}

func (r *Refresher) interval() (time.Duration, error) {
	switch {
	case r.Interval == 0:
		return DefaultRefreshInterval, nil
	case r.Interval < 0 || r.Interval > RefreshWindow:
		return 0, fmt.Errorf("facets: Refresher.Interval %v: %w (want more than 0 and at most 90 days)", r.Interval, ErrSchedule)
	}
	return r.Interval, nil
}

func (r *Refresher) warnBefore() (time.Duration, error) {
	switch {
	case r.WarnBefore == 0:
		return DefaultRefreshWarning, nil
	case r.WarnBefore < 0 || r.WarnBefore > RefreshWindow:
		return 0, fmt.Errorf("facets: Refresher.WarnBefore %v: %w (want more than 0 and at most 90 days)", r.WarnBefore, ErrSchedule)
	}
	return r.WarnBefore, nil
}

func (r *Refresher) log(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr) {
	if r.Logger != nil {
		r.Logger.LogAttrs(ctx, level, msg, attrs...)
	}
}

// setRefreshedAt sets the refreshedAt of p's facet in s.
func (s Set) setRefreshedAt(p Protocol, day string) {
	switch {
	case p == ProtocolA2A && s.A2A != nil:
		s.A2A.RefreshedAt = day
	case p == ProtocolMCP && s.MCP != nil:
		s.MCP.RefreshedAt = day
	}
}
