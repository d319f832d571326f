package events_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/wopneg/wopneg/events"
)

// BenchmarkMemoryLogEmit records run and host events into a full log, so
// that every emit also evicts.
func BenchmarkMemoryLogEmit(b *testing.B) {
	l := events.NewMemoryLog(1024, 256)
	tenants := []string{"a", "b", "c", "d"}
	evs := make([]events.Event, 64)
	for i := range evs {
		if i%2 == 0 {
			evs[i] = runEvent(b, run(tenants[i%4], i%8), i)
		} else {
			evs[i] = hostEvent(b, tenants[i%4], i)
		}
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := l.Emit(ctx, evs[i%len(evs)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMemoryLogRead reads a run's page and a tenant's newest host
// events from a log of 4,096 events.
func BenchmarkMemoryLogRead(b *testing.B) {
	l := events.NewMemoryLog(0, 0)
	for i := range 4096 {
		emitAll(b, l, runEvent(b, run("acme", i%16), i), hostEvent(b, "acme", i))
	}
	ctx := context.Background()
	b.Run("RunEvents", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if evs, _, _ := l.RunEvents(ctx, "acme", run("acme", 3), 100, 50); len(evs) != 50 {
				b.Fatal(len(evs))
			}
		}
	})
	b.Run("HostEvents", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if evs, _ := l.HostEvents(ctx, "acme", "", 50); len(evs) != 50 {
				b.Fatal(len(evs))
			}
		}
	})
}

// BenchmarkLogHandlerPoll serves GET /runs/{runId}/events/poll of a run of
// ten events.
func BenchmarkLogHandlerPoll(b *testing.B) {
	l := events.NewMemoryLog(0, 0)
	r := run("acme", 1)
	for i := range 10 {
		emitAll(b, l, runEvent(b, r, i))
	}
	h := &events.LogHandler{Log: l, Subject: callerOf}
	target := fmt.Sprintf("/runs/%s/events/poll?afterSequence=0", r)
	b.ReportAllocs()
	for range b.N {
		req := httptest.NewRequest("GET", target, nil)
		req.Header.Set("Authorization", "Bearer acme")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}
