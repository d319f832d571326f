package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// auditLog is the host's audit log in a test: a file, or one already
// closed, as a disk that refuses every write.
type auditLog struct {
	f *os.File
}

func newAuditLog(t *testing.T, full bool) *auditLog {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(t.TempDir(), "audit.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if full {
		_ = f.Close()
	} else {
		t.Cleanup(func() { _ = f.Close() })
	}
	return &auditLog{f}
}

func (a *auditLog) String() string {
	b, _ := os.ReadFile(a.f.Name())
	return string(b)
}

func serve(t *testing.T, audit *auditLog) string {
	t.Helper()
	handler, err := host(audit.f)
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
	audit := newAuditLog(t, false)
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

	full := newAuditLog(t, true)
	if cs, err := connect(serve(t, full)); err == nil {
		_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "hello"})
		cs.Close()
		if err == nil {
			t.Error("served with an audit log that cannot be written")
		}
	}
}
