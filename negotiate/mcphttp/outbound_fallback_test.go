package mcphttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
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

// sessionRequired is how the TypeScript MCP SDK 1.32.2 streamable server
// answers a request without a known session, server/discover included.
const sessionRequired = `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`

// byMethod answers each request by its JSON-RPC method ("DELETE" for an
// HTTP DELETE); a method it has no answer for gets 404.
func byMethod(answers map[string]func(http.ResponseWriter, *http.Request)) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		key := r.Method
		if r.Method == http.MethodPost {
			var msg struct {
				Method string `json:"method"`
			}
			b, _ := io.ReadAll(r.Body)
			_ = json.Unmarshal(b, &msg)
			key = msg.Method
		}
		if a, ok := answers[key]; ok {
			a(w, r)
			return
		}
		http.NotFound(w, r)
	}
}

// withSession is answer with an Mcp-Session-Id.
func withSession(id string, answer func(http.ResponseWriter, *http.Request)) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Mcp-Session-Id", id)
		answer(w, r)
	}
}

func status(code int) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
}

// logRecorder keeps every log record.
type logRecorder struct {
	mu      sync.Mutex
	records []slog.Record
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, r.Clone())
	return nil
}
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }

func (l *logRecorder) all() []slog.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]slog.Record(nil), l.records...)
}

// methods lists what the server was sent: the JSON-RPC method of each
// POST, the HTTP method of any other request.
func methods(sent []seen) []string {
	var out []string
	for _, s := range sent {
		var msg struct {
			Method string `json:"method"`
		}
		if json.Unmarshal([]byte(s.body), &msg) == nil && msg.Method != "" {
			out = append(out, msg.Method)
		} else {
			out = append(out, s.method)
		}
	}
	return out
}

// TestNegotiateFallback: every server/discover answer that is no
// definitive evidence of the 2026-07-28 era (the table in the package
// doc) falls back to initialize at the newest handshake revision the host
// may offer, for an authenticated host; an anonymous one is refused
// unauthenticated with nothing sent but the discover. A discover that
// lists only handshake revisions is the server's offer (Negotiate decides
// on it; TestConnectListedHandshake has Connect's initialize).
func TestNegotiateFallback(t *testing.T) {
	signals := []struct {
		name   string
		answer func(http.ResponseWriter, *http.Request)
		listed bool // the answer lists revisions: a definitive answer
	}{
		{"TS SDK 1.32.2: no valid session", jsonAnswer(400, sessionRequired), false},
		{"method not found", jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`), false},
		{"404, not JSON-RPC", jsonAnswer(404, `404 page not found`), false},
		{"405, no body", jsonAnswer(405, ``), false},
		{"a result without supportedVersions", jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"result":{}}`), false},
		{"-32022 without data", jsonAnswer(400, `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"unsupported"}}`), false},
		{"an event stream without a response", sseAnswer(": keep-alive\n\n"), false},
		{"go-sdk stateful: a list of handshake revisions", jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-06-18","2025-11-25"]}}`), true},
		{"-32022 listing a handshake revision", jsonAnswer(400, `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"x","data":{"supported":["2025-11-25"]}}}`), true},
	}
	n := compile(t, wideFacets(), policy.Policy{})
	for _, s := range signals {
		for _, subject := range []*negotiate.Subject{user, nil} {
			name := s.name + map[bool]string{true: ", authenticated", false: ", anonymous"}[subject != nil]
			t.Run(name, func(t *testing.T) {
				p := newPeer(t, discoverThen(s.answer, []string{"2025-06-18", "2025-11-25"}, true))
				rec := &negotiatetest.Recorder{}
				o, offers, err := mcphttp.Negotiate(context.Background(), n, p.URL, mcphttp.OutboundOptions{Sink: rec, Subject: subject, AllowLoopback: true})
				digest, _ := events.PeerDigest(p.URL)
				want := events.NegotiationDecided{Protocol: "mcp", Outcome: "accepted", Version: "2025-11-25", Requested: "2026-07-28", Reason: "ok", Floor: "2025-11-25", PeerDigest: digest, At: now}
				wantSent := []string{"server/discover", "initialize", http.MethodDelete}
				if s.listed {
					// The list is the server's offer: Negotiate decides
					// on it (Connect settles it through initialize).
					wantSent = wantSent[:1]
				}
				if subject == nil {
					want.Outcome, want.Version, want.Reason = "refused", "", "unauthenticated"
					wantSent = wantSent[:1]
					if o.Kind != negotiate.Refused || !errors.Is(err, wperrors.InteropVersionUnsupported) || errors.Is(err, mcphttp.ErrNoOffers) == s.listed {
						t.Errorf("outcome %+v, error %v", o, err)
					}
				} else if o.Kind != negotiate.Downgraded || o.Version != "2025-11-25" || err != nil || (!s.listed && strings.Join(offers, ",") != "2025-11-25") {
					t.Errorf("outcome %+v, offers %q, error %v", o, offers, err)
				}
				if ev := payloads(t, rec); len(ev) != 1 || ev[0] != want {
					t.Errorf("recorded %+v, want %+v", ev, want)
				}
				sent := p.seen()
				if got := methods(sent); strings.Join(got, " ") != strings.Join(wantSent, " ") {
					t.Fatalf("sent %q, want %q", got, wantSent)
				}
				if subject == nil || s.listed {
					return
				}
				// initialize asks for the handshake revision, never a
				// 2026 one; the DELETE ends the session it opened.
				if !strings.Contains(sent[1].body, `"protocolVersion":"2025-11-25"`) {
					t.Errorf("initialize sent %s", sent[1].body)
				}
				if sent[2].header.Get("Mcp-Session-Id") != "session-a" || sent[2].header.Get("Mcp-Protocol-Version") != "2025-11-25" {
					t.Errorf("DELETE sent %v", sent[2].header)
				}
			})
		}
	}
}

