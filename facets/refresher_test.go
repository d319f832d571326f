package facets

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// day is midnight UTC of a full-date, for clocks in tests.
func day(t *testing.T, s string) time.Time {
	t.Helper()
	d, err := parseDate(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func fixedClock(at time.Time) func() time.Time { return func() time.Time { return at } }

// refSet is the reference host's pair (examples/hosts/v2-reference/src/discovery.ts in
// openwop/openwop-examples), refreshed 2026-09-18.
func refSet() Set { return Set{A2A: refA2A(), MCP: refMCP()} }

// logRecords collects what a Refresher logs, as "LEVEL message protocol".
type logRecords struct {
	mu   sync.Mutex
	recs []string
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecords) WithGroup(string) slog.Handler            { return l }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	line := r.Level.String() + " " + r.Message
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "protocol" || a.Key == "version" {
			line += " " + a.Value.String()
		}
		return true
	})
	l.mu.Lock()
	l.recs = append(l.recs, line)
	l.mu.Unlock()
	return nil
}

func (l *logRecords) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.recs)
}

// upstreamOf is an Upstream that hands over list, a release list in JSON.
func upstreamOf(list string) func(context.Context) (io.ReadCloser, error) {
	return func(context.Context) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(list)), nil }
}

// currentMirror is the embedded list as a host's mirror of upstream
// serves it: read from upstream's present, so without takenAt.
func currentMirror(t *testing.T) string {
	t.Helper()
	r := publishedReleases()
	r.TakenAt = ""
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// findings renders a report's findings as "PATH RULE".
func findings(rep Report) []string {
	var out []string
	for _, v := range rep.Findings {
		out = append(out, v.Path+" "+v.Rule)
	}
	return out
}

func TestRefresherCheckPasses(t *testing.T) {
	s := refSet()
	before := s.Clone()
	logs := new(logRecords)
	r := &Refresher{Now: fixedClock(day(t, "2026-11-29").Add(15 * time.Hour)), Logger: slog.New(logs)}
	rep, err := r.Check(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, before) {
		t.Errorf("Check changed the caller's facets:\n%+v\n%+v", s.A2A, before.A2A)
	}
	if !rep.Passed() || !slices.Equal(rep.Refreshed, []Protocol{ProtocolA2A, ProtocolMCP}) || rep.Findings != nil {
		t.Fatalf("report %+v, want both facets passed and nothing found", rep)
	}
	want := before.Clone()
	want.A2A.RefreshedAt, want.MCP.RefreshedAt = "2026-11-29", "2026-11-29"
	if !reflect.DeepEqual(rep.Set, want) {
		t.Errorf("report Set differs from the input beyond refreshedAt:\n%+v\n%+v", rep.Set.A2A, want.A2A)
	}
	if got := logs.lines(); !reflect.DeepEqual(got, []string{"INFO refresh check passed a2a", "INFO refresh check passed mcp"}) {
		t.Errorf("logged %q", got)
	}
}

// TestRefresherCheckFindings checks that an offer upstream does not list
// keeps refreshedAt where it was, facet by facet, that a superseded one is
// reported without failing the check, and that the offered lists are
// never touched.
func TestRefresherCheckFindings(t *testing.T) {
	s := refSet()
	s.A2A.Versions = []string{"0.3", "1.0", "1.1"}
	s.A2A.MinimumVersion = "0.3"
	logs := new(logRecords)
	r := &Refresher{Now: fixedClock(day(t, "2026-12-05")), Logger: slog.New(logs)}
	rep, err := r.Check(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed() || !slices.Equal(rep.Refreshed, []Protocol{ProtocolMCP}) {
		t.Errorf("refreshed %v with an unlisted a2a version", rep.Refreshed)
	}
	if rep.Set.A2A.RefreshedAt != "2026-09-18" || rep.Set.MCP.RefreshedAt != "2026-11-29" {
		t.Errorf("refreshedAt a2a %s, mcp %s", rep.Set.A2A.RefreshedAt, rep.Set.MCP.RefreshedAt)
	}
	wantFindings := []string{"a2a.versions[0] superseded", "a2a.versions[2] unlisted", "a2a.refreshedAt refresh-closing"}
	if got := findings(rep); !slices.Equal(got, wantFindings) {
		t.Errorf("findings %q, want %q", got, wantFindings)
	}
	if len(rep.Findings) != 3 {
		t.FailNow()
	}
	if msg := rep.Findings[0].Message; msg != `"0.3" is superseded upstream by "1.0" but still published: the check passes` {
		t.Errorf("superseded message %q", msg)
	}
	if msg := rep.Findings[2].Message; msg != "the 90-day refresh window of refreshedAt 2026-09-18 closes at 2026-12-17T00:00:00Z, in 288h0m0s" {
		t.Errorf("closing message %q", msg)
	}
	if !slices.Equal(rep.Set.A2A.Versions, []string{"0.3", "1.0", "1.1"}) {
		t.Errorf("versions changed to %v", rep.Set.A2A.Versions)
	}
	want := []string{
		"WARN advertised version superseded upstream a2a 0.3",
		"WARN advertised version not listed upstream a2a 1.1",
		"WARN refresh window closing a2a",
		"INFO refresh check passed mcp",
	}
	if got := logs.lines(); !reflect.DeepEqual(got, want) {
		t.Errorf("logged\n%q\nwant\n%q", got, want)
	}
}

// TestRefresherFloorBelowPreferredRefreshes is the regression test of
// issue 9 item 7: a host whose floor is below its preferred version offers
// a release upstream has superseded but still publishes, and its check
// passes (with a finding naming the superseded version), so its window
// does not close.
func TestRefresherFloorBelowPreferredRefreshes(t *testing.T) {
	rel := `{"a2a": [{"version": "1.0", "published": "2026-03-12", "supersededBy": "1.1"}, {"version": "1.1", "published": "2026-08-01"}],
		"mcp": [{"version": "2025-11-25", "published": "2025-11-25", "supersededBy": "2026-07-28"}, {"version": "2026-07-28", "published": "2026-07-28"}]}`
	s := Set{
		A2A: &A2A{Versions: []string{"1.0", "1.1"}, PreferredVersion: "1.1", MinimumVersion: "1.0", RefreshedAt: "2026-09-18"},
		MCP: &MCP{Revisions: []string{"2025-11-25", "2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-11-25", RefreshedAt: "2026-09-18"},
	}
	logs := new(logRecords)
	r := &Refresher{Upstream: upstreamOf(rel), Now: fixedClock(day(t, "2026-12-10")), Logger: slog.New(logs)}
	rep, err := r.Check(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Passed() {
		t.Fatalf("a floor below preferred cannot refresh: %+v", rep)
	}
	if got, want := findings(rep), []string{"a2a.versions[0] superseded", "mcp.revisions[0] superseded"}; !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}
	if rep.Set.A2A.RefreshedAt != "2026-12-10" || rep.Set.MCP.RefreshedAt != "2026-12-10" {
		t.Errorf("report set refreshedAt %s / %s", rep.Set.A2A.RefreshedAt, rep.Set.MCP.RefreshedAt)
	}
	want := []string{
		"WARN advertised version superseded upstream a2a 1.0",
		"INFO refresh check passed a2a",
		"WARN advertised version superseded upstream mcp 2025-11-25",
		"INFO refresh check passed mcp",
	}
	if got := logs.lines(); !reflect.DeepEqual(got, want) {
		t.Errorf("logged\n%q\nwant\n%q", got, want)
	}
}

// TestRefresherWindow walks a facet that never passes (it offers an
// unlisted version) through its window.
func TestRefresherWindow(t *testing.T) {
	s := Set{A2A: &A2A{Versions: []string{"7.0"}, PreferredVersion: "7.0", MinimumVersion: "7.0", RefreshedAt: "2026-09-18"}}
	closes := day(t, "2026-12-17")
	tests := []struct {
		name string
		warn time.Duration
		now  time.Time
		rule string // the window's finding, "" for none
		log  string
	}{
		{"long before", 0, closes.Add(-15 * 24 * time.Hour), "", ""},
		{"default warning starts", 0, closes.Add(-defaultRefreshWarning), "refresh-closing", "WARN refresh window closing a2a"},
		{"custom warning not yet", 3 * 24 * time.Hour, closes.Add(-4 * 24 * time.Hour), "", ""},
		{"custom warning", 3 * 24 * time.Hour, closes.Add(-3 * 24 * time.Hour), "refresh-closing", "WARN refresh window closing a2a"},
		{"last instant", 0, closes, "refresh-closing", "WARN refresh window closing a2a"},
		{"closed", 0, closes.Add(time.Nanosecond), "refresh-stale",
			"ERROR refresh SLA broken: the advertisement is non-conformant a2a"},
		{"refreshedAt in the future", 0, day(t, "2026-09-16"), "refresh-future",
			"ERROR refresh SLA broken: the advertisement is non-conformant a2a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := new(logRecords)
			r := &Refresher{Now: fixedClock(tt.now), WarnBefore: tt.warn, Logger: slog.New(logs)}
			rep, err := r.Check(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"a2a.versions[0] unlisted"}
			if tt.rule != "" {
				want = append(want, "a2a.refreshedAt "+tt.rule)
			}
			if got := findings(rep); rep.Refreshed != nil || !slices.Equal(got, want) {
				t.Errorf("refreshed %v, findings %q; want %q", rep.Refreshed, got, want)
			}
			var got string
			for _, l := range logs.lines() {
				if strings.Contains(l, "window") || strings.Contains(l, "SLA") {
					got = l
				}
			}
			if got != tt.log {
				t.Errorf("window log %q, want %q", got, tt.log)
			}
		})
	}
}

func TestRefresherUpstreamFails(t *testing.T) {
	down := errors.New("connection refused")
	tests := []struct {
		name string
		up   func(context.Context) (io.ReadCloser, error)
		is   error
	}{
		{"unreachable", func(context.Context) (io.ReadCloser, error) { return nil, down }, down},
		{"an invalid list", upstreamOf(`{"a2a": [{"version": "1.0"}]}`), ErrInvalid},
		{"no list and no error", func(context.Context) (io.ReadCloser, error) { return nil, nil }, nil},
		{"a list over 1 MiB", upstreamOf(`{"a2a": []}` + strings.Repeat(" ", maxReleases)), nil},
		{"a read that fails", func(context.Context) (io.ReadCloser, error) { return io.NopCloser(iotestErr{down}), nil }, down},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := new(logRecords)
			r := &Refresher{Upstream: tt.up, Now: fixedClock(day(t, "2026-12-10")), Logger: slog.New(logs)}
			rep, err := r.Check(context.Background(), refSet())
			if err == nil || tt.is != nil && !errors.Is(err, tt.is) || !strings.HasPrefix(err.Error(), "facets: upstream release list: ") {
				t.Fatalf("error %v, want %v", err, tt.is)
			}
			if rep.Passed() || rep.Refreshed != nil || rep.Set.A2A.RefreshedAt != "2026-09-18" {
				t.Fatalf("report %+v", rep)
			}
			if got, want := findings(rep), []string{"a2a.refreshedAt refresh-closing", "mcp.refreshedAt refresh-closing"}; !slices.Equal(got, want) {
				t.Errorf("findings %q, want %q", got, want)
			}
			if got := logs.lines(); len(got) != 3 || !strings.HasPrefix(got[0], "ERROR refresh check failed") {
				t.Errorf("logged %q", got)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	r := &Refresher{Upstream: func(context.Context) (io.ReadCloser, error) { called = true; return nil, nil }}
	if _, err := r.Check(ctx, refSet()); !errors.Is(err, context.Canceled) || called {
		t.Errorf("cancelled: %v, upstream called %v", err, called)
	}
}

// iotestErr is a reader that fails.
type iotestErr struct{ err error }

func (r iotestErr) Read([]byte) (int, error) { return 0, r.err }

// closeCounter counts Close calls of an upstream's list.
type closeCounter struct {
	io.Reader
	n *int
}

func (c closeCounter) Close() error { *c.n++; return nil }

func TestRefresherClosesUpstream(t *testing.T) {
	closed := 0
	r := &Refresher{Now: fixedClock(day(t, "2026-11-29")), Upstream: func(context.Context) (io.ReadCloser, error) {
		return closeCounter{strings.NewReader(string(published)), &closed}, nil
	}}
	rep, err := r.Check(context.Background(), refSet())
	if err != nil || !rep.Passed() || closed != 1 {
		t.Errorf("Check = %+v, %v; closed %d times", rep, err, closed)
	}
}

func TestRefresherRefusesInvalidFacets(t *testing.T) {
	s := refSet()
	s.A2A.MinimumVersion = "2.0"
	before := s.Clone()
	at := day(t, "2026-11-29")
	rep, err := (&Refresher{Now: fixedClock(at)}).Check(context.Background(), s)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "a2a.minimumVersion") {
		t.Errorf("error %v, want a violation at a2a.minimumVersion", err)
	}
	if !reflect.DeepEqual(rep, Report{At: at}) {
		t.Errorf("report %+v, want only At", rep)
	}
	if !reflect.DeepEqual(s, before) {
		t.Error("Check changed the caller's facets")
	}
	if _, err := new(Refresher).Check(context.Background(), Set{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("empty set: %v", err)
	}
}

func TestRefresherSchedule(t *testing.T) {
	for _, r := range []Refresher{
		{Interval: -time.Hour},
		{Interval: RefreshWindow + time.Nanosecond},
		{WarnBefore: -time.Hour},
		{WarnBefore: RefreshWindow + time.Nanosecond},
	} {
		err := r.run(context.Background(), refSet, nil)
		var v *Violation
		if !errors.As(err, &v) || v.Rule != "range" || !strings.HasPrefix(v.Path, "Refresher.") || !errors.Is(err, ErrInvalid) {
			t.Errorf("run with %+v: %v, want a range violation", r, err)
		}
		if r.WarnBefore != 0 {
			if _, err := r.Check(context.Background(), refSet()); !errors.As(err, &v) || v.Path != "Refresher.WarnBefore" {
				t.Errorf("Check with %+v: %v, want a range violation", r, err)
			}
		}
	}
	for _, d := range []time.Duration{RefreshWindow, time.Nanosecond} {
		if got, err := (&Refresher{Interval: d}).interval(); err != nil || got != d {
			t.Errorf("Interval of %v: %v, %v", d, got, err)
		}
		if got, err := (&Refresher{WarnBefore: d}).warnBefore(); err != nil || got != d {
			t.Errorf("WarnBefore of %v: %v, %v", d, got, err)
		}
	}
	if got, _ := new(Refresher).interval(); got != defaultRefreshInterval {
		t.Errorf("default interval %v", got)
	}
	if defaultRefreshInterval != 24*time.Hour || defaultRefreshWarning != 14*24*time.Hour {
		t.Errorf("defaults %v, %v", defaultRefreshInterval, defaultRefreshWarning)
	}
}

// TestReportSetSharesNothing changes every list and pointer of a report's
// Set and checks that the caller's facets did not move.
func TestReportSetSharesNothing(t *testing.T) {
	tru := true
	s := refSet()
	s.A2A.Profiles, s.A2A.Streaming, s.A2A.AgentCards = []string{"a2a-1.0"}, &tru, &tru
	s.A2A.PushNotifications, s.A2A.DurableTasks = &tru, &tru
	s.MCP.Features, s.MCP.ServerURLs = []string{"mrtr"}, []string{"https://h.example/mcp"}
	s.MCP.ServerMount, s.MCP.Client = &ServerMount{Transports: []string{"stdio"}}, &tru
	before := s.Clone()
	rep, err := (&Refresher{Now: fixedClock(day(t, "2026-11-29"))}).Check(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	a, m := rep.Set.A2A, rep.Set.MCP
	a.Versions[0], a.Profiles[0], m.Revisions[0], m.Profiles[0] = "x", "x", "x", "x"
	m.Features[0], m.ServerURLs[0], m.ServerMount.Transports[0] = "x", "x", "x"
	*a.Streaming, *a.PushNotifications, *a.DurableTasks, *a.AgentCards, *m.Client = false, false, false, false, false
	m.MRTR.MaxRounds = 16
	if !reflect.DeepEqual(s, before) {
		t.Errorf("changing the report's Set changed the caller's:\n%+v\n%+v", s.MCP, before.MCP)
	}
}

// TestRefresherRunZero runs the zero Refresher through one check and into
// its first wait, which time.After serves.
func TestRefresherRunZero(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var got []Report
	err := new(Refresher).run(ctx, refSet, func(rep Report, err error) {
		if err != nil {
			t.Errorf("check: %v", err)
		}
		got = append(got, rep)
		cancel()
	})
	if !errors.Is(err, context.Canceled) || len(got) != 1 || !got[0].Passed() {
		t.Errorf("run = %v after %d reports", err, len(got))
	}
}

// fakeTimer hands run's waits to the test: each call of After is sent on
// calls, and returns a channel the test fires.
type fakeTimer struct {
	calls chan time.Duration
	fire  chan time.Time
}

func (f *fakeTimer) After(d time.Duration) <-chan time.Time {
	f.calls <- d
	return f.fire
}

func TestRefresherRun(t *testing.T) {
	var mu sync.Mutex
	now := day(t, "2026-11-29")
	timer := &fakeTimer{calls: make(chan time.Duration), fire: make(chan time.Time)}
	r := &Refresher{
		Interval: 7 * 24 * time.Hour,
		Now:      func() time.Time { mu.Lock(); defer mu.Unlock(); return now },
		After:    timer.After,
	}
	offer := refSet()
	reports := make(chan Report)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- r.run(ctx, func() Set { mu.Lock(); defer mu.Unlock(); return offer }, func(rep Report, err error) {
			if err != nil {
				t.Errorf("check: %v", err)
			}
			reports <- rep
		})
	}()

	first := <-reports
	if !first.Passed() || first.Set.A2A.RefreshedAt != "2026-11-29" || !first.At.Equal(now) {
		t.Errorf("first report %+v", first)
	}
	if d := <-timer.calls; d != 7*24*time.Hour {
		t.Errorf("run waited %v, want the Interval", d)
	}

	// A week later the host offers a version upstream does not list.
	mu.Lock()
	now = now.Add(7 * 24 * time.Hour)
	offer = first.Set
	offer.A2A = &A2A{Versions: []string{"1.0", "1.1"}, PreferredVersion: "1.1", MinimumVersion: "1.0", RefreshedAt: "2026-11-29"}
	mu.Unlock()
	timer.fire <- now
	second := <-reports
	if !slices.Equal(second.Refreshed, []Protocol{ProtocolMCP}) || !slices.Equal(findings(second), []string{"a2a.versions[1] unlisted"}) ||
		second.Set.MCP.RefreshedAt != "2026-11-29" {
		t.Errorf("second report %+v", second)
	}
	<-timer.calls

	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("run returned %v, want context.Canceled", err)
	}
}

func TestRefresherRunCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	published := false
	err := (&Refresher{}).run(ctx, refSet, func(Report, error) { published = true })
	if !errors.Is(err, context.Canceled) || published {
		t.Errorf("run = %v, published %v; want context.Canceled and nothing published", err, published)
	}
}

func TestRefresherConcurrentChecks(t *testing.T) {
	r := &Refresher{Now: fixedClock(day(t, "2026-11-29")), Logger: slog.New(new(logRecords))}
	s := refSet()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if rep, err := r.Check(context.Background(), s); err != nil || !rep.Passed() {
				t.Errorf("Check: %+v, %v", rep, err)
			}
		})
	}
	wg.Wait()
}

