package mcphttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/internal/egress"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// legacyServer answers as the TypeScript MCP SDK 1.32.2 server does: no
// server/discover without a session, initialize at 2025-11-25 with a
// session, then notifications and calls on it.
func legacyServer(call func(http.ResponseWriter, *http.Request)) func(http.ResponseWriter, *http.Request) {
	return byMethod(map[string]func(http.ResponseWriter, *http.Request){
		"server/discover":           jsonAnswer(400, sessionRequired),
		"initialize":                withSession("s-1", jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`)),
		"notifications/initialized": status(http.StatusAccepted),
		"tools/call":                call,
		http.MethodDelete:           status(http.StatusOK),
	})
}

func postThrough(t *testing.T, rt http.RoundTripper, url, body string, header http.Header) (*http.Response, string, error) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b), nil
}

const toolsCall = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`

// TestConnectLegacySession: Connect settles a handshake revision through
// initialize and hands back a Transport on its session: it sends
// notifications/initialized once, before the first call; every call
// carries the session and the revision in the header only; a request
// naming another session, or a second initialize, is not sent; Close ends
// the session once, and nothing is sent after it.
func TestConnectLegacySession(t *testing.T) {
	const result = `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hi"}]}}`
	p := newPeer(t, legacyServer(jsonAnswer(200, result)))
	rec := &negotiatetest.Recorder{}
	n := compile(t, wideFacets(), policy.Policy{})
	tr, o, err := mcphttp.Connect(context.Background(), n, p.URL, mcphttp.OutboundOptions{Sink: rec, Subject: user, AllowLoopback: true})
	if err != nil || o.Kind != negotiate.Downgraded || o.Version != "2025-11-25" || tr.Version() != "2025-11-25" {
		t.Fatalf("outcome %+v, error %v", o, err)
	}
	for range 2 {
		if _, body, err := postThrough(t, tr, p.URL, toolsCall, nil); err != nil || body != result {
			t.Fatalf("call: %q, %v", body, err)
		}
	}
	sent := p.seen()
	if got := strings.Join(methods(sent), " "); got != "server/discover initialize notifications/initialized tools/call tools/call" {
		t.Fatalf("sent %s", got)
	}
	for _, s := range sent[2:] {
		if s.header.Get("Mcp-Session-Id") != "s-1" || s.header.Get("Mcp-Protocol-Version") != "2025-11-25" || strings.Contains(s.body, "_meta") {
			t.Errorf("sent %v %s", s.header, s.body)
		}
	}
	if sent[3].body != toolsCall {
		t.Errorf("the call was changed: %s", sent[3].body)
	}
	for name, c := range map[string]struct {
		body   string
		header http.Header
	}{
		"another session":  {toolsCall, http.Header{"Mcp-Session-Id": {"s-2"}}},
		"two sessions":     {toolsCall, http.Header{"Mcp-Session-Id": {"s-1", "s-2"}}},
		"a new initialize": {initialize("2025-11-25"), nil},
	} {
		if _, _, err := postThrough(t, tr, p.URL, c.body, c.header); !errors.Is(err, mcphttp.ErrVersionConflict) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The caller's own Mcp-Session-Id, when it is the session's, goes.
	if _, _, err := postThrough(t, tr, p.URL, toolsCall, http.Header{"Mcp-Session-Id": {"s-1"}}); err != nil {
		t.Errorf("the session's own id: %v", err)
	}
	before := len(p.seen())
	for range 2 {
		if err := tr.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	sent = p.seen()
	if len(sent) != before+1 || sent[before].method != http.MethodDelete || sent[before].header.Get("Mcp-Session-Id") != "s-1" {
		t.Errorf("Close sent %+v", sent[before:])
	}
	if _, _, err := postThrough(t, tr, p.URL, toolsCall, nil); err == nil || len(p.seen()) != before+1 {
		t.Errorf("a call after Close: %v", err)
	}
	if ev := payloads(t, rec); len(ev) != 1 || ev[0].Version != "2025-11-25" {
		t.Errorf("recorded %+v", ev)
	}

	// Anonymous: refused unauthenticated, no Transport, nothing sent but
	// the discover.
	p = newPeer(t, legacyServer(jsonAnswer(200, result)))
	tr, o, err = mcphttp.Connect(context.Background(), n, p.URL, mcphttp.OutboundOptions{Sink: rec, AllowLoopback: true})
	if tr != nil || o.Reason != "unauthenticated" || !errors.Is(err, wperrors.InteropVersionUnsupported) || len(p.seen()) != 1 {
		t.Errorf("anonymous: %v, %+v, %v, sent %q", tr, o, err, methods(p.seen()))
	}
}

// TestConnectNotificationsInitialized: a server that does not accept
// notifications/initialized gets no call; the next call tries again.
func TestConnectNotificationsInitialized(t *testing.T) {
	var refuse atomic.Bool
	refuse.Store(true)
	p := newPeer(t, byMethod(map[string]func(http.ResponseWriter, *http.Request){
		"server/discover": jsonAnswer(400, sessionRequired),
		"initialize":      withSession("s-1", jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`)),
		"notifications/initialized": func(w http.ResponseWriter, r *http.Request) {
			if refuse.Load() {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			w.WriteHeader(299) // a 2xx, whatever it is called
		},
		"tools/call": jsonAnswer(200, `{"jsonrpc":"2.0","id":2,"result":{}}`),
	}))
	tr, _, err := mcphttp.Connect(context.Background(), compile(t, wideFacets(), policy.Policy{}), p.URL, mcphttp.OutboundOptions{Sink: &negotiatetest.Recorder{}, Subject: user, AllowLoopback: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := postThrough(t, tr, p.URL, toolsCall, nil); !errors.Is(err, egress.NotAnAnswer) {
		t.Errorf("refused initialized: %v", err)
	}
	refuse.Store(false)
	if _, _, err := postThrough(t, tr, p.URL, toolsCall, nil); err != nil {
		t.Errorf("accepted initialized: %v", err)
	}
	if got := strings.Join(methods(p.seen()), " "); got != "server/discover initialize notifications/initialized notifications/initialized tools/call" {
		t.Errorf("sent %s", got)
	}
}

// TestConnectStateless: a 2026-07-28 server needs no session: the
// Transport stamps _meta, and Close sends nothing.
func TestConnectStateless(t *testing.T) {
	p := newPeer(t, byMethod(map[string]func(http.ResponseWriter, *http.Request){
		"server/discover": jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-11-25","2026-07-28"]}}`),
		"tools/call":      jsonAnswer(200, `{"jsonrpc":"2.0","id":2,"result":{}}`),
	}))
	tr, o, err := mcphttp.Connect(context.Background(), compile(t, wideFacets(), policy.Policy{}), p.URL, mcphttp.OutboundOptions{Sink: &negotiatetest.Recorder{}, AllowLoopback: true})
	if err != nil || o.Version != "2026-07-28" {
		t.Fatalf("%+v, %v", o, err)
	}
	if _, _, err := postThrough(t, tr, p.URL, toolsCall, nil); err != nil {
		t.Fatal(err)
	}
	if err := tr.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	sent := p.seen()
	if got := strings.Join(methods(sent), " "); got != "server/discover tools/call" || !strings.Contains(sent[1].body, `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`) || sent[1].header.Get("Mcp-Session-Id") != "" {
		t.Errorf("sent %s: %+v", got, sent)
	}
	// A host's own client: its Transport carries the calls.
	tr, _, err = mcphttp.Connect(context.Background(), compile(t, wideFacets(), policy.Policy{}), p.URL, mcphttp.OutboundOptions{Sink: &negotiatetest.Recorder{}, Client: &http.Client{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := postThrough(t, tr, p.URL, toolsCall, nil); err != nil {
		t.Error(err)
	}
}

// TestConnectStreamOpenAfterItsResponse: a stream that answered the call
// comes back to the caller at its response, though the server keeps it
// open; the caller reads the response, then the server ends it.
func TestConnectStreamOpenAfterItsResponse(t *testing.T) {
	ended := make(chan struct{})
	p := newPeer(t, byMethod(map[string]func(http.ResponseWriter, *http.Request){
		"server/discover": jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"]}}`),
		"tools/call": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n")
			w.(http.Flusher).Flush()
			select { // open until the caller has the response, or gives up
			case <-ended:
			case <-r.Context().Done():
			}
		},
	}))
	tr, _, err := mcphttp.Connect(context.Background(), compile(t, wideFacets(), policy.Policy{}), p.URL, mcphttp.OutboundOptions{Sink: &negotiatetest.Recorder{}, AllowLoopback: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.URL, strings.NewReader(toolsCall))
		req.Header.Set("Content-Type", "application/json")
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		got <- err
	}()
	select {
	case err := <-got:
		close(ended)
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second): // a deadlock's guard, not a measure: the answer is in the first write
		cancel()
		close(ended)
		t.Fatal("the response was held until the stream ended")
	}
}

// TestTransportDrift: a stamped call the server refuses for its revision
// (-32022, in any spelling a JSON-RPC client reads as it) is an
// interop_version_unsupported error, recorded through Connect's sink as a
// refusal of that exchange beside the negotiation's acceptance: reason
// below-floor when the server lists only revisions below the floor,
// unsupported otherwise. Any other answer passes byte for byte.
func TestTransportDrift(t *testing.T) {
	cases := []struct {
		name   string
		answer func(http.ResponseWriter, *http.Request)
		reason string // "" when the answer passes
		body   string
	}{
		{"-32022 listing a lower revision", jsonAnswer(400, `{"jsonrpc":"2.0","id":2,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2025-11-25"],"requested":"2026-07-28"}}}`), "unsupported", ""},
		{"-32022 listing revisions below the floor", jsonAnswer(400, `{"jsonrpc":"2.0","id":2,"error":{"code":-32022,"message":"x","data":{"supported":["2025-06-18"]}}}`), "below-floor", ""},
		{"-32022 listing the revision itself", jsonAnswer(400, `{"jsonrpc":"2.0","id":2,"error":{"code":-32022,"message":"x","data":{"supported":["2026-07-28"]}}}`), "unsupported", ""},
		{"-3.2022e4, on HTTP 200", jsonAnswer(200, `{"jsonrpc":"2.0","id":2,"error":{"code":-3.2022e4,"message":"x"}}`), "unsupported", ""},
		{"-32022.0, key in another case", jsonAnswer(200, `{"jsonrpc":"2.0","id":2,"Error":{"code":-32022.0,"message":"x"}}`), "unsupported", ""},
		{"in an event stream, after a notification", sseAnswer("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n", "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32022,\"message\":\"x\"}}\n\n"), "unsupported", ""},
		{"a result", jsonAnswer(200, `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`), "", `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`},
		{"another error", jsonAnswer(200, `{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"x"}}`), "", `{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"x"}}`},
		{"a result in an event stream", sseAnswer("data: {\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n\n", "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n", ": after\n\n"), "", "data: {\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n: after\n\n"},
		{"not JSON", jsonAnswer(404, `not found`), "", `not found`},
	}
	n := compile(t, wideFacets(), policy.Policy{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newPeer(t, byMethod(map[string]func(http.ResponseWriter, *http.Request){
				"server/discover": jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-11-25","2026-07-28"]}}`),
				"tools/call":      c.answer,
			}))
			rec := &negotiatetest.Recorder{}
			tr, _, err := mcphttp.Connect(context.Background(), n, p.URL, mcphttp.OutboundOptions{Sink: rec, Subject: user, AllowLoopback: true})
			if err != nil {
				t.Fatal(err)
			}
			_, body, err := postThrough(t, tr, p.URL, toolsCall, nil)
			ev := payloads(t, rec)
			digest, _ := events.PeerDigest(p.URL)
			if c.reason == "" {
				if err != nil || body != c.body || len(ev) != 1 {
					t.Errorf("answer %q, %v, recorded %+v; want %q", body, err, ev, c.body)
				}
				return
			}
			want := events.NegotiationDecided{Protocol: "mcp", Outcome: "refused", Requested: "2026-07-28", Reason: c.reason, Floor: "2025-11-25", PeerDigest: digest, At: now}
			if !errors.Is(err, wperrors.InteropVersionUnsupported) || len(ev) != 2 || ev[0].Outcome != "accepted" || ev[1] != want {
				t.Errorf("error %v, recorded %+v, want the acceptance and %+v", err, ev, want)
			}
			// Without a sink (NewTransport) the answer is the caller's to
			// read: it comes back as it came, and nothing is recorded.
			bare, _ := mcphttp.NewTransport(accepted("2026-07-28"), http.DefaultTransport)
			if resp, body, err := postThrough(t, bare, p.URL, toolsCall, nil); err != nil || !strings.Contains(body, "32022") && !strings.Contains(body, "2022e4") || resp == nil || len(rec.Events()) != 2 {
				t.Errorf("NewTransport: %q, %v", body, err)
			}
		})
	}
}

// TestTransportAnswerBound: an answer larger than the bound is not handed
// back unread: it is an error of kind TooLarge.
func TestTransportAnswerBound(t *testing.T) {
	p, tr := connected(t, jsonAnswer(200, `{"jsonrpc":"2.0","id":2,"result":{"pad":"`+strings.Repeat("x", mcphttp.DefaultMaxBodyBytes)+`"}}`))
	if _, _, err := postThrough(t, tr, p.URL, toolsCall, nil); !errors.Is(err, egress.TooLarge) {
		t.Errorf("%v", err)
	}
	// A notification's answer is not read.
	if resp, _, err := postThrough(t, tr, p.URL, `{"jsonrpc":"2.0","method":"notifications/x"}`, nil); err != nil || resp.StatusCode != 200 {
		t.Errorf("%v", err)
	}
}

// TestNewTransportNilBase: a nil base is the egress transport of the zero
// policy, which does not reach loopback.
func TestNewTransportNilBase(t *testing.T) {
	p := newPeer(t, jsonAnswer(200, `{}`))
	tr, _ := mcphttp.NewTransport(accepted("2026-07-28"), nil)
	if _, _, err := postThrough(t, tr, p.URL, toolsCall, nil); !errors.Is(err, egress.Denied) || len(p.seen()) != 0 {
		t.Errorf("%v", err)
	}
}

// TestTransportCloseAnswers: Close reports a server that failed to end
// the session, and not one that does not let clients end sessions (405)
// or no longer knows it (404).
func TestTransportCloseAnswers(t *testing.T) {
	for code, fails := range map[int]bool{http.StatusOK: false, http.StatusNoContent: false, 299: false, http.StatusMethodNotAllowed: false, http.StatusNotFound: false, http.StatusBadRequest: true, http.StatusInternalServerError: true} {
		p := newPeer(t, legacyServer(jsonAnswer(200, `{}`)))
		tr, _, err := mcphttp.Connect(context.Background(), compile(t, wideFacets(), policy.Policy{}), p.URL, mcphttp.OutboundOptions{Sink: &negotiatetest.Recorder{}, Subject: user, AllowLoopback: true})
		if err != nil {
			t.Fatal(err)
		}
		p.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) })
		if err := tr.Close(context.Background()); (err != nil) != fails {
			t.Errorf("DELETE answered %d: %v", code, err)
		}
	}
	// A server that cannot be reached: the error says so.
	p := newPeer(t, legacyServer(jsonAnswer(200, `{}`)))
	tr, _, _ := mcphttp.Connect(context.Background(), compile(t, wideFacets(), policy.Policy{}), p.URL, mcphttp.OutboundOptions{Sink: &negotiatetest.Recorder{}, Subject: user, AllowLoopback: true})
	p.Close()
	if err := tr.Close(context.Background()); err == nil {
		t.Error("Close of a gone server succeeded")
	}
}

// TestTransportAnswerFailures: an answer whose body fails while the
// Transport reads it is an error of the failure's kind; one of exactly the
// bound is handed back.
func TestTransportAnswerFailures(t *testing.T) {
	started := make(chan struct{}, 1)
	p, tr := connected(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0",`)
		w.(http.Flusher).Flush()
		started <- struct{}{}
		<-r.Context().Done()
	})
	for kind, ctx := range map[egress.Kind]func() (context.Context, context.CancelFunc){
		egress.Canceled: func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
		egress.Timeout: func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancelCause(context.Background())
			return ctx, func() { cancel(context.DeadlineExceeded) }
		},
	} {
		c, cancel := ctx()
		go func() {
			<-started
			cancel()
		}()
		req, _ := http.NewRequestWithContext(c, http.MethodPost, p.URL, strings.NewReader(toolsCall))
		var e *egress.Error
		if _, err := tr.RoundTrip(req); !errors.Is(err, kind) || !errors.As(err, &e) || e.URL != p.URL {
			t.Errorf("%s: %v", kind, err)
		}
		cancel()
	}
	// An answer cut short: the head came, the body ended early.
	short, tr := connected(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", "100")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0",`)
	})
	var e *egress.Error
	if _, _, err := postThrough(t, tr, short.URL, toolsCall, nil); !errors.Is(err, egress.HangUp) || !errors.As(err, &e) || e.URL != short.URL || e.Status != http.StatusOK {
		t.Errorf("cut short: %v", err)
	}
	answer := `{"jsonrpc":"2.0","id":2,"result":{}}`
	answer += strings.Repeat(" ", mcphttp.DefaultMaxBodyBytes-len(answer))
	at, tr := connected(t, jsonAnswer(200, answer))
	if _, body, err := postThrough(t, tr, at.URL, toolsCall, nil); err != nil || len(body) != mcphttp.DefaultMaxBodyBytes {
		t.Errorf("an answer at the bound: %d bytes, %v", len(body), err)
	}
}

// connected is a peer that answers server/discover with 2026-07-28 and
// everything else with answer, and a Connect Transport to it: a Transport
// sends only to the origin it negotiated with.
func connected(t *testing.T, answer func(http.ResponseWriter, *http.Request)) (*peer, *mcphttp.Transport) {
	t.Helper()
	p := newPeer(t, func(w http.ResponseWriter, r *http.Request) {
		if b, _ := io.ReadAll(r.Body); strings.Contains(string(b), `"server/discover"`) {
			jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"]}}`)(w, r)
			return
		}
		answer(w, r)
	})
	tr, _, err := mcphttp.Connect(context.Background(), compile(t, wideFacets(), policy.Policy{}), p.URL, mcphttp.OutboundOptions{Sink: &negotiatetest.Recorder{}, Client: &http.Client{}})
	if err != nil {
		t.Fatal(err)
	}
	return p, tr
}

