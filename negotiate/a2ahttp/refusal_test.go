package a2ahttp_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// TestRuntimeRefusalSaysWhatThePeerOffered: a call Connect's Transport
// sends that the peer refuses for its version returns the registered
// refusal, and says what the peer's ErrorInfo lists instead (its
// supportedVersions, in the message and in details.offered), in the
// answer's shapes A2A servers write: a JSON-RPC -32009 with the 1.0.1
// array of details, a bare detail, a google.rpc.Status, an event stream;
// a refusal that lists nothing says so.
func TestRuntimeRefusalSaysWhatThePeerOffered(t *testing.T) {
	const info = `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED","domain":"a2a-protocol.org","metadata":{"other":"x","supportedVersions":"1.1, 1.0"}}`
	for _, tc := range []struct {
		name, contentType, answer string
		offered                   []string
	}{
		{"details array", "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32009,"message":"no","data":[{"nested":[1,{"a":null}]},` + info + `]}}`, []string{"1.1", "1.0"}},
		{"a bare detail", "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32009,"message":"no","data":` + info + `}}`, []string{"1.1", "1.0"}},
		{"google.rpc.Status", "application/json", `{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"no","details":[` + info + `]}}`, []string{"1.1", "1.0"}},
		{"an event stream", "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32009,\"message\":\"no\",\"data\":[" + info + "]}}\n\n", []string{"1.1", "1.0"}},
		{"no list", "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32009,"message":"no","data":{"metadata":{"supportedVersions":5}}}}`, []string{}},
		{"a list outside metadata", "application/json", `{"supportedVersions":"1.1","jsonrpc":"2.0","id":1,"error":{"code":-32009,"message":"no","data":[{"supportedVersions":"1.0"}]}}`, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			peer := driftPeer(t, tc.contentType, tc.answer)
			opts := a2ahttp.OutboundOptions{Sink: &negotiatetest.Recorder{}, Subject: peerAgent(), AllowLoopback: true}
			tr, _, err := a2ahttp.Connect(context.Background(), compile(t, wideA2A(), policy.Policy{}), peer.URL, opts)
			if err != nil {
				t.Fatal(err)
			}
			_, err = (&http.Client{Transport: tr}).Post(peer.URL+"/a2a", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"SendMessage"}`))
			var we *wperrors.Error
			if !errors.Is(err, wperrors.InteropVersionUnsupported) || !errors.As(err, &we) || !reflect.DeepEqual(we.Details["offered"], tc.offered) {
				t.Fatalf("err %v, want interop_version_unsupported offering %q", err, tc.offered)
			}
			listed := strings.Join(tc.offered, ", ")
			if listed == "" {
				listed = "no version"
			}
			if want := "a2a negotiation refused: unsupported; the peer offers " + listed; we.Message != want {
				t.Errorf("message %q, want %q", we.Message, want)
			}
		})
	}
}
