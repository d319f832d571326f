package facets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"
)

// Defaults of a zero [Refresher]: a check a day, so that one failed check
// (upstream unreachable) costs a day of the 90-day window, not the
// window; and warnings from two weeks before the window closes, time for
// a person to act.
const (
	defaultRefreshInterval = 24 * time.Hour
	defaultRefreshWarning  = 14 * 24 * time.Hour
)

// Refresher keeps the refreshedAt of a host's facets honest (RFC 0175
// §D.4): it re-evaluates the offered versions against an upstream release
// list, moves refreshedAt to the day the list vouches for when the check
// passes, and warns before the 90-day window closes. The check of a facet
// passes when upstream still publishes every version it offers. A version
// upstream has superseded but still publishes passes, with a finding: a
// host whose floor is below its preferred version (the posture the
// authenticated downgrade of §D.1 needs) offers an older release on
// purpose, and it must be able to refresh. It never changes what a host
// offers: dropping a superseded version is the host's decision, and the
// report and the log give it what it needs to make it.
//
// refreshedAt says when the versions were last checked against upstream,
// so a check moves it to no later day than its list was taken from
// upstream: a list with a takenAt (the embedded one has it) vouches for
// that day at most, and a list without one (a host's own mirror, read
// from upstream's present) for the day of the check. A check against the
// embedded list therefore leaves a host on an old build of this module
// with refreshedAt at the list's takenAt, however often it runs: the
// window closes 90 days after it, with a warning WarnBefore ahead, as the
// SLA intends. A host stays fresh by upgrading this module, or by running
// a mirror of upstream's list and pointing Upstream at it. A passing
// check sets the day even when refreshedAt was later: a date the check
// cannot vouch for is not kept.
//
// [Refresher.Check] runs one check; a [Handler] runs them on the
// Refresher's schedule and serves what they refreshed.
//
// The zero Refresher is ready to use: it checks against the release list
// embedded in this package (A2A and MCP as taken from upstream on
// 2026-11-29) daily, warns 14 days before the window closes, reads
// time.Now and logs nothing. A Refresher must not be changed while it is
// in use; it may be used by several goroutines at once.
type Refresher struct {
	// Upstream opens the release list to check against, a JSON document
	// `{"takenAt"?: "YYYY-MM-DD", "a2a": [{"version", "published",
	// "supersededBy"?}...], "mcp": [...]}` of at most 1 MiB, read strictly
	// and closed after each check: for a host's own mirror, a func that
	// opens a file or GETs a URL. A mirror that copies upstream's list as
	// it is read leaves takenAt out; one synced by a job writes the day of
	// its last sync, and a check dates no later than that. Every release's
	// published must be on or before takenAt. A list that does not parse
	// fails the check. Nil means the list embedded in this package.
	Upstream func(ctx context.Context) (io.ReadCloser, error)
	// Interval is the time between two checks of a Handler's Run; zero
	// means daily. More than RefreshWindow, or negative, is refused: a
	// check less often than the window cannot keep it.
	Interval time.Duration
	// WarnBefore is how long before the window closes a report carries a
	// "refresh-closing" finding and the log warns; zero means 14 days.
	// Negative or more than RefreshWindow is refused.
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

// Report is what one check found.
type Report struct {
	// At is when the check ran, by the Refresher's clock.
	At time.Time
	// Set is a copy of the checked facets, sharing no memory with them,
	// with refreshedAt moved, in every facet whose check passed, to the
	// day the release list vouches for: At's UTC date, or the list's
	// takenAt when that is earlier. Nothing else differs.
	Set Set
	// Refreshed lists the facets whose check passed, a2a first.
	Refreshed []Protocol
	// Findings are what the check found, by JSON path in Set, a2a first:
	// "unlisted" for an offered version upstream does not list (it fails
	// its facet's check); "superseded" for one upstream has replaced but
	// still publishes (it does not); and, judged after the check,
	// "refresh-closing" when a facet's window closes within WarnBefore,
	// "refresh-stale" when it has closed (or the facet has no refreshedAt)
	// and "refresh-future" when refreshedAt is more than a day ahead (see
	// [CheckRefresh]).
	Findings []Violation
}

// Passed reports whether every facet's check passed.
func (r Report) Passed() bool {
	return len(r.Refreshed) > 0 && len(r.Refreshed) == len(r.Set.Protocols())
}

// Check runs one check of s. s must be valid ([Set.Validate]), except
// that a facet may have no refreshedAt: a host that has never checked its
// versions writes none, and takes the one its first check gives. Such a
// facet gets a refreshedAt only when its check passes; until then it keeps
// none, with a "refresh-stale" finding, and Report.Set is not valid. If s
// is not valid, Check returns that error and a Report with only At set. When
// upstream fails, Check returns its error (wrapped, so errors.Is finds a
// context's or a file's error, and errors.As the [*Violation]s of a list
// that does not parse) together with a Report in which no facet was
// refreshed, so the window's findings still reach the host. s itself is
// never changed.
func (r *Refresher) Check(ctx context.Context, s Set) (Report, error) {
	warn, err := r.warnBefore()
	if err != nil {
		return Report{}, err
	}
	now := r.now()
	rep := Report{At: now}
	today := now.UTC().Format(time.DateOnly)
	if err := dated(s, today).Validate(); err != nil {
		return rep, err
	}
	rep.Set = s.Clone()
	rel, err := r.releases(ctx)
	if err != nil {
		err = fmt.Errorf("facets: upstream release list: %w", err)
		r.log(ctx, slog.LevelError, "refresh check failed: no upstream release list", slog.String("error", err.Error()))
	}
	checked := rel.checkedOn(today)
	for _, p := range s.Protocols() {
		adv, _ := rep.Set.Lookup(p)
		if err == nil && r.checkVersions(ctx, &rep, adv, rel) {
			rep.Refreshed = append(rep.Refreshed, p)
			rep.Set.setRefreshedAt(p, checked)
			r.log(ctx, slog.LevelInfo, "refresh check passed",
				slog.String("protocol", string(p)), slog.String("from", adv.RefreshedAt), slog.String("refreshedAt", checked))
			adv.RefreshedAt = checked
		}
		r.checkWindow(ctx, &rep, adv, warn)
	}
	return rep, err
}

// checkVersions adds to rep what upstream says of each version adv
// offers, and reports whether upstream lists them all.
func (r *Refresher) checkVersions(ctx context.Context, rep *Report, adv Advertised, rel releases) bool {
	passed := true
	list := "versions"
	if adv.Protocol == ProtocolMCP {
		list = "revisions"
	}
	for i, v := range adv.Versions {
		path := fmt.Sprintf("%s.%s[%d]", adv.Protocol, list, i)
		found, ok := rel.lookup(adv.Protocol, v)
		if !ok {
			passed = false
			rep.Findings = append(rep.Findings, Violation{path, "unlisted",
				fmt.Sprintf("%q is not listed upstream: the refresh check fails", v)})
			r.log(ctx, slog.LevelWarn, "advertised version not listed upstream",
				slog.String("protocol", string(adv.Protocol)), slog.String("version", v))
			continue
		}
		if found.SupersededBy != "" {
			rep.Findings = append(rep.Findings, Violation{path, "superseded",
				fmt.Sprintf("%q is superseded upstream by %q but still published: the check passes", v, found.SupersededBy)})
			r.log(ctx, slog.LevelWarn, "advertised version superseded upstream",
				slog.String("protocol", string(adv.Protocol)), slog.String("version", v),
				slog.String("supersededBy", found.SupersededBy))
		}
	}
	return passed
}

// checkWindow adds to rep how adv's refresh window stands at rep.At.
func (r *Refresher) checkWindow(ctx context.Context, rep *Report, adv Advertised, warn time.Duration) {
	if adv.RefreshedAt == "" {
		rep.Findings = append(rep.Findings, Violation{string(adv.Protocol) + ".refreshedAt", "refresh-stale",
			"refreshedAt is empty: the facet has never passed a check against upstream"})
		r.log(ctx, slog.LevelError, "refresh SLA broken: the facet was never checked", slog.String("protocol", string(adv.Protocol)))
		return
	}
	day, _ := parseDate(adv.RefreshedAt) // valid: the set passed Validate
	closes := day.Add(RefreshWindow)
	left := closes.Sub(rep.At)
	attrs := []slog.Attr{slog.String("protocol", string(adv.Protocol)), slog.String("refreshedAt", adv.RefreshedAt),
		slog.Time("closes", closes)}
	if sla := refreshViolations(adv, rep.At); sla != nil {
		rep.Findings = append(rep.Findings, sla...)
		r.log(ctx, slog.LevelError, "refresh SLA broken: the advertisement is non-conformant", attrs...)
		return
	}
	if left <= warn {
		rep.Findings = append(rep.Findings, Violation{string(adv.Protocol) + ".refreshedAt", "refresh-closing",
			fmt.Sprintf("the 90-day refresh window of refreshedAt %s closes at %s, in %s",
				adv.RefreshedAt, closes.Format(time.RFC3339), left.Round(time.Minute))})
		r.log(ctx, slog.LevelWarn, "refresh window closing", append(attrs, slog.Duration("left", left))...)
	}
}

// releases gets the release list from Upstream, or the embedded one.
func (r *Refresher) releases(ctx context.Context) (releases, error) {
	if r.Upstream == nil {
		return publishedReleases(), nil
	}
	if err := ctx.Err(); err != nil {
		return releases{}, err
	}
	rc, err := r.Upstream(ctx)
	if err != nil {
		return releases{}, err
	}
	if rc == nil {
		return releases{}, errors.New("the Upstream func returned no list and no error")
	}
	defer rc.Close()
	return readReleases(rc)
}

// run checks at once and then every Interval until ctx is done, handing
// each report, and the error of its check, to publish. current is called
// before every check for the facets to check, so that a refreshed
// refreshedAt is carried to the next check. Both are called on run's
// goroutine, one at a time.
//
// run starts no goroutine. It returns ctx's error when ctx is done,
// without publishing a check that the cancellation cut short, and at once
// when Interval or WarnBefore is out of range.
func (r *Refresher) run(ctx context.Context, current func() Set, publish func(Report, error)) error {
	every, err := r.interval()
	if err != nil {
		return err
	}
	if _, err := r.warnBefore(); err != nil {
		return err
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
		publish(rep, err)
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
	return schedule("Interval", r.Interval, defaultRefreshInterval)
}

func (r *Refresher) warnBefore() (time.Duration, error) {
	return schedule("WarnBefore", r.WarnBefore, defaultRefreshWarning)
}

// schedule checks one of the Refresher's durations, so that a
// misconfigured host fails at start rather than running with a schedule
// it did not ask for: zero means def, and the value must be more than
// zero and at most the refresh window.
func schedule(field string, d, def time.Duration) (time.Duration, error) {
	if d < 0 || d > RefreshWindow {
		return 0, violations{{"Refresher." + field, "range",
			fmt.Sprintf("Refresher.%s %v is out of range: want more than 0 and at most 90 days", field, d)}}
	}
	if d == 0 {
		return def, nil
	}
	return d, nil
}

func (r *Refresher) log(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr) {
	if r.Logger != nil {
		r.Logger.LogAttrs(ctx, level, msg, attrs...)
	}
}

// dated returns a copy of s with day as the refreshedAt of every facet
// that has none, for validating everything else.
func dated(s Set, day string) Set {
	s = s.Clone()
	for _, p := range s.Protocols() {
		if adv, _ := s.Lookup(p); adv.RefreshedAt == "" {
			s.setRefreshedAt(p, day)
		}
	}
	return s
}

// setRefreshedAt sets the refreshedAt of p's facet in s, which has it.
func (s Set) setRefreshedAt(p Protocol, day string) {
	if p == ProtocolA2A {
		s.A2A.RefreshedAt = day
		return
	}
	s.MCP.RefreshedAt = day
}
