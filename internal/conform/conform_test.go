package conform

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wopneg/wopneg/internal/conform/verdict"
)

// Requirement ids, shortened in the tables below.
const (
	rNoTransport  = "openwop.requirement.0175.no-transport-advertisement"
	rLegacy       = "openwop.requirement.0175.legacy-profiles-absent"
	rRootProfiles = "openwop.requirement.0175.legacy-profiles-absent.no-root-profiles"
	rEmitted      = "openwop.requirement.0175.negotiation-decided-emitted"
	rRequested    = "openwop.requirement.0242.requested.outbound"
	rFloor        = "openwop.requirement.0175.minimum-version-refused"
	rAuth         = "openwop.requirement.0175.negotiation-authenticated"
	rRefresh      = "openwop.requirement.0175.refresh-sla"
	rRounds       = "openwop.requirement.0175.mrtr-rounds-ceiling"
	rRefused      = "openwop.requirement.0175.mrtr-rounds-ceiling.refused"
	rThreat       = "openwop.requirement.0173.threat-model-template"
	rListed       = "openwop.requirement.0242.inbound.listed"
	rInA2A        = "openwop.requirement.0242.inbound.recorded"
	rInA2ARefused = "openwop.requirement.0242.inbound.refused"
	rInMCP        = "openwop.requirement.0242.inbound.recorded.mcp"
	rInMCPRefused = "openwop.requirement.0242.inbound.refused.mcp"
)

// allRows is every row of a report, in order.
var allRows = []string{
	rNoTransport, rLegacy, rRootProfiles,
	rEmitted, rRequested, rEmitted + ".mcp", rRequested + ".mcp",
	rFloor, rFloor + ".mcp", rAuth, rAuth + ".mcp",
	rRefresh, rRounds, rRefused, rThreat,
	rListed, rInA2A, rInA2ARefused, rInMCP, rInMCPRefused,
}

