package a2ae2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// jsServerDir holds server.mjs and the pinned A2A JS SDKs (@a2a-js/sdk
// 0.3.14 and 1.3.0, as a2a-sdk-03 and a2a-sdk-13) with Express, installed
// by its package-lock.json.
var jsServerDir = filepath.Join("testdata", "jsserver")

// jsPeer starts the A2A JS SDK server of sdk ("0.3" or "1.3") and returns
// its base URL and a function that kills it (as a crash would); it is
// killed when the test ends anyway. Without node or npm the test is
// skipped, saying so, except in CI, where it fails (see jsSetup).
func jsPeer(t *testing.T, sdk string) (string, func()) {
	t.Helper()
	node := jsSetup(t, jsServerDir)
	cmd := exec.Command(node, "server.mjs", sdk)
	cmd.Dir = jsServerDir
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	kill := func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
	t.Cleanup(kill)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("node server.mjs %s: %v", sdk, err)
	}
	var started struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal([]byte(line), &started); err != nil || started.URL == "" {
		t.Fatalf("node server.mjs %s printed %q: %v", sdk, line, err)
	}
	return started.URL, kill
}

// sendMessage is one SendMessage at version, in that version's shape
// (0.3's message/send, 1.0's SendMessage).
func sendMessage(version string) string {
	if version == "0.3" {
		return `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m-1","role":"user","parts":[{"kind":"text","text":"hello"}]}}}`
	}
	return `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}`
}

