package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopneg/wopneg/examples/tenline/internal/logfile"
)

// TestHost runs the ten-line host: a go-sdk client calls its tool at
// 2026-07-28, and the decision is on the record, through slog.Default.
func TestHost(t *testing.T) {
	logged := logfile.Capture(t)
	srv := httptest.NewServer(host())
	t.Cleanup(srv.Close)

	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "tenline-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: srv.Client(), DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "hello" {
		t.Errorf("hello answered %+v", res.Content)
	}
	if got := logged(); !strings.Contains(got, "msg=negotiation.decided") || !strings.Contains(got, "protocol=mcp outcome=accepted version=2026-07-28") {
		t.Errorf("the log holds no acceptance of 2026-07-28:\n%s", got)
	}

	// A caller without the token asking for 2025-11-25 is anonymous, and
	// is never served below the preferred revision.
	pinned, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{}, DisableStandaloneSSE: true, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err == nil {
		pinned.Close()
		t.Fatal("an anonymous caller was served 2025-11-25")
	}
	if got := logged(); !strings.Contains(got, "outcome=refused requested=2025-11-25 reason=unauthenticated") {
		t.Errorf("the log holds no refusal of 2025-11-25:\n%s", got)
	}
}
