package negotiate_test

import (
	"context"
	"testing"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// TestDecideAndRecordTenant: the event of a decision carries the tenant it
// belongs to: a run event its runId's, a host event the authenticated
// Subject's, and an unauthenticated exchange's host event none.
func TestDecideAndRecordTenant(t *testing.T) {
	anon := &negotiate.Subject{Issuer: "urn:x:anon", SubjectID: "a", Tenant: "acme", Lane: policy.LaneAnonymous, Kind: policy.KindAnonymous}
	other := *recUser()
	other.Tenant = "umbra"
	for _, tc := range []struct {
		name    string
		dest    negotiate.Destination
		subject *negotiate.Subject
		p       policy.Policy
		want    string
	}{
		{"host event, authenticated", negotiate.Destination{}, recUser(), recPolicy(false), "acme"},
		{"host event, no Subject", negotiate.Destination{}, nil, recPolicy(false), ""},
		{"host event, anonymous Subject", negotiate.Destination{}, anon, recPolicy(false), ""},
		{"host event, not authenticated under the policy", negotiate.Destination{},
			recUser(), policy.Policy{Now: recPolicy(false).Now, Authenticated: func(*policy.Subject) bool { return false }}, ""},
		{"run event: the run's tenant", negotiate.Destination{RunID: recRun}, &other, recPolicy(false), "acme"},
		{"anon run event", negotiate.Destination{RunID: "anon:" + recRun}, nil, recPolicy(false), "acme"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []events.Event
			sink := events.SinkFunc(func(_ context.Context, e events.Event) error { got = append(got, e); return nil })
			offer := negotiate.Offer{Protocol: facets.ProtocolA2A, Peer: "https://peer.example", PeerVersions: []string{"1.2"}}
			n, err := negotiate.Compile(recSet(), tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := n.DecideAndRecord(context.Background(), sink, tc.dest, tc.subject, offer); err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].Tenant != tc.want {
				t.Errorf("tenant %q, want %q", got[0].Tenant, tc.want)
			}
		})
	}
}
