package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/examples/internal/npmtest"
)

// tsClient prepares testdata/tsclient, the TypeScript MCP SDK
// (@modelcontextprotocol/sdk 1.32.2, pinned by its package-lock.json), and
// returns the node binary (npmtest.Node).
func tsClient(t *testing.T) string {
	t.Helper()
	return npmtest.Node(t, filepath.Join("testdata", "tsclient"), filepath.Join("@modelcontextprotocol", "sdk"))
}

// tsResult is what client.mjs prints.
type tsResult struct {
	ProtocolVersion string `json:"protocolVersion"`
	Echo            string `json:"echo"`
	Error           *struct {
		Code int             `json:"code"`
		Data json.RawMessage `json:"data"`
	} `json:"error"`
	Wire []struct {
		Method string `json:"method"`
		RPC    string `json:"rpc"`
		Header string `json:"header"`
	} `json:"wire"`
}

// TestTypeScriptClient connects the TypeScript MCP SDK client (which
// speaks up to 2025-11-25, through initialize only) to the example host and
// to the legacy host.
func TestTypeScriptClient(t *testing.T) {
	node := tsClient(t)
	cases := []struct {
		name      string
		stateful  bool
		auth      bool
		pinned    string
		revision  string // "" when refused
		errorData string // the -32602 data, exactly, when refused
		decisions []decided
	}{
		{
			name:      "default, anonymous: no downgrade below 2026-07-28",
			errorData: `{"supported":["2026-07-28"],"requested":"2025-11-25","reason":"unauthenticated"}`,
			decisions: []decided{refused("2025-11-25", events.ReasonUnauthenticated)},
		},
		{
			name: "default, authenticated: downgraded", auth: true,
			revision: "2025-11-25",
			// initialize, notifications/initialized, tools/call (client.mjs
			// keeps the standalone event stream's GET to itself).
			decisions: []decided{accepted("2025-11-25", "2025-11-25"), accepted("2025-11-25", "2025-11-25"), accepted("2025-11-25", "2025-11-25")},
		},
		{
			name: "pinned below the floor", auth: true, pinned: "2025-06-18",
			errorData: `{"supported":["2025-11-25","2026-07-28"],"requested":"2025-06-18","reason":"below-floor"}`,
			decisions: []decided{refused("2025-06-18", events.ReasonBelowFloor)},
		},
		{
			name: "legacy host, anonymous", stateful: true,
			revision:  "2025-11-25",
			decisions: []decided{accepted("2025-11-25", "2025-11-25")},
		},
		{
			name: "legacy host, pinned to 2025-06-18, anonymous: counter-offered", stateful: true, pinned: "2025-06-18",
			revision:  "2025-11-25",
			decisions: []decided{accepted("2025-11-25", "2025-06-18")},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := defaultFacets()
			if c.stateful {
				f = legacyFacets()
			}
			r := startHost(t, config{Facets: f, Stateful: c.stateful})
			token := ""
			if c.auth {
				token = testToken
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, "client.mjs", r.h.URL(), token, c.pinned)
			cmd.Dir = filepath.Join("testdata", "tsclient")
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			var res tsResult
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if c.revision == "" {
				if res.Error == nil || res.Error.Code != -32602 || string(res.Error.Data) != c.errorData {
					t.Errorf("got %s, want -32602 with data %s", out, c.errorData)
				}
				if got := r.server.exchanges(); len(got) != 0 {
					t.Errorf("reached the MCP server: %+v", got)
				}
			} else {
				if res.Error != nil || res.ProtocolVersion != c.revision || res.Echo != "hi (served at MCP "+c.revision+")" {
					t.Errorf("got %s, want a session at %s", out, c.revision)
				}
				for _, w := range res.Wire[1:] {
					if w.Header != c.revision {
						t.Errorf("%s %q sent at %q, want %q", w.Method, w.RPC, w.Header, c.revision)
					}
				}
			}
			if got := r.decisions(t); fmt.Sprint(got) != fmt.Sprint(c.decisions) {
				t.Errorf("recorded\n%v\nwant\n%v", got, c.decisions)
			}
		})
	}
}
