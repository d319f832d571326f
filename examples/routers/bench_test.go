package routers

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
)

// answer is a handler that answers like an SDK server without doing its
// work: what the middleware costs alone is what a request through it
// costs with this behind it.
func answer(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	})
}

// serve sends one request through h in process and checks the answer.
func serve(b *testing.B, h http.Handler, r *http.Request) {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		b.Fatalf("%d %s", w.Code, w.Body)
	}
}

// benchAdapter measures one request in process four ways: through the
// middleware in front of a handler that only answers ("middleware"), the
// same answer without it ("answer"), and through the real SDK handler
// without and with the middleware ("sdk", "sdk+middleware"). The
// "interleaved" run sends the first three in turn, request by request, so
// that drift in the machine's load (it is shared) hits all alike, and
// reports the middleware's own cost (middleware − answer) and that cost as
// a share of the SDK's request.
func benchAdapter(b *testing.B, wrap func(http.Handler) http.Handler, sdk http.Handler, canned string, request func() *http.Request) {
	bare, alone := answer(canned), wrap(answer(canned))
	for _, c := range []struct {
		name string
		h    http.Handler
	}{
		{"answer", bare},
		{"middleware", alone},
		{"sdk", sdk},
		{"sdk+middleware", wrap(sdk)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				serve(b, c.h, request())
			}
		})
	}
	b.Run("interleaved", func(b *testing.B) {
		var took [3]time.Duration
		for b.Loop() {
			for i, h := range []http.Handler{bare, alone, sdk} {
				r := request()
				start := time.Now()
				serve(b, h, r)
				took[i] += time.Since(start)
			}
		}
		n := float64(b.N)
		own := float64(took[1]-took[0]) / n
		b.ReportMetric(own, "ns-middleware/op")
		b.ReportMetric(float64(took[2])/n/1e3, "µs-sdk/op")
		b.ReportMetric(100*own/(float64(took[2])/n), "%of-sdk")
	})
}

// BenchmarkMCP is a 2026-07-28 tools/call of echo: the go-sdk v1.8.0
// stateless streamable handler, and mcphttp recording every decision as a
// JSON line (to io.Discard, so the encoding is paid and no disk is).
func BenchmarkMCP(b *testing.B) {
	m, err := mcphttp.New(compiled(), mcphttp.Options{Sink: events.NewJSONLines(io.Discard)})
	if err != nil {
		b.Fatal(err)
	}
	benchAdapter(b, m.Wrap, mcpServer(), `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`,
		func() *http.Request { return mcpRequest("/mcp", "2026-07-28") })
}

// BenchmarkA2A is an A2A 1.0 SendMessage: a2a-go v2.4.0's JSON-RPC
// handler, and a2ahttp recording every decision as a JSON line.
func BenchmarkA2A(b *testing.B) {
	m, err := a2ahttp.New(compiled(), a2ahttp.Options{Sink: events.NewJSONLines(io.Discard)})
	if err != nil {
		b.Fatal(err)
	}
	benchAdapter(b, m.Wrap, a2aServer(), `{"jsonrpc":"2.0","id":1,"result":{"message":{"parts":[{"text":"hi"}]}}}`,
		func() *http.Request { return a2aRequest("/a2a", "1.0") })
}
