package report

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
)

var update = flag.Bool("update", false, "rewrite the golden files of TestGolden")

// TestGolden runs the report's command line over the records in testdata
// and compares what it writes with the golden file of each case.
func TestGolden(t *testing.T) {
	tests := []struct {
		golden string
		args   []string
	}{
		{"record.txt", []string{"testdata/record.jsonl"}},
		{"edges.txt", []string{"--period", "day", "testdata/edges.jsonl"}},
		{"changes.txt", []string{"--period", "week", "--floor", "a2a=1.0", "--drop", "mcp=2025-11-25", "--floor", "2026-07-28", "--names", "testdata/names.txt", "testdata/record.jsonl", "testdata/edges.jsonl"}},
		{"changes.json", []string{"--json", "--period", "week", "--floor", "a2a=1.0", "--drop", "mcp=2025-11-25", "--floor", "2026-07-28", "--names", "testdata/names.txt", "testdata/record.jsonl", "testdata/edges.jsonl"}},
		{"stdin.txt", []string{"--drop", "0.3", "-"}},
	}
	stdin, err := os.ReadFile("testdata/edges.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			var out bytes.Buffer
			if err := run(tt.args, bytes.NewReader(stdin), &out); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "golden", tt.golden)
			if *update {
				if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != string(want) {
				t.Errorf("wopneg report %s wrote\n%s\nwant (%s)\n%s", strings.Join(tt.args, " "), out.String(), path, want)
			}
		})
	}
}

// run is `wopneg report args` without the process.
func run(args []string, stdin *bytes.Reader, stdout *bytes.Buffer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var c Command
	c.Bind(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	tally, err := c.Tally()
	if err != nil {
		return err
	}
	if err := ReadFiles(tally, fs.Args(), stdin); err != nil {
		return err
	}
	return c.Write(stdout, tally.Report())
}

func TestCommandErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--floor", "a2a=2025-11-25"}, `--floor a2a=2025-11-25`},
		{[]string{"--drop", "grpc=1.0"}, `protocol "grpc" is not a2a or mcp`},
		{[]string{"--floor", "junk"}, `--floor junk`},
		{[]string{"--period", "year"}, `period "year" is not day, week or month`},
		{[]string{"testdata/missing.jsonl"}, "missing.jsonl"},
		{[]string{"--names", "testdata/record.jsonl", "testdata/edges.jsonl"}, "names, line 1"},
		{[]string{"--names", "testdata/missing.txt", "testdata/edges.jsonl"}, "missing.txt"},
	} {
		err := run(tt.args, bytes.NewReader(nil), new(bytes.Buffer))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want one naming %q", tt.args, err, tt.want)
		}
	}
}

func TestParseChange(t *testing.T) {
	for _, tt := range []struct {
		kind, in string
		want     Change
		name     string
	}{
		{"floor", "1.0", Change{Protocol: facets.ProtocolA2A, Floor: "1.0"}, "floor a2a 1.0"},
		{"floor", "2026-07-28", Change{Protocol: facets.ProtocolMCP, Floor: "2026-07-28"}, "floor mcp 2026-07-28"},
		{"drop", "mcp=2025-06-18", Change{Protocol: facets.ProtocolMCP, Drop: "2025-06-18"}, "drop mcp 2025-06-18"},
		{"drop", "a2a=0.3", Change{Protocol: facets.ProtocolA2A, Drop: "0.3"}, "drop a2a 0.3"},
	} {
		got, err := ParseChange(tt.kind, tt.in)
		if err != nil || got != tt.want || got.String() != tt.name {
			t.Errorf("ParseChange(%q, %q) = %+v (%q), %v; want %+v (%q)", tt.kind, tt.in, got, got.String(), err, tt.want, tt.name)
		}
	}
	if _, err := ParseChange("raise", "1.0"); err == nil {
		t.Error("ParseChange took a kind other than floor and drop")
	}
	if _, err := New(Options{Changes: []Change{{Protocol: facets.ProtocolA2A}}}); err == nil {
		t.Error("New took a change that neither raises a floor nor drops a version")
	}
	if _, err := New(Options{Changes: []Change{{Protocol: facets.ProtocolA2A, Floor: "1.0", Drop: "0.3"}}}); err == nil {
		t.Error("New took a change that both raises a floor and drops a version")
	}
	if _, err := New(Options{Changes: []Change{{Protocol: facets.ProtocolA2A, Floor: "2026-01-01"}}}); err == nil {
		t.Error("New took a floor that is not a version of its protocol")
	}
	if _, err := New(Options{Period: "year"}); err == nil {
		t.Error("New took a period other than day, week and month")
	}
}

