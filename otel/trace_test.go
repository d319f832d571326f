package wopnegotel_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	wopnegotel "github.com/wopneg/wopneg/otel"
	"github.com/wopneg/wopneg/policy"
)

// carried is the trace context a peer saw on one request: the headers,
// and the in-message carrier (MCP params._meta, A2A
// params.message.metadata.openwop).
type carried struct {
	path, header, inMessage string
}

// carrierPeer answers each request with answer(path, body) and keeps
// what it carried.
func carrierPeer(t *testing.T, answer func(path, body string) string) (*httptest.Server, func() []carried) {
	var mu sync.Mutex
	var seen []carried
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var msg struct {
			Params struct {
				Meta    map[string]any `json:"_meta"`
				Message struct {
					Metadata struct {
						Openwop map[string]any `json:"openwop"`
					} `json:"metadata"`
				} `json:"message"`
			} `json:"params"`
		}
		_ = json.Unmarshal(b, &msg)
		in, _ := msg.Params.Meta["traceparent"].(string)
		if ow, ok := msg.Params.Message.Metadata.Openwop["traceparent"].(string); ok {
			in = ow
		}
		mu.Lock()
		seen = append(seen, carried{r.URL.Path, r.Header.Get("traceparent"), in})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, answer(r.URL.Path, string(b)))
	}))
	t.Cleanup(srv.Close)
	return srv, func() []carried {
		mu.Lock()
		defer mu.Unlock()
		return append([]carried(nil), seen...)
	}
}

func traceparentOf(sc trace.SpanContext) string {
	return "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"
}

// TestTraceContextThroughConnect: with TraceContext: Propagate, the
// negotiation started inside the client span of StartServerDiscover or
// StartAgentCardFetch carries that span as the parent, and a call through
// Connect's Transport the span in the call's context: a child span of the
// caller's trace, in the headers and in MCP's _meta or A2A's
// metadata.openwop, on a real httptest peer of each protocol.
func TestTraceContextThroughConnect(t *testing.T) {
	for _, c := range []struct {
		name    string
		answer  func(path, body string) string
		start   func(*wopnegotel.Telemetry, context.Context, string) (context.Context, trace.Span)
		connect func(ctx context.Context, t *testing.T, url string) http.RoundTripper
		call    string
		// inMessage says which requests carry the in-message carrier.
		inMessage []bool
	}{
		{"mcp", func(string, string) string {
			return `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"]}}`
		}, (*wopnegotel.Telemetry).StartServerDiscover,
			func(ctx context.Context, t *testing.T, url string) http.RoundTripper {
				tr, _, err := mcphttp.Connect(ctx, host(t, policy.Policy{}), url, mcphttp.OutboundOptions{
					Sink: &negotiatetest.Recorder{}, Subject: agent, AllowLoopback: true, TraceContext: wopnegotel.Propagate})
				if err != nil {
					t.Fatal(err)
				}
				return tr
			}, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`, []bool{true, true}},
		{"a2a", func(path, _ string) string {
			if path == "/.well-known/agent-card.json" {
				return `{"name":"peer","supportedInterfaces":[{"url":"http://peer/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`
			}
			return `{"jsonrpc":"2.0","id":2,"result":{}}`
		}, (*wopnegotel.Telemetry).StartAgentCardFetch,
			func(ctx context.Context, t *testing.T, url string) http.RoundTripper {
				tr, _, err := a2ahttp.Connect(ctx, host(t, policy.Policy{}), url, a2ahttp.OutboundOptions{
					Sink: &negotiatetest.Recorder{}, Subject: agent, AllowLoopback: true, TraceContext: wopnegotel.Propagate})
				if err != nil {
					t.Fatal(err)
				}
				return tr
			}, `{"jsonrpc":"2.0","id":2,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[]}}}`, []bool{false, true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := newKit(t)
			srv, seen := carrierPeer(t, c.answer)
			tracer := k.tp.Tracer("host")
			runCtx, run := tracer.Start(context.Background(), "run")
			ctx, negotiation := c.start(k.tel, runCtx, srv.URL)
			tr := c.connect(ctx, t, srv.URL)
			negotiation.End()
			callCtx, call := tracer.Start(runCtx, "call", trace.WithSpanKind(trace.SpanKindClient))
			req, _ := http.NewRequestWithContext(callCtx, http.MethodPost, srv.URL+"/", strings.NewReader(c.call))
			req.Header.Set("Content-Type", "application/json")
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			call.End()
			run.End()

			got := seen()
			if len(got) != 2 {
				t.Fatalf("the peer saw %+v", got)
			}
			want := []string{traceparentOf(negotiation.SpanContext()), traceparentOf(call.SpanContext())}
			for i, g := range got {
				if !strings.Contains(want[i], run.SpanContext().TraceID().String()) {
					t.Fatalf("span %d is not of the caller's trace", i)
				}
				if g.header != want[i] {
					t.Errorf("%s: header traceparent %q, want %q", g.path, g.header, want[i])
				}
				if wantIn := map[bool]string{true: want[i]}[c.inMessage[i]]; g.inMessage != wantIn {
					t.Errorf("%s: in-message traceparent %q, want %q", g.path, g.inMessage, wantIn)
				}
			}
			if n := len(k.spans.GetSpans()); n != 3 {
				t.Errorf("%d spans exported, want run, the negotiation's and the call's", n)
			}
		})
	}
}
