package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"

	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	wopnegotel "github.com/wopneg/wopneg/otel"
)

// telemetry is the host's OpenTelemetry (-otel-stdout): wopneg's
// Telemetry over SDK providers that export to a writer, each span as it
// ends and the decision counter when the host stops.
type telemetry struct {
	*wopnegotel.Telemetry
	tp     *sdktrace.TracerProvider
	mp     *sdkmetric.MeterProvider
	tracer trace.Tracer
}

// lockedWriter serializes writes to w: with -otel-stdout the exporters
// write spans from the goroutines that serve requests, beside the JSON
// lines of the events, and a line must not land inside another.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// newTelemetry exports spans and metrics to w, as JSON, with the stdout
// exporters of the OpenTelemetry SDK. Every other writer of w must write
// through the same lock: run hands all of them one lockedWriter.
func newTelemetry(w io.Writer) (*telemetry, error) {
	spans, err := stdouttrace.New(stdouttrace.WithWriter(w))
	if err != nil {
		return nil, err
	}
	metrics, err := stdoutmetric.New(stdoutmetric.WithWriter(w))
	if err != nil {
		return nil, err
	}
	t := &telemetry{
		tp: sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans)),
		// The periodic reader exports every minute, and once more at
		// shutdown, so a short run prints its counter too.
		mp: sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metrics))),
	}
	t.tracer = t.tp.Tracer("github.com/wopneg/wopneg/examples/host")
	if t.Telemetry, err = wopnegotel.New(wopnegotel.Options{TracerProvider: t.tp, MeterProvider: t.mp}); err != nil {
		return nil, errors.Join(err, t.shutdown(context.Background()))
	}
	return t, nil
}

// serve starts a server span for each request, named as the HTTP
// convention names one without a route ("POST"), as otelhttp.NewHandler
// would: the negotiation's attributes land on it.
func (t *telemetry) serve(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, span := t.tracer.Start(r.Context(), r.Method, trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// shutdown exports what is left, the decision counter included.
func (t *telemetry) shutdown(ctx context.Context) error {
	return errors.Join(t.tp.Shutdown(ctx), t.mp.Shutdown(ctx))
}
