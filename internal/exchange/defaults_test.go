package exchange_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// taken is the day the embedded release list was taken from upstream.
var taken = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

func at(t time.Time) policy.Policy { return policy.Policy{Now: func() time.Time { return t }} }

// TestDefaults: a facet without refreshedAt is dated by the embedded
// release list, one with it is kept when it lies in its window and
// refused with the fix otherwise, and a facet the list does not vouch
// for, an invalid one and a missing one are errors naming the adapter.
func TestDefaults(t *testing.T) {
	a2a := func(refreshed string) facets.Set {
		return facets.Set{A2A: &facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0", RefreshedAt: refreshed}}
	}
	now := taken.Add(10 * 24 * time.Hour)
	cases := []struct {
		name string
		set  facets.Set
		p    facets.Protocol
		want string // the error; "" for none
		date string
	}{
		{name: "dated", set: facets.Set{MCP: &facets.MCP{Revisions: []string{"2025-11-25", "2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-11-25"}},
			p: facets.ProtocolMCP, date: "2026-11-29"},
		{name: "kept", set: a2a("2026-10-01"), p: facets.ProtocolA2A, date: "2026-10-01"},
		{name: "kept, 90 days old", set: a2a("2026-09-10"), p: facets.ProtocolA2A, date: "2026-09-10"},
		{name: "kept, a day ahead", set: a2a("2026-12-10"), p: facets.ProtocolA2A, date: "2026-12-10"},
		{name: "stale", set: a2a("2026-09-09"), p: facets.ProtocolA2A,
			want: "x: a2a.refreshedAt: refreshedAt 2026-09-09 is 91 days old: the 90-day refresh window closed at 2026-12-08T00:00:00Z (RFC 0175 §D.4); write the day the facet's versions were last checked against upstream, or leave refreshedAt empty and it is dated from the release list embedded in the module"},
		{name: "years stale", set: a2a("2020-01-01"), p: facets.ProtocolA2A, want: "x: a2a.refreshedAt: refreshedAt 2020-01-01 is "},
		{name: "future", set: a2a("2027-06-01"), p: facets.ProtocolA2A,
			want: "x: a2a.refreshedAt: refreshedAt 2027-06-01 is more than one day after now (2026-12-09); write the day the facet's versions were last checked"},
		{name: "not vouched for", set: facets.Set{A2A: &facets.A2A{Versions: []string{"1.0", "1.1"}, PreferredVersion: "1.1", MinimumVersion: "1.0"}},
			p: facets.ProtocolA2A, want: "x: negotiate: the a2a facet has no refreshedAt, and the release list embedded in the module does not vouch for it: a2a.versions[1]"},
		{name: "invalid, undated", set: facets.Set{MCP: &facets.MCP{Revisions: []string{"2025-11-25"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-11-25"}},
			p: facets.ProtocolMCP, want: "x: mcp.preferredVersion"},
		{name: "invalid, dated", set: facets.Set{MCP: &facets.MCP{Revisions: []string{"2025-11-25"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-11-25", RefreshedAt: "2026-12-01"}},
			p: facets.ProtocolMCP, want: "x: mcp.preferredVersion"},
		{name: "missing", set: facets.Set{}, p: facets.ProtocolMCP, want: "x: the mcp facet is nil"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var log bytes.Buffer
			n, err := exchange.Defaults("x", c.set, c.p, at(now), slog.New(slog.NewTextHandler(&log, nil)))
			if c.want != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.want) || n != nil {
					t.Fatalf("Defaults = %v, %v; want the error %q", n, err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if adv, _ := n.Facets().Lookup(c.p); adv.RefreshedAt != c.date {
				t.Errorf("refreshedAt %q, want %q", adv.RefreshedAt, c.date)
			}
			if log.Len() != 0 {
				t.Errorf("logged %q", log.String())
			}
		})
	}
}

// TestDefaultsAgedList: 400 days after the embedded release list was
// taken, a facet that leaves refreshedAt empty still compiles, dated the
// day the list vouches for, and the log says why its discovery is
// non-conformant and what to do; one that wrote a date of that day is
// refused.
func TestDefaultsAgedList(t *testing.T) {
	later := taken.Add(400 * 24 * time.Hour)
	var log bytes.Buffer
	set := facets.Set{A2A: &facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0"}}
	n, err := exchange.Defaults("x", set, facets.ProtocolA2A, at(later), slog.New(slog.NewTextHandler(&log, nil)))
	if err != nil {
		t.Fatalf("an undated facet stopped the host 400 days on: %v", err)
	}
	if adv, _ := n.Facets().Lookup(facets.ProtocolA2A); adv.RefreshedAt != "2026-11-29" {
		t.Errorf("dated %q", adv.RefreshedAt)
	}
	for _, want := range []string{"level=WARN", "older than the refresh window", "upgrade the module, or run a facets.Refresher",
		"protocol=a2a", "refreshedAt=2026-11-29", "closed=2027-02-27T00:00:00.000Z"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log %q lacks %q", log.String(), want)
		}
	}
	set.A2A.RefreshedAt = "2026-11-29"
	if _, err := exchange.Defaults("x", set, facets.ProtocolA2A, at(later), nil); err == nil || !strings.Contains(err.Error(), "400 days old") {
		t.Errorf("a hand-written date 400 days old: %v", err)
	}
}

// TestDefaultSink: the default sink writes to slog.Default at Info.
func TestDefaultSink(t *testing.T) {
	var log bytes.Buffer
	old := slog.Default()
	t.Cleanup(func() { slog.SetDefault(old) })
	slog.SetDefault(slog.New(slog.NewTextHandler(&log, nil)))
	set := facets.Set{A2A: &facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0"}}
	n, err := exchange.Defaults("x", set, facets.ProtocolA2A, policy.Policy{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	adv, _ := n.Facets().Lookup(facets.ProtocolA2A)
	if _, err := n.DecideAndRecord(t.Context(), exchange.DefaultSink(), negotiate.Destination{}, nil, negotiate.InboundOffer(adv, "", adv.Preferred)); err != nil {
		t.Fatal(err)
	}
	if got := log.String(); !strings.Contains(got, "level=INFO msg=negotiation.decided") || !strings.Contains(got, "outcome=accepted") {
		t.Errorf("slog.Default() got %q, want the decision at Info", got)
	}
}

// TestAhead: only a refreshedAt more than a day ahead of the clock is
// refused, with the fix; a stale one, which the module's own aged list
// may have given, is not.
func TestAhead(t *testing.T) {
	adv := func(day string) facets.Advertised {
		return facets.Advertised{Protocol: facets.ProtocolMCP, RefreshedAt: day}
	}
	now := taken.Add(12 * time.Hour)
	for day, want := range map[string]string{
		"2026-11-30": "",
		"2026-12-01": "x: mcp.refreshedAt: refreshedAt 2026-12-01 is more than one day after now (2026-11-29T12:00:00Z); write the day the facet's versions were last checked against upstream, or leave refreshedAt empty",
		"2026-01-01": "",
		"2026-02-30": "",
	} {
		err := exchange.Ahead("x", adv(day), now)
		if want == "" && err != nil || want != "" && (err == nil || !strings.HasPrefix(err.Error(), want)) {
			t.Errorf("Ahead(%s) = %v, want %q", day, err, want)
		}
	}
}

// TestCaller: a one-call constructor's caller is the one given, once,
// with at most one set of options.
func TestCaller(t *testing.T) {
	mine := func(*http.Request) *negotiate.Subject { return nil }
	if got, err := exchange.Caller("x", 0, nil, nil); got != nil || err != nil {
		t.Errorf("none: %v", err)
	}
	for _, c := range []struct {
		options         int
		caller, subject func(*http.Request) *negotiate.Subject
	}{{0, mine, nil}, {1, mine, nil}, {1, nil, mine}} {
		if got, err := exchange.Caller("x", c.options, c.caller, c.subject); got == nil || err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
	for options, want := range map[int]string{2: "x: Handler takes at most one HandlerOptions, got 2", 1: "x: the caller is given twice, as Handler's caller and as Options.Subject; give one"} {
		if _, err := exchange.Caller("x", options, mine, mine); err == nil || err.Error() != want {
			t.Errorf("%d options, the caller twice: %v, want %q", options, err, want)
		}
	}
}
