package wopnegotel_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	wopnegotel "github.com/wopneg/wopneg/otel"
	"github.com/wopneg/wopneg/policy"
)

// A host fans its decisions out to its audit sink and to the Telemetry;
// each decision then lands on the request's span, and is counted. Here
// three MCP requests are decided on server spans, and the exported spans
// and the counter are printed (the event id, random, is left out).
func Example() {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))

	tel, err := wopnegotel.New(wopnegotel.Options{TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		panic(err)
	}
	audit := events.NewJSONLines(new(strings.Builder))
	sink := events.NewFanout(audit, tel) // the one line: Options.Sink of mcphttp and a2ahttp

	n, err := negotiate.Compile(facets.Set{MCP: &facets.MCP{
		Revisions:        []string{"2025-06-18", "2025-11-25", "2026-07-28"},
		PreferredVersion: "2026-07-28",
		MinimumRevision:  "2025-11-25",
		RefreshedAt:      "2026-11-01",
	}}, policy.Policy{Now: func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		panic(err)
	}
	for _, requested := range []string{"2026-07-28", "2025-11-25", "2025-06-18"} {
		// The host's HTTP server span, as otelhttp.NewHandler starts one.
		ctx, span := tp.Tracer("host").Start(context.Background(), "POST /mcp", trace.WithSpanKind(trace.SpanKindServer))
		_, _ = n.DecideAndRecord(ctx, sink, negotiate.Destination{}, nil, negotiate.Offer{
			Protocol: facets.ProtocolMCP, Requested: requested, PeerVersions: []string{requested},
		})
		span.End()
	}

	for _, s := range spans.GetSpans() {
		fmt.Printf("span %q status %s\n", s.Name, s.Status.Code)
		kv := map[string]string{}
		for _, a := range s.Attributes {
			kv[string(a.Key)] = a.Value.String()
		}
		for _, k := range slices.Sorted(maps.Keys(kv)) {
			if k != "openwop.event.id" {
				fmt.Printf("  %s=%s\n", k, kv[k])
			}
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		panic(err)
	}
	m := rm.ScopeMetrics[0].Metrics[0]
	var lines []string
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		p, _ := dp.Attributes.Value("openwop.negotiation.protocol")
		o, _ := dp.Attributes.Value("openwop.negotiation.outcome")
		r, _ := dp.Attributes.Value("openwop.negotiation.reason")
		lines = append(lines, fmt.Sprintf("  protocol=%s outcome=%s reason=%s: %d", p.String(), o.String(), r.String(), dp.Value))
	}
	slices.Sort(lines)
	fmt.Printf("metric %s (%s)\n%s\n", m.Name, m.Unit, strings.Join(lines, "\n"))
	// Output:
	// span "POST /mcp" status Unset
	//   mcp.protocol.version=2026-07-28
	//   openwop.negotiation.floor=2025-11-25
	//   openwop.negotiation.negotiated=2026-07-28
	//   openwop.negotiation.outcome=accepted
	//   openwop.negotiation.protocol=mcp
	//   openwop.negotiation.reason=ok
	//   openwop.negotiation.requested=2026-07-28
	// span "POST /mcp" status Error
	//   error.type=interop_version_unsupported
	//   openwop.negotiation.floor=2025-11-25
	//   openwop.negotiation.outcome=refused
	//   openwop.negotiation.protocol=mcp
	//   openwop.negotiation.reason=unauthenticated
	//   openwop.negotiation.requested=2025-11-25
	// span "POST /mcp" status Error
	//   error.type=interop_version_unsupported
	//   openwop.negotiation.floor=2025-11-25
	//   openwop.negotiation.outcome=refused
	//   openwop.negotiation.protocol=mcp
	//   openwop.negotiation.reason=below-floor
	//   openwop.negotiation.requested=2025-06-18
	// metric openwop.negotiation.decisions ({decision})
	//   protocol=mcp outcome=accepted reason=ok: 1
	//   protocol=mcp outcome=refused reason=below-floor: 1
	//   protocol=mcp outcome=refused reason=unauthenticated: 1
}