func TestPeriods(t *testing.T) {
	at := time.Date(2026, 12, 3, 20, 15, 0, 0, time.FixedZone("x", 3600))
	for _, tt := range []struct {
		p          Period
		start, end string
	}{
		{Day, "2026-12-03", "2026-12-04"},
		{Week, "2026-11-30", "2026-12-07"},
		{Month, "2026-12-01", "2027-01-01"},
	} {
		start := tt.p.start(at)
		if got, end := start.Format(time.DateOnly), tt.p.end(start).Format(time.DateOnly); got != tt.start || end != tt.end {
			t.Errorf("%s of %v: %s to %s, want %s to %s", tt.p, at, got, end, tt.start, tt.end)
		}
	}
	sunday := time.Date(2026, 12, 6, 23, 59, 0, 0, time.UTC)
	if got := Week.start(sunday).Format(time.DateOnly); got != "2026-11-30" {
		t.Errorf("the week of Sunday %v starts on %s, want the Monday before, 2026-11-30", sunday, got)
	}
}

// TestOutOfOrder checks that a record out of time order is counted in
// the right periods, with the right first and last times.
func TestOutOfOrder(t *testing.T) {
	var tally Tally
	for _, day := range []int{10, 2, 25, 40, 3} {
		at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC).AddDate(0, 0, day)
		tally.Add(&events.NegotiationDecided{Protocol: facets.ProtocolA2A, Outcome: "accepted", Version: "1.0", At: at})
	}
	r := tally.Report()
	p := r.Protocols[0]
	if len(p.Periods) != 2 || p.Periods[0].Exchanges != 4 || p.Periods[1].Exchanges != 1 {
		t.Fatalf("periods %+v, want 4 exchanges in November and 1 in December", p.Periods)
	}
	if p.First.Day() != 3 || p.Last.Month() != time.December || p.Periods[0].First.Day() != 3 || p.Periods[0].Last.Day() != 26 {
		t.Errorf("first %v, last %v; November from %v to %v", p.First, p.Last, p.Periods[0].First, p.Periods[0].Last)
	}
}

