package a2ahttp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/policy"
)

// discard is a sink that keeps nothing, so that the benchmarks measure the
// middleware and not a store.
var discard = events.SinkFunc(func(context.Context, events.Event) error { return nil })

// reusableRequest is a JSON-RPC request whose body can be served again and
// again without allocating a new reader per iteration.
func reusableRequest(version string) (*http.Request, *strings.Reader) {
	body := strings.NewReader(rpcBody(`"req-1"`))
	r := httptest.NewRequest(http.MethodPost, "/a2a", body)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", bearer)
	if version != "" {
		r.Header.Set("A2A-Version", version)
	}
	return r, body
}

// nopWriter is a ResponseWriter that keeps only its header map, reset per
// request, so that the benchmarks do not measure httptest's recorder.
type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *nopWriter) WriteHeader(int)             {}

var ok200 = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })

func benchServe(b *testing.B, h http.Handler, version string) {
	r, body := reusableRequest(version)
	w := &nopWriter{h: make(http.Header)}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		body.Seek(0, 0)
		h.ServeHTTP(w, r)
	}
}

// BenchmarkBaseline is the wrapped handler alone, for comparison.
func BenchmarkBaseline(b *testing.B) { benchServe(b, ok200, "1.2") }

// BenchmarkMiddleware is the A2A header path per request: read the header,
// decide with a compiled Negotiator, build and record the host event (to a
// sink that keeps nothing), stamp the response and put the Outcome in the
// context.
func BenchmarkMiddleware(b *testing.B) {
	for _, tc := range []struct {
		name, version string
		set           facets.Set
	}{
		{"preferred", "1.2", wideA2A()}, {"downgrade", "1.1", wideA2A()},
		// No header: a request for 0.3, served at 0.3 by a host that
		// offers it.
		{"absent", "", legacyA2A()},
	} {
		b.Run(tc.name, func(b *testing.B) {
			m, err := a2ahttp.New(compile(b, tc.set, policy.Policy{}), a2ahttp.Options{Sink: discard, Subject: subjectOf})
			if err != nil {
				b.Fatal(err)
			}
			benchServe(b, m.Wrap(ok200), tc.version)
		})
	}
}

// BenchmarkRefusal is a refused JSON-RPC request: the body read for its id
// and the -32009 error written. With a header of 64 Ki commas it measures
// what several values cost: a bounded list, not a string per comma.
func BenchmarkRefusal(b *testing.B) {
	for _, tc := range []struct{ name, version string }{
		{"unsupported", "9.9"}, {"64Ki commas", strings.Repeat(",", 1<<16)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			m, err := a2ahttp.New(compile(b, wideA2A(), policy.Policy{}), a2ahttp.Options{Sink: discard, Subject: subjectOf})
			if err != nil {
				b.Fatal(err)
			}
			benchServe(b, m.Wrap(ok200), tc.version)
		})
	}
}

// answerJSON answers as a2a-go's JSON-RPC handler does: a Content-Type,
// then the response in one write.
var answerJSON = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":"req-1","result":{"message":{"parts":[{"text":"hi at 1.2"}]}}}` + "\n"))
})

// BenchmarkFollow is an accepted request whose answer the middleware
// reads to see that it served the version: the answer alone, and through
// the middleware.
func BenchmarkFollow(b *testing.B) {
	m, err := a2ahttp.New(compile(b, wideA2A(), policy.Policy{}), a2ahttp.Options{Sink: discard, Subject: subjectOf})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("answer", func(b *testing.B) { benchServe(b, answerJSON, "1.2") })
	b.Run("middleware", func(b *testing.B) { benchServe(b, m.Wrap(answerJSON), "1.2") })
}

// hostileCard is a card of about 1 MiB listing n distinct versions, or one
// version repeated n times.
func hostileCard(n int, distinct bool) []byte {
	var b strings.Builder
	b.WriteString(`{"supportedInterfaces":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		v := 1
		if distinct {
			v = i
		}
		fmt.Fprintf(&b, `{"protocolVersion":"1.%d"}`, v)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// BenchmarkHostileCard compares a card of ~34,000 distinct versions with
// one of the same size repeating a version: reading either is linear, so
// the two cost about the same (quadratic deduplication made the first
// 150 times the second).
func BenchmarkHostileCard(b *testing.B) {
	for _, distinct := range []bool{false, true} {
		card := hostileCard(34000, distinct)
		b.Run(fmt.Sprintf("distinct=%t", distinct), func(b *testing.B) {
			b.SetBytes(int64(len(card)))
			for b.Loop() {
				if _, err := a2ahttp.CardOffers(card); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestHostileCardDeduplicates: the offers of a card are its distinct
// versions in the order first listed, however many it lists.
func TestHostileCardDeduplicates(t *testing.T) {
	offers, err := a2ahttp.CardOffers(hostileCard(34000, true))
	if err != nil || len(offers) != 34000 || offers[0] != "1.0" || offers[33999] != "1.33999" {
		t.Fatalf("%d offers, %v", len(offers), err)
	}
	offers, err = a2ahttp.CardOffers(hostileCard(34000, false))
	if err != nil || len(offers) != 1 || offers[0] != "1.1" {
		t.Fatalf("%q, %v", offers, err)
	}
}