// TestNegotiateFallbackHost: what the host may offer at initialize is the
// decision's: nothing when its floor is a stateless revision (refused
// below-floor, with ErrNoOffers), nothing when the policy denies the
// downgrade (refused unsupported), and a Requested handshake revision
// itself.
func TestNegotiateFallbackHost(t *testing.T) {
	stateless := wideFacets()
	stateless.MCP.MinimumRevision = "2026-07-28"
	cases := []struct {
		name      string
		n         *negotiate.Negotiator
		requested string
		reason    string
		sent      int
	}{
		{"a stateless floor", compile(t, stateless, policy.Policy{}), "", "below-floor", 1},
		{"downgrades denied", compile(t, wideFacets(), policy.Policy{DenyDowngrade: true}), "", "unsupported", 1},
		{"requested below the floor", compile(t, wideFacets(), policy.Policy{}), "2025-06-18", "below-floor", 1},
		{"requested a handshake revision", compile(t, wideFacets(), policy.Policy{}), "2025-11-25", "ok", 3},
		{"requested no revision at all", compile(t, wideFacets(), policy.Policy{}), "latest", "unsupported", 1},
	}
	// A host's own client without a Transport: http.DefaultTransport
	// carries the handshake and the DELETE that ends its session.
	p := newPeer(t, discoverThen(jsonAnswer(400, sessionRequired), []string{"2025-11-25"}, true))
	if o, _, err := mcphttp.Negotiate(context.Background(), compile(t, wideFacets(), policy.Policy{}), p.URL, mcphttp.OutboundOptions{Sink: &negotiatetest.Recorder{}, Subject: user, Client: &http.Client{}}); err != nil || o.Version != "2025-11-25" || strings.Join(methods(p.seen()), " ") != "server/discover initialize DELETE" {
		t.Errorf("a host's client: %+v, %v, sent %q", o, err, methods(p.seen()))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newPeer(t, discoverThen(jsonAnswer(400, sessionRequired), []string{"2025-11-25"}, true))
			rec := &negotiatetest.Recorder{}
			_, _, err := mcphttp.Negotiate(context.Background(), c.n, p.URL, mcphttp.OutboundOptions{Sink: rec, Subject: user, AllowLoopback: true, Requested: c.requested})
			if ev := payloads(t, rec); len(ev) != 1 || ev[0].Reason != c.reason {
				t.Errorf("recorded %+v, want one %s", ev, c.reason)
			}
			if got := len(p.seen()); got != c.sent {
				t.Errorf("sent %q", methods(p.seen()))
			}
			if c.reason != "ok" && !errors.Is(err, mcphttp.ErrNoOffers) {
				t.Errorf("error %v does not wrap ErrNoOffers", err)
			}
		})
	}
}

