package exchange_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/negotiate"
)

// TestDefaults: a facet without refreshedAt is dated by the embedded
// release list (never later than today), one with it is kept, and a
// facet the list does not vouch for, an invalid one and a missing one
// are errors naming the adapter; the sink writes to slog.Default.
func TestDefaults(t *testing.T) {
	today := time.Now().UTC().Format(time.DateOnly)
	cases := []struct {
		name string
		set  facets.Set
		p    facets.Protocol
		want string // the error; "" for none
		date func(string) bool
	}{
		{name: "dated", set: facets.Set{MCP: &facets.MCP{Revisions: []string{"2025-11-25", "2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-11-25"}},
			p: facets.ProtocolMCP, date: func(d string) bool { return d != "" && d <= today }},
		{name: "kept", set: facets.Set{A2A: &facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0", RefreshedAt: "2026-10-01"}},
			p: facets.ProtocolA2A, date: func(d string) bool { return d == "2026-10-01" }},
		{name: "not vouched for", set: facets.Set{A2A: &facets.A2A{Versions: []string{"1.0", "1.1"}, PreferredVersion: "1.1", MinimumVersion: "1.0"}},
			p: facets.ProtocolA2A, want: "x: the module's release list does not vouch for the a2a facet: a2a.versions[1]"},
		{name: "invalid, undated", set: facets.Set{MCP: &facets.MCP{Revisions: []string{"2025-11-25"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-11-25"}},
			p: facets.ProtocolMCP, want: "x: the facet could not be dated: "},
		{name: "invalid, dated", set: facets.Set{MCP: &facets.MCP{Revisions: []string{"2025-11-25"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-11-25", RefreshedAt: "2026-10-01"}},
			p: facets.ProtocolMCP, want: "x: "},
		{name: "missing", set: facets.Set{}, p: facets.ProtocolMCP, want: "x: the mcp facet is nil"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, sink, err := exchange.Defaults("x", c.set, c.p)
			if c.want != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.want) || n != nil || sink != nil {
					t.Fatalf("Defaults = %v, %v, %v; want the error %q", n, sink, err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			adv, _ := n.Facets().Lookup(c.p)
			if !c.date(adv.RefreshedAt) {
				t.Errorf("refreshedAt %q", adv.RefreshedAt)
			}
			var log bytes.Buffer
			old := slog.Default()
			t.Cleanup(func() { slog.SetDefault(old) })
			slog.SetDefault(slog.New(slog.NewTextHandler(&log, nil)))
			_, sink, _ = exchange.Defaults("x", c.set, c.p)
			if _, err := n.DecideAndRecord(context.Background(), sink, negotiate.Destination{}, nil, negotiate.InboundOffer(adv, "", adv.Preferred)); err != nil {
				t.Fatal(err)
			}
			if got := log.String(); !strings.Contains(got, "level=INFO msg=negotiation.decided") || !strings.Contains(got, "outcome=accepted") {
				t.Errorf("slog.Default() got %q, want the decision at Info", got)
			}
		})
	}
}
