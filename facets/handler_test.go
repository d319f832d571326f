package facets

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// refDiscovery is the reference host's document, refreshed 2026-09-18,
// serving both protocols inbound.
func refDiscovery() Discovery {
	return Discovery{ProtocolVersions: []string{"2.0"}, PreferredVersion: "2.0", A2A: refA2A(), MCP: refMCP()}
}

// get serves one GET of h and parses what it served.
func get(t *testing.T, h http.Handler) (Discovery, []byte) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, WellKnownPath, nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET: %d %q", rec.Code, rec.Header())
	}
	body := rec.Body.Bytes()
	d, err := ParseDiscovery(body)
	if err != nil {
		t.Fatalf("the served document does not parse: %v\n%s", err, body)
	}
	return d, body
}

// TestHandlerInbound checks the inbound rule of RFC 0242 §B: a document
// lists {negotiation.decided, durable} in hostEvents.types[] exactly when
// the host serves a protocol inbound, whatever else it lists, unless the
// host listed negotiation.decided itself (as ephemeral).
func TestHandlerInbound(t *testing.T) {
	decided := HostEvent{"negotiation.decided", "durable"}
	other := HostEvent{"run.started", "ephemeral"}
	noInbound := func(d Discovery) Discovery {
		d.A2A.AgentCardURL, d.MCP.ServerURLs, d.MCP.ServerMount = "", nil, nil
		return d
	}
	tests := []struct {
		name string
		doc  Discovery
		want []HostEvent
	}{
		{"both inbound", refDiscovery(), []HostEvent{decided}},
		{"no inbound", noInbound(refDiscovery()), nil},
		{"no inbound, others listed", func() Discovery { d := noInbound(refDiscovery()); d.HostEvents = []HostEvent{other}; return d }(), []HostEvent{other}},
		{"agent card only", func() Discovery {
			d := noInbound(refDiscovery())
			d.A2A.AgentCardURL = "https://h.example/.well-known/agent-card.json"
			return d
		}(), []HostEvent{decided}},
		{"server URLs only", func() Discovery {
			d := noInbound(refDiscovery())
			d.MCP.ServerURLs = []string{"https://h.example/mcp"}
			return d
		}(), []HostEvent{decided}},
		{"an empty server URL list is present", func() Discovery { d := noInbound(refDiscovery()); d.MCP.ServerURLs = []string{}; return d }(), []HostEvent{decided}},
		{"server mount only", func() Discovery { d := noInbound(refDiscovery()); d.MCP.ServerMount = &ServerMount{}; return d }(), []HostEvent{decided}},
		{"a2a only, inbound", Discovery{ProtocolVersions: []string{"2.0"}, PreferredVersion: "2.0", A2A: refA2A()}, []HostEvent{decided}},
		{"mcp only, not inbound", func() Discovery { d := noInbound(refDiscovery()); d.A2A = nil; return d }(), nil},
		{"already listed", func() Discovery { d := refDiscovery(); d.HostEvents = []HostEvent{other, decided}; return d }(), []HostEvent{other, decided}},
		{"listed with others", func() Discovery { d := refDiscovery(); d.HostEvents = []HostEvent{other}; return d }(), []HostEvent{other, decided}},
		{"listed as ephemeral, by a host that keeps no durable record", func() Discovery {
			d := refDiscovery()
			d.HostEvents = []HostEvent{{"negotiation.decided", "ephemeral"}}
			return d
		}(), []HostEvent{{"negotiation.decided", "ephemeral"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := NewHandler(tt.doc, nil)
			if err != nil {
				t.Fatal(err)
			}
			d, body := get(t, h)
			if !slices.Equal(d.HostEvents, tt.want) {
				t.Errorf("hostEvents %v, want %v", d.HostEvents, tt.want)
			}
			if got := Lint(body, day(t, "2026-09-18")); got != nil {
				t.Errorf("Lint of the served document: %q", got)
			}
		})
	}
}

func TestHandlerServes(t *testing.T) {
	doc := refDiscovery()
	h, err := NewHandler(doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The handler keeps its own copy.
	doc.A2A.Versions[0], doc.ProtocolVersions[0], doc.A2A.PreferredVersion = "9.9", "9.9", "9.9"
	d, body := get(t, h)
	if d.A2A.Versions[0] != "1.0" || d.ProtocolVersions[0] != "2.0" || d.Seams {
		t.Errorf("served %s", body)
	}
	if strings.Contains(string(body), "conformance") || strings.Contains(string(body), "supportedTransports") {
		t.Errorf("served %s", body)
	}

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, WellKnownPath, nil))
	if rec.Code != http.StatusOK || rec.Body.Len() != 0 || rec.Header().Get("Content-Length") != strconv.Itoa(len(body)) ||
		rec.Header().Get("Cache-Control") != "no-cache" {
		t.Errorf("HEAD: %d %q %q", rec.Code, rec.Header(), rec.Body)
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(m, WellKnownPath, strings.NewReader("{}")))
		if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: %d %q", m, rec.Code, rec.Header())
		}
	}

	seams := refDiscovery()
	seams.Seams = true
	h, err = NewHandler(seams, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d, body := get(t, h); !d.Seams || !strings.Contains(string(body), `"conformance":{"seamsProfile":"openwop-conformance-seams-v2"}`) {
		t.Errorf("with Seams: %s", body)
	}
}