// TestRefresherUpstreamSize checks the 1 MiB bound exactly: a list of
// 1 MiB is read, one byte more is refused.
func TestRefresherUpstreamSize(t *testing.T) {
	list := string(published)
	for _, tt := range []struct {
		size int
		ok   bool
	}{{maxReleases, true}, {maxReleases + 1, false}} {
		padded := list + strings.Repeat(" ", tt.size-len(list))
		r := &Refresher{Upstream: upstreamOf(padded), Now: fixedClock(day(t, "2026-11-29"))}
		rep, err := r.Check(context.Background(), refSet())
		if (err == nil) != tt.ok || rep.Passed() != tt.ok {
			t.Errorf("%d bytes: %v, passed %v", tt.size, err, rep.Passed())
		}
	}
}

func TestReportPassedNeedsAFacet(t *testing.T) {
	if (Report{}).Passed() {
		t.Error("a report of no facet passed")
	}
}

// TestRefresherDatesNoLaterThanItsList is the regression test of issue 20
// item 4: a check against the embedded list dates the facets no later
// than the day the list was taken from upstream, however late it runs, so
// a host on an old build is warned and then stale as the SLA intends; a
// check against a mirror of upstream's present dates them on the day of
// the check.
func TestRefresherDatesNoLaterThanItsList(t *testing.T) {
	taken := publishedReleases().TakenAt
	if taken != "2026-11-29" {
		t.Fatalf("embedded takenAt %q; this test's days count from 2026-11-29", taken)
	}
	tests := []struct {
		name     string
		upstream func(context.Context) (io.ReadCloser, error)
		now      string
		want     string   // refreshedAt of both facets
		window   []string // the window's findings
	}{
		{"the embedded list, the day it was taken", nil, "2026-11-29", "2026-11-29", nil},
		{"the embedded list, 75 days on", nil, "2027-02-12", "2026-11-29", nil},
		{"the embedded list, 76 days on: warned", nil, "2027-02-13", "2026-11-29",
			[]string{"a2a.refreshedAt refresh-closing", "mcp.refreshedAt refresh-closing"}},
		{"the embedded list, 400 days on: stale", nil, "2028-01-03", "2026-11-29",
			[]string{"a2a.refreshedAt refresh-stale", "mcp.refreshedAt refresh-stale"}},
		{"a mirror, 400 days on", upstreamOf(currentMirror(t)), "2028-01-03", "2028-01-03", nil},
		{"a copy of the embedded list as a mirror", upstreamOf(string(published)), "2028-01-03", "2026-11-29",
			[]string{"a2a.refreshedAt refresh-stale", "mcp.refreshedAt refresh-stale"}},
		{"a mirror synced the day before", upstreamOf(strings.Replace(currentMirror(t), `{`, `{"takenAt":"2028-01-02",`, 1)),
			"2028-01-03", "2028-01-02", nil},
		{"a mirror dated ahead of the clock", upstreamOf(strings.Replace(currentMirror(t), `{`, `{"takenAt":"2028-01-04",`, 1)),
			"2028-01-03", "2028-01-03", nil},
		{"a check before the list was taken", nil, "2026-11-28", "2026-11-28", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := new(logRecords)
			r := &Refresher{Upstream: tt.upstream, Now: fixedClock(day(t, tt.now).Add(9 * time.Hour)), Logger: slog.New(logs)}
			rep, err := r.Check(context.Background(), refSet())
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Passed() || rep.Set.A2A.RefreshedAt != tt.want || rep.Set.MCP.RefreshedAt != tt.want {
				t.Errorf("passed %v, refreshedAt %s / %s, want %s", rep.Passed(), rep.Set.A2A.RefreshedAt, rep.Set.MCP.RefreshedAt, tt.want)
			}
			if got := findings(rep); !slices.Equal(got, tt.window) {
				t.Errorf("findings %q, want %q", got, tt.window)
			}
		})
	}
}

