package facets

import (
	"errors"
	"testing"
	"time"
)

func TestCheckRefresh(t *testing.T) {
	day := time.Date(2026, 9, 18, 0, 0, 0, 0, time.UTC)
	adv := Advertised{Protocol: ProtocolA2A, RefreshedAt: "2026-09-18"}
	for _, tc := range []struct {
		name string
		now  time.Time
		want error // sentinel, nil when within the SLA
	}{
		{"same instant", day, nil},
		{"exactly 90 days", day.Add(90 * 24 * time.Hour), nil},
		{"90 days and 1ns", day.Add(90*24*time.Hour + 1), ErrRefreshStale},
		{"91 days", day.Add(91 * 24 * time.Hour), ErrRefreshStale},
		{"exactly 1 day ahead", day.Add(-24 * time.Hour), nil},
		{"half a day ahead", day.Add(-12 * time.Hour), nil},
		{"1 day and 1ns ahead", day.Add(-24*time.Hour - 1), ErrRefreshFuture},
		{"a year ahead", day.AddDate(-1, 0, 0), ErrRefreshFuture},
		{"other zone, same instant", day.Add(90 * 24 * time.Hour).In(time.FixedZone("X", 7*3600)), nil},
	} {
		err := CheckRefresh(adv, tc.now)
		if tc.want == nil {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		var re *RefreshError
		if !errors.Is(err, tc.want) || !errors.As(err, &re) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
			continue
		}
		if re.Protocol != ProtocolA2A || re.RefreshedAt != "2026-09-18" || !re.Now.Equal(tc.now) || re.Age != tc.now.Sub(day) {
			t.Errorf("%s: %+v", tc.name, re)
		}
		if errors.Is(err, ErrMalformedDate) || errors.Is(err, ErrRefreshStale) == errors.Is(err, ErrRefreshFuture) {
			t.Errorf("%s: %v matches the wrong sentinels", tc.name, err)
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
			"mcp.refreshedAt 2026-09-18 at 2026-12-18T00:00:00Z: refreshedAt is older than the 90-day refresh window"},
		{Advertised{Protocol: ProtocolA2A, RefreshedAt: "2026-09-18"}, day.Add(-48 * time.Hour).In(time.FixedZone("X", 3600)),
			"a2a.refreshedAt 2026-09-18 at 2026-09-16T00:00:00Z: refreshedAt is more than one day in the future"},
		{Advertised{Protocol: ProtocolA2A, RefreshedAt: "2026-09-31"}, day,
			`a2a.refreshedAt: date "2026-09-31": no such day in that month: malformed date`},
	} {
		if err := CheckRefresh(tc.adv, tc.now); err == nil || err.Error() != tc.want {
			t.Errorf("got %v\nwant %s", err, tc.want)
		}
	}
}

func TestCheckRefreshMalformed(t *testing.T) {
	for _, s := range []string{"", "2026-9-18", "2026-02-30", "2026-09-18T00:00:00Z"} {
		err := CheckRefresh(Advertised{Protocol: ProtocolMCP, RefreshedAt: s}, time.Now())
		var re *RefreshError
		if !errors.Is(err, ErrMalformedDate) || !errors.As(err, &re) || re.RefreshedAt != s || re.Age != 0 {
			t.Errorf("%q: %v", s, err)
		}
		if errors.Is(err, ErrRefreshStale) || errors.Is(err, ErrRefreshFuture) {
			t.Errorf("%q: %v matches a timing sentinel", s, err)
		}
	}
}

func TestSetCheckRefresh(t *testing.T) {
	now := time.Date(2026, 12, 17, 0, 0, 0, 0, time.UTC) // 90 days after 2026-09-18
	fresh, stale := refA2A(), refMCP()
	stale.RefreshedAt = "2026-09-17"
	s := Set{A2A: fresh, MCP: stale}
	err := s.CheckRefresh(now)
	var re *RefreshError
	if !errors.Is(err, ErrRefreshStale) || !errors.As(err, &re) || re.Protocol != ProtocolMCP {
		t.Fatalf("got %v", err)
	}
	if got, want := err.Error(), "mcp.refreshedAt 2026-09-17 at 2026-12-17T00:00:00Z: refreshedAt is older than the 90-day refresh window"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	fresh.RefreshedAt = "2026-12-19"
	err = s.CheckRefresh(now)
	if !errors.Is(err, ErrRefreshStale) || !errors.Is(err, ErrRefreshFuture) {
		t.Errorf("both: %v", err)
	}
	if err := (Set{A2A: refA2A()}).CheckRefresh(now); err != nil {
		t.Errorf("fresh: %v", err)
	}
	if err := (Set{}).CheckRefresh(now); err != nil {
		t.Errorf("empty: %v", err)
	}
}

func TestRefreshConstants(t *testing.T) {
	if RefreshWindow != 2160*time.Hour || RefreshLeeway != 24*time.Hour {
		t.Errorf("window %v, leeway %v", RefreshWindow, RefreshLeeway)
	}
}
