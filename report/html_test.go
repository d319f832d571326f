package report_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/facets"
	internal "github.com/wopneg/wopneg/internal/report"
	"github.com/wopneg/wopneg/report"
)

// TestWriteHTML checks that the page holds a chart per protocol and per
// change, inline, and needs nothing from elsewhere.
func TestWriteHTML(t *testing.T) {
	tally, err := internal.New(internal.Options{Period: internal.Week, Changes: []internal.Change{
		{Protocol: facets.ProtocolA2A, Floor: "1.0"}, {Protocol: facets.ProtocolMCP, Drop: "2025-11-25"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"../internal/report/testdata/record.jsonl", "../internal/report/testdata/edges.jsonl"} {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		err = tally.ReadLines(f, name)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	var page bytes.Buffer
	if err := report.WriteHTML(&page, tally.Report()); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	if n := strings.Count(html, "<svg"); n != 4 {
		t.Errorf("%d charts, want 4: a2a, mcp and the two changes", n)
	}
	for _, want := range []string{"<!doctype html>", "floor a2a 1.0", "drop mcp 2025-11-25", "0.3 leaves the v1 tree on 2027-03-12", "edges.jsonl:4"} {
		if !strings.Contains(html, want) {
			t.Errorf("the page does not say %q", want)
		}
	}
	for _, banned := range []string{"<?xml", "<script", "<link", "src=", "url("} {
		if strings.Contains(html, banned) {
			t.Errorf("the page holds %q: it should need nothing from elsewhere", banned)
		}
	}
}

func TestWriteHTMLEmpty(t *testing.T) {
	var page bytes.Buffer
	if err := report.WriteHTML(&page, (&internal.Tally{}).Report()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "0 negotiation.decided events in 0 lines") {
		t.Errorf("the empty report's page:\n%s", page.String())
	}
}

func TestCountTicks(t *testing.T) {
	for _, hi := range []float64{1, 5, 7, 1234} {
		for _, tick := range report.CountTicks(0, hi) {
			if tick.Value != float64(int64(tick.Value)) {
				t.Errorf("0 to %v: a tick at %v", hi, tick.Value)
			}
			if tick.Label != "" && strings.ContainsAny(tick.Label, ".e") {
				t.Errorf("0 to %v: a tick labelled %q", hi, tick.Label)
			}
		}
		if len(report.CountTicks(0, hi)) == 0 {
			t.Errorf("0 to %v: no ticks", hi)
		}
	}
}
