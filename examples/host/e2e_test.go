package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
)

// legacyFacets is a host whose preferred revision is a handshake one, served
// by the go-sdk's stateful handler: it is where a client's default is
// "discover, then initialize", where initialize is counter-offered (and the
// middleware rewrites the revision the server is asked for), and where the
// session's revision is pinned.
func legacyFacets() facets.Set {
	return facets.Set{MCP: &facets.MCP{
		Revisions:        []string{"2025-06-18", "2025-11-25"},
		PreferredVersion: "2025-11-25",
		MinimumRevision:  "2025-06-18",
	}}
}

var (
	accepted = func(version, requested string) decided {
		return decided{"accepted", version, requested, events.ReasonOK}
	}
	refused = func(requested string, reason string) decided {
		return decided{"refused", "", requested, reason}
	}
)

type scenario struct {
	name     string
	stateful bool   // the legacy host, with sessions
	pinned   string // the revision the client is pinned to; "" for its default
	auth     bool
	// revision is the session's revision; "" when connecting must fail.
	revision string
	// decisions are the events recorded for connect and one echo, per
	// client, exactly.
	goSDK, mcpGo []decided
	// wire is what every request after the handshake names in
	// MCP-Protocol-Version (and _meta, at a stateless revision).
	wire string
}

// scenarios are the three situations the issue asks of each client
// (default; pinned to a lower revision; pinned below the floor) against the
// example host's facets, and the same against the legacy host.
var scenarios = []scenario{
	{
		name:     "default",
		revision: "2026-07-28",
		// go-sdk: server/discover, then tools/call. mcp-go: the same.
		goSDK: []decided{accepted("2026-07-28", "2026-07-28"), accepted("2026-07-28", "2026-07-28")},
		mcpGo: []decided{accepted("2026-07-28", "2026-07-28"), accepted("2026-07-28", "2026-07-28")},
		wire:  "2026-07-28",
	},
	{
		name: "pinned to 2025-11-25, authenticated: downgraded", pinned: "2025-11-25", auth: true,
		revision: "2025-11-25",
		// initialize, notifications/initialized, tools/call: the stateless
		// server names no session, so each is decided from its header.
		goSDK: []decided{accepted("2025-11-25", "2025-11-25"), accepted("2025-11-25", "2025-11-25"), accepted("2025-11-25", "2025-11-25")},
		mcpGo: []decided{accepted("2025-11-25", "2025-11-25"), accepted("2025-11-25", "2025-11-25"), accepted("2025-11-25", "2025-11-25")},
		wire:  "2025-11-25",
	},
	{
		name: "pinned to 2025-11-25, anonymous: no downgrade", pinned: "2025-11-25",
		goSDK: []decided{refused("2025-11-25", events.ReasonUnauthenticated)},
		mcpGo: []decided{refused("2025-11-25", events.ReasonUnauthenticated)},
	},
	{
		name: "pinned below the floor", pinned: "2025-06-18", auth: true,
		goSDK: []decided{refused("2025-06-18", events.ReasonBelowFloor)},
		mcpGo: []decided{refused("2025-06-18", events.ReasonBelowFloor)},
	},
	{
		name: "legacy host, default: discover, then initialize", stateful: true,
		revision: "2025-11-25",
		// server/discover at 2026-07-28 is refused (-32022, data.supported
		// the legacy revisions); the client falls back to initialize at
		// 2025-11-25; the session's later requests are not decided again.
		goSDK: []decided{refused("2026-07-28", events.ReasonUnsupported), accepted("2025-11-25", "2025-11-25")},
		mcpGo: []decided{refused("2026-07-28", events.ReasonUnsupported), accepted("2025-11-25", "2025-11-25")},
		wire:  "2025-11-25",
	},
	{
		name: "legacy host, pinned to 2025-06-18, anonymous: counter-offered", stateful: true, pinned: "2025-06-18",
		revision: "2025-11-25",
		goSDK:    []decided{accepted("2025-11-25", "2025-06-18")},
		mcpGo:    []decided{accepted("2025-11-25", "2025-06-18")},
		wire:     "2025-11-25",
	},
	{
		name: "legacy host, pinned to 2025-06-18, authenticated: downgraded", stateful: true, pinned: "2025-06-18", auth: true,
		revision: "2025-06-18",
		goSDK:    []decided{accepted("2025-06-18", "2025-06-18")},
		mcpGo:    []decided{accepted("2025-06-18", "2025-06-18")},
		wire:     "2025-06-18",
	},
	{
		name: "legacy host, pinned below the floor", stateful: true, pinned: "2025-03-26", auth: true,
		goSDK: []decided{refused("2025-03-26", events.ReasonBelowFloor)},
		mcpGo: []decided{refused("2025-03-26", events.ReasonBelowFloor)},
	},
}

