package a2ahttp_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// detailReason is details.reason of the internal_error envelope err
// unwraps to, or "" when it unwraps to none.
func detailReason(err error) string {
	var e *wperrors.Error
	if !errors.As(err, &e) || e.Code != wperrors.Internal {
		return ""
	}
	r, _ := e.Details["reason"].(string)
	return r
}

// logLines decodes the JSON log lines of buf.
func logLines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for line := range bytes.Lines(buf.Bytes()) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		lines = append(lines, m)
	}
	return lines
}

// crashedPeer is the URL of a peer whose listener is closed.
func crashedPeer(t *testing.T) string {
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL
	srv.Close()
	return u
}

// hangUpPeer is a peer that takes the connection and closes it unanswered.
func hangUpPeer(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		c, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			c.Close()
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestOutboundTransportFailure: a peer that cannot be reached, hangs up,
// or answers something that is not a card gives a typed error (the
// internal_error envelope whose details.reason says which), no
// event and one log line; a card offering nothing the host accepts is the
// peer's answer, and is decided.
func TestOutboundTransportFailure(t *testing.T) {
	for _, tc := range []struct {
		name   string
		peer   func(t *testing.T) string
		reason string
		status float64
	}{
		{"crashed peer", crashedPeer, "unreachable", 0},
		{"hang-up", hangUpPeer, "hang-up", 0},
		{"502 gateway", func(t *testing.T) string { return newPeer(t, 502, "<html>bad gateway</html>").URL }, "not-an-answer", 502},
		{"503 with a card", func(t *testing.T) string { return newPeer(t, 503, cardOffering("1.2")).URL }, "not-an-answer", 503},
		{"404", func(t *testing.T) string { return newPeer(t, 404, "not found").URL }, "not-an-answer", 404},
		{"not JSON", func(t *testing.T) string { return newPeer(t, 200, "<html>").URL }, "not-an-answer", 200},
		{"an object that is no card", func(t *testing.T) string { return newPeer(t, 200, `{"name":"x"}`).URL }, "not-an-answer", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			peer := tc.peer(t)
			rec := &negotiatetest.Recorder{}
			var buf bytes.Buffer
			o, offers, err := a2ahttp.Negotiate(context.Background(), compile(t, wideA2A(), policy.Policy{}), peer, a2ahttp.OutboundOptions{
				Sink: rec, Subject: peerAgent(), AllowLoopback: true, ErrorLog: slog.New(slog.NewJSONHandler(&buf, nil)),
			})
			if !errors.Is(err, wperrors.Internal) || errors.Is(err, wperrors.InteropVersionUnsupported) || detailReason(err) != tc.reason ||
				!strings.HasPrefix(err.Error(), "a2ahttp: the negotiation reached no decision: egress: ") {
				t.Errorf("err %v (reason %q), want internal_error with reason %s", err, detailReason(err), tc.reason)
			}
			if tr, o2, err2 := a2ahttp.Connect(context.Background(), compile(t, wideA2A(), policy.Policy{}), peer, a2ahttp.OutboundOptions{
				Sink: rec, Subject: peerAgent(), AllowLoopback: true, ErrorLog: slog.New(slog.DiscardHandler),
			}); tr != nil || o2.Kind != negotiate.Refused || detailReason(err2) != tc.reason {
				t.Errorf("Connect: %v %+v %v", tr, o2, err2)
			}
			if o.Kind != negotiate.Refused || o.Reason != "" || o.Error != nil || offers != nil {
				t.Errorf("Outcome %+v offers %q, want the zero Outcome", o, offers)
			}
			if _, terr := a2ahttp.NewTransport(o, nil); terr == nil {
				t.Error("a Transport for no decision")
			}
			if n := len(rec.Events()); n != 0 {
				t.Errorf("%d events recorded for an attempt that reached no decision", n)
			}
			lines := logLines(t, &buf)
			digest, _ := events.PeerDigest(peer)
			if len(lines) != 1 {
				t.Fatalf("log %q, want one line", buf.String())
			}
			l := lines[0]
			e, _ := l["err"].(map[string]any)
			if l["level"] != "WARN" || l["msg"] != "negotiation reached no decision" || l["protocol"] != "a2a" || l["peerDigest"] != digest ||
				e["reason"] != tc.reason || (tc.status != 0 && e["status"] != tc.status) || strings.Contains(buf.String(), "127.0.0.1:") && !strings.Contains(e["url"].(string), "127.0.0.1") {
				t.Errorf("log line %v", l)
			}
		})
	}
}

