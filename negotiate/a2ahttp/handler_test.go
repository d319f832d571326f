package a2ahttp_test

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
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// TestHandlerRefreshedAt: a refreshedAt written by hand outside its
// window stops the host with the fix; an empty one is dated from the
// release list embedded in the module.
func TestHandlerRefreshedAt(t *testing.T) {
	server := answering(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{}}`)
	for refreshed, want := range map[string]string{
		"2020-01-01": "a2ahttp: a2a.refreshedAt: refreshedAt 2020-01-01 is 2524 days old: the 90-day refresh window closed at 2020-03-31T00:00:00Z (RFC 0175 §D.4); write the day the facet's versions were last checked against upstream, or leave refreshedAt empty and it is dated from the release list embedded in the module",
		"2027-06-01": "a2ahttp: a2a.refreshedAt: refreshedAt 2027-06-01 is more than one day after now (2026-11-29T12:00:00Z); write the day",
		"2026-11-01": "",
		"":           "",
	} {
		f := &facets.A2A{Versions: []string{"0.3", "1.0"}, PreferredVersion: "1.0", MinimumVersion: "0.3", RefreshedAt: refreshed}
		h, err := a2ahttp.Handler(f, nil, server, a2ahttp.HandlerOptions{Policy: clock(policy.Policy{})})
		if want == "" {
			if err != nil || h == nil {
				t.Errorf("refreshedAt %q: %v", refreshed, err)
			}
			continue
		}
		if err == nil || h != nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("refreshedAt %q: %v, want %q", refreshed, err, want)
		}
	}
}

// TestHandlerOptions: a host past the defaults — its own sink, a policy
// that requires the audit, Observe — in the one call; options it cannot
// use are errors.
func TestHandlerOptions(t *testing.T) {
	rec := &negotiatetest.Recorder{}
	var observed []negotiate.Exchange
	server := &asked{next: answering(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{}}`)}
	h, err := a2ahttp.Handler(wideA2A().A2A, nil, server, a2ahttp.HandlerOptions{
		Options: a2ahttp.Options{Sink: rec, Subject: subjectOf,
			Observe: func(_ context.Context, x negotiate.Exchange) { observed = append(observed, x) }},
		Policy: clock(policy.Policy{RequireAudit: true}),
	})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, post("/a2a", rpcBody("1"), "A2A-Version", "1.1", "Authorization", bearer))
	if got := rec.Events(); len(got) != 1 || got[0].Payload.Version != "1.1" || len(observed) != 1 || server.outcome.Version != "1.1" {
		t.Errorf("recorded %+v, observed %d, served %+v; want the downgrade in the host's sink, observed", got, len(observed), server.outcome)
	}
	rec.Fail(events.ErrClosed)
	w = httptest.NewRecorder()
	h.ServeHTTP(w, post("/a2a", rpcBody("1"), "A2A-Version", "1.2"))
	if server.calls != 2 || strings.Contains(w.Body.String(), `"result"`) {
		t.Errorf("a required record that failed was served: %d calls, %s", server.calls, w.Body)
	}
	for name, tc := range map[string]struct {
		caller func(*http.Request) *negotiate.Subject
		opts   []a2ahttp.HandlerOptions
		want   string
	}{
		"two options":      {nil, []a2ahttp.HandlerOptions{{}, {}}, "a2ahttp: Handler takes at most one HandlerOptions, got 2"},
		"the caller twice": {subjectOf, []a2ahttp.HandlerOptions{{Options: a2ahttp.Options{Subject: subjectOf}}}, "a2ahttp: the caller is given twice"},
		"a negative bound": {nil, []a2ahttp.HandlerOptions{{Options: a2ahttp.Options{MaxBodyBytes: -1}, Policy: clock(policy.Policy{})}}, "a2ahttp: "},
	} {
		if h, err := a2ahttp.Handler(wideA2A().A2A, tc.caller, server, tc.opts...); err == nil || h != nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

// TestNewRefusesARefreshedAtOutsideItsWindow: New, where a host that
// does not use Handler starts, refuses a refreshedAt the host wrote that
// no check has come to yet, or that is older than its window, naming the
// fix; a day ahead is kept, and one Compile dated from the release list
// is never refused, even 400 days after that list was taken, when New
// warns on the error log instead: nor is that day when the host wrote it,
// which a facets.Refresher checking against the list gives.
func TestNewRefusesARefreshedAtOutsideItsWindow(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	later := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC).Add(400 * 24 * time.Hour)
	for _, c := range []struct {
		refreshed string
		now       time.Time
		want      string
		warns     bool
	}{
		{"2026-12-01", now, "a2ahttp: a2a.refreshedAt: refreshedAt 2026-12-01 is more than one day after now (2026-11-29T12:00:00Z); write the day the facet's versions were last checked against upstream, or leave refreshedAt empty", false},
		{"2026-08-31", now, "a2ahttp: a2a.refreshedAt: refreshedAt 2026-08-31 is 90 days old: the 90-day refresh window closed at 2026-11-29T00:00:00Z (RFC 0175 §D.4); write the day", false},
		{"2026-11-30", now, "", false},
		{"2026-09-01", now, "", false},
		{"", now, "", false},
		{"", later, "", true},
		{"2026-11-29", later, "", true}, // the list's own day, as a facets.Refresher the host ran gives it
		{"2026-11-28", later, "a2ahttp: a2a.refreshedAt: refreshedAt 2026-11-28 is 401 days old", false},
	} {
		set := facets.Set{A2A: &facets.A2A{Versions: []string{"0.3", "1.0"}, PreferredVersion: "1.0", MinimumVersion: "0.3", RefreshedAt: c.refreshed}}
		n, err := negotiate.Compile(set, policy.Policy{Now: func() time.Time { return c.now }})
		if err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		m, err := a2ahttp.New(n, a2ahttp.Options{Sink: &negotiatetest.Recorder{}, ErrorLog: slog.New(slog.NewTextHandler(&log, nil))})
		if c.want == "" && (err != nil || m == nil) || c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want) || m != nil) {
			t.Errorf("refreshedAt %q on %s: New = %v, want %q", c.refreshed, c.now, err, c.want)
		}
		if warned := strings.Contains(log.String(), "level=WARN") && strings.Contains(log.String(), "refreshedAt=2026-11-29"); warned != c.warns {
			t.Errorf("refreshedAt %q on %s: logged %q", c.refreshed, c.now, log.String())
		}
	}
}
