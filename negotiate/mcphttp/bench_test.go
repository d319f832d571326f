package mcphttp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/policy"
)

// discard records nothing and fails nothing: the benchmarks measure the
// middleware, not a store.
var discard = events.SinkFunc(func(context.Context, events.Event) error { return nil })

// nopWriter is a ResponseWriter that costs nothing, so that the benchmark
// holds only the middleware.
type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *nopWriter) WriteHeader(int)             {}

// BenchmarkMiddleware is the middleware's own cost per request, in
// process, over a handler that does nothing: header reading, the bounded
// body read, the header/body check, the decision and its event (to a sink
// that keeps nothing), and the context value. "without" calls the handler
// directly. The same request is reused, its body rewound, so that building
// it is not measured. The loopback figure, through the go-sdk handler, is
// examples/host's BenchmarkMCPRequest.
func BenchmarkMiddleware(b *testing.B) {
	n := compile(b, wideFacets(), policy.Policy{})
	nop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	m, err := mcphttp.New(n, mcphttp.Options{Sink: discard, Subject: subjectOf})
	if err != nil {
		b.Fatal(err)
	}
	for _, bench := range []struct {
		name string
		c    call
		h    http.Handler
	}{
		{"without", stateless("2026-07-28", "2026-07-28"), nop},
		{"stateless", stateless("2026-07-28", "2026-07-28"), m.Wrap(nop)},
		{"legacy-authenticated", call{body: `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, headers: hdr(mcphttp.HeaderProtocolVersion, "2025-11-25", "Authorization", "Bearer user")}, m.Wrap(nop)},
	} {
		b.Run(bench.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			for k, v := range bench.c.headers {
				req.Header.Set(k, v)
			}
			body := strings.NewReader(bench.c.body)
			w := &nopWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				body.Reset(bench.c.body)
				req.Body = io.NopCloser(body)
				req.ContentLength = int64(len(bench.c.body))
				bench.h.ServeHTTP(w, req)
			}
		})
	}
}
