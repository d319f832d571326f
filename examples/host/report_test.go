package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/wopneg/wopneg/internal/report"
)

// TestSelftestRecordReports checks that the record the demo leaves on
// stdout is what `wopneg report` reads: every line an event, none bad.
func TestSelftestRecordReports(t *testing.T) {
	var stdout, stderr bytes.Buffer
	cfg := config{Addr: "127.0.0.1:0", Token: "demo", Facets: defaultFacets()}
	if err := run(context.Background(), cfg, true, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var tally report.Tally
	if err := tally.ReadLines(&stdout, "stdout"); err != nil {
		t.Fatal(err)
	}
	r := tally.Report()
	if r.Events != 4 || r.Lines != 4 || r.Bad.NotJSON+r.Bad.NotDecided != 0 || len(r.Protocols) != 1 ||
		r.Protocols[0].Settled["2026-07-28"] != 4 || r.Protocols[0].Peers != 1 {
		t.Errorf("the demo's record reads as %+v; want 4 MCP exchanges settled at 2026-07-28, one with a peer", r)
	}
}
