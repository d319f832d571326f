package mcphttp_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// TestFallbackNeverBelowTheFloor holds the era fallback to its promise for
// every host facet over four revisions, every preferred revision and
// floor, an authenticated and an anonymous host, downgrades allowed and
// denied: against a server without server/discover, at most one
// initialize goes out, at a revision between the floor and the preferred
// one and never a 2026 one; an anonymous host or a denied downgrade sends
// one only at a preferred handshake revision; one decision is recorded,
// and an accepted one is at the revision initialize settled.
func TestFallbackNeverBelowTheFloor(t *testing.T) {
	all := []string{"2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}
	checked := 0
	for mask := 1; mask < 1<<len(all); mask++ {
		var revs []string
		for i, v := range all {
			if mask&(1<<i) != 0 {
				revs = append(revs, v)
			}
		}
		for _, preferred := range revs {
			for _, floor := range revs {
				if floor > preferred {
					continue
				}
				// A server of its own, whose session ids stay few.
				p := newPeer(t, discoverThen(jsonAnswer(400, sessionRequired), all[:3], true))
				for _, deny := range []bool{false, true} {
					n, err := negotiate.Compile(facets.Set{MCP: &facets.MCP{Revisions: revs, PreferredVersion: preferred, MinimumRevision: floor, RefreshedAt: "2026-11-01"}}, policy.Policy{Now: now.Local, DenyDowngrade: deny})
					if err != nil {
						t.Fatal(err)
					}
					for _, subject := range []*negotiate.Subject{user, nil} {
						before := len(p.seen())
						rec := &negotiatetest.Recorder{}
						o, _, _ := mcphttp.Negotiate(context.Background(), n, p.URL, mcphttp.OutboundOptions{Sink: rec, Subject: subject, AllowLoopback: true})
						var asked []string
						for _, s := range p.seen()[before:] {
							var msg struct {
								Method string
								Params struct{ ProtocolVersion string }
							}
							if json.Unmarshal([]byte(s.body), &msg) == nil && msg.Method == "initialize" {
								asked = append(asked, msg.Params.ProtocolVersion)
							}
						}
						where := func() string { return "revisions " + jsonOf(revs) + " preferred " + preferred + " floor " + floor }
						if len(asked) > 1 {
							t.Fatalf("%s: initialize sent %d times", where(), len(asked))
						}
						if len(asked) == 1 {
							a := asked[0]
							if a < floor || a > preferred || a >= mcphttp.StatelessRevision {
								t.Errorf("%s: initialize at %s", where(), a)
							}
							if (subject == nil || deny) && a != preferred {
								t.Errorf("%s: a downgrade to %s offered without the right", where(), a)
							}
							if o.Err() == nil && o.Version != a {
								t.Errorf("%s: accepted %s after initialize at %s", where(), o.Version, a)
							}
						}
						if len(rec.Events()) != 1 {
							t.Errorf("%s: %d events", where(), len(rec.Events()))
						}
						// An authenticated host whose policy allows the
						// downgrade offers the newest handshake revision
						// it has between the floor and preferred (the
						// server speaks every one but 2026-07-28).
						want := ""
						for _, v := range revs {
							if v >= floor && v <= preferred && v < mcphttp.StatelessRevision && (subject != nil && !deny || v == preferred) {
								want = v
							}
						}
						if got := append(asked, "")[0]; got != want {
							t.Errorf("%s, subject %t, deny %t: initialize at %q, want %q", where(), subject != nil, deny, got, want)
						}
						checked++
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("nothing checked")
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