// TestOutboundTimeout: a peer that does not answer within the caller's
// context is a timeout, not a refusal.
func TestOutboundTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	rec := &negotiatetest.Recorder{}
	_, _, err := a2ahttp.Negotiate(ctx, compile(t, wideA2A(), policy.Policy{}), srv.URL, a2ahttp.OutboundOptions{
		Sink: rec, AllowLoopback: true, ErrorLog: slog.New(slog.DiscardHandler),
	})
	if detailReason(err) != "timeout" || len(rec.Events()) != 0 {
		t.Errorf("err %v, %d events", err, len(rec.Events()))
	}
}

// TestOutboundEgress: the nil Client's address policy and redirect rule.
// Each address is refused by default and reached only with the option
// that allows it; link-local and metadata addresses never.
func TestOutboundEgress(t *testing.T) {
	card := newPeer(t, 200, cardOffering("1.2"))
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(card.URL, "http://"))
	other := newPeer(t, 200, cardOffering("1.2"))
	cross := httptest.NewServer(http.RedirectHandler(other.URL+"/.well-known/agent-card.json", http.StatusFound))
	defer cross.Close()
	same := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/agent-card.json" {
			http.Redirect(w, r, "/card", http.StatusFound)
			return
		}
		_, _ = io.WriteString(w, cardOffering("1.2"))
	}))
	defer same.Close()
	for _, tc := range []struct {
		name              string
		url               string
		loopback, private bool
		reason            string // "" when decided
	}{
		{"loopback refused by default", card.URL, false, false, "egress-denied"},
		{"loopback allowed", card.URL, true, false, ""},
		{"loopback is not private", card.URL, false, true, "egress-denied"},
		{"0x7f000001 refused by default", "http://0x7f000001:" + port, false, false, "egress-denied"},
		{"0x7f000001 dialled as 127.0.0.1", "http://0x7f000001:" + port, true, false, ""},
		{"octal 0177.0.0.1 dialled as 127.0.0.1", "http://0177.0.0.1:" + port, true, false, ""},
		{"metadata refused", "http://169.254.169.254", false, false, "egress-denied"},
		{"metadata refused whatever the options", "http://169.254.169.254", true, true, "egress-denied"},
		{"private refused by default", "http://10.255.255.1:9", false, false, "egress-denied"},
		{"private refused with loopback only", "http://10.255.255.1:9", true, false, "egress-denied"},
		{"IPv6 unique local refused", "http://[fd00::1]:9", true, false, "egress-denied"},
		{"cross-origin redirect refused", cross.URL, true, true, "redirect-refused"},
		{"same-origin redirect followed", same.URL, true, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &negotiatetest.Recorder{}
			o, _, err := a2ahttp.Negotiate(context.Background(), compile(t, wideA2A(), policy.Policy{}), tc.url, a2ahttp.OutboundOptions{
				Sink: rec, AllowLoopback: tc.loopback, AllowPrivate: tc.private, ErrorLog: slog.New(slog.DiscardHandler),
			})
			if tc.reason != "" {
				if detailReason(err) != tc.reason || len(rec.Events()) != 0 {
					t.Errorf("err %v (reason %q), %d events; want %s and none", err, detailReason(err), len(rec.Events()), tc.reason)
				}
				return
			}
			if err != nil || o.Version != "1.2" {
				t.Fatalf("%+v %v", o, err)
			}
			// The record names the origin the URL Standard reads, and that
			// is the one dialled.
			want, _ := events.PeerDigest("http://127.0.0.1:" + strings.TrimPrefix(tc.url[strings.LastIndex(tc.url, ":"):], ":"))
			if got := rec.Events()[0].Payload.PeerDigest; got != want {
				t.Errorf("peerDigest %s, want that of 127.0.0.1 (%s)", got, want)
			}
		})
	}
	if _, calls := other.seen(); len(calls) != 0 || len(other.cardSeen) != 0 {
		t.Errorf("the redirect's target was reached: %v %v", other.cardSeen, calls)
	}
}