// TestLongLine checks that a line longer than MaxLine is counted as bad
// and the lines around it are read.
func TestLongLine(t *testing.T) {
	data, err := os.ReadFile("testdata/edges.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := bytes.Cut(data, []byte("\n"))
	var in bytes.Buffer
	in.Write(first)
	in.WriteString("\n\"" + strings.Repeat("x", MaxLine) + "\"\n" + strings.Repeat("y", 70000) + "\n")
	in.Write(first)
	in.WriteString("\n")
	var tally Tally
	if err := tally.ReadLines(&in, "long"); err != nil {
		t.Fatal(err)
	}
	r := tally.Report()
	if r.Events != 2 || r.Bad.NotJSON != 2 || r.Lines != 4 || len(r.Bad.Lines) != 2 || r.Bad.Lines[0].Line != 2 || r.Bad.Lines[1].Line != 3 ||
		!strings.Contains(r.Bad.Lines[0].Problem, "longer than") {
		t.Errorf("report %+v: want 2 events, and lines 2 (too long) and 3 (not JSON) bad", r)
	}
}

// TestBadLinesBounded checks that every bad line is counted and the first
// MaxBadLines named.
func TestBadLinesBounded(t *testing.T) {
	var tally Tally
	if err := tally.ReadLines(strings.NewReader(strings.Repeat("nope\n", 3*MaxBadLines)), "junk"); err != nil {
		t.Fatal(err)
	}
	r := tally.Report()
	if r.Bad.NotJSON != 3*MaxBadLines || len(r.Bad.Lines) != MaxBadLines || r.Bad.Lines[MaxBadLines-1].Line != MaxBadLines {
		t.Errorf("%d not JSON, %d named (the last line %d); want %d, %d", r.Bad.NotJSON, len(r.Bad.Lines), r.Bad.Lines[len(r.Bad.Lines)-1].Line, 3*MaxBadLines, MaxBadLines)
	}
	var text bytes.Buffer
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "… 280 more bad lines") {
		t.Errorf("the text report does not say how many bad lines it left out:\n%s", text.String())
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, os.ErrDeadlineExceeded }

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestIOErrors(t *testing.T) {
	var tally Tally
	if err := tally.ReadLines(failingReader{}, "broken"); err == nil || !strings.Contains(err.Error(), "reading broken") {
		t.Errorf("ReadLines of a failing reader: %v", err)
	}
	tally.Add(&events.NegotiationDecided{Protocol: facets.ProtocolMCP, Outcome: "refused", At: time.Now()})
	if err := WriteText(failingWriter{}, tally.Report()); err == nil {
		t.Error("WriteText to a failing writer returned no error")
	}
}

func TestAddPayload(t *testing.T) {
	var tally Tally
	tally.AddPayload([]byte(`{"protocol":"mcp","outcome":"accepted","version":"2026-07-28","at":"2026-11-30T00:00:00Z"}`), "db", 1)
	tally.AddPayload([]byte(`{"protocol":"mcp","outcome":"accepted","at":"2026-11-30T00:00:00Z"}`), "db", 2)
	tally.AddPayload([]byte(`{"protocol":`), "db", 3)
	r := tally.Report()
	if r.Lines != 3 || r.Events != 1 || r.Bad.NotJSON != 1 || r.Bad.NotDecided != 1 ||
		r.Bad.Lines[0].Line != 2 || !strings.HasPrefix(r.Bad.Lines[0].Problem, "not a negotiation.decided payload: ") ||
		r.Bad.Lines[1].Line != 3 || !strings.HasPrefix(r.Bad.Lines[1].Problem, "not JSON: ") {
		t.Errorf("report %+v: want rows 2 (no version) and 3 (not JSON) bad", r)
	}
}

// TestManyAffectedPeers checks that the text report lists the most
// recently seen MaxShown peers a change refuses and says how many more
// there are, and that the JSON report has them all.
func TestManyAffectedPeers(t *testing.T) {
	tally, err := New(Options{Changes: []Change{{Protocol: facets.ProtocolA2A, Drop: "0.3"}}})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range MaxShown + 5 {
		digest, err := events.PeerDigest("https://peer-" + strings.Repeat("x", i+1) + ".example")
		if err != nil {
			t.Fatal(err)
		}
		tally.Add(&events.NegotiationDecided{Protocol: facets.ProtocolA2A, Outcome: "accepted", Version: "0.3", Floor: "0.3", PeerDigest: digest, At: at.Add(time.Duration(i) * time.Hour)})
	}
	r := tally.Report()
	if got := len(r.Changes[0].Affected); got != MaxShown+5 {
		t.Fatalf("%d affected peers in the report, want %d", got, MaxShown+5)
	}
	var text bytes.Buffer
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "… 5 more peers (--json lists them all)") || strings.Count(text.String(), "2026-11-01T") != MaxShown {
		t.Errorf("the text report does not list %d peers and say 5 more:\n%s", MaxShown, text.String())
	}
	if first := r.Changes[0].Affected[0].LastSeen; !first.Equal(at.Add(time.Duration(MaxShown+4) * time.Hour)) {
		t.Errorf("the first peer listed was last seen %v, not the most recent", first)
	}
}

// TestMemoryBoundedByPeers checks that reading a record again, once its
// peers, periods and versions are known, allocates a fixed amount (the
// read buffer), not an amount that grows with its events.
func TestMemoryBoundedByPeers(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	data, _ := newGenerator(9, 50).write(t, 2000, 0)
	tally, err := New(Options{Changes: allChanges})
	if err != nil {
		t.Fatal(err)
	}
	read := func() {
		if err := tally.ReadLines(bytes.NewReader(data), "record"); err != nil {
			t.Fatal(err)
		}
	}
	read()
	if allocs := testing.AllocsPerRun(5, read); allocs > 10 {
		t.Errorf("reading 2000 known events again allocates %v times; want the read buffer and little else", allocs)
	}
}

// TestChangeOfAbsentProtocol checks a change on a protocol the record has
// no exchange of: it refuses nothing and still names the sunset.
func TestChangeOfAbsentProtocol(t *testing.T) {
	tally, err := New(Options{Changes: []Change{{Protocol: facets.ProtocolMCP, Floor: "2026-07-28"}, {Protocol: facets.ProtocolMCP, Drop: "2025-11-25"}}})
	if err != nil {
		t.Fatal(err)
	}
	tally.Add(&events.NegotiationDecided{Protocol: facets.ProtocolA2A, Outcome: "accepted", Version: "0.3", Floor: "0.3", At: time.Now()})
	r := tally.Report()
	floor, drop := r.Changes[0], r.Changes[1]
	if floor.Considered != 0 || floor.Refused != 0 || floor.Sunset == nil || *floor.Sunset != (Legacy{Version: "2025-06-18", Leaves: "2027-08-12"}) {
		t.Errorf("floor mcp 2026-07-28 over an A2A record: %+v (sunset %+v)", floor, floor.Sunset)
	}
	if drop.Sunset != nil {
		t.Errorf("dropping MCP 2025-11-25 names the sunset of %+v, which it keeps", drop.Sunset)
	}
}
