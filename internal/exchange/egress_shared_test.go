package exchange_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/wopneg/wopneg/internal/exchange"
)

// TestSharedEgressPolicies: each address policy has its own shared client
// and transport, made once: the zero policy's refuses loopback, the one
// that allows it reaches a server there, and asking again hands back the
// same client.
func TestSharedEgressPolicies(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(srv.Close)
	for _, c := range []struct {
		e       exchange.Egress
		reaches bool
	}{{exchange.Egress{}, false}, {exchange.Egress{AllowPrivate: true}, false}, {exchange.Egress{AllowLoopback: true}, true}} {
		if first, again := c.e.Fetcher(), c.e.Fetcher(); first != again {
			t.Errorf("%+v: a new client each time", c.e)
		}
		resp, err := c.e.Fetcher().Get(srv.URL)
		if err == nil {
			resp.Body.Close()
		}
		if (err == nil) != c.reaches {
			t.Errorf("%+v reaching loopback: %v, want reached %v", c.e, err, c.reaches)
		}
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		resp, err = c.e.Base().RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		if (err == nil) != c.reaches {
			t.Errorf("%+v's transport reaching loopback: %v, want reached %v", c.e, err, c.reaches)
		}
	}
}
