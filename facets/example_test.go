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
	var each interface{ Unwrap() []error }
	if errors.As(err, &each) {
		for _, e := range each.Unwrap() {
			v := e.(*facets.Violation)
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
		var v *facets.Violation
		if errors.As(err, &v) {
			fmt.Println(v.Rule, v)
			continue
		}
		fmt.Println("fresh")
	}
	// Output:
	// fresh
	// refresh-stale mcp.refreshedAt: refreshedAt 2026-09-18 is 90 days old: the 90-day refresh window closed at 2026-12-17T00:00:00Z (RFC 0175 §D.4)
}

func ExampleLint() {
	doc := []byte(`{
	  "protocolVersions": ["2.0"],
	  "preferredVersion": "2.0",
	  "supportedTransports": ["grpc"],
	  "mcp": {
	    "status": "experimental", "since": "2.0", "until": "2.1", "witness": "seam-gated",
	    "revisions": ["2025-06-18", "2026-07-28"],
	    "preferredVersion": "2026-07-28",
	    "minimumRevision": "2025-06-18",
	    "refreshedAt": "2026-07-01",
	    "profiles": ["mcp-2025-06-18-legacy"]
	  }
	}`)
	for _, f := range facets.Lint(doc, time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)) {
		fmt.Printf("%s: %s\n", f.Path, f.Rule)
	}
	// Output:
	// supportedTransports: supported-transports
	// mcp.profiles[0]: legacy-profile
	// mcp.revisions[0]: legacy-version
	// mcp.minimumRevision: legacy-version
	// mcp.refreshedAt: refresh-stale
}
