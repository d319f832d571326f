package conform

import (
	"slices"
	"testing"

	"github.com/wopneg/wopneg/internal/conform/verdict"
)

// TestHostShapes: hosts that leave rows unwitnessable get them blocked or
// inapplicable, never passed, and hosts that serve a surface another way
// are read that way.
func TestHostShapes(t *testing.T) {
	seamRows := []string{rEmitted, rRequested, rEmitted + ".mcp", rRequested + ".mcp", rFloor, rFloor + ".mcp", rAuth, rAuth + ".mcp", rRefused}
	inboundLegs := []string{rInA2A, rInA2ARefused, rInMCP, rInMCPRefused}
	for _, tc := range []struct {
		defect                       defect
		blocked, fails, inapplicable []string
	}{
		{seamsAbsent, seamRows, nil, nil},
		{noRunID, seamRows, nil, nil},
		{pollBroken, nil, []string{rEmitted, rRequested, rEmitted + ".mcp", rRequested + ".mcp", rFloor, rFloor + ".mcp", rAuth, rAuth + ".mcp"}, nil},
		{noContact, []string{rEmitted, rRequested, rEmitted + ".mcp", rRequested + ".mcp", rFloor, rFloor + ".mcp", rAuth, rAuth + ".mcp", rRefused}, nil, nil},
		{denyDowngrade, []string{rAuth, rAuth + ".mcp"}, nil, nil},
		{hostEventsJSON, nil, nil, nil},
		{hostEventsMissing, nil, inboundLegs, nil},
		{noInboundURLs, []string{rInMCP, rInMCPRefused}, nil, []string{rInA2A, rInA2ARefused}},
		// Frames of other types, and host events of other exchanges, are
		// read past: only the watched exchange's record ends the watch.
		{chattyStream, nil, nil, nil},
	} {
		t.Run(tc.defect.String(), func(t *testing.T) {
			t.Parallel()
			rep := run(t, newTestHost(t, wide, tc.defect), "tok-acme")
			v := byVerdict(rep)
			inapplicable := append(slices.Clone(tc.inapplicable), rThreat)
			slices.Sort(inapplicable)
			got := slices.Clone(v[verdict.Inapplicable])
			slices.Sort(got)
			if !slices.Equal(v[verdict.Blocked], tc.blocked) || !slices.Equal(v[verdict.Fail], tc.fails) || !slices.Equal(got, inapplicable) {
				t.Fatalf("blocked %v\nfails %v\ninapplicable %v\n%s", v[verdict.Blocked], v[verdict.Fail], got, dump(rep))
			}
		})
	}
}
