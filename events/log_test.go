package events_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
)

func TestMemoryLogKit(t *testing.T) {
	negotiatetest.TestSink(t, func(t *testing.T, fault error) (events.Sink, func() []events.Event) {
		if fault != nil {
			return nil, nil // memory cannot fail
		}
		l := events.NewMemoryLog(0, 0)
		return l, func() []events.Event { return events.MemoryLogAll(l) }
	})
}

var logAt = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func logPayload(i int) events.NegotiationDecided {
	return events.NegotiationDecided{Protocol: facets.ProtocolMCP, Outcome: "accepted", Version: "2026-07-28",
		Reason: events.ReasonOK, Floor: "2025-11-25", At: logAt.Add(time.Duration(i) * time.Second)}
}

func runEvent(t interface {
	Helper()
	Fatal(...any)
}, runID string, i int) events.Event {
	t.Helper()
	e, err := events.NewRunEvent(runID, logPayload(i))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func hostEvent(t interface {
	Helper()
	Fatal(...any)
}, tenant string, i int) events.Event {
	t.Helper()
	e, err := events.NewHostEvent("", logPayload(i))
	if err != nil {
		t.Fatal(err)
	}
	e.Tenant = tenant
	return e
}

func run(tenant string, n int) string { return fmt.Sprintf("%s/run%016d", tenant, n) }

func emitAll(t interface {
	Helper()
	Fatal(...any)
}, l events.Log, es ...events.Event) {
	t.Helper()
	for _, e := range es {
		if err := l.Emit(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
}

func seqs(es []events.Event) []int64 {
	out := []int64{}
	for _, e := range es {
		out = append(out, e.Sequence)
	}
	return out
}

func TestMemoryLogRuns(t *testing.T) {
	ctx := context.Background()
	l := events.NewMemoryLog(0, 0)
	r := run("acme", 1)
	emitAll(t, l, withSeq(runEvent(t, r, 0), 41), runEvent(t, r, 1), runEvent(t, "anon:acme/run0000000000000002", 2), runEvent(t, r, 3))
	for _, tc := range []struct {
		tenant, run string
		after       int64
		limit       int
		want        string
		last        int64
	}{
		{"acme", r, -1, 10, "[0 1 2]", 2},
		{"acme", r, 0, 10, "[1 2]", 2},
		{"acme", r, 2, 10, "[]", 2},
		{"acme", r, 99, 10, "[]", 2},
		{"acme", r, -1, 2, "[0 1]", 2},
		{"acme", r, -1, 0, "[]", 2},
		{"umbra", r, -1, 10, "[]", -1},
		{"", r, -1, 10, "[]", -1},
		{"acme", run("acme", 9), -1, 10, "[]", -1},
		{"acme", "anon:acme/run0000000000000002", -1, 10, "[0]", 0},
	} {
		got, last, err := l.RunEvents(ctx, tc.tenant, tc.run, tc.after, tc.limit)
		if err != nil || fmt.Sprint(seqs(got)) != tc.want || last != tc.last {
			t.Errorf("RunEvents(%q, %q, %d, %d) = %v, %d, %v; want %s, %d", tc.tenant, tc.run, tc.after, tc.limit, seqs(got), last, err, tc.want, tc.last)
		}
		for _, e := range got {
			if e.Tenant != "acme" {
				t.Errorf("a run event of acme carries tenant %q", e.Tenant)
			}
		}
	}
}

func TestMemoryLogHostEvents(t *testing.T) {
	ctx := context.Background()
	l := events.NewMemoryLog(0, 0)
	a0, a1, a2 := hostEvent(t, "acme", 0), hostEvent(t, "acme", 1), hostEvent(t, "acme", 2)
	u0, anon := hostEvent(t, "umbra", 0), hostEvent(t, "", 0)
	emitAll(t, l, a0, u0, a1, anon, a2, a1)
	ids := func(es []events.Event) string {
		var s []string
		for _, e := range es {
			s = append(s, e.ID)
		}
		return strings.Join(s, ",")
	}
	for _, tc := range []struct {
		tenant, after string
		limit         int
		want          []events.Event
	}{
		{"acme", "", 10, []events.Event{a0, a1, a2}},
		{"acme", "", 1, []events.Event{a2}},
		{"acme", a0.ID, 10, []events.Event{a1, a2}},
		{"acme", a0.ID, 1, []events.Event{a1}},
		{"acme", a2.ID, 10, nil},
		{"acme", u0.ID, 2, []events.Event{a1, a2}}, // not acme's: the newest
		{"acme", "unknown-id-0000000", 10, []events.Event{a0, a1, a2}},
		{"acme", "", 0, nil},
		{"umbra", "", 10, []events.Event{u0}},
		{"", "", 10, nil},
		{"nobody", "", 10, nil},
	} {
		got, err := l.HostEvents(ctx, tc.tenant, tc.after, tc.limit)
		if err != nil || ids(got) != ids(tc.want) {
			t.Errorf("HostEvents(%q, %q, %d) = %s, %v; want %s", tc.tenant, tc.after, tc.limit, ids(got), err, ids(tc.want))
		}
	}
}

func TestMemoryLogEviction(t *testing.T) {
	ctx := context.Background()
	// Capacity 4, share 2: a tenant over its share loses its own oldest.
	l := events.NewMemoryLog(4, 2)
	a0, a1, a2 := hostEvent(t, "acme", 0), hostEvent(t, "acme", 1), hostEvent(t, "acme", 2)
	u0 := hostEvent(t, "umbra", 0)
	emitAll(t, l, u0, a0, a1, a2)
	if got, _ := l.HostEvents(ctx, "acme", "", 10); len(got) != 2 || got[0].ID != a1.ID || got[1].ID != a2.ID {
		t.Errorf("acme holds %v, want its two newest", got)
	}
	if got, _ := l.HostEvents(ctx, "umbra", "", 10); len(got) != 1 {
		t.Errorf("acme's events evicted umbra's: %v", got)
	}
	// The log full: the oldest of all goes.
	b0, c0 := hostEvent(t, "b", 0), hostEvent(t, "c", 0)
	emitAll(t, l, b0, c0)
	if got, _ := l.HostEvents(ctx, "umbra", "", 10); len(got) != 0 {
		t.Errorf("the oldest event of all was kept: %v", got)
	}
	if n := len(events.MemoryLogAll(l)); n != 4 {
		t.Errorf("the log holds %d events, capacity 4", n)
	}
	// A run evicted whole is forgotten and numbers from 0 again.
	l = events.NewMemoryLog(2, 2)
	r := run("acme", 1)
	emitAll(t, l, runEvent(t, r, 0), runEvent(t, r, 1), runEvent(t, r, 2))
	got, last, _ := l.RunEvents(ctx, "acme", r, -1, 10)
	if fmt.Sprint(seqs(got)) != "[1 2]" || last != 2 {
		t.Errorf("after eviction %v, last %d", seqs(got), last)
	}
	emitAll(t, l, hostEvent(t, "acme", 3), hostEvent(t, "acme", 4))
	emitAll(t, l, runEvent(t, r, 5))
	got, last, _ = l.RunEvents(ctx, "acme", r, -1, 10)
	if fmt.Sprint(seqs(got)) != "[0]" || last != 0 {
		t.Errorf("a forgotten run continues at %v, last %d", seqs(got), last)
	}
	// A share above the capacity is the capacity.
	l = events.NewMemoryLog(1, 5)
	emitAll(t, l, hostEvent(t, "acme", 0), hostEvent(t, "acme", 1))
	if n := len(events.MemoryLogAll(l)); n != 1 {
		t.Errorf("capacity 1 holds %d", n)
	}
}

func TestMemoryLogRefuses(t *testing.T) {
	l := events.NewMemoryLog(0, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Emit(ctx, hostEvent(t, "acme", 0)); !errors.Is(err, context.Canceled) {
		t.Errorf("a canceled emit: %v", err)
	}
	if got, last, err := l.RunEvents(ctx, "acme", run("acme", 1), -1, 1); !errors.Is(err, context.Canceled) || got != nil || last != -1 {
		t.Errorf("a canceled read: %v events, last %d, %v; want none, -1 and context.Canceled", got, last, err)
	}
	if _, err := l.HostEvents(ctx, "acme", "", 1); !errors.Is(err, context.Canceled) {
		t.Errorf("a canceled read: %v", err)
	}
	bad := hostEvent(t, "acme", 0)
	bad.ID = "short"
	if err := l.Emit(context.Background(), bad); !errors.As(err, new(*events.FieldError)) {
		t.Errorf("an invalid event: %v", err)
	}
	if n := len(events.MemoryLogAll(l)); n != 0 {
		t.Errorf("a refused event was recorded: %d", n)
	}
}

// TestMemoryLogProperties: whatever is emitted, the log stays within its
// bounds, each run's sequences rise by one, and a tenant reads only its
// own.
func TestMemoryLogProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		capacity := rapid.IntRange(1, 12).Draw(rt, "capacity")
		share := rapid.IntRange(1, 12).Draw(rt, "share")
		l := events.NewMemoryLog(capacity, share)
		tenants := []string{"a", "b", "c", ""}
		n := rapid.IntRange(0, 60).Draw(rt, "n")
		for i := range n {
			tenant := rapid.SampledFrom(tenants).Draw(rt, "tenant")
			if tenant != "" && rapid.Bool().Draw(rt, "run") {
				emitAll(rt, l, runEvent(rt, run(tenant, rapid.IntRange(0, 2).Draw(rt, "run#")), i))
			} else {
				emitAll(rt, l, hostEvent(rt, tenant, i))
			}
		}
		all := events.MemoryLogAll(l)
		if len(all) > capacity {
			rt.Fatalf("%d events, capacity %d", len(all), capacity)
		}
		per := map[string]int{}
		for _, e := range all {
			per[e.Tenant]++
		}
		for tenant, k := range per {
			if k > min(share, capacity) {
				rt.Fatalf("tenant %q holds %d, share %d", tenant, k, share)
			}
		}
		for _, tenant := range tenants[:3] {
			for r := range 3 {
				got, last, _ := l.RunEvents(context.Background(), tenant, run(tenant, r), -1, 100)
				for i, e := range got {
					if i > 0 {
						if e.Sequence != got[i-1].Sequence+1 {
							rt.Fatalf("sequences %v", seqs(got))
						}
					}
					if e.Tenant != tenant {
						rt.Fatalf("tenant %q read %q's event", tenant, e.Tenant)
					}
				}
				if len(got) > 0 {
					if got[len(got)-1].Sequence != last {
						rt.Fatalf("last %d, events %v", last, seqs(got))
					}
				}
			}
			hs, _ := l.HostEvents(context.Background(), tenant, "", 100)
			for _, e := range hs {
				if e.Tenant != tenant || e.RunID != "" {
					rt.Fatalf("tenant %q read %+v", tenant, e)
				}
			}
		}
	})
}
