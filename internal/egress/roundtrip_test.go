package egress_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/wopneg/wopneg/internal/egress"
)

// TestRoundTrip: a stamped call's failures are errors of their kind, and
// an answer, any status included, is handed back as it came.
func TestRoundTrip(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	hangUp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	}))
	defer hangUp.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) }))
	defer failing.Close()
	for url, kind := range map[string]egress.Kind{gone.URL: egress.Unreachable, hangUp.URL: egress.HangUp} {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		var e *egress.Error
		if _, err := egress.RoundTrip(http.DefaultTransport, req); !errors.As(err, &e) || e.Kind != kind || e.URL != url {
			t.Errorf("%s: %v, want %s", url, err, kind)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:1/", nil)
	if _, err := egress.RoundTrip(egress.NewTransport(egress.Options{}), req); !errors.Is(err, egress.Denied) {
		t.Errorf("loopback through the zero policy: %v", err)
	}
	req, _ = http.NewRequest(http.MethodGet, failing.URL, nil)
	if resp, err := egress.RoundTrip(http.DefaultTransport, req); err != nil || resp.StatusCode != http.StatusBadGateway {
		t.Errorf("a 502: %v", err)
	} else {
		resp.Body.Close()
	}
}
