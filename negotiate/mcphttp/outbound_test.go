package mcphttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/egress"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// peer is an MCP server on loopback that answers server/discover as told
// and keeps every request it gets.
type peer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []seen
}

type seen struct {
	method string
	header http.Header
	body   string
}

// discoverThen answers server/discover with discover and every other
// request as a fakeServer of revisions does (initialize with the client's
// revision when it serves it, else its newest handshake revision; a
// session id when stateful).
func discoverThen(discover func(http.ResponseWriter, *http.Request), revisions []string, stateful bool) func(http.ResponseWriter, *http.Request) {
	f := &fakeServer{revisions: revisions, stateful: stateful}
	return func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(b)))
		if strings.Contains(string(b), `"server/discover"`) {
			discover(w, r)
			return
		}
		f.ServeHTTP(w, r)
	}
}

func newPeer(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) *peer {
	p := &peer{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		p.requests = append(p.requests, seen{r.Method, r.Header.Clone(), string(b)})
		p.mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(b)))
		answer(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *peer) seen() []seen {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]seen(nil), p.requests...)
}

func jsonAnswer(status int, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func sseAnswer(events ...string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			_, _ = io.WriteString(w, e)
		}
	}
}

func TestDiscover(t *testing.T) {
	cases := []struct {
		name   string
		answer func(http.ResponseWriter, *http.Request)
		want   mcphttp.Discovery
		err    string
	}{
		{"result", jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-11-25","2026-07-28"],"capabilities":{}}}`),
			mcphttp.Discovery{Versions: []string{"2025-11-25", "2026-07-28"}}, ""},
		{"server-sent events", sseAnswer("event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\n", "data: \"result\":{\"supportedVersions\":[\"2026-07-28\"]}}\n\n"),
			mcphttp.Discovery{Versions: []string{"2026-07-28"}}, ""},
		// A client takes its call's response from a message event with
		// the call's id, and from nothing else.
		{"server-sent events answering another request first", sseAnswer("data: {\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{\"supportedVersions\":[\"2026-07-28\"]}}\n\n",
			"event: other\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"supportedVersions\":[\"2026-07-28\"]}}\n\n",
			"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32022,\"message\":\"no\",\"data\":{\"supported\":[\"2025-11-25\"]}}}\n\n"),
			mcphttp.Discovery{Versions: []string{"2025-11-25"}, Refused: true}, ""},
		// An event the stream ends before is not dispatched (the SSE
		// rule): it is no answer, as a confirmation (see internal/exchange).
		{"server-sent events without a closing blank line", sseAnswer("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"supportedVersions\":[\"2026-07-28\"]}}"),
			mcphttp.Discovery{}, `mcphttp: server/discover: HTTP 200: the event stream holds no JSON-RPC response`},
		// A CR ends a line, the blank line too, when no LF follows it at
		// the stream's end: the event is whole.
		{"server-sent events whose closing blank line is the stream's last CR", sseAnswer("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"supportedVersions\":[\"2026-07-28\"]}}\n\r"),
			mcphttp.Discovery{Versions: []string{"2026-07-28"}}, ""},
		{"a repeated key", jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-11-25"],"supportedVersions":["2026-07-28"]}}`),
			mcphttp.Discovery{}, `mcphttp: server/discover: HTTP 200: the answer is not a JSON-RPC response: result: the key "supportedVersions" appears twice`},
		{"a key in another case", jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"result":{"SupportedVersions":["2026-07-28"]}}`),
			mcphttp.Discovery{}, `mcphttp: server/discover: HTTP 200: the result: no member "supportedVersions"`},
		{"both result and error", jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"]},"error":{"code":1,"message":"x"}}`),
			mcphttp.Discovery{}, `mcphttp: server/discover: HTTP 200: the answer is not a JSON-RPC response: a response has exactly one of result and error`},
		{"trailing bytes", jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"]}} {}`),
			mcphttp.Discovery{}, `mcphttp: server/discover: HTTP 200: the answer is not a JSON-RPC response: malformed JSON`},
		{"a version that is not a string", jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":[20260728]}}`),
			mcphttp.Discovery{}, `mcphttp: server/discover: HTTP 200: the answer is not a JSON-RPC response: result.supportedVersions[0]: want a string`},
		{"-32022 with data that lists no strings", jsonAnswer(400, `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"unsupported","data":{"supported":"2025-06-18"}}}`),
			mcphttp.Discovery{}, `mcphttp: server/discover: HTTP 400: the answer is not a JSON-RPC response: error.data.supported: want an array of strings`},
		{"a code that is not an integer", jsonAnswer(400, `{"jsonrpc":"2.0","id":1,"error":{"code":-32022.5,"message":"unsupported","data":{"supported":["2025-06-18"]}}}`),
			mcphttp.Discovery{}, `mcphttp: server/discover: HTTP 400: the answer is not a JSON-RPC response: error.code is not an integer`},
		{"-32022 with data", jsonAnswer(400, `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"unsupported","data":{"supported":["2025-06-18"],"requested":"2026-07-28"}}}`),
			mcphttp.Discovery{Versions: []string{"2025-06-18"}, Refused: true}, ""},
		{"-32022 without data", jsonAnswer(400, `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"unsupported"}}`),
			mcphttp.Discovery{}, `mcphttp: server/discover: HTTP 400: json-rpc error -32022`},
		{"method not found", jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`),
			mcphttp.Discovery{}, `mcphttp: server/discover: HTTP 200: json-rpc error -32601`},
		{"not JSON-RPC", jsonAnswer(404, `404 page not found`),
			mcphttp.Discovery{}, `mcphttp: server/discover: HTTP 404: the answer is not a JSON-RPC response: malformed JSON`},
		{"no supportedVersions", jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"result":{}}`),
			mcphttp.Discovery{}, `mcphttp: server/discover: HTTP 200: the result: no member "supportedVersions"`},
		{"an empty event stream", sseAnswer(": keep-alive\n\n"),
			mcphttp.Discovery{}, `mcphttp: server/discover: HTTP 200: the event stream holds no JSON-RPC response`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newPeer(t, c.answer)
			d, err := mcphttp.Discover(context.Background(), p.Client(), p.URL, "2026-07-28")
			if got := errString(err); got != c.err {
				t.Errorf("error %q, want %q", got, c.err)
			}
			if strings.Join(d.Versions, ",") != strings.Join(c.want.Versions, ",") || d.Refused != c.want.Refused {
				t.Errorf("discovery %+v, want %+v", d, c.want)
			}
			req := p.seen()[0]
			wantBody := `{"id":1,"jsonrpc":"2.0","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
			if req.body != wantBody || req.header.Get("Mcp-Protocol-Version") != "2026-07-28" || req.header.Get("Mcp-Method") != "server/discover" {
				t.Errorf("sent %v %s", req.header, req.body)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestNegotiate runs the outbound decision against peers offering
// different revisions, for the host's authenticated and anonymous
// identities (digest table A, rows A8 to A10, and the wider host).
func TestNegotiate(t *testing.T) {
	cases := []struct {
		name    string
		answer  func(http.ResponseWriter, *http.Request)
		subject *negotiate.Subject
		kind    negotiate.Kind
		version string
		reason  string
		discErr bool
	}{
		{"peer speaks preferred", jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-11-25","2026-07-28"]}}`), nil, negotiate.Accepted, "2026-07-28", "ok", false},
		{"peer speaks only 2025-11-25, authenticated", jsonAnswer(400, `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"x","data":{"supported":["2025-11-25"],"requested":"2026-07-28"}}}`), user, negotiate.Downgraded, "2025-11-25", "ok", false},
		{"peer speaks only 2025-11-25, anonymous", jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-11-25"]}}`), nil, negotiate.Refused, "", "unauthenticated", false},
		{"A9/A10: peer speaks only 2025-06-18", jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-06-18"]}}`), user, negotiate.Refused, "", "below-floor", false},
		{"peer speaks only a newer revision", jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2027-01-01"]}}`), user, negotiate.Refused, "", "unsupported", false},
		{"peer does not discover, anonymous", jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`), nil, negotiate.Refused, "", "unauthenticated", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newPeer(t, c.answer)
			rec := &negotiatetest.Recorder{}
			n := compile(t, wideFacets(), policy.Policy{})
			o, _, err := mcphttp.Negotiate(context.Background(), n, p.URL+"/mcp", mcphttp.OutboundOptions{Sink: rec, Subject: c.subject, Client: p.Client()})
			if o.Kind != c.kind || o.Version != c.version || o.Reason != c.reason {
				t.Errorf("outcome %s %q %s, want %s %q %s", o.Kind, o.Version, o.Reason, c.kind, c.version, c.reason)
			}
			var de *mcphttp.DiscoverError
			if errors.As(err, &de) != c.discErr || errors.Is(err, mcphttp.ErrNoOffers) != c.discErr {
				t.Errorf("error %v: DiscoverError %t, want %t", err, !c.discErr, c.discErr)
			}
			if (err == nil) != (o.Err() == nil) {
				t.Errorf("error %v for %s", err, o.Kind)
			}
			if o.Err() != nil && !errors.Is(err, wperrors.InteropVersionUnsupported) {
				t.Errorf("error %v is not interop_version_unsupported", err)
			}
			ev := payloads(t, rec)
			digest, _ := events.PeerDigest(p.URL)
			want := events.NegotiationDecided{Protocol: "mcp", Outcome: "accepted", Version: c.version, Requested: "2026-07-28", Reason: c.reason, Floor: "2025-11-25", PeerDigest: digest, At: now}
			if c.kind == negotiate.Refused {
				want.Outcome = "refused"
			}
			if len(ev) != 1 || ev[0] != want {
				t.Errorf("recorded %+v, want %+v", ev, want)
			}
			// Only the discover request went out, at the preferred
			// revision: the server's list is its offer.
			if sent := p.seen(); len(sent) != 1 || sent[0].header.Get("Mcp-Protocol-Version") != "2026-07-28" {
				t.Errorf("sent %+v", sent)
			}
			if _, err := mcphttp.NewTransport(o, nil); (err == nil) != (o.Err() == nil) {
				t.Errorf("NewTransport for %s: %v", o.Kind, err)
			}
		})
	}
}

// TestNegotiateMisconfigured: Negotiate refuses a Negotiator or sink it
// cannot work with, before anything is sent.
func TestNegotiateMisconfigured(t *testing.T) {
	rec := &negotiatetest.Recorder{}
	n := compile(t, wideFacets(), policy.Policy{})
	for _, c := range []struct {
		n    *negotiate.Negotiator
		opts mcphttp.OutboundOptions
		want string
		is   error
	}{
		{nil, mcphttp.OutboundOptions{Sink: rec}, "mcphttp: the Negotiator is nil", nil},
		{n, mcphttp.OutboundOptions{}, "mcphttp: the Sink is nil; every negotiation must be recorded: " + events.ErrClosed.Error(), events.ErrClosed},
		{compile(t, facets.Set{A2A: &facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0", RefreshedAt: "2026-11-01"}}, policy.Policy{}), mcphttp.OutboundOptions{Sink: rec}, "mcphttp: the Negotiator does not advertise mcp", nil},
	} {
		if _, _, err := mcphttp.Negotiate(context.Background(), c.n, "http://127.0.0.1/", c.opts); errString(err) != c.want || (c.is != nil && !errors.Is(err, c.is)) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
}

func accepted(version string) negotiate.Outcome {
	return negotiate.Outcome{Kind: negotiate.Accepted, Protocol: facets.ProtocolMCP, Version: version, Reason: events.ReasonOK, Rule: negotiate.RuleAccept}
}

// TestTransport checks what the Transport sends, byte for byte, and what
// it refuses to send.
func TestTransport(t *testing.T) {
	const meta = `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`
	cases := []struct {
		name     string
		revision string
		header   string // MCP-Protocol-Version the caller set
		body     string
		sent     string // exact body sent; "" when refused
		err      string
	}{
		{"no params", "2026-07-28", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `{"params":{"_meta":{` + meta + `}},"jsonrpc":"2.0","id":1,"method":"tools/list"}`, ""},
		{"empty params", "2026-07-28", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{ }}`, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{` + meta + `} }}`, ""},
		{"params without _meta", "2026-07-28", "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{` + meta + `},"name":"echo"}}`, ""},
		{"empty _meta", "2026-07-28", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{}}}`, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{` + meta + `}}}`, ""},
		{"_meta with other keys", "2026-07-28", "2026-07-28", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":1}}}`, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{` + meta + `,"progressToken":1}}}`, ""},
		{"already stamped", "2026-07-28", "2026-07-28", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{` + meta + `}}}`, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{` + meta + `}}}`, ""},
		{"a batch, a notification and a response", "2026-07-28", "", `[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","id":3,"method":"b","params":{}}]`,
			`[{"params":{"_meta":{` + meta + `}},"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","id":3,"method":"b","params":{"_meta":{` + meta + `}}}]`, ""},
		{"a legacy revision goes in the header only", "2025-11-25", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, ""},
		{"initialize at the revision", "2025-11-25", "", initialize("2025-11-25"), initialize("2025-11-25"), ""},
		{"another header revision", "2026-07-28", "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "", `mcphttp: the Mcp-Protocol-Version header names revision "2025-11-25", not the negotiated "2026-07-28"`},
		{"another _meta revision", "2026-07-28", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-06-18"}}}`, "", `mcphttp: params._meta of tools/list names revision "2025-06-18", not the negotiated "2026-07-28"`},
		{"another _meta revision on a notification", "2026-07-28", "", `{"jsonrpc":"2.0","method":"n","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-06-18"}}}`, "", `mcphttp: params._meta of n names revision "2025-06-18", not the negotiated "2026-07-28"`},
		{"initialize at another revision", "2025-11-25", "", initialize("2025-06-18"), "", `mcphttp: initialize's params.protocolVersion names revision "2025-06-18", not the negotiated "2025-11-25"`},
		{"params an array", "2026-07-28", "", `{"jsonrpc":"2.0","id":1,"method":"a","params":[1]}`, "", `mcphttp: params of a, which is not an object: cannot carry the negotiated revision "2026-07-28"`},
		{"_meta a string", "2026-07-28", "", `{"jsonrpc":"2.0","id":1,"method":"a","params":{"_meta":"x"}}`, "", `mcphttp: params._meta of a, which is not an object: cannot carry the negotiated revision "2026-07-28"`},
		{"not JSON", "2026-07-28", "", `{"jsonrpc"`, "", `mcphttp: a body that is not a JSON-RPC message (malformed JSON): cannot carry the negotiated revision "2026-07-28"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			header := http.Header{}
			if c.header != "" {
				header.Set("MCP-Protocol-Version", c.header)
			}
			req, got, err := sendThrough(t, c.revision, http.MethodPost, c.body, header)
			if refusedToSend(t, err, got, c.err) {
				return
			}
			if len(got) != 1 || got[0].body != c.sent || got[0].header.Get("Mcp-Protocol-Version") != c.revision {
				t.Errorf("sent %+v\nwant %s at %s", got, c.sent, c.revision)
			}
			if req.Header.Get("Mcp-Protocol-Version") != c.header {
				t.Errorf("the caller's request was changed: %v", req.Header)
			}
		})
	}

	// GET carries the header.
	p := newPeer(t, jsonAnswer(200, `{}`))
	tr, _ := mcphttp.NewTransport(accepted("2026-07-28"), p.Client().Transport)
	if tr.Version() != "2026-07-28" {
		t.Errorf("Revision %q", tr.Version())
	}
	resp, err := (&http.Client{Transport: tr}).Get(p.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := p.seen(); len(got) != 1 || got[0].header.Get("Mcp-Protocol-Version") != "2026-07-28" {
		t.Errorf("GET sent %+v", got)
	}
	// A request built by hand with no header at all is stamped as any
	// other, never a panic.
	u, _ := url.Parse(p.URL)
	if resp, err = tr.RoundTrip((&http.Request{Method: http.MethodGet, URL: u}).WithContext(t.Context())); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := p.seen(); len(got) != 2 || got[1].header.Get("Mcp-Protocol-Version") != "2026-07-28" {
		t.Errorf("a request without a header sent %+v", got)
	}
	for _, o := range []negotiate.Outcome{
		{Kind: negotiate.Refused, Protocol: facets.ProtocolMCP},
		{Kind: negotiate.Accepted, Protocol: facets.ProtocolA2A, Version: "1.0"},
		{Kind: negotiate.Accepted, Protocol: facets.ProtocolMCP, Version: "latest"},
	} {
		if _, err := mcphttp.NewTransport(o, nil); err == nil {
			t.Errorf("NewTransport(%+v) succeeded", o)
		}
	}
}

// TestDiscoverOpenStream: an event stream is read as far as the response,
// so a server that keeps it open does not hold the caller; and an answer
// is read up to DefaultMaxBodyBytes and no further.
func TestDiscoverOpenStream(t *testing.T) {
	release := make(chan struct{})
	p := newPeer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"supportedVersions\":[\"2026-07-28\"]}}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	d, err := mcphttp.Discover(context.Background(), p.Client(), p.URL, "2026-07-28")
	close(release)
	if err != nil || strings.Join(d.Versions, ",") != "2026-07-28" {
		t.Errorf("%+v, %v", d, err)
	}
	for _, ct := range []string{"application/json", "text/event-stream"} {
		big := newPeer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ct)
			_, _ = io.WriteString(w, "data: "+strings.Repeat(" ", mcphttp.DefaultMaxBodyBytes))
			w.(http.Flusher).Flush()
			<-r.Context().Done() // the bound, not the end of the answer, stops the read
		})
		// The deadline only ends a read that would not stop at the bound.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, err = mcphttp.Discover(ctx, big.Client(), big.URL, "2026-07-28")
		cancel()
		var tooBig *http.MaxBytesError
		if !errors.Is(err, egress.TooLarge) || !errors.As(err, &tooBig) || tooBig.Limit != mcphttp.DefaultMaxBodyBytes {
			t.Errorf("%s: %v, want the answer too large", ct, err)
		}
	}
}

// TestDiscoverBroken: an answer cut short, and a request that never went
// out, are egress errors of their kind that hold their cause: no answer,
// so no legacy signal either.
func TestDiscoverBroken(t *testing.T) {
	p := newPeer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "100")
		_, _ = io.WriteString(w, `{"jsonrpc":`)
	})
	_, err := mcphttp.Discover(context.Background(), p.Client(), p.URL, "2026-07-28")
	var de *mcphttp.DiscoverError
	if errors.As(err, &de) || !errors.Is(err, egress.HangUp) || errors.Is(err, mcphttp.ErrNoOffers) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut short: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := mcphttp.Discover(ctx, p.Client(), p.URL, "2026-07-28"); errors.As(err, &de) || !errors.Is(err, egress.Canceled) || !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}

// TestDiscoverAtTheBound: an answer of exactly DefaultMaxBodyBytes is read.
func TestDiscoverAtTheBound(t *testing.T) {
	answer := `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"]}}`
	answer += strings.Repeat(" ", mcphttp.DefaultMaxBodyBytes-len(answer))
	p := newPeer(t, jsonAnswer(200, answer))
	if d, err := mcphttp.Discover(context.Background(), p.Client(), p.URL, "2026-07-28"); err != nil || len(d.Versions) != 1 {
		t.Errorf("%+v, %v", d, err)
	}
}

// TestNegotiateRequested: OutboundOptions.Requested is the revision the
// decision weighs (and the event records), while server/discover still
// goes out at the preferred revision, so that nothing below the floor
// reaches the server (issue 11: the seams force an unsupported revision
// with it).
func TestNegotiateRequested(t *testing.T) {
	both := jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-06-18","2025-11-25","2026-07-28"]}}`)
	cases := []struct {
		name, requested string
		subject         *negotiate.Subject
		kind            negotiate.Kind
		version         string
		reason          string
	}{
		{"empty asks for the preferred", "", nil, negotiate.Accepted, "2026-07-28", "ok"},
		{"a lower revision, authenticated", "2025-11-25", user, negotiate.Downgraded, "2025-11-25", "ok"},
		{"a lower revision, anonymous", "2025-11-25", nil, negotiate.Refused, "", "unauthenticated"},
		{"below the floor", "2025-06-18", user, negotiate.Refused, "", "below-floor"},
		{"a revision the host does not offer", "2099-01-01", user, negotiate.Refused, "", "unsupported"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newPeer(t, both)
			rec := &negotiatetest.Recorder{}
			o, offers, err := mcphttp.Negotiate(context.Background(), compile(t, wideFacets(), policy.Policy{}), p.URL, mcphttp.OutboundOptions{Sink: rec, Subject: c.subject, Client: p.Client(), Requested: c.requested})
			if o.Kind != c.kind || o.Version != c.version || o.Reason != c.reason || (err == nil) != (o.Err() == nil) {
				t.Errorf("outcome %s %q %s (%v), want %s %q %s", o.Kind, o.Version, o.Reason, err, c.kind, c.version, c.reason)
			}
			if len(offers) != 3 {
				t.Errorf("offers %q", offers)
			}
			want := c.requested
			if want == "" {
				want = "2026-07-28"
			}
			if ev := payloads(t, rec); len(ev) != 1 || ev[0].Requested != want {
				t.Errorf("events %+v, want one requesting %s", ev, want)
			}
			if s := p.seen(); len(s) != 1 || s[0].header.Get("Mcp-Protocol-Version") != "2026-07-28" {
				t.Errorf("the server saw %+v, want one discover at the preferred revision", s)
			}
		})
	}
}
