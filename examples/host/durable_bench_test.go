package main

import (
	"context"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkReplicaAudit serves a replica with -pg (on CI's PostgreSQL)
// under the same load in both audit modes, side by side: 32 clients on
// loopback, each sending server/discover in turn accepted (2026-07-28)
// and refused below the floor (2025-06-18), b.N requests in all. It
// reports the decisions answered per second and the p50 and p99 of an
// answer's latency, and counts the answers that were not 200 or 400.
//
//	cd examples && go test -run '^$' -bench ReplicaAudit -benchtime 20000x ./host
func BenchmarkReplicaAudit(b *testing.B) {
	for _, mode := range []struct {
		name string
		wait time.Duration
	}{{"asynchronous", 0}, {"acknowledged", time.Second}} {
		b.Run(mode.name, func(b *testing.B) {
			_, _, pgURL := replicaDB(b)
			cfg := config{Addr: "127.0.0.1:0", Token: testToken, Facets: defaultFacets(), PG: pgURL, SharedKeys: fleetKeys, AuditWait: mode.wait}
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			var stderr syncBuffer
			done := make(chan error, 1)
			go func() { done <- run(ctx, cfg, false, io.Discard, &stderr) }()
			base := waitServing(b, &stderr, done)
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
			revisions := []string{"2026-07-28", "2025-06-18"}
			latencies := make([]time.Duration, b.N)
			var (
				next, failed atomic.Int64
				wg           sync.WaitGroup
			)
			b.ResetTimer()
			start := time.Now()
			for range 32 {
				wg.Go(func() {
					for i := next.Add(1) - 1; i < int64(b.N); i = next.Add(1) - 1 {
						t0 := time.Now()
						status := discover(client, base, revisions[i%2])
						latencies[i] = time.Since(t0)
						if status != http.StatusOK && status != http.StatusBadRequest {
							failed.Add(1)
						}
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			stop()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
			slices.Sort(latencies)
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "decisions/s")
			b.ReportMetric(float64(latencies[b.N/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(latencies[b.N*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(failed.Load()), "not-answered")
			b.ReportMetric(0, "ns/op")
		})
	}
}