// TestOutboundEgressPrivateAllowed: with AllowPrivate a private address is
// dialled (here it answers nothing, or is not routed): the failure is not
// the policy's.
func TestOutboundEgressPrivateAllowed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, _, err := a2ahttp.Negotiate(ctx, compile(t, wideA2A(), policy.Policy{}), "http://10.255.255.1:9", a2ahttp.OutboundOptions{
		Sink: &negotiatetest.Recorder{}, AllowPrivate: true, ErrorLog: slog.New(slog.DiscardHandler),
	})
	if r := detailReason(err); r == "" || r == "egress-denied" {
		t.Errorf("err %v (reason %q), want a failure other than the policy's", err, r)
	}
}

// TestOutboundHostClientRedirect: a host's own Client keeps its address
// policy, but follows no redirect to another origin either.
func TestOutboundHostClientRedirect(t *testing.T) {
	other := newPeer(t, 200, cardOffering("1.2"))
	cross := httptest.NewServer(http.RedirectHandler(other.URL+"/.well-known/agent-card.json", http.StatusFound))
	defer cross.Close()
	for _, c := range []*http.Client{{}, {CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}} {
		rec := &negotiatetest.Recorder{}
		_, _, err := a2ahttp.Negotiate(context.Background(), compile(t, wideA2A(), policy.Policy{}), cross.URL, a2ahttp.OutboundOptions{
			Sink: rec, Client: c, ErrorLog: slog.New(slog.DiscardHandler),
		})
		if detailReason(err) != "redirect-refused" || len(rec.Events()) != 0 {
			t.Errorf("err %v, %d events", err, len(rec.Events()))
		}
	}
	if len(other.cardSeen) != 0 {
		t.Errorf("the other origin was reached: %v", other.cardSeen)
	}
}

