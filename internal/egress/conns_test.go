package egress

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// TestDefaultClientIsShared: Do's client of a nil client is made once;
// a client of NewClient reuses one connection for sequential fetches and
// closes it with CloseIdleConnections, which reaches its transport.
func TestDefaultClientIsShared(t *testing.T) {
	if first, again := defaultClient(), defaultClient(); first != again {
		t.Fatal("Do of a nil client makes a client per call")
	}
	var mu sync.Mutex
	open, opened := map[net.Conn]bool{}, 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "{}")
	}))
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch s {
		case http.StateNew:
			open[c] = true
			opened++
		case http.StateClosed:
			delete(open, c)
		}
	}
	srv.Start()
	defer srv.Close()
	c, err := NewClient(Options{AllowLoopback: true})
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		resp, err := Do(c, req, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	mu.Lock()
	if opened != 1 {
		t.Errorf("10 sequential fetches opened %d connections, want 1", opened)
	}
	mu.Unlock()
	c.CloseIdleConnections()
	// The server sees the close a moment after the client makes it.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(open)
		mu.Unlock()
		if n == 0 {
			return
		}
	}
	t.Error("CloseIdleConnections left the connection open")
}