// TestNegotiateInitializeAnswers: the server's answer to initialize is its
// offer, decided and recorded once; a refusal of the revision is recorded
// as the server gave it, never as an acceptance; an answer that is
// neither reached no decision. A session that is not kept is ended.
func TestNegotiateInitializeAnswers(t *testing.T) {
	result := func(rev string) func(http.ResponseWriter, *http.Request) {
		return jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"`+rev+`","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`)
	}
	cases := []struct {
		name   string
		answer func(http.ResponseWriter, *http.Request)
		reason string // "" when nothing is decided
		kind   egress.Kind
	}{
		{"the revision asked for", result("2025-11-25"), "ok", 0},
		{"a revision below the floor", result("2025-06-18"), "below-floor", 0},
		{"a stateless revision", result("2026-07-28"), "unsupported", 0},
		{"not a revision", result("latest"), "unsupported", 0},
		{"an event stream", sseAnswer("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-11-25\"}}\n\n"), "ok", 0},
		{"refused, listing revisions below the floor", jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unsupported protocol version","data":{"supported":["2025-03-26"],"requested":"2025-11-25"}}}`), "below-floor", 0},
		{"refused, listing what it was asked", jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unsupported protocol version","data":{"supported":["2025-11-25","2026-07-28"]}}}`), "unsupported", 0},
		{"an error without data", jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params"}}`), "", egress.NotAnAnswer},
		{"a result without a protocolVersion", jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"result":{}}`), "", egress.NotAnAnswer},
		{"not JSON-RPC", jsonAnswer(200, `<html></html>`), "", egress.NotAnAnswer},
		{"an event stream without a response", sseAnswer(": keep-alive\n\n"), "", egress.NotAnAnswer},
		{"a 500", jsonAnswer(500, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`), "", egress.NotAnAnswer},
		{"a 502 gateway", jsonAnswer(502, `Bad Gateway`), "", egress.NotAnAnswer},
	}
	n := compile(t, wideFacets(), policy.Policy{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newPeer(t, byMethod(map[string]func(http.ResponseWriter, *http.Request){
				"server/discover":   jsonAnswer(400, sessionRequired),
				"initialize":        withSession("s-1", c.answer),
				http.MethodDelete:   status(http.StatusOK),
				"notifications/any": status(http.StatusAccepted),
			}))
			rec := &negotiatetest.Recorder{}
			log := &logRecorder{}
			o, _, err := mcphttp.Negotiate(context.Background(), n, p.URL, mcphttp.OutboundOptions{Sink: rec, Subject: user, AllowLoopback: true, ErrorLog: slog.New(log)})
			ev := payloads(t, rec)
			if c.reason == "" {
				if len(ev) != 0 || !errors.Is(err, c.kind) || o.Reason != "" || len(log.all()) != 1 {
					t.Errorf("outcome %+v, recorded %+v, logged %d, error %v", o, ev, len(log.all()), err)
				}
			} else if len(ev) != 1 || ev[0].Reason != c.reason || (ev[0].Outcome == "accepted") != (c.reason == "ok") || (err == nil) != (c.reason == "ok") {
				t.Errorf("recorded %+v, error %v, want one %s", ev, err, c.reason)
			}
			// The session is Connect's to keep; Negotiate ends it whatever
			// the answer, but a 5xx, which is no answer, opened none.
			got := methods(p.seen())
			if c.kind == egress.NotAnAnswer && strings.HasPrefix(c.name, "a 50") {
				if len(got) != 2 {
					t.Errorf("sent %q", got)
				}
			} else if len(got) != 3 || got[2] != http.MethodDelete || p.seen()[2].header.Get("Mcp-Session-Id") != "s-1" {
				t.Errorf("sent %q", got)
			}
		})
	}
}

// crashed returns the URL of a server that is gone: its listener closed.
func crashed(t *testing.T) string {
	s := httptest.NewServer(http.NotFoundHandler())
	s.Close()
	return s.URL
}

// hangUp answers nothing: it takes the connection and closes it.
func hangUp(w http.ResponseWriter, _ *http.Request) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		conn.Close()
	}
}

