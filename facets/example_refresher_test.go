package facets_test

import (
	"context"
	"fmt"
	"time"

	"github.com/wopneg/wopneg/facets"
)

func ExampleRefresher_Check() {
	set, err := facets.Parse([]byte(`{
	  "a2a": {"versions": ["0.3", "1.0"], "preferredVersion": "1.0", "minimumVersion": "0.3", "refreshedAt": "2026-09-18"},
	  "mcp": {"revisions": ["2026-07-28"], "preferredVersion": "2026-07-28", "minimumRevision": "2026-07-28", "refreshedAt": "2026-09-18"}
	}`))
	if err != nil {
		panic(err)
	}
	// The zero Refresher checks against the release list this package
	// embeds; the clock is fixed here so the output is.
	r := &facets.Refresher{Now: func() time.Time { return time.Date(2026, 12, 10, 9, 0, 0, 0, time.UTC) }}
	rep, err := r.Check(context.Background(), set)
	if err != nil {
		panic(err)
	}
	for _, f := range rep.Facets {
		fmt.Printf("%s: refreshed %v, refreshedAt %s, window %s, closes %s\n",
			f.Protocol, f.Refreshed, f.RefreshedAt, f.Window, f.Closes.Format(time.DateOnly))
		for _, s := range f.Superseded {
			fmt.Printf("  %s is superseded by %s (still published: the check passes)\n", s.Version, s.SupersededBy)
		}
	}
	fmt.Println("the caller's a2a.refreshedAt:", set.A2A.RefreshedAt)
	// Output:
	// a2a: refreshed true, refreshedAt 2026-12-10, window open, closes 2027-03-10
	//   0.3 is superseded by 1.0 (still published: the check passes)
	// mcp: refreshed true, refreshedAt 2026-12-10, window open, closes 2027-03-10
	// the caller's a2a.refreshedAt: 2026-09-18
}

func ExampleRefresher_Run() {
	set, err := facets.Parse([]byte(`{"mcp": {"revisions": ["2026-07-28"], "preferredVersion": "2026-07-28",
	  "minimumRevision": "2026-07-28", "refreshedAt": "2026-09-18"}}`))
	if err != nil {
		panic(err)
	}
	r := &facets.Refresher{
		Interval: 24 * time.Hour,
		Now:      func() time.Time { return time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC) },
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- r.Run(ctx, func() facets.Set { return set }, func(rep facets.Report, err error) {
			if err == nil {
				set = rep.Set // a real host would store this where its discovery handler reads
			}
			stop() // one round is enough for the example
		})
	}()
	fmt.Println(<-done) // Run has returned: nothing of it is left running
	fmt.Println("mcp.refreshedAt:", set.MCP.RefreshedAt)
	// Output:
	// context canceled
	// mcp.refreshedAt: 2026-11-29
}
