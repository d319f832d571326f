package mcphttp_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// TestNegotiateDowngradeVisible: the host asks a server for its preferred
// revision and records it as requested, so that a downgrade reads as
// version < requested in the record alone (issue 9 item 5). For every
// subset of revisions a server's discover can list, for an authenticated
// and an anonymous host: requested is the preferred revision, and an
// accepted record's version differs from it exactly when the outcome is a
// downgrade.
func TestNegotiateDowngradeVisible(t *testing.T) {
	all := []string{"2025-06-18", "2025-11-25", "2026-07-28", "2027-01-01"}
	n := compile(t, wideFacets(), policy.Policy{})
	for mask := 1; mask < 1<<len(all); mask++ {
		var offers []string
		for i, v := range all {
			if mask&(1<<i) != 0 {
				offers = append(offers, `"`+v+`"`)
			}
		}
		p := newPeer(t, jsonAnswer(http.StatusOK, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":[`+strings.Join(offers, ",")+`]}}`))
		for _, subject := range []*negotiate.Subject{user, nil} {
			rec := &negotiatetest.Recorder{}
			o, _, _ := mcphttp.Negotiate(context.Background(), n, p.URL, mcphttp.OutboundOptions{Sink: rec, Subject: subject, Client: p.Client()})
			ev := payloads(t, rec)
			if len(ev) != 1 {
				t.Fatalf("%v: %d events", offers, len(ev))
			}
			downgrade := ev[0].Outcome == "accepted" && ev[0].Version != ev[0].Requested
			if ev[0].Requested != "2026-07-28" || downgrade != (o.Kind == negotiate.Downgraded) {
				t.Errorf("offers %v, subject %v: recorded %+v for a %s outcome", offers, subject != nil, ev[0], o.Kind)
			}
		}
	}
}