// driftPeer serves a card offering 1.2 and answers every call with answer,
// as contentType.
func driftPeer(t *testing.T, contentType, answer string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			_, _ = io.WriteString(w, cardOffering("1.2"))
			return
		}
		w.Header().Set("Content-Type", contentType)
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestRuntimeDrift: a card offers 1.2 and the peer refuses a call stamped
// 1.2. Through a recording Transport the refusal is recorded beside the
// card's acceptance, and the caller gets interop_version_unsupported; any
// other answer comes back byte for byte.
func TestRuntimeDrift(t *testing.T) {
	const sse = "text/event-stream"
	const js = "application/json"
	for _, tc := range []struct {
		name, contentType, answer string
		refused                   bool
	}{
		{"-32009", js, `{"jsonrpc":"2.0","id":1,"error":{"code":-32009,"message":"no"}}`, true},
		{"-32009.0", js, `{"jsonrpc":"2.0","id":1,"error":{"code":-32009.0,"message":"no"}}`, true},
		{"-3.2009e4", js, `{"jsonrpc":"2.0","id":1,"error":{"code":-3.2009e4,"message":"no"}}`, true},
		{"-32008.99999999999999999 (a float64 parser's -32009)", js, `{"jsonrpc":"2.0","id":1,"error":{"code":-32008.99999999999999999,"message":"no"}}`, true},
		{"ErrorInfo in the 1.0.1 array", js, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED","domain":"a2a-protocol.org"}]}}`, true},
		{"ErrorInfo as a bare object", js, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no","data":{"reason":"VERSION_NOT_SUPPORTED"}}}`, true},
		{"HTTP+JSON google.rpc.Status", js, `{"error":{"code":400,"status":"FAILED_PRECONDITION","details":[{"reason":"VERSION_NOT_SUPPORTED"}]}}`, true},
		{"the first event of a stream", sse, ": hi\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32009,\"message\":\"no\"}}\n\n", true},
		{"a result", js, `{"jsonrpc":"2.0","id":1,"result":{"kind":"message","parts":[]}}`, false},
		{"another error", js, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"-32009"}}`, false},
		{"a stream whose first event is a result", sse, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n", false},
		{"a stream that ends before an event", sse, ": only a comment\n", false},
		{"no body", js, ``, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			peer := driftPeer(t, tc.contentType, tc.answer)
			n := compile(t, wideA2A(), policy.Policy{})
			rec := &negotiatetest.Recorder{}
			opts := a2ahttp.OutboundOptions{Sink: rec, Subject: peerAgent(), AllowLoopback: true, Destination: negotiate.Destination{RunID: "acme/0123456789abcdef"}}
			tr, o, err := a2ahttp.Connect(context.Background(), n, peer.URL, opts)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := (&http.Client{Transport: tr}).Post(peer.URL+"/a2a", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"SendMessage"}`))
			evs := rec.Events()
			digest, _ := events.PeerDigest(peer.URL)
			if len(evs) == 0 || evs[0].Payload.Outcome != "accepted" || evs[0].Payload.Version != "1.2" {
				t.Fatalf("events %+v", evs)
			}
			if !tc.refused {
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(body) != tc.answer || len(evs) != 1 {
					t.Errorf("body %q, %d events; want the answer byte for byte and the acceptance alone", body, len(evs))
				}
				return
			}
			if !errors.Is(err, wperrors.InteropVersionUnsupported) || resp != nil {
				t.Fatalf("err %v, want interop_version_unsupported", err)
			}
			if len(evs) != 2 {
				t.Fatalf("%d events, want the acceptance and the refusal", len(evs))
			}
			want := events.NegotiationDecided{Protocol: "a2a", Outcome: "refused", Requested: "1.2", Reason: events.ReasonUnsupported, Floor: "1.1", PeerDigest: digest, At: testNow}
			if got := evs[1]; got.Payload != want || got.RunID != "acme/0123456789abcdef" {
				t.Errorf("refusal %+v on run %q\nwant %+v on acme/0123456789abcdef", got.Payload, got.RunID, want)
			}
			// The Transport of NewTransport says so too, and records nothing.
			bare, _ := a2ahttp.NewTransport(o, peer.Client().Transport)
			if _, err := (&http.Client{Transport: bare}).Post(peer.URL+"/a2a", "application/json", strings.NewReader(`{}`)); !errors.Is(err, wperrors.InteropVersionUnsupported) || len(rec.Events()) != 2 {
				t.Errorf("NewTransport: %v, %d events", err, len(rec.Events()))
			}
		})
	}
}

