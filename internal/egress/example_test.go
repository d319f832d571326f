package egress_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/internal/egress"
)

// A negotiation fetch of a peer on loopback: refused by the zero Options,
// with the envelope the caller reads; reached with AllowLoopback; and a
// 502 from it, which is no answer at all, so nothing would be recorded.
func Example() {
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/gateway" {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	defer peer.Close()
	fetch := func(c *http.Client, path string) {
		req, _ := http.NewRequest(http.MethodGet, peer.URL+path, nil)
		resp, err := egress.Do(c, req, 0)
		var env *wperrors.Error
		if errors.As(err, &env) {
			fmt.Println(env.Code, env.Details["reason"], errors.Is(err, egress.Denied))
			return
		}
		defer resp.Body.Close()
		body, _ := egress.ReadBody(resp.Body, 1024)
		fmt.Println(string(body))
	}

	strict, _ := egress.NewClient(egress.Options{})
	fetch(strict, "/mcp")
	local, _ := egress.NewClient(egress.Options{AllowLoopback: true})
	fetch(local, "/mcp")
	fetch(local, "/gateway")
	// Output:
	// internal_error egress-denied true
	// {"jsonrpc":"2.0","id":1,"result":{}}
	// internal_error not-an-answer false
}
