package a2ahttp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/wopneg/wopneg/internal/tracectx/tracectxtest"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

const (
	traceID     = "4bf92f3577b34da6a3ce929d0e0e4736"
	traceparent = "00-" + traceID + "-00f067aa0ba902b7-01"
	mine        = "00-11111111111111111111111111111111-2222222222222222-00"
)

// hookOf is a hook that hands tp and ts, whatever the context.
func hookOf(tp, ts string) negotiate.TraceContext {
	return func(context.Context) (string, string) { return tp, ts }
}

// tracedRequest is what a tracing peer saw of one request.
type tracedRequest struct {
	path          string
	version       string // A2A-Version
	parent, state []string
	body          string
}

// tracingPeer refuses a card request naming a version when refuseCard
// (with -32009, so that Negotiate asks again naming none), serves the
// card otherwise, answers every other request {}, and keeps what it saw.
type tracingPeer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []tracedRequest
}

func newTracingPeer(t *testing.T, refuseCard bool) *tracingPeer {
	p := &tracingPeer{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		p.seen = append(p.seen, tracedRequest{r.URL.Path, r.Header.Get("A2A-Version"), r.Header.Values("Traceparent"), r.Header.Values("Tracestate"), string(body)})
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/.well-known/agent-card.json" && refuseCard && r.Header.Get("A2A-Version") != "":
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32009,"message":"no"}}`)
		case r.URL.Path == "/.well-known/agent-card.json":
			_, _ = io.WriteString(w, cardOffering("1.1", "1.2"))
		default:
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
		}
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *tracingPeer) requests() []tracedRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]tracedRequest(nil), p.seen...)
}

// openwopTrace is the metadata.openwop traceparent and tracestate of the
// message of a body (params.message, or the HTTP+JSON binding's message).
func openwopTrace(t *testing.T, body string) (parent, state any) {
	t.Helper()
	type message struct {
		Metadata struct {
			Openwop map[string]any `json:"openwop"`
		} `json:"metadata"`
	}
	var b struct {
		Params struct {
			Message message `json:"message"`
		} `json:"params"`
		Message message `json:"message"`
	}
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	ow := b.Params.Message.Metadata.Openwop
	if ow == nil {
		ow = b.Message.Metadata.Openwop
	}
	return ow["traceparent"], ow["tracestate"]
}

const sendMessage = `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`

// TestTraceContextOutbound: every card fetch of the negotiation (the
// retry naming no version included) and every call of Connect's
// Transport carry the hook's trace context, checked, in their headers;
// a SendMessage or SendStreamingMessage also in Message.metadata.openwop.
// A malformed traceparent puts none anywhere, a malformed tracestate is
// dropped alone, and the record holds none of it.
func TestTraceContextOutbound(t *testing.T) {
	for _, h := range tracectxtest.Cases {
		for _, refuseCard := range []bool{false, true} {
			p := newTracingPeer(t, refuseCard)
			rec := &negotiatetest.Recorder{}
			tr, _, err := a2ahttp.Connect(context.Background(), compile(t, wideA2A(), policy.Policy{}), p.URL,
				a2ahttp.OutboundOptions{Sink: rec, Subject: peerAgent(), AllowLoopback: true, TraceContext: h.Hook()})
			if err != nil {
				t.Fatalf("%s: %v", h.Name, err)
			}
			client := &http.Client{Transport: tr}
			for _, c := range []struct{ target, body string }{
				{p.URL + "/", sendMessage},
				{p.URL + "/", strings.Replace(sendMessage, `"SendMessage"`, `"SendStreamingMessage"`, 1)},
				{p.URL + "/", strings.Replace(sendMessage, `"SendMessage"`, `"message/send"`, 1)},
				{p.URL + "/", strings.Replace(sendMessage, `"SendMessage"`, `"message/stream"`, 1)},
				{p.URL + "/t1/message:send", `{"message":{"messageId":"m1","parts":[]}}`},
				{p.URL + "/message:stream", `{"message":{"messageId":"m1","parts":[]}}`},
			} {
				resp, err := client.Post(c.target, "application/json", strings.NewReader(c.body))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
			// Already stamped with the negotiated version, in the header
			// and the query: the trace context goes on all the same.
			for _, target := range []string{p.URL + "/", p.URL + "/?A2A-Version=1.2"} {
				req, _ := http.NewRequest(http.MethodPost, target, strings.NewReader(sendMessage))
				req.Header.Set("A2A-Version", "1.2")
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
			resp, err := client.Get(p.URL + "/tasks/t1")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			seen := p.requests()
			cards := 1
			if refuseCard {
				cards = 2
			}
			if len(seen) != cards+9 {
				t.Fatalf("%s: the peer saw %d requests", h.Name, len(seen))
			}
			for i, s := range seen {
				if parent := strings.Join(s.parent, "|"); parent != h.WantParent {
					t.Errorf("%s %s: traceparent header %q, want %q", h.Name, s.path, parent, h.WantParent)
				}
				if state := strings.Join(s.state, "|"); state != h.WantState {
					t.Errorf("%s %s: tracestate header %q, want %q", h.Name, s.path, state, h.WantState)
				}
				if i < cards || s.body == "" {
					continue
				}
				parent, state := openwopTrace(t, s.body)
				if parent != h.WantParent && !(h.WantParent == "" && parent == nil) || state != h.WantState && !(h.WantState == "" && state == nil) {
					t.Errorf("%s: sent %s: metadata.openwop %v %v, want %q %q", h.Name, s.body, parent, state, h.WantParent, h.WantState)
				}
				if s.version != "1.2" {
					t.Errorf("%s: A2A-Version %q", h.Name, s.version)
				}
			}
			for _, e := range rec.Events() {
				if b, _ := json.Marshal(e); strings.Contains(string(b), traceID) || strings.Contains(string(b), "vendor") {
					t.Errorf("%s: the record holds the trace context: %s", h.Name, b)
				}
			}
		}
	}
}

// TestTraceContextKeepsTheCallers: a carrier the caller filled stays as
// the caller wrote it, and the hook's context goes only in those it left
// empty: a traceparent or tracestate header keeps the headers the
// caller's; a metadata.openwop holding either key keeps the message's
// carrier the caller's; a metadata or openwop that is no object, a body
// that is no JSON or another method's, goes unchanged. The members around
// the insertion keep their bytes.
func TestTraceContextKeepsTheCallers(t *testing.T) {
	const ours = `"traceparent":"` + traceparent + `","tracestate":"v=1"`
	rpc := func(message string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":` + message + `}}`
	}
	for _, c := range []struct {
		name, path string
		header     http.Header
		body, want string // want "" is the body unchanged
		wantHeader string
	}{
		{"the caller's header", "/", http.Header{"Traceparent": {mine}}, rpc(`{"messageId":"m"}`),
			rpc(`{"metadata":{"openwop":{` + ours + `}},"messageId":"m"}`), mine},
		{"the caller's tracestate header alone", "/", http.Header{"tracestate": {"mine=1"}}, rpc(`{"messageId":"m"}`),
			rpc(`{"metadata":{"openwop":{` + ours + `}},"messageId":"m"}`), ""},
		{"an empty message", "/", nil, rpc(`{}`), rpc(`{"metadata":{"openwop":{` + ours + `}}}`), traceparent},
		{"metadata of the caller's", "/", nil, rpc(`{"metadata":{"mine":1}}`), rpc(`{"metadata":{"openwop":{` + ours + `},"mine":1}}`), traceparent},
		{"an empty metadata", "/", nil, rpc(`{"metadata":{ }}`), rpc(`{"metadata":{"openwop":{` + ours + `} }}`), traceparent},
		{"openwop of the caller's", "/", nil, rpc(`{"metadata":{"openwop":{"permittedPurposes":["x"]}}}`),
			rpc(`{"metadata":{"openwop":{` + ours + `,"permittedPurposes":["x"]}}}`), traceparent},
		{"the caller's traceparent", "/", nil, rpc(`{"metadata":{"openwop":{"traceparent":"` + mine + `"}}}`), "", traceparent},
		{"the caller's tracestate alone", "/", nil, rpc(`{"metadata":{"openwop":{"tracestate":"mine=1"}}}`), "", traceparent},
		{"metadata null", "/", nil, rpc(`{"metadata":null}`), "", traceparent},
		{"openwop a string", "/", nil, rpc(`{"metadata":{"openwop":"x"}}`), "", traceparent},
		{"message not an object", "/", nil, rpc(`"m"`), "", traceparent},
		{"params not an object", "/", nil, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":[1]}`, "", traceparent},
		{"another method", "/", nil, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"message":{}}}`, "", traceparent},
		{"a method that is no string", "/", nil, `{"jsonrpc":"2.0","id":1,"method":1,"params":{"message":{}}}`, "", traceparent},
		{"no message", "/", nil, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`, "", traceparent},
		{"params beside the message", "/", nil, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"configuration":{"blocking":true},"message":{}}}`,
			`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"configuration":{"blocking":true},"message":{"metadata":{"openwop":{` + ours + `}}}}}`, traceparent},
		{"HTTP+JSON at another path", "/tasks/t1:cancel", nil, `{"message":{}}`, "", traceparent},
		{"HTTP+JSON with a method", "/message:send", nil, `{"method":"x","message":{}}`, "", traceparent},
		{"HTTP+JSON", "/message:send", nil, `{"message":{}, "configuration":{}}`, `{"message":{"metadata":{"openwop":{` + ours + `}}}, "configuration":{}}`, traceparent},
		{"not JSON", "/", nil, `{"method":"SendMessage","params":{"message":{}}`, "", traceparent},
		{"a repeated member", "/", nil, `{"method":"SendMessage","method":"SendMessage","params":{"message":{}}}`, "", traceparent},
		{"a JSON array", "/", nil, `[` + rpc(`{}`) + `]`, "", traceparent},
	} {
		p := newTracingPeer(t, false)
		tr, _, err := a2ahttp.Connect(context.Background(), compile(t, wideA2A(), policy.Policy{}), p.URL,
			a2ahttp.OutboundOptions{Sink: &negotiatetest.Recorder{}, Subject: peerAgent(), AllowLoopback: true, TraceContext: hookOf(traceparent, "v=1")})
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodPost, p.URL+c.path, strings.NewReader(c.body))
		for k, v := range c.header {
			req.Header[k] = v
		}
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		resp.Body.Close()
		seen := p.requests()
		last := seen[len(seen)-1]
		want := c.want
		if want == "" {
			want = c.body
		}
		if last.body != want {
			t.Errorf("%s: sent\n%s\nwant\n%s", c.name, last.body, want)
		}
		if got := strings.Join(last.parent, "|"); got != c.wantHeader {
			t.Errorf("%s: traceparent header %q, want %q", c.name, got, c.wantHeader)
		}
		var wantState []string // the caller's, under the spelling it used
		for k, v := range c.header {
			if strings.EqualFold(k, "tracestate") {
				wantState = v
			}
		}
		if c.header != nil && strings.Join(last.state, "") != strings.Join(wantState, "") {
			t.Errorf("%s: tracestate header %q, the caller's %q", c.name, last.state, wantState)
		}
	}
}

// TestTraceContextBodies: a body over the bound goes byte for byte with
// the trace context in its headers only; the stamped body can be sent
// again (GetBody); NewTransport stamps none.
func TestTraceContextBodies(t *testing.T) {
	p := newTracingPeer(t, false)
	n := compile(t, wideA2A(), policy.Policy{})
	tr, o, err := a2ahttp.Connect(context.Background(), n, p.URL,
		a2ahttp.OutboundOptions{Sink: &negotiatetest.Recorder{}, Subject: peerAgent(), AllowLoopback: true, TraceContext: hookOf(traceparent, "")})
	if err != nil {
		t.Fatal(err)
	}
	big := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"parts":[{"text":"` + strings.Repeat("x", a2ahttp.MaxStampedBodyBytes) + `"}]}}}`
	req, _ := http.NewRequest(http.MethodPost, p.URL+"/", strings.NewReader(big))
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	seen := p.requests()
	if last := seen[len(seen)-1]; last.body != big || strings.Join(last.parent, "") != traceparent {
		t.Errorf("the body over the bound: %d bytes, traceparent %q", len(last.body), last.parent)
	}
	// A body of the bound exactly is stamped.
	atBound := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{}}}`
	atBound += strings.Repeat(" ", a2ahttp.MaxStampedBodyBytes-len(atBound))
	req, _ = http.NewRequest(http.MethodPost, p.URL+"/", strings.NewReader(atBound))
	if out := a2ahttp.StampedRequest(t, tr, req); out.ContentLength <= int64(len(atBound)) {
		t.Errorf("a body of the bound exactly was not stamped: %d bytes", out.ContentLength)
	}
	req, _ = http.NewRequest(http.MethodPost, p.URL+"/", strings.NewReader(sendMessage))
	out := a2ahttp.StampedRequest(t, tr, req)
	first, _ := io.ReadAll(out.Body)
	rc, err := out.GetBody()
	if err != nil {
		t.Fatal(err)
	}
	again, _ := io.ReadAll(rc)
	if string(first) != string(again) || out.ContentLength != int64(len(first)) || !strings.Contains(string(first), traceparent) {
		t.Errorf("stamped %d bytes %s, again %s", out.ContentLength, first, again)
	}
	plain, err := a2ahttp.NewTransport(o, p.Client().Transport)
	if err != nil {
		t.Fatal(err)
	}
	req, _ = http.NewRequest(http.MethodPost, p.URL+"/", strings.NewReader(sendMessage))
	if resp, err := plain.RoundTrip(req); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	seen = p.requests()
	if last := seen[len(seen)-1]; last.body != sendMessage || len(last.parent) != 0 {
		t.Errorf("NewTransport stamped %s %q", last.body, last.parent)
	}
}

// TestTraceContextHookContext: the hook is called with the context of the
// request it stamps: Negotiate's for the card, each call's for the calls.
func TestTraceContextHookContext(t *testing.T) {
	type key struct{}
	var mu sync.Mutex
	var got []string
	hook := func(ctx context.Context) (string, string) {
		v, _ := ctx.Value(key{}).(string)
		mu.Lock()
		got = append(got, v)
		mu.Unlock()
		return traceparent, ""
	}
	p := newTracingPeer(t, true)
	ctx := context.WithValue(context.Background(), key{}, "card")
	tr, _, err := a2ahttp.Connect(ctx, compile(t, wideA2A(), policy.Policy{}), p.URL,
		a2ahttp.OutboundOptions{Sink: &negotiatetest.Recorder{}, Subject: peerAgent(), AllowLoopback: true, TraceContext: hook})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(context.WithValue(context.Background(), key{}, "call"), http.MethodPost, p.URL+"/", strings.NewReader(sendMessage))
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if strings.Join(got, " ") != "card card call" {
		t.Errorf("the hook saw the contexts %q", got)
	}
}