// TestRuntimeDriftInAStream: a stream whose first response is a result is
// handed back, and followed as the caller reads it: a2a-go yields its
// events one by one, so a refusal after the result reaches its caller as
// an error, and a recording Transport records it then, after the card's
// acceptance. A caller that stops reading before it is given nothing more,
// and the Transport of NewTransport records nothing.
func TestRuntimeDriftInAStream(t *testing.T) {
	result := "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"
	refusal := "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32009,\"data\":[{\"reason\":\"VERSION_NOT_SUPPORTED\",\"metadata\":{\"supportedVersions\":\"1.0\"}}]}}"
	var zipped bytes.Buffer
	z := gzip.NewWriter(&zipped)
	_, _ = io.WriteString(z, result+refusal+"\n\n")
	_ = z.Close()
	for _, tc := range []struct {
		name   string
		coding string
		parts  []string
		read   int // bytes the caller reads; -1: all
		reason string
	}{
		{"a refusal after the result", "", []string{result, refusal + "\n\n"}, -1, events.ReasonBelowFloor},
		{"a refusal the stream's end cuts off", "", []string{result, refusal}, -1, events.ReasonBelowFloor},
		{"a refusal in a gzip-coded stream", "gzip", []string{zipped.String()}, -1, events.ReasonBelowFloor},
		{"a caller that stops at the result", "", []string{result, refusal + "\n\n"}, len(result), ""},
		// Past the bound (64 KiB) an event is read as far as the bound.
		{"a refusal padded past the bound", "", []string{result, strings.TrimSuffix(refusal, "}") + `,"pad":"` + strings.Repeat("x", 80<<10) + "\"}\n\n"}, -1, events.ReasonBelowFloor},
		// HTTP+JSON: the events are StreamResponses, no JSON-RPC responses.
		{"an HTTP+JSON stream longer than the bound", "", restEvents(100), -1, ""},
		{"an HTTP+JSON refusal after a task", "", []string{restEvents(1)[0], restRefusal}, -1, events.ReasonBelowFloor},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					_, _ = io.WriteString(w, cardOffering("1.2"))
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				if tc.coding != "" {
					w.Header().Set("Content-Encoding", tc.coding)
				}
				for _, p := range tc.parts {
					_, _ = io.WriteString(w, p)
					w.(http.Flusher).Flush()
				}
			}))
			defer srv.Close()
			n := compile(t, wideA2A(), policy.Policy{})
			rec := &negotiatetest.Recorder{}
			tr, o, err := a2ahttp.Connect(context.Background(), n, srv.URL, a2ahttp.OutboundOptions{Sink: rec, AllowLoopback: true})
			if err != nil {
				t.Fatal(err)
			}
			bare, _ := a2ahttp.NewTransport(o, srv.Client().Transport)
			for _, rt := range []http.RoundTripper{tr, bare} {
				resp, err := (&http.Client{Transport: rt}).Post(srv.URL+"/a2a", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage"}`))
				if err != nil {
					t.Fatal(err)
				}
				var body []byte
				if tc.read < 0 {
					body, err = io.ReadAll(resp.Body)
				} else {
					body = make([]byte, tc.read)
					_, err = io.ReadFull(resp.Body, body)
				}
				resp.Body.Close()
				if err != nil || tc.coding == "" && !strings.HasPrefix(strings.Join(tc.parts, ""), string(body)) {
					t.Errorf("read %q, %v; want the stream as it came", body, err)
				}
			}
			var got []string
			for _, e := range rec.Events() {
				got = append(got, e.Payload.Outcome+" "+e.Payload.Reason)
			}
			want := []string{"accepted ok"}
			if tc.reason != "" {
				want = append(want, "refused "+tc.reason)
			}
			if !slices.Equal(got, want) {
				t.Errorf("recorded %q, want %q", got, want)
			}
		})
	}
}

// TestRuntimeDriftAnswerBound: an answer that does not show within
// MaxAnswerBytes whether the peer served the version is not handed back,
// and records nothing: the peer refused nothing that was seen.
func TestRuntimeDriftAnswerBound(t *testing.T) {
	answer := `{"jsonrpc":"2.0","id":1,"padding":"` + strings.Repeat("x", 200) + `","result":{}}`
	peer := driftPeer(t, "application/json", answer)
	n := compile(t, wideA2A(), policy.Policy{})
	for _, tc := range []struct {
		max int64
		ok  bool
	}{{int64(len(answer)), true}, {100, false}} {
		rec := &negotiatetest.Recorder{}
		opts := a2ahttp.OutboundOptions{Sink: rec, AllowLoopback: true, MaxAnswerBytes: tc.max}
		tr, _, err := a2ahttp.Connect(context.Background(), n, peer.URL, opts)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := (&http.Client{Transport: tr}).Post(peer.URL, "application/json", strings.NewReader(`{}`))
		if tc.ok != (err == nil) || len(rec.Events()) != 1 {
			t.Errorf("MaxAnswerBytes %d: %v, %d events", tc.max, err, len(rec.Events()))
		}
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(body) != answer {
				t.Errorf("body %q", body)
			}
		} else if detailReason(err) != "too-large" {
			t.Errorf("reason %q", detailReason(err))
		}
	}
}