// TestNegotiateNoDecision: a peer that crashed, hangs up or sits behind a
// failing gateway refused nothing. Negotiate returns the zero Outcome and
// an error of the failure's kind that unwraps to internal_error with
// details.reason; nothing is recorded; one line is logged.
func TestNegotiateNoDecision(t *testing.T) {
	legacyThen := func(init func(http.ResponseWriter, *http.Request)) func(http.ResponseWriter, *http.Request) {
		return byMethod(map[string]func(http.ResponseWriter, *http.Request){"server/discover": jsonAnswer(400, sessionRequired), "initialize": init})
	}
	cases := []struct {
		name   string
		url    func(t *testing.T) string
		kind   egress.Kind
		status int
	}{
		{"crashed", crashed, egress.Unreachable, 0},
		{"hangs up", func(t *testing.T) string { return newPeer(t, hangUp).URL }, egress.HangUp, 0},
		{"a 502 gateway", func(t *testing.T) string { return newPeer(t, jsonAnswer(502, `Bad Gateway`)).URL }, egress.NotAnAnswer, 502},
		{"a 503", func(t *testing.T) string { return newPeer(t, jsonAnswer(503, sessionRequired)).URL }, egress.NotAnAnswer, 503},
		{"hangs up at initialize", func(t *testing.T) string { return newPeer(t, legacyThen(hangUp)).URL }, egress.HangUp, 0},
		{"a 502 at initialize", func(t *testing.T) string { return newPeer(t, legacyThen(jsonAnswer(502, ``))).URL }, egress.NotAnAnswer, 502},
		{"an initialize answer cut short", func(t *testing.T) string {
			return newPeer(t, legacyThen(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Length", "100")
				_, _ = io.WriteString(w, `{"jsonrpc":`)
			})).URL
		}, egress.HangUp, 0},
		{"an answer cut short", func(t *testing.T) string {
			return newPeer(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Length", "100")
				_, _ = io.WriteString(w, `{"jsonrpc":`)
			}).URL
		}, egress.HangUp, 0},
	}
	n := compile(t, wideFacets(), policy.Policy{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url := c.url(t)
			rec := &negotiatetest.Recorder{}
			log := &logRecorder{}
			o, offers, err := mcphttp.Negotiate(context.Background(), n, url, mcphttp.OutboundOptions{Sink: rec, Subject: user, AllowLoopback: true, ErrorLog: slog.New(log)})
			if o.Kind != negotiate.Refused || o.Reason != "" || o.Version != "" || offers != nil {
				t.Errorf("outcome %+v, offers %q: want the zero Outcome", o, offers)
			}
			var e *wperrors.Error
			if !errors.Is(err, c.kind) || !errors.As(err, &e) || e.Code != wperrors.Internal || e.Details["reason"] != c.kind.Error() {
				t.Errorf("error %v (%+v), want %s as internal_error", err, e, c.kind)
			}
			if c.status != 0 && (e == nil || e.Details["status"] != c.status) {
				t.Errorf("details %+v, want status %d", e, c.status)
			}
			if errors.Is(err, wperrors.InteropVersionUnsupported) {
				t.Errorf("error %v reads as a refusal", err)
			}
			if ev := rec.Events(); len(ev) != 0 {
				t.Errorf("recorded %+v", ev)
			}
			digest, _ := events.PeerDigest(url)
			logged := log.all()
			if len(logged) != 1 || logged[0].Level != slog.LevelWarn || logged[0].Message != "negotiation reached no decision" {
				t.Fatalf("logged %+v", logged)
			}
			attrs := map[string]string{}
			logged[0].Attrs(func(a slog.Attr) bool {
				attrs[a.Key] = a.Value.Resolve().String()
				return true
			})
			if attrs["protocol"] != "mcp" || attrs["peerDigest"] != digest || !strings.Contains(attrs["err"], "reason="+c.kind.Error()) || strings.Contains(attrs["err"], "127.0.0.1:") == false {
				t.Errorf("logged %v", attrs)
			}
			if _, err := mcphttp.NewTransport(o, nil); err == nil {
				t.Error("a Transport for no decision")
			}
		})
	}
	// The caller's deadline is a Timeout, not a refusal.
	p := newPeer(t, func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	rec := &negotiatetest.Recorder{}
	if _, _, err := mcphttp.Negotiate(ctx, n, p.URL, mcphttp.OutboundOptions{Sink: rec, Subject: user, AllowLoopback: true, ErrorLog: slog.New(&logRecorder{})}); !errors.Is(err, egress.Timeout) || len(rec.Events()) != 0 {
		t.Errorf("timeout: %v, recorded %d", err, len(rec.Events()))
	}
}

