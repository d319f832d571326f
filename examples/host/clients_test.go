package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopneg/wopneg/negotiate/negotiatetest"
)

// exchange is one HTTP request as it crossed the wire, with the revisions
// it named.
type exchange struct {
	method     string // HTTP method
	rpc        string // JSON-RPC method, "" for a bodiless request or a response
	header     string // MCP-Protocol-Version
	meta       string // params._meta revision of the JSON-RPC request, if any
	initialize string // initialize's params.protocolVersion, if any
	session    string // Mcp-Session-Id
}

// wire records exchanges: as a RoundTripper on the client's side, or as a
// handler between the middleware and the MCP server.
type wire struct {
	mu  sync.Mutex
	log []exchange
}

func (w *wire) record(r *http.Request) *http.Request {
	ex := exchange{method: r.Method, header: r.Header.Get("Mcp-Protocol-Version"), session: r.Header.Get("Mcp-Session-Id")}
	if r.Body != nil {
		body, _ := io.ReadAll(r.Body)
		r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
			Params struct {
				ProtocolVersion string         `json:"protocolVersion"`
				Meta            map[string]any `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) == nil {
			ex.rpc = msg.Method
			ex.initialize = msg.Params.ProtocolVersion
			ex.meta, _ = msg.Params.Meta["io.modelcontextprotocol/protocolVersion"].(string)
		}
	}
	w.mu.Lock()
	w.log = append(w.log, ex)
	w.mu.Unlock()
	return r
}

func (w *wire) RoundTrip(r *http.Request) (*http.Response, error) {
	return http.DefaultTransport.RoundTrip(w.record(r.Clone(r.Context())))
}

func (w *wire) tap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { next.ServeHTTP(rw, w.record(r)) })
}

func (w *wire) exchanges() []exchange {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.log)
}

// rig is a host on loopback with its event log, and what reached its MCP
// server.
type rig struct {
	h      *host
	events *negotiatetest.Recorder
	server *wire
}

const testToken = "test-token"

func startHost(t *testing.T, cfg config) *rig {
	t.Helper()
	r := &rig{events: &negotiatetest.Recorder{}, server: &wire{}}
	cfg.Addr = "127.0.0.1:0"
	cfg.Token = testToken
	cfg.Tap = r.server.tap
	h, err := newHost(cfg, r.events)
	if err != nil {
		t.Fatal(err)
	}
	r.h = h
	serve(t, h)
	return r
}

// serve runs h until the test ends, and fails the test if Serve returns
// an error when it is stopped.
func serve(t *testing.T, h *host) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
}

// decided is the part of a negotiation.decided payload the tests compare.
type decided struct {
	Outcome   string
	Version   string
	Requested string
	Reason    string
}

func (r *rig) decisions(t *testing.T) []decided {
	t.Helper()
	var out []decided
	for _, e := range r.events.Events() {
		if e.RunID != "" || e.Payload.Protocol != "mcp" {
			t.Errorf("event %+v is not a durable mcp host event", e)
		}
		p := e.Payload
		out = append(out, decided{p.Outcome, p.Version, p.Requested, p.Reason})
	}
	return out
}

// mcpClient is an SDK client under test.
type mcpClient interface {
	// connect connects to url, pinned to a revision unless pinned is "",
	// presenting the host's token when auth is set, over rt.
	connect(ctx context.Context, url, pinned string, auth bool, rt http.RoundTripper) (session, error)
}

type session interface {
	revision() string
	echo(ctx context.Context, text string) (string, error)
	close()
}

// authTransport adds the bearer token to every request.
type authTransport struct{ next http.RoundTripper }

func (a authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+testToken)
	return a.next.RoundTrip(r)
}

// goSDK is github.com/modelcontextprotocol/go-sdk v1.8.0.
type goSDK struct{}

func (goSDK) connect(ctx context.Context, url, pinned string, auth bool, rt http.RoundTripper) (session, error) {
	if auth {
		rt = authTransport{rt}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-e2e", Version: "1.8.0"}, nil)
	var opts *mcp.ClientSessionOptions
	if pinned != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: pinned}
	}
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rt}, DisableStandaloneSSE: true, MaxRetries: -1}, opts)
	if err != nil {
		return nil, err
	}
	return goSDKSession{cs}, nil
}

type goSDKSession struct{ cs *mcp.ClientSession }

func (s goSDKSession) revision() string { return s.cs.InitializeResult().ProtocolVersion }
func (s goSDKSession) close()           { s.cs.Close() }

func (s goSDKSession) echo(ctx context.Context, text string) (string, error) {
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) != 1 {
		return "", errors.New("echo failed")
	}
	return res.Content[0].(*mcp.TextContent).Text, nil
}

// mcpGo is github.com/mark3labs/mcp-go v1.2.1.
type mcpGo struct{}

func (mcpGo) connect(ctx context.Context, url, pinned string, auth bool, rt http.RoundTripper) (session, error) {
	if auth {
		rt = authTransport{rt}
	}
	tr, err := mcpgotransport.NewStreamableHTTP(url, mcpgotransport.WithHTTPBasicClient(&http.Client{Transport: rt}))
	if err != nil {
		return nil, err
	}
	var opts []mcpgoclient.ClientOption
	if pinned != "" {
		opts = append(opts, mcpgoclient.WithProtocolVersion(pinned))
	}
	c := mcpgoclient.NewClient(tr, opts...)
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	req := mcpgo.InitializeRequest{}
	req.Params.ClientInfo = mcpgo.Implementation{Name: "mcp-go-e2e", Version: "1.2.1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		c.Close()
		return nil, err
	}
	return mcpGoSession{c}, nil
}

type mcpGoSession struct{ c *mcpgoclient.Client }

func (s mcpGoSession) revision() string { return s.c.ProtocolVersion() }
func (s mcpGoSession) close()           { s.c.Close() }

func (s mcpGoSession) echo(ctx context.Context, text string) (string, error) {
	req := mcpgo.CallToolRequest{}
	req.Params.Name = "echo"
	req.Params.Arguments = map[string]any{"text": text}
	res, err := s.c.CallTool(ctx, req)
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) != 1 {
		return "", errors.New("echo failed")
	}
	tc, ok := res.Content[0].(mcpgo.TextContent)
	if !ok {
		return "", errors.New("echo answered no text")
	}
	return tc.Text, nil
}