func run(t *testing.T, h *testHost, token string) Report {
	t.Helper()
	rep, err := Run(context.Background(), Options{Base: h.srv.URL, Token: token, Stream: time.Second, Now: h.clock})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// byVerdict groups a report's requirement ids by verdict.
func byVerdict(rep Report) map[verdict.Verdict][]string {
	out := map[verdict.Verdict][]string{}
	for _, r := range rep.Results {
		out[r.Verdict()] = append(out[r.Verdict()], r.Requirement())
	}
	return out
}

func dump(rep Report) string {
	var b strings.Builder
	_ = rep.WriteTable(&b)
	return b.String()
}

func TestReportRows(t *testing.T) {
	rep := run(t, newTestHost(t, wide, correct), "tok-acme")
	var got []string
	for _, r := range rep.Results {
		got = append(got, r.Requirement())
	}
	if !slices.Equal(got, allRows) {
		t.Fatalf("rows:\n got %v\nwant %v", got, allRows)
	}
}

// TestCorrectHostPasses: a host with a floor below preferred on both
// protocols (A2A 1.1 being HYPOTHETICAL) passes every row, the A2A §D.1
// legs included; only the threat-model template, which reads the
// specification repository, is inapplicable.
func TestCorrectHostPasses(t *testing.T) {
	rep := run(t, newTestHost(t, wide, correct), "tok-acme")
	v := byVerdict(rep)
	if len(v[verdict.Pass]) != len(allRows)-1 || !slices.Equal(v[verdict.Inapplicable], []string{rThreat}) {
		t.Fatalf("want every row but %s to pass:\n%s", rThreat, dump(rep))
	}
	for _, r := range rep.Results {
		if r.Verdict() == verdict.Pass && r.WireAssertions() == 0 {
			t.Errorf("%s passed with no wire assertion", r.Requirement())
		}
	}
}

// TestFloorEqualsPreferred: A2A 1.0 alone (examples/host's shape) cannot
// witness §D.1 on A2A, and says so; everything else passes.
func TestFloorEqualsPreferred(t *testing.T) {
	rep := run(t, newTestHost(t, examplesShape, correct), "tok-acme")
	v := byVerdict(rep)
	if !slices.Equal(v[verdict.Blocked], []string{rAuth}) || len(v[verdict.Fail]) > 0 || len(v[verdict.Pass]) != len(allRows)-2 {
		t.Fatalf("want only %s blocked:\n%s", rAuth, dump(rep))
	}
	for _, r := range rep.Results {
		if r.Requirement() == rAuth && (r.Why() != FloorIsPreferred || r.WireAssertions() == 0) {
			t.Errorf("%s: why %q with %d wire assertions, want %q after the suite's leg ran", rAuth, r.Why(), r.WireAssertions(), FloorIsPreferred)
		}
	}
}

// TestBrokenHosts: each host built wrong on purpose fails exactly the rows
// its defect concerns, and passes the rest.
func TestBrokenHosts(t *testing.T) {
	for _, tc := range []struct {
		defect defect
		fails  []string
	}{
		{noFloorCheck, []string{rFloor, rFloor + ".mcp", rAuth, rAuth + ".mcp", rInA2ARefused, rInMCPRefused}},
		{unauthDowngrade, []string{rAuth, rAuth + ".mcp"}},
		{noEvent, []string{rEmitted, rRequested, rEmitted + ".mcp", rRequested + ".mcp", rFloor, rFloor + ".mcp", rAuth, rAuth + ".mcp", rInA2A, rInA2ARefused, rInMCP, rInMCPRefused}},
		{peerInClear, []string{rEmitted, rEmitted + ".mcp"}},
		{roundsPlusOne, []string{rRefused}},
		{transportsAdvertised, []string{rNoTransport}},
		{staleRefresh, []string{rRefresh}},
	} {
		t.Run(tc.defect.String(), func(t *testing.T) {
			t.Parallel()
			rep := run(t, newTestHost(t, wide, tc.defect), "tok-acme")
			v := byVerdict(rep)
			if !slices.Equal(v[verdict.Fail], tc.fails) || len(v[verdict.Blocked]) > 0 {
				t.Fatalf("fails %v, want %v:\n%s", v[verdict.Fail], tc.fails, dump(rep))
			}
			t.Logf("%s → %v", tc.defect, v[verdict.Fail])
		})
	}
}

// TestNoSeams: without the seams profile every seam row is blocked, never
// passed; the document rows still pass.
func TestNoSeams(t *testing.T) {
	rep := run(t, newTestHost(t, wide, noSeams), "tok-acme")
	v := byVerdict(rep)
	want := []string{rEmitted, rRequested, rEmitted + ".mcp", rRequested + ".mcp", rFloor, rFloor + ".mcp", rAuth, rAuth + ".mcp", rRefused}
	if !slices.Equal(v[verdict.Blocked], want) || len(v[verdict.Fail]) > 0 {
		t.Fatalf("blocked %v, want %v:\n%s", v[verdict.Blocked], want, dump(rep))
	}
}

// TestNoToken: the seams and the inbound legs need an authenticated
// caller; without one they are blocked, and the document rows still pass.
func TestNoToken(t *testing.T) {
	rep := run(t, newTestHost(t, wide, correct), "")
	v := byVerdict(rep)
	want := []string{rEmitted, rRequested, rEmitted + ".mcp", rRequested + ".mcp", rFloor, rFloor + ".mcp", rAuth, rAuth + ".mcp", rRefused,
		rInA2A, rInA2ARefused, rInMCP, rInMCPRefused}
	if !slices.Equal(v[verdict.Blocked], want) || len(v[verdict.Fail]) > 0 {
		t.Fatalf("blocked %v, want %v:\n%s", v[verdict.Blocked], want, dump(rep))
	}
}

// TestUnreachable: a host that cannot be reached blocks every row.
func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ln.Close()
	rep, err := Run(context.Background(), Options{Base: base})
	if err != nil {
		t.Fatal(err)
	}
	n := rep.Counts()
	if n[verdict.Blocked] != len(allRows)-1 || n[verdict.Inapplicable] != 1 {
		t.Fatalf("want every row blocked:\n%s", dump(rep))
	}
}

func TestBadBase(t *testing.T) {
	for _, base := range []string{"", "127.0.0.1:80", "ftp://x", "http://", ":"} {
		if _, err := Run(context.Background(), Options{Base: base}); err != ErrBase {
			t.Errorf("Run(%q): %v, want ErrBase", base, err)
		}
	}
}

// TestRunClock: the refresh SLA is judged by Options.Now: the correct
// host, 91 days after it dated its facets, fails refresh-sla and nothing
// else.
func TestRunClock(t *testing.T) {
	h := newTestHost(t, wide, correct)
	later := func() time.Time { return h.now.AddDate(0, 0, 91) }
	rep, err := Run(context.Background(), Options{Base: h.srv.URL, Token: "tok-acme", Stream: time.Second, Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if fails := byVerdict(rep)[verdict.Fail]; !slices.Equal(fails, []string{rRefresh}) {
		t.Fatalf("fails %v, want only %s:\n%s", fails, rRefresh, dump(rep))
	}
}

func ExampleRun() {
	h := newTestHost(&testing.T{}, wide, correct)
	rep, err := Run(context.Background(), Options{Base: h.srv.URL, Token: "tok-acme", Now: h.clock})
	if err != nil {
		panic(err)
	}
	n := rep.Counts()
	fmt.Println(n[verdict.Pass], "pass,", n[verdict.Fail], "fail,", n[verdict.Blocked], "blocked,", n[verdict.Inapplicable], "inapplicable")
	// Output: 19 pass, 0 fail, 0 blocked, 1 inapplicable
}