// TestRefresherMovesALaterDateBack: a refreshedAt later than the list
// can vouch for is a claim nobody checked, and a passing check replaces it.
func TestRefresherMovesALaterDateBack(t *testing.T) {
	s := refSet()
	s.A2A.RefreshedAt, s.MCP.RefreshedAt = "2026-12-09", "2026-12-09"
	logs := new(logRecords)
	r := &Refresher{Now: fixedClock(day(t, "2026-12-10")), Logger: slog.New(logs)}
	rep, err := r.Check(context.Background(), s)
	if err != nil || !rep.Passed() || rep.Set.A2A.RefreshedAt != "2026-11-29" || rep.Set.MCP.RefreshedAt != "2026-11-29" {
		t.Errorf("Check = %+v / %+v, %v", rep.Set.A2A, rep.Set.MCP, err)
	}
	if s.A2A.RefreshedAt != "2026-12-09" {
		t.Error("Check changed the caller's facets")
	}
}

// TestRefresherNeverChecked: a facet written without refreshedAt takes
// the one its first passing check gives, and keeps none, reported stale,
// while its check fails.
func TestRefresherNeverChecked(t *testing.T) {
	s := refSet()
	s.A2A.RefreshedAt, s.MCP.RefreshedAt = "", ""
	s.A2A.Versions, s.A2A.PreferredVersion = []string{"1.0", "1.1"}, "1.1"
	before := s.Clone()
	logs := new(logRecords)
	r := &Refresher{Now: fixedClock(day(t, "2026-12-10")), Logger: slog.New(logs)}
	rep, err := r.Check(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, before) {
		t.Errorf("Check changed the caller's facets: %+v", s.A2A)
	}
	if !slices.Equal(rep.Refreshed, []Protocol{ProtocolMCP}) || rep.Set.A2A.RefreshedAt != "" || rep.Set.MCP.RefreshedAt != "2026-11-29" {
		t.Errorf("refreshed %v, refreshedAt %q / %q", rep.Refreshed, rep.Set.A2A.RefreshedAt, rep.Set.MCP.RefreshedAt)
	}
	if got, want := findings(rep), []string{"a2a.versions[1] unlisted", "a2a.refreshedAt refresh-stale"}; !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}
	if len(rep.Findings) == 2 && rep.Findings[1].Message != "refreshedAt is empty: the facet has never passed a check against upstream" {
		t.Errorf("message %q", rep.Findings[1].Message)
	}
	want := []string{
		"WARN advertised version not listed upstream a2a 1.1",
		"ERROR refresh SLA broken: the facet was never checked a2a",
		"INFO refresh check passed mcp",
	}
	if got := logs.lines(); !reflect.DeepEqual(got, want) {
		t.Errorf("logged\n%q\nwant\n%q", got, want)
	}
	// Only refreshedAt may be missing: the rest is validated as ever.
	s.MCP.MinimumRevision = "2099-01-01"
	if _, err := r.Check(context.Background(), s); !errors.Is(err, ErrInvalid) || strings.Contains(err.Error(), "refreshedAt") ||
		!strings.Contains(err.Error(), "mcp.minimumRevision") {
		t.Errorf("invalid facets without refreshedAt: %v", err)
	}
	s.MCP.MinimumRevision, s.MCP.RefreshedAt = "2026-07-28", "2026-13-01"
	if _, err := r.Check(context.Background(), s); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "mcp.refreshedAt") {
		t.Errorf("a refreshedAt that is not a date: %v", err)
	}
}

func TestReleasesCheckedOn(t *testing.T) {
	for _, tt := range []struct{ taken, today, want string }{
		{"", "2026-12-10", "2026-12-10"},
		{"2026-11-29", "2026-12-10", "2026-11-29"},
		{"2026-12-10", "2026-12-10", "2026-12-10"},
		{"2026-12-11", "2026-12-10", "2026-12-10"},
	} {
		if got := (releases{TakenAt: tt.taken}).checkedOn(tt.today); got != tt.want {
			t.Errorf("taken %q, today %s: %s, want %s", tt.taken, tt.today, got, tt.want)
		}
	}
}
