package facets

import (
	"slices"
	"testing"
	"time"
)

func TestCheckRefresh(t *testing.T) {
	day := time.Date(2026, 9, 18, 0, 0, 0, 0, time.UTC)
	adv := Advertised{Protocol: ProtocolA2A, RefreshedAt: "2026-09-18"}
	for _, tc := range []struct {
		name string
		now  time.Time
		want string // the rule, "" when within the SLA
	}{
		{"same instant", day, ""},
		{"exactly 90 days", day.Add(90 * 24 * time.Hour), ""},
		{"90 days and 1ns", day.Add(90*24*time.Hour + 1), "refresh-stale"},
		{"91 days", day.Add(91 * 24 * time.Hour), "refresh-stale"},
		{"exactly 1 day ahead", day.Add(-24 * time.Hour), ""},
		{"half a day ahead", day.Add(-12 * time.Hour), ""},
		{"1 day and 1ns ahead", day.Add(-24*time.Hour - 1), "refresh-future"},
		{"a year ahead", day.AddDate(-1, 0, 0), "refresh-future"},
		{"other zone, same instant", day.Add(90 * 24 * time.Hour).In(time.FixedZone("X", 7*3600)), ""},
	} {
		err := CheckRefresh(adv, tc.now)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if got := violationsOf(t, err); len(got) != 1 || got[0].Rule != tc.want || got[0].Path != "a2a.refreshedAt" {
			t.Errorf("%s: got %v, want rule %s", tc.name, got, tc.want)
		}
	}
}

func TestCheckRefreshMessages(t *testing.T) {
	day := time.Date(2026, 9, 18, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		adv  Advertised
		now  time.Time
		want string
	}{
		{Advertised{Protocol: ProtocolMCP, RefreshedAt: "2026-09-18"}, day.Add(91 * 24 * time.Hour),
			"mcp.refreshedAt: refreshedAt 2026-09-18 is 91 days old: the 90-day refresh window closed at 2026-12-17T00:00:00Z (RFC 0175 §D.4)"},
		{Advertised{Protocol: ProtocolA2A, RefreshedAt: "2026-09-18"}, day.Add(-48 * time.Hour).In(time.FixedZone("X", 3600)),
			"a2a.refreshedAt: refreshedAt 2026-09-18 is more than one day after now (2026-09-16)"},
		{Advertised{Protocol: ProtocolA2A, RefreshedAt: "2026-09-18"}, day.Add(-36 * time.Hour),
			"a2a.refreshedAt: refreshedAt 2026-09-18 is more than one day after now (2026-09-16T12:00:00Z)"},
		{Advertised{Protocol: ProtocolA2A, RefreshedAt: "2026-09-31"}, day,
			`a2a.refreshedAt: "2026-09-31" is not a date YYYY-MM-DD: no such day in that month`},
	} {
		if err := CheckRefresh(tc.adv, tc.now); err == nil || err.Error() != tc.want {
			t.Errorf("got %v\nwant %s", err, tc.want)
		}
	}
}

func TestCheckRefreshMalformed(t *testing.T) {
	for _, s := range []string{"", "2026-9-18", "2026-02-30", "2026-09-18T00:00:00Z"} {
		err := CheckRefresh(Advertised{Protocol: ProtocolMCP, RefreshedAt: s}, time.Now())
		if got := violationsOf(t, err); !slices.Equal(got, []Violation{{"mcp.refreshedAt", "date", got[0].Message}}) {
			t.Errorf("%q: %v", s, got)
		}
	}
}

func TestRefreshConstants(t *testing.T) {
	if RefreshWindow != 2160*time.Hour || refreshLeeway != 24*time.Hour {
		t.Errorf("window %v, leeway %v", RefreshWindow, refreshLeeway)
	}
}