func TestHandlerZero(t *testing.T) {
	var h Handler
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, WellKnownPath, nil))
	if rec.Code != http.StatusInternalServerError || strings.Contains(rec.Body.String(), "protocolVersions") {
		t.Errorf("zero Handler: %d %q", rec.Code, rec.Body)
	}
	if err := h.Run(context.Background()); err == nil {
		t.Error("zero Handler ran")
	}
}

func TestNewHandlerRefuses(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Discovery)
		want []string // "path rule"
	}{
		{"nothing advertised", func(d *Discovery) { d.A2A, d.MCP = nil, nil }, []string{" required"}},
		{"no root versions", func(d *Discovery) { d.ProtocolVersions, d.PreferredVersion = nil, "" },
			[]string{"preferredVersion pattern", "protocolVersions min-items"}},
		{"not a record", func(d *Discovery) { d.MCP.Record = Record{} },
			[]string{"mcp.since required", "mcp.status required", "mcp.witness required"}},
		{"a legacy version", func(d *Discovery) {
			d.A2A.Versions, d.A2A.MinimumVersion = []string{"0.3", "1.0"}, "0.3"
		}, []string{"a2a.minimumVersion legacy-version", "a2a.versions[0] legacy-version"}},
		{"a legacy profile", func(d *Discovery) { d.MCP.Profiles = []string{"mcp-2025-06-18-legacy"} },
			[]string{"mcp.profiles[0] legacy-profile"}},
		{"a bad host event", func(d *Discovery) { d.HostEvents = []HostEvent{{"negotiation.decided", "sometimes"}} },
			[]string{"hostEvents.types[0].delivery enum"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := refDiscovery()
			tt.edit(&d)
			h, err := NewHandler(d, nil)
			var got []string
			for _, v := range violationsOf(t, err) {
				got = append(got, v.Path+" "+v.Rule)
			}
			slices.Sort(got)
			if h != nil || !slices.Equal(got, tt.want) {
				t.Errorf("NewHandler = %v, %q; want %q", h, got, tt.want)
			}
		})
	}
}

