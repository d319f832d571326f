package main

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/negotiate/mrtr"
)

// mrtrSession connects the go-sdk client with its own multi-round-trip
// loop disabled, so that the test drives the loop with an mrtr.Guard as a
// host would.
func mrtrSession(t *testing.T, r *rig, ctx context.Context) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "mrtr-e2e", Version: "1"}, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.h.URL(), HTTPClient: &http.Client{Transport: authTransport{http.DefaultTransport}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// invoke runs one logical invocation of needs_input_loop under guard: the
// first call and every retry the guard allows. It returns the final
// result, or the guard's refusal, and how many input_required results the
// client saw.
func invoke(ctx context.Context, cs *mcp.ClientSession, guard *mrtr.Guard, rounds int) (_ *mcp.CallToolResult, seen int, _ error) {
	params := &mcp.CallToolParams{Name: "needs_input_loop", Arguments: map[string]any{"rounds": rounds}}
	for {
		res, err := cs.CallTool(ctx, params)
		if err != nil || !res.NeedsInput() {
			return res, seen, err
		}
		seen++
		if err := guard.Next(); err != nil {
			return nil, seen, err // the retry is not sent
		}
		params = &mcp.CallToolParams{
			Name:           params.Name,
			Arguments:      params.Arguments,
			InputResponses: mcp.InputResponseMap{"confirm": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}},
			RequestState:   res.RequestState,
		}
	}
}

// TestMRTR runs the MRTR ceiling (digest rows A11 and A12) between the
// go-sdk client and the example host's needs_input_loop tool, whose
// requestState the host seals with mrtr.Sealer; maxRounds is 4.
func TestMRTR(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cases := []struct {
		name        string
		serverMax   int // the server's mrtr.maxRounds
		guardRounds int // the bound the client's guard holds
		rounds      int // the rounds the tool asks for
		calls       int // tools/call requests the server sees
		guardSeen   int // input_required results the client sees
		result      string
		err         string
	}{
		{"A12: four rounds complete", 4, 4, 4, 5, 4, "completed after 4 rounds", ""},
		// A server that would spin (its own bound is 16): the client's
		// guard stops at round 5 and sends no fifth retry.
		{"A11: the client refuses round 5 without sending it", 16, 4, 6, 5, 5, "", "mcp_mrtr_rounds_exceeded: MCP tool result needed 5 rounds; at most 4 are allowed"},
		// A client that would go on: the server's Sealer will not issue a
		// fifth round, and the tool answers the 422 error instead.
		{"a lax client: the server issues no fifth round", 4, 16, 5, 5, 4, "mcp_mrtr_rounds_exceeded: MCP tool result needed 5 rounds; at most 4 are allowed", ""},
		{"no rounds", 4, 4, 0, 1, 0, "completed after 0 rounds", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := defaultFacets()
			f.MCP.MRTR.MaxRounds = c.serverMax
			r := startHost(t, config{Facets: f})
			cs := mrtrSession(t, r, ctx)
			guard, err := mrtr.NewGuard(c.guardRounds)
			if err != nil {
				t.Fatal(err)
			}
			res, seen, err := invoke(ctx, cs, guard, c.rounds)
			if c.err != "" {
				var we *wperrors.Error
				if !errors.As(err, &we) || err.Error() != c.err || we.Code.HTTPStatus() != 422 {
					t.Fatalf("error %v, want %q", err, c.err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if text := res.Content[0].(*mcp.TextContent).Text; text != c.result {
					t.Errorf("result %q, want %q", text, c.result)
				}
			}
			if got := r.h.toolCalls.Load(); got != int64(c.calls) {
				t.Errorf("the server saw %d tools/call, want %d", got, c.calls)
			}
			if seen != c.guardSeen {
				t.Errorf("the client saw %d input_required, want %d", seen, c.guardSeen)
			}
		})
	}
}

// TestMRTRReplay echoes a requestState twice: the second use fails, and a
// state presented by another caller fails without being used up.
func TestMRTRReplay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := startHost(t, config{Facets: defaultFacets()})
	cs := mrtrSession(t, r, ctx)
	first, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "needs_input_loop", Arguments: map[string]any{"rounds": 2}})
	if err != nil || !first.NeedsInput() {
		t.Fatalf("%+v %v", first, err)
	}
	retry := &mcp.CallToolParams{
		Name: "needs_input_loop", Arguments: map[string]any{"rounds": 2},
		InputResponses: mcp.InputResponseMap{"confirm": &mcp.ElicitResult{Action: "accept"}},
		RequestState:   first.RequestState,
	}

	// Another caller (anonymous) presents the state: bound to another
	// principal.
	anon := mcp.NewClient(&mcp.Implementation{Name: "anon", Version: "1"}, &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
	acs, err := anon.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.h.URL(), DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer acs.Close()
	stolen, err := acs.CallTool(ctx, retry)
	if err != nil || !stolen.IsError || stolen.Content[0].(*mcp.TextContent).Text != "mrtr: requestState is bound to another principal" {
		t.Errorf("another caller's retry: %+v %v", stolen, err)
	}

	// Its owner's retry goes on to round 2; echoing the same state again
	// is refused.
	second, err := cs.CallTool(ctx, retry)
	if err != nil || !second.NeedsInput() {
		t.Fatalf("the owner's retry: %+v %v", second, err)
	}
	again, err := cs.CallTool(ctx, retry)
	if err != nil || !again.IsError || !strings.Contains(again.Content[0].(*mcp.TextContent).Text, "requestState was used before") {
		t.Errorf("replay: %+v %v", again, err)
	}
}

// TestMRTRNotAdvertised: a host without mcp.mrtr asks for no input.
func TestMRTRNotAdvertised(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := defaultFacets()
	f.MCP.MRTR = nil
	f.MCP.Features = []string{"server-discover"}
	f.MCP.Profiles = nil
	r := startHost(t, config{Facets: f})
	cs := mrtrSession(t, r, ctx)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "needs_input_loop", Arguments: map[string]any{"rounds": 1}})
	if err != nil || !res.IsError || res.Content[0].(*mcp.TextContent).Text != "this host advertises no mcp.mrtr, so it asks for no input" {
		t.Errorf("%+v %v", res, err)
	}
}
