package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
)

// TestRecordFollowsStatefulServer is issue 9 item 2 with the real go-sdk
// v1.8.0 stateful handler behind the middleware and 2026-07-28 preferred:
// the handler answers server/discover with a result that lists only the
// handshake revisions, so the client falls back to initialize at
// 2025-11-25 — refused for an anonymous caller, a downgrade for an
// authenticated one. The record of the discover says what the server did:
// refused, unsupported — never "accepted 2026-07-28".
func TestRecordFollowsStatefulServer(t *testing.T) {
	for _, auth := range []bool{false, true} {
		t.Run(fmt.Sprintf("authenticated=%v", auth), func(t *testing.T) {
			r := startHost(t, config{Facets: defaultFacets(), Stateful: true})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			sess, err := goSDK{}.connect(ctx, r.h.URL(), "", auth, &wire{})
			want := []decided{refused("2026-07-28", events.ReasonUnsupported), refused("2025-11-25", events.ReasonUnauthenticated)}
			if auth {
				if err != nil {
					t.Fatal(err)
				}
				if got := sess.revision(); got != "2025-11-25" {
					t.Errorf("session at %q, want 2025-11-25", got)
				}
				sess.close()
				want[1] = accepted("2025-11-25", "2025-11-25")
			} else if err == nil {
				sess.close()
				t.Error("an anonymous client connected; want initialize at 2025-11-25 refused")
			}
			if got := r.decisions(t); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("recorded\n%v\nwant\n%v", got, want)
			}
		})
	}
}

// TestRecordFollowsStatefulServerMCPGo is the same host with the mcp-go
// v1.2.1 client, which takes the discover result as a session at
// 2026-07-28 without looking at its supportedVersions: its tools/call at
// 2026-07-28 is then refused by the go-sdk stateful handler (-32022), and
// that refusal, not the middleware's acceptance, is what is recorded.
func TestRecordFollowsStatefulServerMCPGo(t *testing.T) {
	r := startHost(t, config{Facets: defaultFacets(), Stateful: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := mcpGo{}.connect(ctx, r.h.URL(), "", true, &wire{})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.close()
	if text, err := sess.echo(ctx, "hi"); err == nil {
		t.Errorf("echo answered %q; want the server's refusal", text)
	}
	want := []decided{refused("2026-07-28", events.ReasonUnsupported), refused("2026-07-28", events.ReasonUnsupported)}
	if got := r.decisions(t); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("recorded\n%v\nwant\n%v", got, want)
	}
}
