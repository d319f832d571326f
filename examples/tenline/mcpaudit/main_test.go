package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// auditLog is the host's audit log in a test: JSON lines in memory, or a
// disk that refuses every write.
type auditLog struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	full bool
}

func (a *auditLog) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.full {
		return 0, errors.New("disk full")
	}
	return a.buf.Write(p)
}

func (a *auditLog) String() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.buf.String()
}

func serve(t *testing.T, audit *auditLog) string {
	t.Helper()
	handler, err := host(audit)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

func connect(url string) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "tenline-test", Version: "1"}, nil)
	return c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
}

// TestHost runs the host with a go-sdk client: its tool answers at
// 2026-07-28 and the decision is a JSON line of the audit log; when the
// audit log cannot be written, the policy's RequireAudit serves nothing.
func TestHost(t *testing.T) {
	audit := &auditLog{}
	cs, err := connect(serve(t, audit))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "hello" {
		t.Errorf("hello answered %+v", res.Content)
	}
	if got := audit.String(); !strings.Contains(got, `"type":"negotiation.decided"`) || !strings.Contains(got, `"outcome":"accepted"`) || !strings.Contains(got, `"version":"2026-07-28"`) {
		t.Errorf("the audit log holds no acceptance of 2026-07-28:\n%s", got)
	}

	full := &auditLog{full: true}
	if cs, err := connect(serve(t, full)); err == nil {
		_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "hello"})
		cs.Close()
		if err == nil {
			t.Error("served with an audit log that cannot be written")
		}
	}
}
