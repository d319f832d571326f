package mcphttp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// A host past the defaults in one call: its own audit sink, and a policy
// that requires every record before a request is served. refreshedAt is
// left empty, so it is dated from the release list embedded in the
// module; a date written by hand outside its window stops the host.
func ExampleHandler() {
	facet := &facets.MCP{Revisions: []string{"2025-11-25", "2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-11-25"}
	server := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { // stands for the go-sdk's stateless handler
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-11-25","2026-07-28"],"tools":[]}}`)
	})
	audit := &negotiatetest.Recorder{}
	clock := func() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) }
	h, err := mcphttp.Handler(facet, nil, server, mcphttp.HandlerOptions{
		Options: mcphttp.Options{Sink: audit},
		Policy:  policy.Policy{RequireAudit: true, Now: clock},
	})
	if err != nil {
		panic(err)
	}
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`))
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", "tools/list")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	e := audit.Events()[0].Payload
	fmt.Println(w.Code, e.Outcome, e.Version)

	facet.RefreshedAt = "2020-01-01"
	_, err = mcphttp.Handler(facet, nil, server, mcphttp.HandlerOptions{Policy: policy.Policy{Now: clock}})
	fmt.Println(strings.ReplaceAll(err.Error(), "; ", ";\n"))
	// Output:
	// 200 accepted 2026-07-28
	// mcphttp: mcp.refreshedAt: refreshedAt 2020-01-01 is 2526 days old: the 90-day refresh window closed at 2020-03-31T00:00:00Z (RFC 0175 §D.4);
	// write the day the facet's versions were last checked against upstream, or leave refreshedAt empty and it is dated from the release list embedded in the module
}
