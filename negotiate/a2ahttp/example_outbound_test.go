package a2ahttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// A peer whose card offers 1.0 refuses a call at 1.0 (card/runtime
// drift): Connect's Transport records the refusal beside the card's
// acceptance, and the caller gets interop_version_unsupported. The peer is
// on loopback, which the host allows; a nil Client is the module's egress
// client.
func ExampleConnect() {
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			io.WriteString(w, `{"supportedInterfaces":[{"url":"http://peer/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`)
			return
		}
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32009,"message":"version not supported"}}`)
	}))
	defer peer.Close()

	n, err := negotiate.Compile(facets.Set{A2A: &facets.A2A{
		Versions: []string{"0.3", "1.0"}, PreferredVersion: "1.0", MinimumVersion: "0.3", RefreshedAt: "2026-11-01",
	}}, policy.Policy{})
	if err != nil {
		panic(err)
	}
	audit := &negotiatetest.Recorder{}
	opts := a2ahttp.OutboundOptions{Sink: audit, AllowLoopback: true}
	stamped, _, err := a2ahttp.Connect(context.Background(), n, peer.URL, opts)
	if err != nil {
		panic(err)
	}
	_, err = (&http.Client{Transport: stamped}).Post(peer.URL+"/a2a", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"SendMessage"}`))
	fmt.Println(errors.Is(err, wperrors.InteropVersionUnsupported))
	for _, e := range audit.Events() {
		fmt.Println(e.Payload.Outcome, e.Payload.Requested, e.Payload.Reason)
	}
	// Output:
	// true
	// accepted 1.0 ok
	// refused 1.0 unsupported
}
