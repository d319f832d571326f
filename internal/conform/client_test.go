package conform

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestHostClient: the bearer goes to the host's own origin only, Accept
// defaults to JSON, and an answer over the cap is an error.
func TestHostClient(t *testing.T) {
	seen := map[string]http.Header{}
	handler := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen[name+r.URL.Path] = r.Header.Clone()
			if r.URL.Path == "/big" {
				_, _ = w.Write([]byte(strings.Repeat("x", maxResponse+1)))
				return
			}
			writeJSON(w, http.StatusOK, map[string]any{"ok": true})
		})
	}
	host := httptest.NewServer(handler("host"))
	defer host.Close()
	other := httptest.NewServer(handler("other"))
	defer other.Close()
	base, _ := url.Parse(host.URL)
	c := &hostClient{base: base, token: "tok", hc: http.DefaultClient, timeout: time.Second}
	ctx := context.Background()
	if a := c.do(ctx, http.MethodGet, "/x", nil, nil); a.Err != nil || a.Status != 200 || a.JSON["ok"] != true {
		t.Fatalf("%+v", a)
	}
	if h := seen["host/x"]; h.Get("Authorization") != "Bearer tok" || h.Get("Accept") != "application/json" {
		t.Fatalf("to the host: %v", h)
	}
	if a := c.do(ctx, http.MethodPost, other.URL+"/y", map[string]any{"a": 1}, http.Header{"Accept": {"text/plain"}}); a.Err != nil {
		t.Fatal(a.Err)
	}
	if h := seen["other/y"]; h.Get("Authorization") != "" || h.Get("Accept") != "text/plain" || h.Get("Content-Type") != "application/json" {
		t.Fatalf("to another origin: %v", h)
	}
	if a := c.do(ctx, http.MethodGet, "/big", nil, nil); !errors.Is(a.Err, errTooLarge) {
		t.Fatalf("an answer over the cap: %v", a.Err)
	}
	if a := c.do(ctx, http.MethodGet, "http://[::1", nil, nil); a.Err == nil {
		t.Fatal("a bad reference was sent")
	}
	if a := c.do(ctx, http.MethodGet, "/x", func() {}, nil); a.Err == nil {
		t.Fatal("a body that is not JSON was sent")
	}
	c.token = ""
	_ = c.do(ctx, http.MethodGet, "/z", nil, nil)
	if seen["host/z"].Get("Authorization") != "" {
		t.Fatal("an empty token was sent")
	}
}

// TestTimeout: every request has a deadline.
func TestTimeout(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-block }))
	defer srv.Close()
	defer close(block)
	base, _ := url.Parse(srv.URL)
	c := &hostClient{base: base, hc: http.DefaultClient, timeout: 50 * time.Millisecond}
	if a := c.do(context.Background(), http.MethodGet, "/", nil, nil); !errors.Is(a.Err, context.DeadlineExceeded) {
		t.Fatalf("%v", a.Err)
	}
}
