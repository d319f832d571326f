package report_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	internal "github.com/wopneg/wopneg/internal/report"
	"github.com/wopneg/wopneg/report"
)

// The HTML report of a small record, and what raising the A2A floor to 1.0
// would refuse in it.
func ExampleWriteHTML() {
	tally, _ := internal.New(internal.Options{Changes: []internal.Change{{Protocol: facets.ProtocolA2A, Floor: "1.0"}}})
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for i, version := range []string{"1.0", "0.3", "1.0"} {
		tally.Add(&events.NegotiationDecided{Protocol: facets.ProtocolA2A, Outcome: "accepted", Version: version, Floor: "0.3", At: at.Add(time.Duration(i) * time.Hour)})
	}
	var page strings.Builder
	if err := report.WriteHTML(&page, tally.Report()); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Count(page.String(), "<svg"), "charts")
	fmt.Println(strings.Contains(page.String(), "Refuses 1 of 3 accepted exchanges"))
	// Output:
	// 2 charts
	// true
}