// TestNegotiateEgress: with a nil Client, the negotiation fetch follows
// the egress policy: loopback only with AllowLoopback, private addresses
// only with AllowPrivate, link-local and metadata addresses and URLs that
// are not http(s) never; a host spelled in hex is dialled as the record
// names it; a redirect to another origin is refused, with the host's own
// client too. Nothing refused is recorded: no peer was asked.
func TestNegotiateEgress(t *testing.T) {
	modern := jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"]}}`)
	p := newPeer(t, modern)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(p.URL, "http://"))
	other := newPeer(t, modern)
	redirect := newPeer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	})
	same := newPeer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			modern(w, r)
			return
		}
		http.Redirect(w, r, "/moved", http.StatusTemporaryRedirect)
	})
	cases := []struct {
		name string
		url  string
		opts mcphttp.OutboundOptions
		kind egress.Kind // 0: accepted
	}{
		{"loopback, by default", p.URL, mcphttp.OutboundOptions{}, egress.Denied},
		{"loopback, allowed", p.URL, mcphttp.OutboundOptions{AllowLoopback: true}, 0},
		{"loopback, private allowed", p.URL, mcphttp.OutboundOptions{AllowPrivate: true}, egress.Denied},
		{"0x7f000001, by default", "http://0x7f000001:" + port + "/", mcphttp.OutboundOptions{}, egress.Denied},
		{"0x7f000001, loopback allowed", "http://0x7f000001:" + port + "/", mcphttp.OutboundOptions{AllowLoopback: true}, 0},
		{"cloud metadata, everything allowed", "http://169.254.169.254/", mcphttp.OutboundOptions{AllowLoopback: true, AllowPrivate: true}, egress.Denied},
		{"a private address, by default", "http://10.0.0.1:9/", mcphttp.OutboundOptions{}, egress.Denied},
		{"a URL without an origin", "mailto:mcp@example.com", mcphttp.OutboundOptions{AllowLoopback: true, AllowPrivate: true}, egress.Denied},
		{"a URL of another scheme", "ws://127.0.0.1:" + port + "/", mcphttp.OutboundOptions{AllowLoopback: true}, egress.Denied},
		{"another origin's redirect", redirect.URL, mcphttp.OutboundOptions{AllowLoopback: true}, egress.RedirectRefused},
		{"another origin's redirect, the host's client", redirect.URL, mcphttp.OutboundOptions{Client: redirect.Client()}, egress.RedirectRefused},
		{"a same-origin redirect", same.URL, mcphttp.OutboundOptions{AllowLoopback: true}, 0},
	}
	n := compile(t, wideFacets(), policy.Policy{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(p.seen()) + len(other.seen())
			rec := &negotiatetest.Recorder{}
			c.opts.Sink, c.opts.Subject, c.opts.ErrorLog = rec, user, slog.New(&logRecorder{})
			o, _, err := mcphttp.Negotiate(context.Background(), n, c.url, c.opts)
			if c.kind != 0 {
				if !errors.Is(err, c.kind) || len(rec.Events()) != 0 || len(p.seen())+len(other.seen()) != before {
					t.Errorf("error %v, recorded %d, want %s and nothing reached", err, len(rec.Events()), c.kind)
				}
				return
			}
			ev := payloads(t, rec)
			if err != nil || o.Version != "2026-07-28" || len(ev) != 1 {
				t.Fatalf("outcome %+v, error %v, recorded %+v", o, err, ev)
			}
			// The record names the origin dialled.
			if digest, _ := events.PeerDigest(c.url); ev[0].PeerDigest != digest {
				t.Errorf("digest %s, want %s", ev[0].PeerDigest, digest)
			}
		})
	}
	// A private address is reached only with AllowPrivate: then the
	// policy lets the dial go, whatever answers it.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, _, err := mcphttp.Negotiate(ctx, n, "http://10.0.0.1:9/", mcphttp.OutboundOptions{Sink: &negotiatetest.Recorder{}, AllowPrivate: true, ErrorLog: slog.New(&logRecorder{})})
	if errors.Is(err, egress.Denied) {
		t.Errorf("private, allowed: %v", err)
	}
}
