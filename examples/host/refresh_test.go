package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/policy"
)

// embeddedList is the release list embedded in the wopneg module this
// build uses, as the facets package reads it.
func embeddedList(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "facets", "releases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var list map[string]any
	if err := json.Unmarshal(data, &list); err != nil {
		t.Fatal(err)
	}
	return list
}

// takenAt is the day the embedded list was taken from upstream.
func takenAt(t *testing.T) time.Time {
	t.Helper()
	s, _ := embeddedList(t)["takenAt"].(string)
	day, err := time.Parse(time.DateOnly, s)
	if err != nil {
		t.Fatalf("the embedded list's takenAt %q: %v", s, err)
	}
	return day
}

// writeMirror writes a mirror of upstream's present, as a host's own
// mirror serves it: the embedded list without takenAt. It returns its
// path.
func writeMirror(t *testing.T) string {
	t.Helper()
	list := embeddedList(t)
	delete(list, "takenAt")
	data, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "releases.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// servedRefreshedAt is the refreshedAt of both facets the host serves.
func servedRefreshedAt(t *testing.T, s *surfaces) (a2a, mcp string) {
	t.Helper()
	status, doc := s.do(t, "GET", facets.WellKnownPath, "", nil, nil)
	raw, _ := json.Marshal(doc)
	d, err := facets.ParseDiscovery(raw)
	if status != http.StatusOK || err != nil {
		t.Fatalf("%d %v\n%s", status, err, raw)
	}
	return d.A2A.RefreshedAt, d.MCP.RefreshedAt
}

// TestRefreshSLA400DaysAhead is the regression test of issue 20 item 4:
// the scenarios run against the host 400 days after the embedded release
// list was taken, both clocks fixed by the test. Checked against that
// list, the host says so: its refreshedAt is the list's takenAt and
// refresh-sla fails. Checked against a current mirror (-releases), its
// refreshedAt is the day of the check and refresh-sla passes.
func TestRefreshSLA400DaysAhead(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the runner")
	}
	taken := takenAt(t)
	ahead := taken.AddDate(0, 0, 400).Add(12 * time.Hour)
	clock := func() time.Time { return ahead }
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	for _, tt := range []struct {
		name      string
		refresher *facets.Refresher
		dated     time.Time
		verdict   string
	}{
		{"the embedded list", &facets.Refresher{Now: clock}, taken, "fail"},
		{"a current mirror", &facets.Refresher{Now: clock, Upstream: mirrorFile(writeMirror(t))}, ahead, "pass"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// The host reads one clock: its policy's is the Refresher's.
			s := startSurfacesWith(t, config{Refresher: tt.refresher, Policy: policy.Policy{Now: clock}})
			want := tt.dated.Format(time.DateOnly)
			if a, m := servedRefreshedAt(t, s); a != want || m != want {
				t.Errorf("served refreshedAt %s / %s, want %s", a, m, want)
			}
			rep, out := conform(ctx, t, "--now", ahead.Format(time.RFC3339), s.h.env.BaseURL)
			rows := 0
			for _, r := range rep.Results {
				if r.Requirement != "openwop.requirement.0175.refresh-sla" {
					continue
				}
				rows++
				if r.Verdict != tt.verdict {
					t.Errorf("refresh-sla %s (%s), want %s", r.Verdict, r.Why, tt.verdict)
				}
				if tt.verdict == "fail" && !strings.Contains(r.Why, "is 400.5 days old") {
					t.Errorf("refresh-sla failed for %q, want the facets 400.5 days old", r.Why)
				}
			}
			if rows != 1 {
				t.Fatalf("%d refresh-sla rows:\n%s", rows, out)
			}
		})
	}
}

// fakeTimer hands a Refresher's waits to the test.
type fakeTimer struct {
	calls chan time.Duration
	fire  chan time.Time
}

func (f *fakeTimer) After(d time.Duration) <-chan time.Time {
	f.calls <- d
	return f.fire
}