// TestRuntimeDriftAudit: a runtime refusal whose record cannot be written
// under a required audit is an internal_error, and the AuditError says
// why.
func TestRuntimeDriftAudit(t *testing.T) {
	peer := driftPeer(t, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32009}}`)
	n := compile(t, wideA2A(), policy.Policy{RequireAudit: true})
	rec := &negotiatetest.Recorder{}
	opts := a2ahttp.OutboundOptions{Sink: rec, AllowLoopback: true}
	tr, _, err := a2ahttp.Connect(context.Background(), n, peer.URL, opts)
	if err != nil {
		t.Fatal(err)
	}
	rec.Fail(errors.New("event store down"))
	_, err = (&http.Client{Transport: tr}).Post(peer.URL, "application/json", strings.NewReader(`{}`))
	var audit *negotiate.AuditError
	if !errors.Is(err, wperrors.Internal) || !errors.As(err, &audit) {
		t.Errorf("err %v", err)
	}
}

// TestConnectConfiguration: what Connect refuses (as Negotiate does,
// with no Transport), and the base its Transport sends through.
func TestConnectConfiguration(t *testing.T) {
	n := compile(t, wideA2A(), policy.Policy{})
	rec := &negotiatetest.Recorder{}
	for _, tc := range []struct {
		name string
		n    *negotiate.Negotiator
		opts a2ahttp.OutboundOptions
		want string
	}{
		{"no negotiator", nil, a2ahttp.OutboundOptions{Sink: rec}, "a2ahttp: the Negotiator is nil"},
		{"no sink", n, a2ahttp.OutboundOptions{}, "a2ahttp: the Sink is nil"},
		{"negative bound", n, a2ahttp.OutboundOptions{Sink: rec, MaxAnswerBytes: -1}, "a2ahttp: OutboundOptions.MaxAnswerBytes -1 is negative"},
	} {
		if tr, _, err := a2ahttp.Connect(context.Background(), tc.n, "http://peer.example", tc.opts); tr != nil || err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v %v, want %s", tc.name, tr, err, tc.want)
		}
	}
	if len(rec.Events()) != 0 {
		t.Errorf("%d events", len(rec.Events()))
	}
	// A host's Client: its Transport, or http.DefaultTransport.
	peer := driftPeer(t, "application/json", `{"jsonrpc":"2.0","id":1,"result":{}}`)
	ok := negotiate.Outcome{Kind: negotiate.Accepted, Protocol: "a2a", Version: "1.2"}
	base := &roundTripLog{}
	for _, c := range []*http.Client{{Transport: base}, {}} {
		tr := a2ahttp.RecordingTransport(n, peer.URL, ok, a2ahttp.OutboundOptions{Sink: rec, Client: c})
		resp, err := (&http.Client{Transport: tr}).Get(peer.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if len(base.sent) != 1 {
		t.Errorf("the host's Transport sent %d requests", len(base.sent))
	}
	// The nil Client's: the policy the card was fetched under.
	for _, loopback := range []bool{false, true} {
		tr := a2ahttp.RecordingTransport(n, peer.URL, ok, a2ahttp.OutboundOptions{Sink: rec, AllowLoopback: loopback})
		_, err := (&http.Client{Transport: tr}).Get(peer.URL)
		if denied := detailReason(err) == "egress-denied"; denied == loopback {
			t.Errorf("AllowLoopback %v: %v", loopback, err)
		}
	}
	// A refused outcome comes with no Transport, and the refusal.
	refusing := newPeer(t, 200, cardOffering("2.0"))
	if tr, o, err := a2ahttp.Connect(context.Background(), n, refusing.URL, a2ahttp.OutboundOptions{Sink: rec, AllowLoopback: true}); tr != nil || o.Kind != negotiate.Refused || !errors.Is(err, wperrors.InteropVersionUnsupported) {
		t.Errorf("refused: %v %+v %v", tr, o, err)
	}
}

// TestTransportNilBase: NewTransport's nil base is the egress transport of
// the zero policy, which refuses loopback.
func TestTransportNilBase(t *testing.T) {
	peer := driftPeer(t, "application/json", `{}`)
	tr, err := a2ahttp.NewTransport(negotiate.Outcome{Kind: negotiate.Accepted, Protocol: "a2a", Version: "1.2"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&http.Client{Transport: tr}).Get(peer.URL); detailReason(err) != "egress-denied" {
		t.Errorf("err %v, want the loopback peer refused", err)
	}
}

// failingBody is a body that fails after its first bytes.
type failingBody struct{ r io.Reader }

func (b *failingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		return n, io.ErrUnexpectedEOF
	}
	return n, err
}

func (*failingBody) Close() error { return nil }

type answerWith struct{ body string }

func (a answerWith) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: &failingBody{strings.NewReader(a.body)}, Request: r}, nil
}

// TestRuntimeAnswerCutShort: an answer whose body fails before it shows
// anything is a transport failure, typed as every outbound read types it
// (the peer hung up), and is not handed back: what was read of it may
// have been a refusal.
func TestRuntimeAnswerCutShort(t *testing.T) {
	tr, _ := a2ahttp.NewTransport(negotiate.Outcome{Kind: negotiate.Accepted, Protocol: "a2a", Version: "1.2"}, answerWith{`{"jsonrpc":"2.0","er`})
	req, _ := http.NewRequest(http.MethodPost, "http://peer.example/a2a", strings.NewReader(`{}`))
	resp, err := tr.RoundTrip(req)
	if resp != nil || detailReason(err) != "hang-up" || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("%v, %v; want a hang-up", resp, err)
	}
}