// TestHandlerRunSchedule comes before TestHandlerRun, which waits on the
// Refresher it gave: a Handler that ran another would hang it.
func TestHandlerRunSchedule(t *testing.T) {
	h, err := NewHandler(refDiscovery(), &Refresher{Interval: -time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// Run refuses the schedule before it looks at ctx, so it reads the
	// Refresher it was given.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var v *Violation
	if err := h.Run(ctx); !errors.As(err, &v) || v.Path != "Refresher.Interval" {
		t.Errorf("Run = %v", err)
	}
}

// upstreamSwitch is an Upstream a test turns on and off.
type upstreamSwitch struct {
	mu   sync.Mutex
	list string // "" means unreachable
}

func (u *upstreamSwitch) set(list string) { u.mu.Lock(); u.list = list; u.mu.Unlock() }

func (u *upstreamSwitch) open(context.Context) (io.ReadCloser, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.list == "" {
		return nil, errors.New("connection refused")
	}
	return io.NopCloser(strings.NewReader(u.list)), nil
}

// TestHandlerRun walks a served document through checks that fail and
// pass: refreshedAt moves only with a check that passed, facet by facet,
// so a stale advertisement is served stale, and Lint and the conformance
// suite see it.
func TestHandlerRun(t *testing.T) {
	var mu sync.Mutex
	now := day(t, "2026-12-20") // the reference facets' window closed on 2026-12-17
	timer := &fakeTimer{calls: make(chan time.Duration), fire: make(chan time.Time)}
	up := &upstreamSwitch{}
	logs := new(logRecords)
	r := &Refresher{
		Upstream: up.open,
		Now:      func() time.Time { mu.Lock(); defer mu.Unlock(); return now },
		After:    timer.After,
		Logger:   slog.New(logs),
	}
	h, err := NewHandler(refDiscovery(), r)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- h.Run(ctx) }()

	// Check 1: upstream unreachable. Nothing moves: the document stays stale.
	if d := <-timer.calls; d != defaultRefreshInterval {
		t.Errorf("waited %v", d)
	}
	d, body := get(t, h)
	if d.A2A.RefreshedAt != "2026-09-18" || d.MCP.RefreshedAt != "2026-09-18" {
		t.Errorf("served after a failed check: %s", body)
	}
	if got := pairsOf(Lint(body, now)); !slices.Equal(got, []pathRule{{"a2a.refreshedAt", "refresh-stale"}, {"mcp.refreshedAt", "refresh-stale"}}) {
		t.Errorf("Lint of the stale document: %v", got)
	}
	if lines := logs.lines(); len(lines) == 0 || !strings.HasPrefix(lines[0], "ERROR refresh check failed") {
		t.Errorf("logged %q", lines)
	}

	// Checks 2 to 4; each starts from what the one before served.
	for _, c := range []struct {
		name, now, list, a2a, mcp string
		fresh                     bool // Lint finds nothing
	}{
		{"upstream lists the MCP revision but not A2A 1.0", "2026-12-21",
			`{"mcp": [{"version": "2026-07-28", "published": "2026-07-28"}]}`, "2026-09-18", "2026-12-21", false},
		{"a copy of the embedded list: it vouches for the day it was taken, before mcp's last check", "2026-12-22",
			string(published), "2026-11-29", "2026-11-29", true},
		{"a mirror of upstream as it is now, without takenAt", "2026-12-23", currentMirror(t), "2026-12-23", "2026-12-23", true},
	} {
		mu.Lock()
		now = day(t, c.now)
		mu.Unlock()
		up.set(c.list)
		timer.fire <- now
		<-timer.calls
		d, body = get(t, h)
		if d.A2A.RefreshedAt != c.a2a || d.MCP.RefreshedAt != c.mcp || c.fresh && Lint(body, now) != nil {
			t.Errorf("%s: served %s", c.name, body)
		}
	}
	if !slices.Equal(d.HostEvents, []HostEvent{{"negotiation.decided", "durable"}}) || d.PreferredVersion != "2.0" {
		t.Errorf("the rest of the document changed: %s", body)
	}

	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v", err)
	}
}

func TestHandlerConcurrent(t *testing.T) {
	h, err := NewHandler(refDiscovery(), &Refresher{Now: fixedClock(day(t, "2026-11-29"))})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			h.publish(Report{Set: Set{A2A: refA2A(), MCP: refMCP()}, Refreshed: []Protocol{ProtocolA2A}}, nil)
		})
		wg.Go(func() { get(t, h) })
	}
	wg.Wait()
}

// BenchmarkHandlerServe measures one GET of the discovery document.
func BenchmarkHandlerServe(b *testing.B) {
	h, err := NewHandler(refDiscovery(), nil)
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, WellKnownPath, nil)
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
}

// BenchmarkLint measures Lint of the reference host's document.
func BenchmarkLint(b *testing.B) {
	doc, err := json.Marshal(refDiscovery())
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		if vs := Lint(doc, now); vs != nil {
			b.Fatal(vs)
		}
	}
}
