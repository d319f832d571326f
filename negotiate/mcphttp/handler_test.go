package mcphttp_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// atNow is the policy of the tests' clock.
var atNow = policy.Policy{Now: func() time.Time { return now }}

// discovering is a server that serves every revision of wideFacets.
func discovering() http.Handler {
	return scripted{header: map[string]string{"Content-Type": jsonCT}, chunks: []string{discoverAll}}
}

// TestHandlerRefreshedAt: a refreshedAt written by hand outside its
// window stops the host with the fix; an empty one is dated.
func TestHandlerRefreshedAt(t *testing.T) {
	for refreshed, want := range map[string]string{
		"2020-01-01": "mcphttp: mcp.refreshedAt: refreshedAt 2020-01-01 is 2524 days old: the 90-day refresh window closed at 2020-03-31T00:00:00Z (RFC 0175 §D.4); write the day the facet's versions were last checked against upstream, or leave refreshedAt empty",
		"2027-06-01": "mcphttp: mcp.refreshedAt: refreshedAt 2027-06-01 is more than one day after now (2026-11-29T12:00:00Z); write the day",
		"2026-11-01": "",
		"":           "",
	} {
		f := wideFacets().MCP
		f.RefreshedAt = refreshed
		if refreshed == "" {
			f.Revisions, f.MinimumRevision = []string{"2025-11-25", "2026-07-28"}, "2025-11-25"
		}
		h, err := mcphttp.Handler(f, nil, discovering(), mcphttp.HandlerOptions{Policy: atNow})
		if want == "" {
			if err != nil || h == nil {
				t.Errorf("refreshedAt %q: %v", refreshed, err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("refreshedAt %q: %v, want %q", refreshed, err, want)
		}
	}
}

// TestHandlerOptions: a host past the defaults — its own sink, a policy
// that requires the audit, Observe, bounds — in the one call; what it
// leaves out is the default; options it cannot use are errors.
func TestHandlerOptions(t *testing.T) {
	rec := &negotiatetest.Recorder{}
	var observed []negotiate.Exchange
	h, err := mcphttp.Handler(wideFacets().MCP, nil, discovering(), mcphttp.HandlerOptions{
		Options: mcphttp.Options{Sink: rec, Subject: subjectOf, MaxBodyBytes: 200,
			Observe: func(_ context.Context, x negotiate.Exchange) { observed = append(observed, x) }},
		Policy: policy.Policy{Now: atNow.Now, RequireAudit: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	do := func(body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("MCP-Protocol-Version", "2026-07-28")
		r.Header.Set("Mcp-Method", "tools/list")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	w := do(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	if got := rec.Events(); w.Code != http.StatusOK || len(got) != 1 || got[0].Payload.Version != "2026-07-28" || len(observed) != 1 {
		t.Errorf("answered %d; recorded %+v, observed %d; want the acceptance in the host's own sink and Observe", w.Code, got, len(observed))
	}
	if w := do(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"pad":"` + strings.Repeat("x", 200) + `"}}}`); w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("a body past MaxBodyBytes: %d", w.Code)
	}
	rec.Fail(events.ErrClosed)
	if w := do(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`); w.Code == http.StatusOK {
		t.Errorf("a required record that failed was served: %d %s", w.Code, w.Body)
	}

	for name, tc := range map[string]struct {
		caller func(*http.Request) *negotiate.Subject
		opts   []mcphttp.HandlerOptions
		want   string
	}{
		"two options":      {nil, []mcphttp.HandlerOptions{{}, {}}, "mcphttp: Handler takes at most one HandlerOptions, got 2"},
		"the caller twice": {subjectOf, []mcphttp.HandlerOptions{{Options: mcphttp.Options{Subject: subjectOf}, Policy: atNow}}, "mcphttp: the caller is given twice"},
		"a negative bound": {nil, []mcphttp.HandlerOptions{{Options: mcphttp.Options{MaxSessions: -1}, Policy: atNow}}, "mcphttp: Options.MaxSessions is -1"},
	} {
		if h, err := mcphttp.Handler(wideFacets().MCP, tc.caller, discovering(), tc.opts...); err == nil || h != nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}

	var log bytes.Buffer
	old := slog.Default()
	t.Cleanup(func() { slog.SetDefault(old) })
	slog.SetDefault(slog.New(slog.NewTextHandler(&log, nil)))
	h, err = mcphttp.Handler(wideFacets().MCP, nil, discovering(), mcphttp.HandlerOptions{Policy: atNow})
	if err != nil {
		t.Fatal(err)
	}
	w = do(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	if w.Code != http.StatusOK || !strings.Contains(log.String(), "msg=negotiation.decided") {
		t.Errorf("with no sink, answered %d and logged %q; want the decision through slog.Default", w.Code, log.String())
	}
}

// TestHandlerAgedReleaseList: 400 days after the release list embedded in
// the module was taken, a host that left refreshedAt empty still starts
// and serves, warned that its facet is past the window; its discovery,
// refreshed against that list, says the day the list vouches for, and the
// refresher says the advertisement is non-conformant.
func TestHandlerAgedReleaseList(t *testing.T) {
	later := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC).Add(400 * 24 * time.Hour)
	f := &facets.MCP{Revisions: []string{"2025-11-25", "2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-11-25"}
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, nil))
	rec := &negotiatetest.Recorder{}
	h, err := mcphttp.Handler(f, nil, discovering(), mcphttp.HandlerOptions{
		Options: mcphttp.Options{Sink: rec, ErrorLog: logger}, Policy: policy.Policy{Now: func() time.Time { return later }}})
	if err != nil {
		t.Fatalf("a host that left refreshedAt empty stopped starting: %v", err)
	}
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`))
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", "tools/list")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK || len(rec.Events()) != 1 {
		t.Errorf("answered %d, recorded %d", w.Code, len(rec.Events()))
	}
	if !strings.Contains(log.String(), "level=WARN") || !strings.Contains(log.String(), "refreshedAt=2026-11-29") {
		t.Errorf("no warning of the aged list: %q", log.String())
	}

	record := facets.Record{Status: "experimental", Since: "2.0", Until: "2.1", Witness: "seam-gated"}
	dated := *f
	dated.RefreshedAt, dated.Record = "2026-11-29", record
	var refresherLog bytes.Buffer
	checked := make(chan struct{})
	d, err := facets.NewHandler(facets.Discovery{ProtocolVersions: []string{"2.0"}, PreferredVersion: "2.0", MCP: &dated},
		&facets.Refresher{Now: func() time.Time { return later }, Logger: slog.New(slog.NewTextHandler(&refresherLog, nil)),
			After: func(time.Duration) <-chan time.Time { close(checked); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- d.Run(ctx) }()
	<-checked // the first check ran and was published
	cancel()
	<-done
	if !strings.Contains(refresherLog.String(), "refresh SLA broken: the advertisement is non-conformant") {
		t.Errorf("the refresher 400 days on: %q", refresherLog.String())
	}
	w = httptest.NewRecorder()
	d.ServeHTTP(w, httptest.NewRequest(http.MethodGet, facets.WellKnownPath, nil))
	if !strings.Contains(w.Body.String(), `"refreshedAt":"2026-11-29"`) {
		t.Errorf("the discovery 400 days on: %s", w.Body)
	}
	t.Logf("400 days on, the discovery says %s\nand the refresher %s", w.Body, refresherLog.String())
}

// TestNewRefusesARefreshedAtOutsideItsWindow: New, where a host that
// does not use Handler starts, refuses a refreshedAt the host wrote that
// no check has come to yet, or that is older than its window, naming the
// fix; a day ahead is kept, and one Compile dated from the release list
// is never refused.
func TestNewRefusesARefreshedAtOutsideItsWindow(t *testing.T) {
	for refreshed, want := range map[string]string{
		"2026-12-01": "mcphttp: mcp.refreshedAt: refreshedAt 2026-12-01 is more than one day after now (2026-11-29T12:00:00Z); write the day the facet's versions were last checked against upstream, or leave refreshedAt empty",
		"2026-08-31": "mcphttp: mcp.refreshedAt: refreshedAt 2026-08-31 is 90 days old: the 90-day refresh window closed at 2026-11-29T00:00:00Z (RFC 0175 §D.4); write the day",
		"2026-11-30": "",
		"2026-09-01": "",
		"":           "",
	} {
		set := facets.Set{MCP: &facets.MCP{Revisions: []string{"2025-11-25", "2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-11-25", RefreshedAt: refreshed}}
		n, err := negotiate.Compile(set, atNow)
		if err != nil {
			t.Fatal(err)
		}
		m, err := mcphttp.New(n, mcphttp.Options{Sink: &negotiatetest.Recorder{}})
		if want == "" && (err != nil || m == nil) || want != "" && (err == nil || !strings.HasPrefix(err.Error(), want) || m != nil) {
			t.Errorf("refreshedAt %q: New = %v, want %q", refreshed, err, want)
		}
	}
}
