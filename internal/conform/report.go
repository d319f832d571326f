package conform

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/wopneg/wopneg/internal/conform/verdict"
)

// WriteTable writes the report as a table: scenario, requirement id,
// verdict, assertions counted (wire ones in parentheses), why; then one
// line of totals.
func (r Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tREQUIREMENT\tVERDICT\tASSERTIONS\tWHY")
	for _, res := range r.Results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d (%d wire)\t%s\n", res.Scenario(), res.Requirement(), res.Verdict(), res.Assertions(), res.WireAssertions(), res.Why())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	n := r.Counts()
	_, err := fmt.Fprintf(w, "%s: %d pass, %d fail, %d blocked, %d inapplicable\n", r.Base,
		n[verdict.Pass], n[verdict.Fail], n[verdict.Blocked], n[verdict.Inapplicable])
	return err
}

// WriteJSON writes the report as one JSON object: {base, counts, results}.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(struct {
		Base    string                  `json:"base"`
		Counts  map[verdict.Verdict]int `json:"counts"`
		Results []verdict.Result        `json:"results"`
	}{r.Base, r.Counts(), r.Results})
}