// TestDiscoveryRefreshesWhileServing: the host checks its facets again
// daily while it serves, and serves what each check dated.
func TestDiscoveryRefreshesWhileServing(t *testing.T) {
	var mu sync.Mutex
	now := takenAt(t).AddDate(0, 0, 30)
	timer := &fakeTimer{calls: make(chan time.Duration), fire: make(chan time.Time)}
	r := &facets.Refresher{
		Upstream: mirrorFile(writeMirror(t)),
		Now:      func() time.Time { mu.Lock(); defer mu.Unlock(); return now },
		After:    timer.After,
	}
	s := startSurfacesWith(t, config{Refresher: r, Policy: policy.Policy{Now: r.Now}})
	if d := <-timer.calls; d != 24*time.Hour { // the first check has run
		t.Errorf("the host checks every %v, want daily", d)
	}
	day := now.Format(time.DateOnly)
	if a, m := servedRefreshedAt(t, s); a != day || m != day {
		t.Errorf("served %s / %s, want %s", a, m, day)
	}
	mu.Lock()
	now = now.Add(24 * time.Hour)
	mu.Unlock()
	timer.fire <- now
	<-timer.calls // the second check has run and published
	day = now.Format(time.DateOnly)
	if a, m := servedRefreshedAt(t, s); a != day || m != day {
		t.Errorf("served %s / %s a day later, want %s", a, m, day)
	}
}

// TestHostRefusesUndatedFacets: a host whose facets fail their check
// against upstream has no honest refreshedAt, and does not start.
func TestHostRefusesUndatedFacets(t *testing.T) {
	f := defaultFacets()
	f.A2A.Versions, f.A2A.PreferredVersion = []string{"1.0", "1.1"}, "1.1"
	_, err := newHost(config{Addr: "127.0.0.1:0", Facets: f}, &discard{})
	if err == nil || !strings.Contains(err.Error(), "the facets' check against upstream failed") ||
		!strings.Contains(err.Error(), `a2a.versions[1]: "1.1" is not listed upstream`) {
		t.Errorf("an unlisted version: %v", err)
	}
	missing := &facets.Refresher{Upstream: mirrorFile(filepath.Join(t.TempDir(), "none.json"))}
	_, err = newHost(config{Addr: "127.0.0.1:0", Facets: defaultFacets(), Refresher: missing}, &discard{})
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "host: checking the facets against upstream: ") {
		t.Errorf("a mirror that is not there: %v", err)
	}
}

// TestServeReturnsBackgroundErrors: background work that fails is not
// lost: Serve returns its error once it stops.
func TestServeReturnsBackgroundErrors(t *testing.T) {
	cfg := config{Addr: "127.0.0.1:0", Facets: defaultFacets(), Refresher: &facets.Refresher{Interval: -time.Hour}}
	h, err := newHost(cfg, &discard{}, hostMounts(cfg, nil)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.Serve(ctx); err == nil || !strings.Contains(err.Error(), "Refresher.Interval") {
		t.Errorf("Serve = %v, want the Refresher's range error", err)
	}
}

// TestReleasesFlag: -releases makes the host's Refresher read the mirror
// at its path, and without it the Refresher checks the embedded list.
func TestReleasesFlag(t *testing.T) {
	cfg, _, err := parseFlags(nil, io.Discard)
	if err != nil || cfg.Refresher == nil || cfg.Refresher.Upstream != nil || cfg.Refresher.Logger == nil {
		t.Fatalf("no -releases: %+v, %v", cfg.Refresher, err)
	}
	if log := cfg.Refresher.Logger; log.Enabled(context.Background(), slog.LevelInfo) || !log.Enabled(context.Background(), slog.LevelWarn) {
		t.Error("the Refresher logs a passing check, or no warning")
	}
	path := writeMirror(t)
	cfg, _, err = parseFlags([]string{"-releases", path}, io.Discard)
	if err != nil || cfg.Refresher == nil || cfg.Refresher.Upstream == nil {
		t.Fatalf("-releases: %+v, %v", cfg.Refresher, err)
	}
	rc, err := cfg.Refresher.Upstream(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got, _ := io.ReadAll(rc)
	if want, _ := os.ReadFile(path); string(got) != string(want) {
		t.Errorf("the Upstream read %q, want the mirror", got)
	}
}
