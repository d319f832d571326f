package facets

import (
	"context"
	"errors"
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
	d, err := ParseDate(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func fixedClock(at time.Time) func() time.Time { return func() time.Time { return at } }

// refSet is the reference host's pair (digest §1.5), refreshed 2026-09-18.
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
	if !rep.Passed() || len(rep.Facets) != 2 {
		t.Fatalf("report %+v, want both facets passed", rep)
	}
	for _, fr := range rep.Facets {
		if !fr.Refreshed || fr.RefreshedAt != "2026-11-29" || fr.Window != WindowOpen || fr.SLA != nil ||
			fr.Unlisted != nil || fr.Superseded != nil {
			t.Errorf("%s: %+v", fr.Protocol, fr)
		}
		if want := day(t, "2027-02-27"); !fr.Closes.Equal(want) {
			t.Errorf("%s closes %v, want %v", fr.Protocol, fr.Closes, want)
		}
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
	r := &Refresher{Now: fixedClock(day(t, "2026-11-29")), Logger: slog.New(logs)}
	rep, err := r.Check(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed() {
		t.Error("Passed with an unlisted version")
	}
	a2a, mcp := rep.Facets[0], rep.Facets[1]
	if a2a.Refreshed || a2a.RefreshedAt != "2026-09-18" || rep.Set.A2A.RefreshedAt != "2026-09-18" {
		t.Errorf("a2a refreshed despite findings: %+v", a2a)
	}
	if !reflect.DeepEqual(a2a.Unlisted, []string{"1.1"}) {
		t.Errorf("unlisted %v, want [1.1]", a2a.Unlisted)
	}
	if len(a2a.Superseded) != 1 || a2a.Superseded[0].Version != "0.3" || a2a.Superseded[0].SupersededBy != "1.0" {
		t.Errorf("superseded %+v, want 0.3 by 1.0", a2a.Superseded)
	}
	if !slices.Equal(rep.Set.A2A.Versions, []string{"0.3", "1.0", "1.1"}) {
		t.Errorf("versions changed to %v", rep.Set.A2A.Versions)
	}
	if !mcp.Refreshed || rep.Set.MCP.RefreshedAt != "2026-11-29" {
		t.Errorf("mcp not refreshed: %+v", mcp)
	}
	want := []string{
		"WARN advertised version superseded upstream a2a 0.3",
		"WARN advertised version not listed upstream a2a 1.1",
		"INFO refresh check passed mcp",
	}
	if got := logs.lines(); !reflect.DeepEqual(got, want) {
		t.Errorf("logged\n%q\nwant\n%q", got, want)
	}
}

// TestRefresherFloorBelowPreferredRefreshes is the regression test of
// issue 9 item 7: a host whose floor is below its preferred version offers
// a release upstream has superseded but still publishes, and its check
// passes (with a warning naming the superseded version), so its window
// does not close.
func TestRefresherFloorBelowPreferredRefreshes(t *testing.T) {
	rel := Releases{
		A2A: []Release{{"1.0", "2026-03-12", "1.1"}, {"1.1", "2026-08-01", ""}},
		MCP: []Release{{"2025-11-25", "2025-11-25", "2026-07-28"}, {"2026-07-28", "2026-07-28", ""}},
	}
	s := Set{
		A2A: &A2A{Versions: []string{"1.0", "1.1"}, PreferredVersion: "1.1", MinimumVersion: "1.0", RefreshedAt: "2026-09-18"},
		MCP: &MCP{Revisions: []string{"2025-11-25", "2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-11-25", RefreshedAt: "2026-09-18"},
	}
	logs := new(logRecords)
	r := &Refresher{Upstream: StaticUpstream(rel), Now: fixedClock(day(t, "2026-12-10")), Logger: slog.New(logs)}
	rep, err := r.Check(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Passed() {
		t.Fatalf("a floor below preferred cannot refresh: %+v", rep.Facets)
	}
	for i, want := range []string{"1.0", "2025-11-25"} {
		fr := rep.Facets[i]
		if !fr.Refreshed || fr.RefreshedAt != "2026-12-10" || fr.Window != WindowOpen || fr.SLA != nil || fr.Unlisted != nil {
			t.Errorf("%s: %+v, want refreshed on 2026-12-10 with the window open", fr.Protocol, fr)
		}
		if len(fr.Superseded) != 1 || fr.Superseded[0].Version != want {
			t.Errorf("%s: superseded %+v, want %s reported", fr.Protocol, fr.Superseded, want)
		}
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
		name   string
		warn   time.Duration
		now    time.Time
		window Window
		sla    error
		log    string
	}{
		{"long before", 0, closes.Add(-15 * 24 * time.Hour), WindowOpen, nil, ""},
		{"default warning starts", 0, closes.Add(-DefaultRefreshWarning), WindowClosing, nil, "WARN refresh window closing a2a"},
		{"custom warning not yet", 3 * 24 * time.Hour, closes.Add(-4 * 24 * time.Hour), WindowOpen, nil, ""},
		{"custom warning", 3 * 24 * time.Hour, closes.Add(-3 * 24 * time.Hour), WindowClosing, nil, "WARN refresh window closing a2a"},
		{"last instant", 0, closes, WindowClosing, nil, "WARN refresh window closing a2a"},
		{"closed", 0, closes.Add(time.Nanosecond), WindowClosed, ErrRefreshStale,
			"ERROR refresh window closed: the advertisement is non-conformant a2a"},
		{"refreshedAt in the future", 0, day(t, "2026-09-16"), WindowOpen, ErrRefreshFuture, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := new(logRecords)
			r := &Refresher{Now: fixedClock(tt.now), WarnBefore: tt.warn, Logger: slog.New(logs)}
			rep, err := r.Check(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			fr := rep.Facets[0]
			if fr.Refreshed || fr.Window != tt.window || !fr.Closes.Equal(closes) {
				t.Errorf("got refreshed %v, window %v, closes %v; want window %v", fr.Refreshed, fr.Window, fr.Closes, tt.window)
			}
			if (tt.sla == nil) != (fr.SLA == nil) || tt.sla != nil && !errors.Is(fr.SLA, tt.sla) {
				t.Errorf("SLA = %v, want %v", fr.SLA, tt.sla)
			}
			var got string
			for _, l := range logs.lines() {
				if strings.Contains(l, "window") {
					got = l
				}
			}
			if got != tt.log {
				t.Errorf("window log %q, want %q", got, tt.log)
			}
		})
	}
}

type failingUpstream struct{ err error }

func (f failingUpstream) Releases(context.Context) (Releases, error) { return Releases{}, f.err }

type customUpstream Releases

func (c customUpstream) Releases(context.Context) (Releases, error) { return Releases(c), nil }

func TestRefresherUpstreamFails(t *testing.T) {
	down := &UpstreamError{"https://mirror.example/releases.json", errors.New("connection refused")}
	tests := []struct {
		name string
		up   Upstream
		is   error
	}{
		{"unreachable", failingUpstream{down}, down},
		{"invalid list from a custom upstream", customUpstream{A2A: []Release{{Version: "1.0"}}}, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := new(logRecords)
			r := &Refresher{Upstream: tt.up, Now: fixedClock(day(t, "2026-12-10")), Logger: slog.New(logs)}
			rep, err := r.Check(context.Background(), refSet())
			if !errors.Is(err, tt.is) {
				t.Fatalf("error %v, want %v", err, tt.is)
			}
			var ue *UpstreamError
			if !errors.As(err, &ue) {
				t.Errorf("error %T is not an *UpstreamError", err)
			}
			if rep.Passed() || len(rep.Facets) != 2 {
				t.Fatalf("report %+v", rep)
			}
			for _, fr := range rep.Facets {
				if fr.Refreshed || fr.RefreshedAt != "2026-09-18" || fr.Window != WindowClosing {
					t.Errorf("%s: %+v, want not refreshed and closing", fr.Protocol, fr)
				}
			}
			if got := logs.lines(); len(got) != 3 || !strings.HasPrefix(got[0], "ERROR refresh check failed") {
				t.Errorf("logged %q", got)
			}
		})
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
		err := r.Run(context.Background(), refSet, nil)
		if !errors.Is(err, ErrSchedule) {
			t.Errorf("Run with %+v: %v, want ErrSchedule", r, err)
		}
		if r.WarnBefore != 0 {
			if _, err := r.Check(context.Background(), refSet()); !errors.Is(err, ErrSchedule) {
				t.Errorf("Check with %+v: %v, want ErrSchedule", r, err)
			}
		}
	}
	if got, err := (&Refresher{Interval: RefreshWindow}).interval(); err != nil || got != RefreshWindow {
		t.Errorf("Interval of exactly 90 days: %v, %v", got, err)
	}
	if got, _ := new(Refresher).interval(); got != DefaultRefreshInterval {
		t.Errorf("default interval %v", got)
	}
	if err := new(Refresher).Run(context.Background(), nil, nil); err == nil || !strings.Contains(err.Error(), "current") {
		t.Errorf("Run without current: %v", err)
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

// fakeTimer hands Run's waits to the test: each call of After is sent on
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
		done <- r.Run(ctx, func() Set { mu.Lock(); defer mu.Unlock(); return offer }, func(rep Report, err error) {
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
		t.Errorf("Run waited %v, want the Interval", d)
	}

	// A week later the host offers a version upstream does not list.
	mu.Lock()
	now = now.Add(7 * 24 * time.Hour)
	offer = first.Set
	offer.A2A = &A2A{Versions: []string{"1.0", "1.1"}, PreferredVersion: "1.1", MinimumVersion: "1.0", RefreshedAt: "2026-11-29"}
	mu.Unlock()
	timer.fire <- now
	second := <-reports
	if second.Facets[0].Refreshed || !reflect.DeepEqual(second.Facets[0].Unlisted, []string{"1.1"}) ||
		!second.Facets[1].Refreshed || second.Set.MCP.RefreshedAt != "2026-12-06" {
		t.Errorf("second report %+v", second.Facets)
	}
	<-timer.calls

	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run returned %v, want context.Canceled", err)
	}
}

func TestRefresherRunCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	published := false
	err := (&Refresher{}).Run(ctx, refSet, func(Report, error) { published = true })
	if !errors.Is(err, context.Canceled) || published {
		t.Errorf("Run = %v, published %v; want context.Canceled and nothing published", err, published)
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

func TestWindowString(t *testing.T) {
	for w, want := range map[Window]string{WindowOpen: "open", WindowClosing: "closing", WindowClosed: "closed", 7: "Window(7)"} {
		if got := w.String(); got != want {
			t.Errorf("%d: %q, want %q", int(w), got, want)
		}
	}
}
