package seams_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// connCounter counts the connections a server holds open.
type connCounter struct {
	mu     sync.Mutex
	open   map[net.Conn]bool
	opened int
}

func (c *connCounter) state(conn net.Conn, s http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch s {
	case http.StateNew:
		c.open[conn] = true
		c.opened++
	case http.StateClosed, http.StateHijacked:
		delete(c.open, conn)
	}
}

// openConns is how many connections are open.
func (c *connCounter) openConns() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.open)
}

// countingServer starts h on loopback, counting its connections.
func countingServer(t *testing.T, h http.Handler) (*httptest.Server, *connCounter) {
	t.Helper()
	c := &connCounter{open: map[net.Conn]bool{}}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = c.state
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, c
}

// TestNoConnectionLeftOpen: N exchanges through the seams' own egress
// transport, over A2A and MCP, leave no connection to the peer open once
// they have answered (each closes its idle connections as it ends),
// where a transport per exchange left open kept one each.
func TestNoConnectionLeftOpen(t *testing.T) {
	const n = 12
	r := newRig(t, testFacets())
	a2a := newFakeA2A(t, "1.0", "1.1")
	a2aSrv, a2aConns := countingServer(t, http.HandlerFunc(a2a.serve))
	mcp := newFakeMCP(t, "2025-11-25", "2026-07-28")
	mcpSrv, mcpConns := countingServer(t, http.HandlerFunc(mcp.serve))
	for range n {
		if status, body := r.call(t, "a2a", "acme", map[string]any{"peerUrl": a2aSrv.URL}); status != http.StatusOK {
			t.Fatalf("a2a: %d %v", status, body)
		}
		if status, body := r.call(t, "mcp", "acme", map[string]any{"serverUrl": mcpSrv.URL}); status != http.StatusOK {
			t.Fatalf("mcp: %d %v", status, body)
		}
	}
	for _, p := range []struct {
		name  string
		conns *connCounter
	}{{"a2a", a2aConns}, {"mcp", mcpConns}} {
		if p.conns.opened == 0 {
			t.Fatalf("%s: the peer saw no connection", p.name)
		}
		// The server sees a close a moment after the client makes it:
		// wait for it, up to a bound far above any machine's.
		deadline := time.Now().Add(10 * time.Second)
		for p.conns.openConns() > 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if open := p.conns.openConns(); open != 0 {
			t.Errorf("%s: %d connections of %d left open after %d exchanges", p.name, open, p.conns.opened, n)
		}
	}
}
