package events_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/wopneg/wopneg/events"
)

func BenchmarkEventValidate(b *testing.B) {
	e := sinkRun(sinkRunID(1), sinkAccepted())
	b.ReportAllocs()
	for b.Loop() {
		if err := e.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEventValidatePayload is the payload's share of
// BenchmarkEventValidate, which every sink pays on Emit.
func BenchmarkEventValidatePayload(b *testing.B) {
	p := sinkAccepted()
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}

// keepUp is a store that always keeps up: it takes whole batches and
// records nothing, so that a benchmark of the Async measures Emit rather
// than the store behind it.
type keepUp struct{}

func (keepUp) Emit(context.Context, events.Event) error        { return nil }
func (keepUp) EmitBatch(context.Context, []events.Event) error { return nil }

// BenchmarkAsyncEmit is the request path of the asynchronous sink: validate
// and queue, with a store that keeps up and room in the buffer.
func BenchmarkAsyncEmit(b *testing.B) { benchmarkAsyncEmit(b, keepUp{}) }

// BenchmarkAsyncEmitPerEvent is BenchmarkAsyncEmit in front of a sink
// that records one event per Emit call and does nothing else. Emitting
// without pause, the request path outpaces the recording goroutine, which
// copies each event into a call of its own, so this measures that
// goroutine's pace as much as Emit's.
func BenchmarkAsyncEmitPerEvent(b *testing.B) {
	benchmarkAsyncEmit(b, events.SinkFunc(func(context.Context, events.Event) error { return nil }))
}

func benchmarkAsyncEmit(b *testing.B, sink events.Sink) {
	a := events.NewAsync(sink, events.AsyncOptions{})
	defer a.Close()
	e := sinkRun(sinkRunID(1), sinkAccepted())
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := a.Emit(ctx, e); err != nil && err != events.ErrDropped {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	s := a.Stats()
	b.ReportMetric(float64(s.Dropped)/float64(s.Emitted), "dropped/op")
}

// BenchmarkAsyncEmitParallel is BenchmarkAsyncEmit from every P at once.
func BenchmarkAsyncEmitParallel(b *testing.B) {
	a := events.NewAsync(keepUp{}, events.AsyncOptions{})
	defer a.Close()
	e := sinkRun(sinkRunID(1), sinkAccepted())
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := a.Emit(ctx, e); err != nil && err != events.ErrDropped {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkJSONLinesEmit(b *testing.B) {
	j := events.NewJSONLines(io.Discard)
	e := withSeq(sinkRun(sinkRunID(1), sinkAccepted()), 41)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := j.Emit(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshalJSON(b *testing.B) {
	e := withSeq(sinkRun(sinkRunID(1), sinkAccepted()), 41)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.MarshalJSON(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSlogSink and BenchmarkSlogJSONHandlerBare write the same record
// through the same slog.JSONHandler: the difference is the sink's cost
// (validation, the enabled check, panic recovery, building the record).
func BenchmarkSlogSink(b *testing.B) {
	s := events.NewSlogSink(slog.NewJSONHandler(io.Discard, nil), nil)
	e := withSeq(sinkRun(sinkRunID(1), sinkAccepted()), 41)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Emit(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSlogJSONHandlerBare(b *testing.B) {
	h := slog.NewJSONHandler(io.Discard, nil)
	e := withSeq(sinkRun(sinkRunID(1), sinkAccepted()), 41)
	p := e.Payload
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		r := slog.NewRecord(e.Time, slog.LevelInfo, "negotiation.decided", 0)
		r.AddAttrs(
			slog.String("eventId", e.ID),
			slog.String("runId", e.RunID),
			slog.Int64("sequence", 41),
			slog.Int("schemaVersion", e.SchemaVersion),
			slog.String("protocol", string(p.Protocol)),
			slog.String("outcome", string(p.Outcome)),
			slog.String("version", p.Version),
			slog.String("requested", p.Requested),
			slog.String("reason", string(p.Reason)),
			slog.String("floor", p.Floor),
			slog.String("peerDigest", p.PeerDigest),
			slog.Time("at", p.At),
		)
		if err := h.Handle(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
}