// TestClients connects the real SDK clients to the example host on
// loopback, and checks, for each scenario, the revision the session
// settled at, the revision on the wire (both what the client sent and what
// reached the MCP server), and the exact events recorded.
func TestClients(t *testing.T) {
	clients := []struct {
		name   string
		client mcpClient
		want   func(scenario) []decided
	}{
		{"go-sdk v1.8.0", goSDK{}, func(s scenario) []decided { return s.goSDK }},
		{"mcp-go v1.2.1", mcpGo{}, func(s scenario) []decided { return s.mcpGo }},
	}
	for _, c := range clients {
		for _, s := range scenarios {
			t.Run(c.name+"/"+s.name, func(t *testing.T) {
				f := defaultFacets()
				if s.stateful {
					f = legacyFacets()
				}
				r := startHost(t, config{Facets: f, Stateful: s.stateful})
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				client := &wire{}
				sess, err := c.client.connect(ctx, r.h.URL(), s.pinned, s.auth, client)
				if s.revision == "" {
					if err == nil {
						sess.close()
						t.Fatal("connected; want the negotiation refused")
					}
					t.Logf("refused as expected: %v", err)
					if got := r.server.exchanges(); len(got) != 0 {
						t.Errorf("reached the MCP server: %+v", got)
					}
				} else {
					if err != nil {
						t.Fatal(err)
					}
					if got := sess.revision(); got != s.revision {
						t.Errorf("session at %q, want %q", got, s.revision)
					}
					text, err := sess.echo(ctx, "hi")
					if err != nil {
						t.Fatal(err)
					}
					if want := "hi (served at MCP " + s.revision + ")"; text != want {
						t.Errorf("echo %q, want %q", text, want)
					}
					sess.close()
					checkWire(t, "client sent", client.exchanges(), s.wire)
					checkWire(t, "server got", r.server.exchanges(), s.wire)
				}
				if got, want := r.decisions(t), c.want(s); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("recorded\n%v\nwant\n%v", got, want)
				}
			})
		}
	}
}

// checkWire checks that every request after the handshake names revision:
// in MCP-Protocol-Version, and in _meta whenever it carries one. Refused
// discovery and the initialize itself are the handshake.
func checkWire(t *testing.T, who string, log []exchange, revision string) {
	t.Helper()
	after := false
	for _, ex := range log {
		if ex.rpc == "initialize" {
			if who == "server got" && ex.initialize != revision {
				// What the server is asked for is what it answers with.
				t.Errorf("%s initialize at %q, want %q", who, ex.initialize, revision)
			}
			after = true
			continue
		}
		if ex.rpc == "server/discover" && ex.header != revision {
			continue // refused discovery, before the fallback to initialize
		}
		after = true
		if ex.header != revision || (ex.meta != "" && ex.meta != revision) {
			t.Errorf("%s %s %q at header %q, _meta %q; want %q", who, ex.method, ex.rpc, ex.header, ex.meta, revision)
		}
	}
	if !after {
		t.Errorf("%s nothing after the handshake", who)
	}
}
