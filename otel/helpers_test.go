package wopnegotel_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	wopnegotel "github.com/wopneg/wopneg/otel"
	"github.com/wopneg/wopneg/policy"
)

// kit is a Telemetry over an in-memory span exporter and a manual metric
// reader, the OpenTelemetry SDK's own test doubles.
type kit struct {
	tel    *wopnegotel.Telemetry
	tp     *sdktrace.TracerProvider
	mp     *sdkmetric.MeterProvider
	spans  *tracetest.InMemoryExporter
	reader *sdkmetric.ManualReader
}

func newKit(t *testing.T) *kit {
	t.Helper()
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	tel, err := wopnegotel.New(wopnegotel.Options{TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	return &kit{tel: tel, tp: tp, mp: mp, spans: spans, reader: reader}
}

// only returns the one span exported, failing the test unless there is
// exactly one.
func (k *kit) only(t *testing.T) tracetest.SpanStub {
	t.Helper()
	got := k.spans.GetSpans()
	if len(got) != 1 {
		t.Fatalf("%d spans exported, want 1: %v", len(got), got)
	}
	return got[0]
}

// attrs returns a span's attributes as key → value, failing the test on
// a key set twice (the SDK keeps the last, which would hide a conflict).
func attrs(t *testing.T, kvs []attribute.KeyValue) map[string]string {
	t.Helper()
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		if _, dup := m[string(kv.Key)]; dup {
			t.Errorf("attribute %s is set twice", kv.Key)
		}
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

// diffAttrs reports every difference between two attribute maps.
func diffAttrs(t *testing.T, got, want map[string]string) {
	t.Helper()
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[k]; !ok {
			t.Errorf("attribute %s missing, want %q", k, want[k])
		} else if g != want[k] {
			t.Errorf("attribute %s = %q, want %q", k, g, want[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected attribute %s = %q", k, got[k])
		}
	}
}

// series collects the decision counter: "protocol outcome reason" → count.
// It fails the test when the counter is not a monotonic cumulative sum
// named and described as documented.
func (k *kit) series(t *testing.T) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := k.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != "github.com/wopneg/wopneg/otel" {
			t.Errorf("scope %q, want the module path", sm.Scope.Name)
		}
		for _, m := range sm.Metrics {
			if m.Name != "openwop.negotiation.decisions" || m.Unit != "{decision}" || m.Description == "" {
				t.Errorf("metric %q unit %q description %q, want openwop.negotiation.decisions in {decision}, described", m.Name, m.Unit, m.Description)
			}
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok || !sum.IsMonotonic || sum.Temporality != metricdata.CumulativeTemporality {
				t.Fatalf("metric data %T %+v, want a monotonic cumulative Sum[int64]", m.Data, m.Data)
			}
			for _, dp := range sum.DataPoints {
				out[seriesKey(dp.Attributes)] += dp.Value
			}
		}
	}
	return out
}

// seriesKey names a data point by its attributes, which must be the three
// documented ones (reason only when the record has one).
func seriesKey(set attribute.Set) string {
	var parts []string
	for _, key := range []attribute.Key{"openwop.negotiation.protocol", "openwop.negotiation.outcome", "openwop.negotiation.reason"} {
		if v, ok := set.Value(key); ok {
			parts = append(parts, v.String())
		}
	}
	if len(parts) != set.Len() {
		return fmt.Sprintf("unexpected attributes %v", set.ToSlice())
	}
	return strings.Join(parts, " ")
}

// at is the decision clock of every test: inside the facets' refresh SLA.
var at = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// host is the negotiator of the test host: MCP 2025-06-18, 2025-11-25 and
// 2026-07-28, preferred 2026-07-28, floor 2025-11-25; A2A 0.3 and 1.0,
// preferred and floor 1.0.
func host(t *testing.T, p policy.Policy) *negotiate.Negotiator {
	t.Helper()
	p.Now = func() time.Time { return at }
	n, err := negotiate.Compile(facets.Set{
		MCP: &facets.MCP{
			Revisions:        []string{"2025-06-18", "2025-11-25", "2026-07-28"},
			PreferredVersion: "2026-07-28",
			MinimumRevision:  "2025-11-25",
			RefreshedAt:      "2026-11-01",
		},
		A2A: &facets.A2A{
			Versions:         []string{"0.3", "1.0"},
			PreferredVersion: "1.0",
			MinimumVersion:   "1.0",
			RefreshedAt:      "2026-11-01",
		},
	}, p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// agent is an authenticated Subject, who may be downgraded.
var agent = &negotiate.Subject{
	Issuer: "https://idp.example", SubjectID: "agent-7", Tenant: "acme",
	Lane: policy.LaneOAuth2, Kind: "agent",
}