// TestConnectListedHandshake: a server/discover list that settles a
// handshake revision (the go-sdk stateful server's) is settled by
// Connect through initialize, whose answer is recorded; anonymous, it is
// refused on the list, and nothing else is sent.
func TestConnectListedHandshake(t *testing.T) {
	n := compile(t, wideFacets(), policy.Policy{})
	for _, subject := range []*negotiate.Subject{user, nil} {
		p := newPeer(t, discoverThen(jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-11-25"]}}`), []string{"2025-11-25"}, true))
		rec := &negotiatetest.Recorder{}
		tr, o, err := mcphttp.Connect(context.Background(), n, p.URL, mcphttp.OutboundOptions{Sink: rec, Subject: subject, AllowLoopback: true})
		want := "server/discover initialize"
		if subject == nil {
			want = "server/discover"
			if tr != nil || o.Reason != "unauthenticated" || err == nil {
				t.Errorf("anonymous: %+v, %v", o, err)
			}
		} else if err != nil || o.Version != "2025-11-25" || tr == nil {
			t.Fatalf("authenticated: %+v, %v", o, err)
		}
		if got := strings.Join(methods(p.seen()), " "); got != want || len(rec.Events()) != 1 {
			t.Errorf("sent %s, recorded %d", got, len(rec.Events()))
		}
	}
}

// TestConnectRefusedEndsTheSession: a handshake the decision refuses ends
// the session it opened, and Connect hands no Transport back.
func TestConnectRefusedEndsTheSession(t *testing.T) {
	p := newPeer(t, discoverThen(jsonAnswer(400, sessionRequired), []string{"2025-06-18"}, true))
	rec := &negotiatetest.Recorder{}
	tr, o, err := mcphttp.Connect(context.Background(), compile(t, wideFacets(), policy.Policy{}), p.URL, mcphttp.OutboundOptions{Sink: rec, Subject: user, AllowLoopback: true})
	if tr != nil || o.Reason != "below-floor" || !errors.Is(err, wperrors.InteropVersionUnsupported) {
		t.Fatalf("%v, %+v, %v", tr, o, err)
	}
	sent := p.seen()
	if got := strings.Join(methods(sent), " "); got != "server/discover initialize DELETE" || sent[2].header.Get("Mcp-Session-Id") != "session-a" {
		t.Errorf("sent %s", got)
	}
}
