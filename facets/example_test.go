package facets_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/wopneg/wopneg/facets"
)

func ExampleParse() {
	doc := []byte(`{
	  "a2a": {
	    "versions": ["1.0", "1.x"],
	    "preferredVersion": "1.0",
	    "minimumVersion": "1.0",
	    "refreshedAt": "2026-09-18",
	    "supportedTransports": ["JSONRPC"]
	  },
	  "mcp": {
	    "revisions": ["2026-07-28"],
	    "preferredVersion": "2026-07-28",
	    "minimumRevision": "2026-07-28",
	    "refreshedAt": "2026-09-18",
	    "mrtr": {"maxRounds": 17}
	  }
	}`)
	_, err := facets.Parse(doc)
	var ve *facets.ValidationError
	if errors.As(err, &ve) {
		for _, v := range ve.Violations {
			fmt.Printf("%s [%s]: %s\n", v.Path, v.Rule, v.Message)
		}
	}
	fmt.Println(errors.Is(err, facets.ErrInvalid))
	// Output:
	// a2a.versions[1] [pattern]: "1.x" is not a version "major.minor"
	// a2a.supportedTransports [unknown-field]: supportedTransports was removed by RFC 0175: v2 does not advertise transports
	// mcp.mrtr.maxRounds [range]: maxRounds 17 is not in 1–16
	// true
}

func ExampleCheckRefresh() {
	s, err := facets.Parse([]byte(`{"mcp": {"revisions": ["2026-07-28"], "preferredVersion": "2026-07-28",
		"minimumRevision": "2026-07-28", "refreshedAt": "2026-09-18"}}`))
	if err != nil {
		panic(err)
	}
	adv, _ := s.Lookup(facets.ProtocolMCP)
	for _, now := range []time.Time{
		time.Date(2026, 12, 17, 0, 0, 0, 0, time.UTC), // 90 days later: still fresh
		time.Date(2026, 12, 17, 0, 0, 1, 0, time.UTC), // a second past the window
	} {
		err := facets.CheckRefresh(adv, now)
		fmt.Println(errors.Is(err, facets.ErrRefreshStale), err)
	}
	// Output:
	// false <nil>
	// true mcp.refreshedAt 2026-09-18 at 2026-12-17T00:00:01Z: refreshedAt is older than the 90-day refresh window
}
