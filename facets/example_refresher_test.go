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
	// embeds, taken from upstream on 2026-11-29: a passing check dates the
	// facets no later than that day. The clock is fixed here so the output
	// is.
	r := &facets.Refresher{Now: func() time.Time { return time.Date(2026, 12, 10, 9, 0, 0, 0, time.UTC) }}
	rep, err := r.Check(context.Background(), set)
	if err != nil {
		panic(err)
	}
	fmt.Println("refreshed:", rep.Refreshed, "passed:", rep.Passed())
	for _, f := range rep.Findings {
		fmt.Printf("%s [%s]: %s\n", f.Path, f.Rule, f.Message)
	}
	fmt.Println("served a2a.refreshedAt:", rep.Set.A2A.RefreshedAt, "- the caller's:", set.A2A.RefreshedAt)
	// Output:
	// refreshed: [a2a mcp] passed: true
	// a2a.versions[0] [superseded]: "0.3" is superseded upstream by "1.0" but still published: the check passes
	// served a2a.refreshedAt: 2026-11-29 - the caller's: 2026-09-18
}
