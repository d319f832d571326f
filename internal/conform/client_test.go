package conform

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
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

// TestBearerStaysOnItsOrigin: a redirect from the host to the same host on
// another port, to another scheme or to another host name is followed
// without the bearer; one to the host's own origin keeps it; and the
// caller's client's redirect rule still applies.
func TestBearerStaysOnItsOrigin(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{}
	loops := 0
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen["other"+r.URL.Path] = r.Header.Get("Authorization")
		mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{})
	}))
	defer other.Close()
	_, otherPort, _ := net.SplitHostPort(other.Listener.Addr().String())
	var host *httptest.Server
	host = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen["host"+r.URL.Path] = r.Header.Get("Authorization")
		mu.Unlock()
		_, port, _ := net.SplitHostPort(host.Listener.Addr().String())
		switch r.URL.Path {
		case "/port": // the same host, another port
			http.Redirect(w, r, "http://127.0.0.1:"+otherPort+"/from-port", http.StatusFound)
		case "/name": // the same address under another name
			http.Redirect(w, r, "http://localhost:"+port+"/from-name", http.StatusTemporaryRedirect)
		case "/same":
			http.Redirect(w, r, "/landed", http.StatusFound)
		case "/loop":
			mu.Lock()
			loops++
			mu.Unlock()
			http.Redirect(w, r, "/loop", http.StatusFound)
		default:
			writeJSON(w, http.StatusOK, map[string]any{})
		}
	}))
	defer host.Close()
	base, _ := url.Parse(host.URL)
	ctx := context.Background()
	for _, hc := range []*http.Client{{}, {CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}} {
		clear(seen)
		c := &hostClient{base: base, token: "tok", hc: hc, timeout: 5 * time.Second}
		for _, path := range []string{"/port", "/name", "/same"} {
			if a := c.do(ctx, http.MethodGet, path, nil, nil); a.Err != nil || a.Status != http.StatusOK {
				t.Fatalf("%s: %+v", path, a)
			}
		}
		for where, want := range map[string]string{
			"host/port": "Bearer tok", "other/from-port": "",
			"host/name": "Bearer tok", "host/from-name": "",
			"host/same": "Bearer tok", "host/landed": "Bearer tok",
		} {
			if got, ok := seen[where]; !ok || got != want {
				t.Errorf("%s: Authorization %q (reached %v), want %q", where, got, ok, want)
			}
		}
	}
	c := &hostClient{base: base, token: "tok", hc: &http.Client{}, timeout: 5 * time.Second}
	if a := c.do(ctx, http.MethodGet, "/loop", nil, nil); !errors.Is(a.Err, errTooManyRedirects) {
		t.Errorf("a redirect loop: %v, want errTooManyRedirects", a.Err)
	}
	mu.Lock()
	if loops != maxRedirects {
		t.Errorf("a redirect loop was requested %d times, want %d, as net/http's default", loops, maxRedirects)
	}
	mu.Unlock()
	refuse := errors.New("no redirect")
	c.hc = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return refuse }}
	if a := c.do(ctx, http.MethodGet, "/same", nil, nil); !errors.Is(a.Err, refuse) {
		t.Errorf("the caller's redirect rule: %v, want its error", a.Err)
	}
}

// TestSameOrigin: one origin is scheme, host and port, as the URL
// Standard reads them.
func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"http://h.example/x", "http://H.example:80/y", true},
		{"https://h.example/", "https://h.example:443", true},
		{"http://h.example/", "https://h.example/", false},
		{"http://h.example:8080/", "http://h.example:8081/", false},
		{"http://h.example/", "http://g.example/", false},
		{"http://0x7f000001/", "http://127.0.0.1/", true},
		{"mailto:a@h.example", "mailto:a@h.example", false},
	} {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if got := sameOrigin(a, b); got != tc.want {
			t.Errorf("sameOrigin(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
