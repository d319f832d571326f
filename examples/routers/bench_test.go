package routers

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
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

// benchAdapter measures one request in process, each handler alone for
// its allocations, then all of them interleaved for their time:
//
//   - "answer": a handler that only answers, the bare cost every row
//     pays (building the request, recording the answer);
//   - "floor": the least a middleware that reads the body strictly
//     costs, whatever else it does: the body read whole and read as one
//     value through JSON v2's tokenizer (repeated names, UTF-8 and
//     nesting checked, nothing decoded), with a decoder kept from one
//     request to the next, in front of the same answer;
//   - "record": the floor and the least any middleware that records
//     what was answered adds to it, whatever else it does: the answer
//     held and read as one value the same way, and one decided event
//     made and written as a JSON line, in front of the same answer;
//   - "middleware": wopneg's middleware in front of the same answer;
//   - "otelhttp": the middleware every host already runs, with the
//     OpenTelemetry SDK's tracer and meter providers (in memory), in
//     front of the same answer;
//   - "sdk": the real SDK handler, and "sdk+middleware" wopneg before it.
//
// The "interleaved" run sends answer, floor, record, middleware, otelhttp
// and sdk request by request, in an order shuffled every iteration, so
// that each follows every other (the SDK's request and its garbage among
// them) equally often and drift in the machine's load (it is shared) hits
// all alike; a fixed rotation would put the same handler after the SDK's
// request every time. It reports each middleware's own cost over the bare
// answer, and wopneg's as a multiple of the floor's, of the recording
// floor's and of otelhttp's.
func benchAdapter(b *testing.B, wrap func(http.Handler) http.Handler, sdk http.Handler, canned string, decided events.NegotiationDecided, request func() *http.Request) {
	bare := answer(canned)
	rows := []row{
		{"answer", bare},
		{"floor", floor(bare)},
		{"record", recorded(floor(bare), decided)},
		{"middleware", wrap(bare)},
		{"otelhttp", instrumented(b, bare)},
		{"sdk", sdk},
		{"sdk+middleware", wrap(sdk)},
	}
	for _, c := range rows {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				serve(b, c.h, request())
			}
		})
	}
	// The same requests, timed three ways: "interleaved", as they come;
	// "interleaved-collected-apart", with the garbage collector off while
	// they are timed and a collection, untimed, before every tenth
	// iteration, so that no request pays for a collection or runs beside
	// one; and "after-a-collection", each request right after a
	// collection of its own, untimed, so that it finds what a collection
	// leaves (pools moved aside, stacks shrunk, per-size caches emptied).
	// The SDK's request allocates hundreds of kilobytes, so in
	// "interleaved" a collection comes every few iterations; the other two
	// say how much of each row's cost comes of that.
	runs := []struct {
		name         string
		collectorOff bool
		before       func(iteration, nth int)
	}{
		{"interleaved", false, func(int, int) {}},
		{"interleaved-collected-apart", true, func(iteration, nth int) {
			if iteration%10 == 0 && nth == 0 {
				runtime.GC()
			}
		}},
		{"after-a-collection", false, func(int, int) { runtime.GC() }},
	}
	for _, run := range runs {
		b.Run(run.name, func(b *testing.B) {
			if run.collectorOff {
				defer debug.SetGCPercent(debug.SetGCPercent(-1))
			}
			interleave(b, rows[:6], request, run.before)
		})
	}
}

// row is one handler a request is measured through.
type row struct {
	name string
	h    http.Handler
}

