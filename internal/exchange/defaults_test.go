package exchange_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// taken is the day the embedded release list was taken from upstream.
var taken = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

func at(t time.Time) policy.Policy { return policy.Policy{Now: func() time.Time { return t }} }

// TestDefaults: a facet without refreshedAt is dated by the embedded
// release list, one with it is kept (its window is Refreshed's), and a
// facet the list does not vouch for, an invalid one and a missing one are
// errors naming the adapter.
func TestDefaults(t *testing.T) {
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
		{name: "kept", set: a2a("2020-01-01"), p: facets.ProtocolA2A, date: "2020-01-01"},
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
			n, err := exchange.Defaults("x", c.set, c.p, at(now))
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
		})
	}
}

// a2a is a facet set of A2A 1.0 refreshed on day ("" for undated).
func a2a(day string) facets.Set {
	return facets.Set{A2A: &facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0", RefreshedAt: day}}
}

// TestRefreshed: a refreshedAt the host wrote is held to its window on
// the policy's clock, both bounds inclusive, with the fix in the error;
// one the release list gave is never refused, and is quiet while it lies
// in the window.
func TestRefreshed(t *testing.T) {
	now := taken.Add(10 * 24 * time.Hour)
	for day, want := range map[string]string{
		"2026-10-01": "",
		"2026-09-10": "",
		"2026-12-10": "",
		"":           "",
		"2026-09-09": "x: a2a.refreshedAt: refreshedAt 2026-09-09 is 91 days old: the 90-day refresh window closed at 2026-12-08T00:00:00Z (RFC 0175 §D.4); write the day the facet's versions were last checked against upstream, or leave refreshedAt empty and it is dated from the release list embedded in the module",
		"2020-01-01": "x: a2a.refreshedAt: refreshedAt 2020-01-01 is 2534 days old",
		"2026-12-11": "x: a2a.refreshedAt: refreshedAt 2026-12-11 is more than one day after now (2026-12-09); write the day the facet's versions were last checked",
		"2027-06-01": "x: a2a.refreshedAt: refreshedAt 2027-06-01 is more than one day after now",
	} {
		n, err := negotiate.Compile(a2a(day), at(now))
		if err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		err = exchange.Refreshed("x", n, facets.ProtocolA2A, slog.New(slog.NewTextHandler(&log, nil)))
		if want == "" && err != nil || want != "" && (err == nil || !strings.HasPrefix(err.Error(), want)) {
			t.Errorf("refreshedAt %q: %v, want %q", day, err, want)
		}
		if log.Len() != 0 {
			t.Errorf("refreshedAt %q logged %q", day, log.String())
		}
	}
}

// TestRefreshedAgedList: 400 days after the embedded release list was
// taken, a facet that leaves refreshedAt empty still starts, dated the
// day the list vouches for, and the log says why its discovery is
// non-conformant and what to do, as it does for a host that dated the
// facet with a Refresher of that list; any other day 400 days old is
// refused.
func TestRefreshedAgedList(t *testing.T) {
	later := taken.Add(400 * 24 * time.Hour)
	var log bytes.Buffer
	n, err := exchange.Defaults("x", a2a(""), facets.ProtocolA2A, at(later))
	if err == nil {
		err = exchange.Refreshed("x", n, facets.ProtocolA2A, slog.New(slog.NewTextHandler(&log, nil)))
	}
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
	// A host that dates its facets with a zero facets.Refresher before it
	// compiles them gets the same day, and the same treatment.
	rep, err := (&facets.Refresher{Now: func() time.Time { return later }}).Check(t.Context(), a2a(""))
	if err != nil {
		t.Fatal(err)
	}
	n, err = negotiate.Compile(rep.Set, at(later))
	if err != nil {
		t.Fatal(err)
	}
	log.Reset()
	if err := exchange.Refreshed("x", n, facets.ProtocolA2A, slog.New(slog.NewTextHandler(&log, nil))); err != nil || !strings.Contains(log.String(), "level=WARN") {
		t.Errorf("dated by a Refresher of the embedded list, 400 days on: %v, logged %q", err, log.String())
	}
	// Any other day is the host's, and held to its window.
	n, err = exchange.Defaults("x", a2a("2026-11-28"), facets.ProtocolA2A, at(later))
	if err != nil {
		t.Fatal(err)
	}
	if err := exchange.Refreshed("x", n, facets.ProtocolA2A, nil); err == nil || !strings.Contains(err.Error(), "refreshedAt 2026-11-28 is 401 days old") {
		t.Errorf("a hand-written date 401 days old: %v", err)
	}
	// A facet the list does not vouch for has no list day: its date is
	// the host's.
	wide := facets.Set{A2A: &facets.A2A{Versions: []string{"1.0", "1.1"}, PreferredVersion: "1.1", MinimumVersion: "1.0", RefreshedAt: "2026-11-29"}}
	if n, err = exchange.Defaults("x", wide, facets.ProtocolA2A, at(later)); err != nil {
		t.Fatal(err)
	}
	if err := exchange.Refreshed("x", n, facets.ProtocolA2A, nil); err == nil || !strings.Contains(err.Error(), "refreshedAt 2026-11-29 is 400 days old") {
		t.Errorf("a facet the list does not vouch for, 400 days on: %v", err)
	}
}

// TestDefaultSink: the default sink writes to slog.Default at Info.
func TestDefaultSink(t *testing.T) {
	var log bytes.Buffer
	old := slog.Default()
	t.Cleanup(func() { slog.SetDefault(old) })
	slog.SetDefault(slog.New(slog.NewTextHandler(&log, nil)))
	set := facets.Set{A2A: &facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0"}}
	n, err := exchange.Defaults("x", set, facets.ProtocolA2A, policy.Policy{})
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

// mounted is the Middleware of a TestMount row: its Check fails with err,
// and it keeps what it was given.
type mounted struct {
	n       *negotiate.Negotiator
	checked http.Handler
	err     error
}

func (m *mounted) Check(_ context.Context, server http.Handler) error {
	m.checked = server
	return m.err
}

func (m *mounted) Wrap(next http.Handler) http.Handler { return wrapped{next} }

// wrapped is what mounted.Wrap returns.
type wrapped struct{ http.Handler }

// TestMount: a one-call constructor takes at most one set of options and
// the caller once, records through the default sink unless given one,
// compiles the facet, and hands back the server behind the Middleware it
// started and checked; any failure on the way is its error.
func TestMount(t *testing.T) {
	mine := &negotiate.Subject{Issuer: "https://idp.example", SubjectID: "u1", Kind: "user"}
	caller := func(*http.Request) *negotiate.Subject { return mine }
	own := &negotiatetest.Recorder{}
	set := facets.Set{A2A: &facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0"}}
	server := http.NotFoundHandler()
	cases := []struct {
		name            string
		set             facets.Set
		options         int
		caller, subject func(*http.Request) *negotiate.Subject
		sink            events.Sink
		startErr, check error
		want            string // the error; "" for none
		called          bool   // the caller the options end with is mine
	}{
		{name: "defaults", set: set},
		{name: "the caller as the argument", set: set, caller: caller, called: true},
		{name: "the caller in the options", set: set, options: 1, subject: caller, sink: own, called: true},
		{name: "two sets of options", set: set, options: 2, want: "x: Handler takes at most one HandlerOptions, got 2"},
		{name: "the caller twice", set: set, options: 1, caller: caller, subject: caller, want: "x: the caller is given twice, as Handler's caller and as Options.Subject; give one"},
		{name: "no facet", set: facets.Set{}, want: "x: the a2a facet is nil"},
		{name: "a Middleware that does not start", set: set, startErr: errors.New("x: no start"), want: "x: no start"},
		{name: "a server that fails its check", set: set, check: errors.New("x: refused"), want: "x: refused"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			subject, sink := c.subject, c.sink
			var m *mounted
			h, err := exchange.Mount(exchange.OneCall{Pkg: "x", Facets: c.set, Protocol: facets.ProtocolA2A, Policy: at(taken),
				Options: c.options, Caller: c.caller, Subject: &subject, Sink: &sink}, server,
				func(n *negotiate.Negotiator) (*mounted, error) {
					m = &mounted{n: n, err: c.check}
					return m, c.startErr
				})
			if c.want != "" {
				if err == nil || err.Error() != c.want || h != nil {
					t.Fatalf("Mount = %v, %v; want the error %q", h, err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if w, ok := h.(wrapped); !ok || w.Handler == nil || m.checked == nil || m.n == nil {
				t.Errorf("Mount = %v; want the checked server behind the Middleware", h)
			}
			if got := subject != nil && subject(nil) == mine; got != c.called {
				t.Errorf("the options' caller is the one given: %v, want %v", got, c.called)
			}
			if _, own := sink.(*negotiatetest.Recorder); sink == nil || own != (c.sink != nil) {
				t.Errorf("sink %T; given %T", sink, c.sink)
			}
		})
	}
}

// TestStarts: what every binding's New refuses is the Negotiator and sink
// Check refuses, and then a date Refreshed refuses; a facet that passes
// both starts, with its advertised facet.
func TestStarts(t *testing.T) {
	now := taken.Add(10 * 24 * time.Hour)
	stale, err := negotiate.Compile(a2a("2020-01-01"), at(now))
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := negotiate.Compile(a2a("2026-10-01"), at(now))
	if err != nil {
		t.Fatal(err)
	}
	sink := events.SinkFunc(func(context.Context, events.Event) error { return nil })
	if _, err := exchange.Starts("x", stale, nil, facets.ProtocolA2A, nil); err == nil || !strings.Contains(err.Error(), "Sink is nil") {
		t.Errorf("no sink: %v", err)
	}
	if _, err := exchange.Starts("x", stale, sink, facets.ProtocolA2A, nil); err == nil || !strings.Contains(err.Error(), "refreshedAt 2020-01-01") {
		t.Errorf("a stale date: %v", err)
	}
	if adv, err := exchange.Starts("x", fresh, sink, facets.ProtocolA2A, nil); err != nil || adv.Protocol != facets.ProtocolA2A {
		t.Errorf("a fresh date: %+v, %v", adv, err)
	}
}
