package main

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	wopnegotel "github.com/wopneg/wopneg/otel"
)

// runSelftest is the host calling itself as an MCP client: it negotiates
// the revision through server/discover for its own workload identity
// (mcphttp.Negotiate), then connects the go-sdk client through a
// mcphttp.Transport pinned to that revision and calls echo.
func runSelftest(ctx context.Context, h *host, sink events.Sink, stderr io.Writer) error {
	identity := hostIdentity
	o, offers, err := mcphttp.Negotiate(ctx, h.env.Negotiator, h.URL(), mcphttp.OutboundOptions{Sink: sink, Subject: &identity, AllowLoopback: true,
		// The W3C trace context of the span in ctx, when there is one, on
		// the negotiation's requests (headers and _meta).
		TraceContext: wopnegotel.Propagate})
	fmt.Fprintf(stderr, "selftest: server/discover offered %v; outbound negotiation %s at %q\n", offers, o.Kind, o.Version)
	if err != nil {
		return fmt.Errorf("selftest: %w", err)
	}
	// The host calls itself on loopback, which NewTransport's nil base
	// (public addresses only) would refuse.
	t, err := mcphttp.NewTransport(o, http.DefaultTransport)
	if err != nil {
		return err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "wopneg-selftest", Version: "0.1.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:             h.URL(),
		HTTPClient:           &http.Client{Transport: t},
		DisableStandaloneSSE: true,
	}, &mcp.ClientSessionOptions{ProtocolVersion: o.Version})
	if err != nil {
		return fmt.Errorf("selftest: connecting: %w", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}})
	if err != nil {
		return fmt.Errorf("selftest: calling echo: %w", err)
	}
	if res.IsError || len(res.Content) != 1 {
		return fmt.Errorf("selftest: echo answered %+v", res)
	}
	text, _ := res.Content[0].(*mcp.TextContent)
	fmt.Fprintf(stderr, "selftest: session at %s; echo answered %q\n", cs.InitializeResult().ProtocolVersion, text.Text)
	return nil
}
