package routers

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

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
	benchAdapter(b, m.Wrap, mcpServer(), mcpAnswer, mcpBenchRequest)
}

// The requests the benchmarks send, and the answers of their "answer"
// handlers.
const (
	mcpAnswer = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`
	a2aAnswer = `{"jsonrpc":"2.0","id":1,"result":{"message":{"parts":[{"text":"hi"}]}}}`
)

func mcpBenchRequest() *http.Request { return mcpRequest("/mcp", "2026-07-28") }
func a2aBenchRequest() *http.Request { return a2aRequest("/a2a", "1.0") }

// BenchmarkA2A is an A2A 1.0 SendMessage: a2a-go v2.4.0's JSON-RPC
// handler, and a2ahttp recording every decision as a JSON line.
func BenchmarkA2A(b *testing.B) {
	m, err := a2ahttp.New(compiled(), a2ahttp.Options{Sink: events.NewJSONLines(io.Discard)})
	if err != nil {
		b.Fatal(err)
	}
	benchAdapter(b, m.Wrap, a2aServer(), a2aAnswer, a2aBenchRequest)
}

// BenchmarkFloor is the least a middleware that reads the body strictly
// costs, whatever else it does, measured as BenchmarkMCP and BenchmarkA2A
// measure the adapters: "read" reads the body whole and forwards it;
// "validate" also reads it as one value through JSON v2's tokenizer
// (repeated names, UTF-8 and nesting checked, nothing decoded), with a
// decoder kept from one request to the next. Its interleaved rows are the
// floor under the adapters' own, which also check the headers against the
// body, decide, record, and read the server's answer.
func BenchmarkFloor(b *testing.B) {
	var (
		src bytes.Reader // one request at a time: sub-benchmarks run in turn
		dec jsontext.Decoder
	)
	floor := func(validate bool) func(http.Handler) http.Handler {
		return func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
				if err == nil && validate {
					src.Reset(body)
					dec.Reset(&src)
					_, err = dec.ReadValue()
				}
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				r.Body = io.NopCloser(bytes.NewReader(body))
				next.ServeHTTP(w, r)
			})
		}
	}
	for _, f := range []struct {
		name     string
		validate bool
	}{{"read", false}, {"validate", true}} {
		b.Run("mcp/"+f.name, func(b *testing.B) { benchAdapter(b, floor(f.validate), mcpServer(), mcpAnswer, mcpBenchRequest) })
		b.Run("a2a/"+f.name, func(b *testing.B) { benchAdapter(b, floor(f.validate), a2aServer(), a2aAnswer, a2aBenchRequest) })
	}
}
