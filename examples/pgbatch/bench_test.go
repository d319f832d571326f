package pgbatch_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/examples/internal/pgtest"
	"github.com/wopneg/wopneg/examples/pgbatch"
	"github.com/wopneg/wopneg/examples/pgsink"
)

// benchEvents is b.N events on 64 runs, made before the timer starts.
func benchEvents(b *testing.B) []events.Event {
	es := make([]events.Event, b.N)
	for i := range es {
		es[i] = runEvent(b, fmt.Sprintf("acme/bench-run-%08d", i%64), i)
	}
	return es
}

// emitAll emits every event of es into s from one goroutine, then closes s
// when it is an *events.Async, and reports events written per second.
func emitAll(b *testing.B, s events.Sink, es []events.Event) {
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for i := range es {
		if err := s.Emit(ctx, es[i]); err != nil {
			b.Fatal(err)
		}
	}
	if a, ok := s.(*events.Async); ok {
		if err := a.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}

// BenchmarkPerRow is the per-row sink (examples/pgsink), one insert
// transaction per event, from one goroutine: the baseline.
func BenchmarkPerRow(b *testing.B) {
	pool := pgtest.Connect(b, nil)
	s, err := pgsink.New(context.Background(), pool, pgsink.Options{Schema: pgtest.Schema(b, pool)})
	if err != nil {
		b.Fatal(err)
	}
	emitAll(b, s, benchEvents(b))
}

// BenchmarkBatch is the batching writer behind an events.Async at batch
// sizes 1, 64 and 512: every event emitted, then Close, which returns when
// all are written.
func BenchmarkBatch(b *testing.B) {
	for _, size := range []int{1, 64, 512} {
		b.Run(fmt.Sprint("batch=", size), func(b *testing.B) {
			pool := pgtest.Connect(b, nil)
			w, err := pgbatch.New(context.Background(), pool, pgbatch.Options{Schema: pgtest.Schema(b, pool)})
			if err != nil {
				b.Fatal(err)
			}
			emitAll(b, events.NewAsync(w, events.AsyncOptions{Batch: size, Buffer: 4096, MaxWait: time.Minute}), benchEvents(b))
		})
	}
}

// BenchmarkEmitSaturated is the request path while the writer is
// saturated: 8 goroutines emit as fast as they can into an events.Async of
// batch 512 in front of the writer (blocking for room), and the p99 and max
// of one Emit are reported.
func BenchmarkEmitSaturated(b *testing.B) {
	pool := pgtest.Connect(b, nil)
	pw, err := pgbatch.New(context.Background(), pool, pgbatch.Options{Schema: pgtest.Schema(b, pool)})
	if err != nil {
		b.Fatal(err)
	}
	w := events.NewAsync(pw, events.AsyncOptions{Batch: 512, MaxWait: time.Minute})
	es := benchEvents(b)
	const emitters = 8
	lat := make([][]time.Duration, emitters)
	ctx := context.Background()
	b.ResetTimer()
	var wg sync.WaitGroup
	for g := range emitters {
		wg.Go(func() {
			for i := g; i < len(es); i += emitters {
				t := time.Now()
				if err := w.Emit(ctx, es[i]); err != nil {
					b.Error(err)
					return
				}
				lat[g] = append(lat[g], time.Since(t))
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) > 0 {
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
		b.ReportMetric(float64(all[len(all)-1].Microseconds()), "max-µs")
	}
}
