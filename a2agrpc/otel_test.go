package a2agrpc_test

import (
	"context"
	"net"
	"testing"
	"time"

	a2agrpcv0 "github.com/a2aproject/a2a-go/v2/a2agrpc/v0"
	a2agrpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"google.golang.org/grpc"

	"github.com/wopneg/wopneg/a2agrpc"
	"github.com/wopneg/wopneg/negotiate"
	wopnegotel "github.com/wopneg/wopneg/otel"
	"github.com/wopneg/wopneg/policy"
)

// TestOpenTelemetry: with the gRPC server instrumented (otelgrpc's stats
// handler, rpc.system.name grpc) and wopnegotel's Telemetry as the sink and
// Observe, the decision lands on the call's own server span and is
// counted, as for the HTTP bindings.
func TestOpenTelemetry(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	tel, err := wopnegotel.New(wopnegotel.Options{TracerProvider: tp, MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
	if err != nil {
		t.Fatal(err)
	}
	n, err := negotiate.Compile(hostFacets("0.3"), policy.Policy{Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	i, err := a2agrpc.New(n, a2agrpc.Options{Sink: tel, Observe: tel.Observe})
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(append([]grpc.ServerOption{grpc.StatsHandler(otelgrpc.NewServerHandler(otelgrpc.WithTracerProvider(tp)))}, i.ServerOptions()...)...)
	rh := a2asrv.NewHandler(agent{})
	a2agrpcv1.NewHandler(rh).RegisterWith(s)
	a2agrpcv0.NewHandler(rh).RegisterWith(s)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(lis) }()
	defer s.Stop()
	h := &host{addr: lis.Addr().String()}
	if _, err := h.client(t, "1.0").SendMessage(context.Background(), hello()); err != nil {
		t.Fatal(err)
	}
	if _, err := h.client(t, "0.3").SendMessage(context.Background(), hello()); err == nil {
		t.Fatal("an anonymous 0.3 call was served")
	}
	s.Stop()

	var server []sdktrace.ReadOnlySpan
	for _, sp := range spans.Ended() {
		if attrs := attributes(sp.Attributes()); attrs["rpc.system.name"] == "grpc" {
			server = append(server, sp)
		}
	}
	if len(server) != 2 {
		t.Fatalf("%d gRPC server spans, want 2", len(server))
	}
	want := []map[string]string{
		{"a2a.method.name": "SendMessage", "openwop.negotiation.rule": "accept", "openwop.negotiation.negotiated": "1.0"},
		{"a2a.method.name": "SendMessage", "error.type": "interop_version_unsupported"},
	}
	for k, sp := range server {
		attrs := attributes(sp.Attributes())
		for key, v := range want[k] {
			if attrs[key] != v {
				t.Errorf("span %d (%s): %s = %q, want %q; all: %v", k, sp.Name(), key, attrs[key], v, attrs)
			}
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	counted := int64(0)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok {
				for _, dp := range sum.DataPoints {
					counted += dp.Value
				}
			}
		}
	}
	if counted != 2 {
		t.Errorf("%d decisions counted, want 2", counted)
	}
}

func attributes(kvs []attribute.KeyValue) map[string]string {
	out := map[string]string{}
	for _, kv := range kvs {
		out[string(kv.Key)] = kv.Value.String()
	}
	return out
}
