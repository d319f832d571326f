package conform

import (
	"context"
	"strings"
	"testing"
	"time"
)

// BenchmarkRun is one whole run against a correct test host: twenty rows,
// about thirty seam exchanges, each with its own fake peer.
func BenchmarkRun(b *testing.B) {
	h := newTestHost(b, wide, correct)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run(context.Background(), Options{Base: h.srv.URL, Token: "tok-acme", Stream: time.Second, Now: h.clock}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadSSE(b *testing.B) {
	env := validEnvelope(b, "1.0")
	stream := strings.Repeat("event: negotiation.decided\ndata: "+env+"\n\n", 100)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		_ = readSSE(strings.NewReader(stream), func(f frame) bool {
			if _, ok := parseRecord([]byte(f.Data)); ok {
				n++
			}
			return true
		})
		if n != 100 {
			b.Fatal(n)
		}
	}
}

func BenchmarkParsePoll(b *testing.B) {
	env := validEnvelope(b, "1.0")
	doc := []byte(`{"events":[` + strings.TrimSuffix(strings.Repeat(env+",", 20), ",") + `]}`)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if recs, err := parsePoll(doc); err != nil || len(recs) != 20 {
			b.Fatal(err)
		}
	}
}