// interleave sends rows (answer, floor, record, middleware, otelhttp and
// sdk, in that order) request by request in an order shuffled every
// iteration, calling before, untimed, ahead of each request, and reports
// each middleware's own cost over the bare answer.
func interleave(b *testing.B, rows []row, request func() *http.Request, before func(iteration, nth int)) {
	const answer, floor, record, middleware, otelhttp, sdk = 0, 1, 2, 3, 4, 5
	var took [6]time.Duration
	order := []int{answer, floor, record, middleware, otelhttp, sdk}
	shuffle := rand.New(rand.NewPCG(1, 2)).Shuffle // the same orders every run
	for iteration := 0; b.Loop(); iteration++ {
		shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for nth, i := range order {
			before(iteration, nth)
			r := request()
			start := time.Now()
			serve(b, rows[i].h, r)
			took[i] += time.Since(start)
		}
	}
	own := func(i int) float64 { return float64(took[i]-took[answer]) / float64(b.N) }
	b.ReportMetric(own(floor), "ns-floor/op")
	b.ReportMetric(own(record), "ns-record/op")
	b.ReportMetric(own(middleware), "ns-middleware/op")
	b.ReportMetric(own(otelhttp), "ns-otelhttp/op")
	b.ReportMetric(float64(took[sdk])/float64(b.N)/1e3, "µs-sdk/op")
	b.ReportMetric(own(middleware)/own(floor), "×floor")
	b.ReportMetric(own(record)/own(floor), "record×floor")
	b.ReportMetric(own(middleware)/own(record), "×record")
	b.ReportMetric(own(middleware)/own(otelhttp), "×otelhttp")
}

// floor is the least a middleware that reads the body strictly costs:
// the body read whole and checked as one JSON value with a kept decoder.
func floor(next http.Handler) http.Handler {
	var (
		mu  sync.Mutex
		src bytes.Reader
		dec jsontext.Decoder
	)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
		if err == nil {
			mu.Lock()
			src.Reset(body)
			dec.Reset(&src)
			_, err = dec.ReadValue()
			mu.Unlock()
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// recorded is next, a floor, with the least recording adds to it: next's
// answer held (in a pooled buffer) and read as one JSON value with a kept
// decoder, then one decided event, as decided at the time of the answer,
// made and written as a JSON line (to io.Discard: the encoding is paid, no
// disk is).
func recorded(next http.Handler, decided events.NegotiationDecided) http.Handler {
	sink := events.NewJSONLines(io.Discard)
	pool := sync.Pool{New: func() any { return new(heldAnswer) }}
	var (
		mu  sync.Mutex
		src bytes.Reader
		dec jsontext.Decoder
	)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		held := pool.Get().(*heldAnswer)
		defer pool.Put(held)
		held.ResponseWriter, held.status = w, http.StatusOK
		held.body.Reset()
		next.ServeHTTP(held, r)
		mu.Lock()
		src.Reset(held.body.Bytes())
		dec.Reset(&src)
		_, err := dec.ReadValue()
		mu.Unlock()
		if err == nil {
			d := decided // a copy per request: the handler may serve several at once
			d.At = time.Now()
			var e events.Event
			if e, err = events.NewHostEvent("", d); err == nil {
				err = sink.Emit(r.Context(), e)
			}
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(held.status)
		_, _ = w.Write(held.body.Bytes())
	})
}

// heldAnswer holds an answer's status and body; its head is written
// straight to the ResponseWriter underneath, which sends it only once the
// held status is written there.
type heldAnswer struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (h *heldAnswer) WriteHeader(status int)      { h.status = status }
func (h *heldAnswer) Write(p []byte) (int, error) { return h.body.Write(p) }

// instrumented is next behind otelhttp with the OpenTelemetry SDK's
// tracer provider (spans kept in memory) and meter provider (read by
// hand, never exported), as a host that already traces its requests has.
func instrumented(b *testing.B, next http.Handler) http.Handler {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	h := otelhttp.NewHandler(next, "serve", otelhttp.WithTracerProvider(tp), otelhttp.WithMeterProvider(mp))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		spans.Reset() // memory stays flat however long the run
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
	benchAdapter(b, m.Wrap, mcpServer(), mcpAnswer, events.NegotiationDecided{
		Protocol: facets.ProtocolMCP, Outcome: "accepted", Version: "2026-07-28", Requested: "2026-07-28", Floor: "2025-11-25",
	}, mcpBenchRequest)
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
	benchAdapter(b, m.Wrap, a2aServer(), a2aAnswer, events.NegotiationDecided{
		Protocol: facets.ProtocolA2A, Outcome: "accepted", Version: "1.0", Requested: "1.0", Floor: "1.0",
	}, a2aBenchRequest)
}