// oneByteAnswer answers every request with body, one byte a read.
type oneByteAnswer struct{ body string }

func (a oneByteAnswer) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(iotest.OneByteReader(strings.NewReader(a.body))), Request: r}, nil
}

// TestRuntimeAnswerBoundByteByByte: read a byte at a time, an answer is
// held until it shows whether the peer refused, as the inbound side holds
// one: the byte past the bound is read to learn that the bound is passed,
// and an answer it completes is settled by it; one that needs more is
// not handed back.
func TestRuntimeAnswerBoundByteByByte(t *testing.T) {
	const answer = `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no"}}`
	n := compile(t, wideA2A(), policy.Policy{})
	ok := negotiate.Outcome{Kind: negotiate.Accepted, Protocol: "a2a", Version: "1.2"}
	for _, tc := range []struct {
		max    int64
		handed bool
	}{{int64(len(answer)), true}, {int64(len(answer)) - 1, true}, {int64(len(answer)) - 2, false}} {
		tr := a2ahttp.RecordingTransport(n, "http://peer.example", ok, a2ahttp.OutboundOptions{
			Sink: &negotiatetest.Recorder{}, Client: &http.Client{Transport: oneByteAnswer{answer}}, MaxAnswerBytes: tc.max,
		})
		req, _ := http.NewRequest(http.MethodPost, "http://peer.example/a2a", strings.NewReader(`{}`))
		resp, err := tr.RoundTrip(req)
		if tc.handed != (err == nil) {
			t.Errorf("MaxAnswerBytes %d: %v", tc.max, err)
			continue
		}
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			if string(body) != answer {
				t.Errorf("MaxAnswerBytes %d: %q", tc.max, body)
			}
		}
	}
}

