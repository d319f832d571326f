package report_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/report"
)

// A record of three exchanges, as the JSON-lines sink writes them, with a
// line that is not an event among them: what raising the A2A floor to 1.0
// would refuse.
func Example() {
	record := `{"eventId":"AAAAAAAAAAAAAAAAAAAAAAAAA1","type":"negotiation.decided","timestamp":"2026-11-02T10:00:00Z","delivery":"durable","payload":{"protocol":"a2a","outcome":"accepted","version":"1.0","requested":"1.0","reason":"ok","floor":"0.3","at":"2026-11-02T10:00:00Z"}}
{"eventId":"AAAAAAAAAAAAAAAAAAAAAAAAA2","type":"negotiation.decided","timestamp":"2026-11-03T10:00:00Z","delivery":"durable","payload":{"protocol":"a2a","outcome":"accepted","version":"0.3","requested":"1.0","reason":"ok","floor":"0.3","peerDigest":"787e407f94f46ea10dc68df2e15ed45525120aa155f1e706235be3039b259695","at":"2026-11-03T10:00:00Z"}}
host: stopped
{"eventId":"AAAAAAAAAAAAAAAAAAAAAAAAA3","type":"negotiation.decided","timestamp":"2026-12-01T10:00:00Z","delivery":"durable","payload":{"protocol":"a2a","outcome":"refused","requested":"0.2","reason":"below-floor","floor":"0.3","at":"2026-12-01T10:00:00Z"}}
`
	tally, err := report.New(report.Options{Changes: []report.Change{{Protocol: facets.ProtocolA2A, Floor: "1.0"}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := tally.ReadLines(strings.NewReader(record), "record.jsonl"); err != nil {
		fmt.Println(err)
		return
	}
	r := tally.Report()
	r.Name(map[string]string{"787e407f94f46ea10dc68df2e15ed45525120aa155f1e706235be3039b259695": "https://legacy-peer.example"})
	if err := report.WriteText(os.Stdout, r); err != nil {
		fmt.Println(err)
	}
	// Output:
	// 3 events in 4 lines; 1 bad: 1 not JSON, 0 not negotiation.decided
	//   record.jsonl:3: not JSON: event: invalid character 'h' looking for beginning of value
	//
	// a2a: 3 exchanges, 2 accepted (1 downgrades), 1 refused, 1 peers (2 exchanges name none), 2026-11-02T10:00:00Z to 2026-12-01T10:00:00Z
	//   requested   1.0 2, 0.2 1
	//   settled     1.0 1, 0.3 1
	//   refusals    below-floor 1
	//   legacy      0.3 leaves the v1 tree on 2027-03-12: 1 exchanges settled at it, 1 peers
	//   month    exchanges  accepted  refused  downgrades  peers  settled
	//   2026-11  2          2         0        1           1      1.0 1, 0.3 1
	//   2026-12  1          0         1        0           0      -
	//
	// floor a2a 1.0: refuses 1 of 2 accepted exchanges (1 were refused already), 1 peers
	//   a2a 0.3 leaves the v1 tree on 2027-03-12; 1 exchanges of 1 peers settled at it
	//   by month    2026-11 1
	//   peer                                                                                          exchanges  last seen
	//   787e407f94f46ea10dc68df2e15ed45525120aa155f1e706235be3039b259695 https://legacy-peer.example  1          2026-11-03T10:00:00Z
}