// TestOutboundToA2AJSServers (issue 19): the host (A2A 0.3 and 1.0,
// preferred 1.0, floor 0.3) negotiates with the A2A JS SDK's own servers
// from their cards, with an authenticated Subject and without one, and
// sends a real SendMessage through the recording Transport at the version
// decided. @a2a-js/sdk 1.3.0 serves a 1.0 card: 1.0 either way.
// @a2a-js/sdk 0.3.14 serves a 0.3 card (protocolVersion "0.3.0", no
// supportedInterfaces): an authenticated downgrade to 0.3, and refused
// unauthenticated for an anonymous host, which then sends nothing.
func TestOutboundToA2AJSServers(t *testing.T) {
	n, err := negotiate.Compile(hostFacets(), policy.Policy{Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	authenticated := subjectOf(&http.Request{Header: http.Header{"Authorization": {token}}})
	for _, sdk := range []string{"1.3", "0.3"} {
		peer, _ := jsPeer(t, sdk)
		digest, _ := events.PeerDigest(peer)
		for _, tc := range []struct {
			name    string
			subject *negotiate.Subject
			kind    negotiate.Kind
			event   events.NegotiationDecided
		}{
			{"authenticated", authenticated, negotiate.Accepted, accepted("1.0", "1.0")},
			{"anonymous", nil, negotiate.Accepted, accepted("1.0", "1.0")},
		} {
			if sdk == "0.3" {
				tc.kind, tc.event = negotiate.Downgraded, accepted("0.3", "1.0")
				if tc.subject == nil {
					tc.kind, tc.event = negotiate.Refused, refused("1.0", events.ReasonUnauthenticated)
				}
			}
			t.Run(sdk+" "+tc.name, func(t *testing.T) {
				ctx := context.Background()
				rec := &negotiatetest.Recorder{}
				// The card and the call carry a trace context (headers and
				// Message.metadata.openwop, RFC 0207): no SDK refuses it.
				opts := a2ahttp.OutboundOptions{Sink: rec, Subject: tc.subject, AllowLoopback: true,
					TraceContext: func(context.Context) (string, string) {
						return "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "wopneg=e2e"
					}}
				tr, o, err := a2ahttp.Connect(ctx, n, peer, opts)
				tc.event.PeerDigest = digest
				if o.Kind != tc.kind || len(rec.Events()) != 1 || rec.Events()[0].Payload != tc.event {
					t.Fatalf("Connect: %v %q, %v; events %+v, want %v and %+v", o.Kind, o.Version, err, rec.Events(), tc.kind, tc.event)
				}
				if tc.kind == negotiate.Refused {
					if tr != nil || !errors.Is(err, wperrors.InteropVersionUnsupported) {
						t.Errorf("refused: a Transport %v, err %v", tr, err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				resp, err := (&http.Client{Transport: tr}).Post(peer+"/a2a", "application/json", strings.NewReader(sendMessage(o.Version)))
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if want := "served at " + o.Version; resp.StatusCode != 200 || !strings.Contains(string(body), `"result"`) || !strings.Contains(string(body), want) {
					t.Errorf("SendMessage at %s: %d %s, want a result %q", o.Version, resp.StatusCode, body, want)
				}
				if len(rec.Events()) != 1 {
					t.Errorf("the call added events: %+v", rec.Events())
				}
			})
		}
	}
}

// TestOutboundToA2AJSServerDrift: the @a2a-js/sdk 1.3.0 server checks
// A2A-Version against its own card, and refuses 0.3 with its -32009 and
// ErrorInfo. Behind a gateway whose card advertises 0.3 only (card/runtime
// drift), an authenticated host settles 0.3 from the card, and the SDK's
// refusal of its SendMessage is recorded after that acceptance; the host
// gets interop_version_unsupported.
func TestOutboundToA2AJSServerDrift(t *testing.T) {
	backend, _ := jsPeer(t, "1.3")
	target, _ := url.Parse(backend)
	proxy := httputil.NewSingleHostReverseProxy(target)
	gateway := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			_, _ = io.WriteString(w, `{"name":"gateway","supportedInterfaces":[{"url":"http://`+r.Host+`/a2a","protocolBinding":"JSONRPC","protocolVersion":"0.3"}]}`)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer gateway.Close()
	n, err := negotiate.Compile(hostFacets(), policy.Policy{Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	rec := &negotiatetest.Recorder{}
	opts := a2ahttp.OutboundOptions{Sink: rec, Subject: subjectOf(&http.Request{Header: http.Header{"Authorization": {token}}}), AllowLoopback: true}
	tr, o, err := a2ahttp.Connect(context.Background(), n, gateway.URL, opts)
	if err != nil || o.Version != "0.3" {
		t.Fatalf("Connect: %+v %v", o, err)
	}
	_, err = (&http.Client{Transport: tr}).Post(gateway.URL+"/a2a", "application/json", strings.NewReader(sendMessage("0.3")))
	digest, _ := events.PeerDigest(gateway.URL)
	first, second := accepted("0.3", "1.0"), refused("0.3", events.ReasonUnsupported)
	first.PeerDigest, second.PeerDigest = digest, digest
	if evs := rec.Events(); !errors.Is(err, wperrors.InteropVersionUnsupported) || len(evs) != 2 || evs[0].Payload != first || evs[1].Payload != second {
		t.Errorf("err %v, events %+v; want interop_version_unsupported, %+v then %+v", err, evs, first, second)
	}
}

// TestOutboundToFailingA2APeers (issue 19): the A2A JS SDK server behind
// a gateway that answers 502 (its backend is gone), behind one that hangs
// up, and the server itself crashed. Each is an error that says so, and
// nothing is recorded: the peer refused nothing.
func TestOutboundToFailingA2APeers(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	goneURL, _ := url.Parse(gone.URL)
	gone.Close()
	gateway := httptest.NewServer(httputil.NewSingleHostReverseProxy(goneURL)) // 502 Bad Gateway
	defer gateway.Close()
	hangUp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
			c.Close()
		}
	}))
	defer hangUp.Close()
	n, err := negotiate.Compile(hostFacets(), policy.Policy{Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, url, reason string
	}{
		{"502 gateway", gateway.URL, "not-an-answer"},
		{"hang-up", hangUp.URL, "hang-up"},
		{"crashed peer", gone.URL, "unreachable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &negotiatetest.Recorder{}
			o, _, err := a2ahttp.Negotiate(context.Background(), n, tc.url, a2ahttp.OutboundOptions{
				Sink: rec, Subject: subjectOf(&http.Request{Header: http.Header{"Authorization": {token}}}), AllowLoopback: true,
			})
			var e *wperrors.Error
			if !errors.As(err, &e) || e.Code != wperrors.Internal || e.Details["reason"] != tc.reason {
				t.Errorf("err %v, want internal_error with reason %s", err, tc.reason)
			}
			if o.Kind != negotiate.Refused || o.Reason != "" || len(rec.Events()) != 0 {
				t.Errorf("Outcome %+v, events %+v; want no decision and no record", o, rec.Events())
			}
		})
	}
	// A real server that crashed mid-way: started, then killed.
	t.Run("A2A JS server killed", func(t *testing.T) {
		peer, kill := jsPeer(t, "1.3")
		rec := &negotiatetest.Recorder{}
		opts := a2ahttp.OutboundOptions{Sink: rec, AllowLoopback: true}
		if _, _, err := a2ahttp.Negotiate(context.Background(), n, peer, opts); err != nil {
			t.Fatal(err)
		}
		// Kill it the way a crash would: the next negotiation finds no
		// listener.
		kill()
		_, _, err := a2ahttp.Negotiate(context.Background(), n, peer, opts)
		var e *wperrors.Error
		if !errors.As(err, &e) || e.Details["reason"] != "unreachable" || len(rec.Events()) != 1 {
			t.Errorf("err %v, %d events; want unreachable and only the first decision", err, len(rec.Events()))
		}
	})
}
