package facets_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/wopneg/wopneg/facets"
)

func ExampleHandler() {
	record := facets.Record{Status: "experimental", Since: "2.0", Until: "2.1", Witness: "seam-gated"}
	doc := facets.Discovery{
		ProtocolVersions: []string{"2.0"},
		PreferredVersion: "2.0",
		MCP: &facets.MCP{
			Revisions: []string{"2025-11-25", "2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-11-25",
			RefreshedAt: "2026-09-18",
			ServerURLs:  []string{"https://host.example/mcp"}, // served inbound: hostEvents lists negotiation.decided
			Record:      record,
		},
	}
	ctx, stop := context.WithCancel(context.Background())
	refresher := &facets.Refresher{
		// The clock is fixed so that the output is; a host leaves Now nil.
		Now: func() time.Time { return time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC) },
		// One check is enough here: the first wait for the next one ends
		// the run. A host leaves After nil.
		After: func(time.Duration) <-chan time.Time { stop(); return nil },
	}
	h, err := facets.NewHandler(doc, refresher)
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+facets.WellKnownPath, h)

	// A host runs the checks for as long as it serves: go h.Run(ctx).
	fmt.Println(h.Run(ctx))

	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, facets.WellKnownPath, nil))
	body, _ := io.ReadAll(rec.Body)
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"))
	fmt.Println(string(body))
	// Output:
	// context canceled
	// 200 application/json
	// {"protocolVersions":["2.0"],"preferredVersion":"2.0","hostEvents":{"types":[{"type":"negotiation.decided","delivery":"durable"}]},"mcp":{"revisions":["2025-11-25","2026-07-28"],"preferredVersion":"2026-07-28","minimumRevision":"2025-11-25","refreshedAt":"2026-11-29","serverUrls":["https://host.example/mcp"],"status":"experimental","since":"2.0","until":"2.1","witness":"seam-gated"}}
}
