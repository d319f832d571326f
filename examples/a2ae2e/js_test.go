package a2ae2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/examples/internal/npmtest"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
)

// jsClientDir holds client.mjs and the pinned A2A JS SDKs: @a2a-js/sdk
// 0.3.14 and 1.3.0, installed side by side under the aliases a2a-sdk-03
// and a2a-sdk-13 by its package-lock.json.
var jsClientDir = filepath.Join("testdata", "jsclient")

// jsClient prepares testdata/jsclient (npm ci from the lockfile) and
// returns the node binary.
func jsClient(t *testing.T) string { return jsSetup(t, jsClientDir) }

// jsSetup prepares dir (npm ci from its lockfile, unless its SDKs are
// installed) and returns the node binary (npmtest.Node).
func jsSetup(t *testing.T, dir string) string {
	t.Helper()
	return npmtest.Node(t, dir, "a2a-sdk-13")
}

// jsExchange is one request as client.mjs's fetch saw it.
type jsExchange struct {
	Method string  `json:"method"`
	Path   string  `json:"path"`
	Sent   *string `json:"sent"`   // the A2A-Version sent; nil when none
	Served *string `json:"served"` // the A2A-Version of the response
	RPC    string  `json:"rpc"`    // the JSON-RPC method
	Status int     `json:"status"`
	Code   int     `json:"code"` // the JSON-RPC error code; 0 when none
}

// jsResult is what client.mjs prints.
type jsResult struct {
	Reply string `json:"reply"`
	Error *struct {
		Name    string `json:"name"`
		Message string `json:"message"`
	} `json:"error"`
	Wire []jsExchange `json:"wire"`
}

func runJS(t *testing.T, node, sdk string, h *host, auth bool) jsResult {
	t.Helper()
	tok := ""
	if auth {
		tok = token[len("Bearer "):]
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.mjs", sdk, h.srv.URL, tok)
	cmd.Dir = jsClientDir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client.mjs %s: %v: %s", sdk, err, out)
	}
	var res jsResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return res
}

func ptr(s string) *string { return &s }

// TestA2AJSClients drives the A2A JS SDK against the host. @a2a-js/sdk
// 0.3.14 sends no A2A-Version at all, on the card or on the call: its call
// is a request for 0.3 (A2A §3.6.2), served at 0.3 to an authenticated
// caller and refused with -32009 to an anonymous one, and recorded as
// requested "0.3" either way. Its card request still gets the preferred
// card (the v2 card rule), which the host serves as the 0.3/1.0 union card
// so that a 0.3 client can read it. @a2a-js/sdk 1.3.0 sends A2A-Version:
// 1.0 everywhere and is served at 1.0.
func TestA2AJSClients(t *testing.T) {
	node := jsClient(t)
	card := func(sent *string) jsExchange {
		return jsExchange{Method: "GET", Path: a2asrv.WellKnownAgentCardPath, Sent: sent, Served: ptr("1.0"), Status: 200}
	}
	const refusal03 = "JSON-RPC error: A2A-Version (none, which A2A reads as 0.3) is below the preferred version 1.0 and is served only to an authenticated caller; this interface serves 1.0 (Code: -32009) Data: " +
		`[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED","domain":"a2a-protocol.org","metadata":{"supportedVersions":"1.0"}}]`
	for _, tc := range []struct {
		name   string
		sdk    string
		auth   bool
		reply  string
		error  string // the message the SDK surfaced; empty when it got a reply
		wire   []jsExchange
		events []events.NegotiationDecided
	}{
		{"0.3.14, authenticated: no header is 0.3, served at 0.3", "0.3", true, "served at 0.3", "",
			[]jsExchange{card(nil), {"POST", "/a2a", nil, ptr("0.3"), "message/send", 200, 0}},
			[]events.NegotiationDecided{accepted("1.0", ""), accepted("0.3", "0.3")}},
		{"0.3.14, anonymous: no header is 0.3, refused -32009", "0.3", false, "", refusal03,
			[]jsExchange{card(nil), {"POST", "/a2a", nil, ptr("1.0"), "message/send", 200, -32009}},
			[]events.NegotiationDecided{accepted("1.0", ""), refused("0.3", events.ReasonUnauthenticated)}},
		{"1.3.0, authenticated: 1.0", "1.3", true, "served at 1.0", "",
			[]jsExchange{card(ptr("1.0")), {"POST", "/a2a", ptr("1.0"), ptr("1.0"), "SendMessage", 200, 0}},
			[]events.NegotiationDecided{accepted("1.0", "1.0"), accepted("1.0", "1.0")}},
		{"1.3.0, anonymous: 1.0", "1.3", false, "served at 1.0", "",
			[]jsExchange{card(ptr("1.0")), {"POST", "/a2a", ptr("1.0"), ptr("1.0"), "SendMessage", 200, 0}},
			[]events.NegotiationDecided{accepted("1.0", "1.0"), accepted("1.0", "1.0")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t, func(o *a2ahttp.Options) { o.Card = unionCard })
			res := runJS(t, node, tc.sdk, h, tc.auth)
			if tc.error == "" && (res.Error != nil || res.Reply != tc.reply) {
				t.Errorf("the client got reply %q, error %+v; want reply %q", res.Reply, res.Error, tc.reply)
			}
			if tc.error != "" && (res.Error == nil || res.Error.Message != tc.error) {
				t.Errorf("the client surfaced %+v\nwant the error %q", res.Error, tc.error)
			}
			if !reflect.DeepEqual(res.Wire, tc.wire) {
				t.Errorf("client.mjs saw on the wire\n %s\nwant %s", jsonOf(res.Wire), jsonOf(tc.wire))
			}
			checkEvents(t, h, tc.events...)
		})
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// unionCard is the card a host that still serves 0.3 clients answers with
// for every version: a2a-go's 0.3 compatibility card, the 1.0 card with the
// 0.3 fields (url, preferredTransport, protocolVersion) beside it.
func unionCard(r *http.Request, _ string) ([]byte, error) { return cardJSON(r, "0.3") }