// TestOutboundToAPeerRefusingTheCardVersion: a peer behind this module's
// middleware that serves only 0.3 refuses the card at the host's preferred
// 1.2 (HTTP 400, VERSION_NOT_SUPPORTED): that is its answer about
// versions, and the host asks again naming none, gets the peer's 0.3
// card, and decides on it: refused below the floor 1.1, recorded; with a
// floor at 0.3 (legacyA2A), an authenticated downgrade to 0.3.
func TestOutboundToAPeerRefusingTheCardVersion(t *testing.T) {
	peerN := compile(t, facets.Set{A2A: &facets.A2A{Versions: []string{"0.3"}, PreferredVersion: "0.3", MinimumVersion: "0.3", RefreshedAt: "2026-11-01"}}, policy.Policy{})
	m, err := a2ahttp.New(peerN, a2ahttp.Options{Sink: &negotiatetest.Recorder{}, Card: func(_ *http.Request, v string) ([]byte, error) {
		return []byte(`{"protocolVersion":"0.3.0","url":"http://peer/a2a"}`), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.Header.Get("A2A-Version"))
		m.Wrap(http.NotFoundHandler()).ServeHTTP(w, r)
	}))
	defer peer.Close()
	for _, tc := range []struct {
		set     facets.Set
		subject *negotiate.Subject
		kind    negotiate.Kind
		reason  string
	}{
		{wideA2A(), peerAgent(), negotiate.Refused, events.ReasonBelowFloor},
		{legacyA2A(), peerAgent(), negotiate.Downgraded, events.ReasonOK},
		{legacyA2A(), nil, negotiate.Refused, events.ReasonUnauthenticated},
	} {
		asked = nil
		rec := &negotiatetest.Recorder{}
		o, offers, _ := a2ahttp.Negotiate(context.Background(), compile(t, tc.set, policy.Policy{}), peer.URL, a2ahttp.OutboundOptions{Sink: rec, Subject: tc.subject, AllowLoopback: true})
		pref := tc.set.A2A.PreferredVersion
		if o.Kind != tc.kind || len(offers) != 1 || offers[0] != "0.3" || len(rec.Events()) != 1 || rec.Events()[0].Payload.Reason != tc.reason ||
			len(asked) != 2 || asked[0] != pref || asked[1] != "" {
			t.Errorf("%v %v: %+v offers %q, events %+v; the peer was asked %q", tc.set.A2A.Versions, tc.subject != nil, o, offers, rec.Events(), asked)
		}
	}
	// A 4xx that is no version refusal is no card: no second request.
	asked = nil
	other := newPeer(t, 400, `{"error":{"code":400,"status":"INVALID_ARGUMENT","details":[{"reason":"OTHER"}]}}`)
	if _, _, err := a2ahttp.Negotiate(context.Background(), compile(t, wideA2A(), policy.Policy{}), other.URL, a2ahttp.OutboundOptions{Sink: &negotiatetest.Recorder{}, AllowLoopback: true, ErrorLog: slog.New(slog.DiscardHandler)}); detailReason(err) != "not-an-answer" || len(other.cardSeen) != 1 {
		t.Errorf("err %v, card requests %q", err, other.cardSeen)
	}
}

// wholeAnswer answers every request with body, read as fast as the
// reader fills a buffer.
type wholeAnswer struct{ body string }

func (a wholeAnswer) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(a.body)), Request: r}, nil
}

// TestRuntimeAnswerLongerThanABuffer: an answer whose head fills the first
// buffer before it shows anything is read on, and handed back whole.
func TestRuntimeAnswerLongerThanABuffer(t *testing.T) {
	answer := `{"jsonrpc":"2.0","id":1,"padding":"` + strings.Repeat("x", 3000) + `","result":{}}`
	tr, err := a2ahttp.NewTransport(negotiate.Outcome{Kind: negotiate.Accepted, Protocol: "a2a", Version: "1.2"}, wholeAnswer{answer})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, "http://peer.example/a2a", strings.NewReader(`{}`))
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if string(body) != answer {
		t.Errorf("handed back %d bytes of %d", len(body), len(answer))
	}
}
