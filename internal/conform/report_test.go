package conform

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/internal/conform/verdict"
)

func sampleReport() Report {
	p := verdict.New(scRefresh, "openwop.requirement.0175.refresh-sla")
	p.Wire(true, "x")
	b := verdict.New(scAuthenticated, "openwop.requirement.0175.negotiation-authenticated")
	b.Wire(true, "x")
	b.Block(FloorIsPreferred)
	f := verdict.New(scNoTransport, "openwop.requirement.0175.no-transport-advertisement")
	f.Wire(false, "the discovery root carries supportedTransports")
	i := verdict.New(scThreatModel, "openwop.requirement.0173.threat-model-template")
	i.Inapplicable("not a host")
	return Report{Base: "http://127.0.0.1:8080", Results: settle(p, b, f, i)}
}

func TestWriteTable(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleReport().WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines:\n%s", len(lines), buf.String())
	}
	for i, want := range []string{"SCENARIO", "v2-refresh-sla", "v2-negotiation-authenticated", "v2-no-transport-advertisement", "v2-threat-model-template",
		"http://127.0.0.1:8080: 1 pass, 1 fail, 1 blocked, 1 inapplicable"} {
		if !strings.HasPrefix(lines[i], want) {
			t.Errorf("line %d: %q, want it to start %q", i, lines[i], want)
		}
	}
	if !strings.Contains(lines[2], "blocked") || !strings.Contains(lines[2], "1 (1 wire)") || !strings.HasSuffix(lines[2], FloorIsPreferred) {
		t.Errorf("blocked row: %q", lines[2])
	}
}

func TestWriteJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleReport().WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Base    string         `json:"base"`
		Counts  map[string]int `json:"counts"`
		Results []struct {
			Scenario, Requirement, Verdict, Why string
			Assertions, WireAssertions          int
		} `json:"results"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Base != "http://127.0.0.1:8080" || doc.Counts["pass"] != 1 || doc.Counts["fail"] != 1 || len(doc.Results) != 4 {
		t.Fatalf("%s", buf.String())
	}
	if r := doc.Results[1]; r.Verdict != "blocked" || r.Why != FloorIsPreferred || r.WireAssertions != 1 {
		t.Fatalf("%+v", r)
	}
	if strings.Contains(buf.String(), `\u00a7`) {
		t.Fatal("§ is escaped")
	}
}
