package events_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
)

// Every shipped sink runs the conformance kit, in the arrangement a host
// would use it: a log that numbers nothing behind a store's numbering.

// sinkBuffer is a bytes.Buffer safe for the kit's concurrent emits and
// its reads after Close.
type sinkBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *sinkBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// Bytes returns a copy of what was written.
func (b *sinkBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.b.Bytes())
}

// lines splits what buf holds into lines.
func lines(buf interface{ Bytes() []byte }) [][]byte {
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(buf.Bytes()))
	for sc.Scan() {
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	return out
}

// parseJSONLines reads back what a JSONLines sink wrote, strictly.
func parseJSONLines(t *testing.T, buf interface{ Bytes() []byte }) []events.Event {
	t.Helper()
	var out []events.Event
	for i, line := range lines(buf) {
		var e events.Event
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("line %d does not decode as an event: %v\n%s", i+1, err, line)
		}
		out = append(out, e)
	}
	return out
}

func newJSONLinesSink(t *testing.T, fault error) (events.Sink, func() []events.Event) {
	if fault != nil {
		return events.NewJSONLines(sinkFailingWriter{err: fault}), nil
	}
	var buf sinkBuffer
	return events.NewJSONLines(&buf), func() []events.Event { return parseJSONLines(t, &buf) }
}

// parseSlogJSON turns what a SlogSink wrote through a slog.JSONHandler back
// into events, checking the record's shape on the way.
func parseSlogJSON(t *testing.T, buf *sinkBuffer) []events.Event {
	t.Helper()
	var out []events.Event
	for i, line := range lines(buf) {
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("record %d is not JSON: %v", i+1, err)
		}
		str := func(k string) string { s, _ := m[k].(string); return s }
		num := func(k string) (int64, bool) {
			n, ok := m[k].(json.Number)
			if !ok {
				return 0, false
			}
			v, err := n.Int64()
			return v, err == nil
		}
		tm := func(k string) time.Time {
			v, err := time.Parse(time.RFC3339Nano, str(k))
			if err != nil {
				t.Fatalf("record %d: %s %q: %v", i+1, k, str(k), err)
			}
			return v
		}
		if str("level") != "INFO" {
			t.Errorf("record %d: level %q, want INFO", i+1, str("level"))
		}
		if str("msg") != "negotiation.decided" || str("runId") == "" && str("delivery") != "durable" {
			t.Errorf("record %d: message %q, delivery %q", i+1, str("msg"), str("delivery"))
		}
		e := events.Event{
			ID: str("eventId"), Time: tm("time"),
			RunID: str("runId"), NodeID: str("nodeId"), CausationID: str("causationId"),
			WorkspaceID: str("workspaceId"),
			Payload: events.NegotiationDecided{
				Protocol: facets.Protocol(str("protocol")), Outcome: string(str("outcome")),
				Version: str("version"), Requested: str("requested"), Reason: string(str("reason")),
				Floor: str("floor"), PeerDigest: str("peerDigest"), At: tm("at"),
			},
		}
		if n, ok := num("schemaVersion"); ok {
			e.SchemaVersion = int(n)
		}
		if n, ok := num("sequence"); ok {
			e = withSeq(e, n)
		}
		if n, ok := num("engineVersion"); ok {
			e = withEngine(e, n)
		}
		out = append(out, e)
	}
	return out
}

// faultHandler is a slog.Handler whose Handle fails with err.
type faultHandler struct {
	slog.Handler
	err error
}

func (h faultHandler) Handle(context.Context, slog.Record) error { return h.err }

func newSlogSink(t *testing.T, fault error) (events.Sink, func() []events.Event) {
	if fault != nil {
		return numbering(events.NewSlogSink(faultHandler{slog.NewJSONHandler(io.Discard, nil), fault}, nil)), nil
	}
	var buf sinkBuffer
	return numbering(events.NewSlogSink(slog.NewJSONHandler(&buf, nil), nil)), func() []events.Event { return parseSlogJSON(t, &buf) }
}

// numbering is the store's numbering in front of a log that numbers
// nothing: each run event gets its run's next sequence, consumed only when
// next recorded it.
func numbering(next events.Sink) events.Sink {
	var mu sync.Mutex
	seq := map[string]int64{}
	return events.SinkFunc(func(ctx context.Context, e events.Event) error {
		mu.Lock()
		defer mu.Unlock()
		if e.RunID != "" {
			e.Sequence, e.HasSequence = seq[e.RunID], true
		}
		if err := next.Emit(ctx, e); err != nil {
			return err
		}
		if e.RunID != "" {
			seq[e.RunID]++
		}
		return nil
	})
}

func TestSinkConformanceJSONLines(t *testing.T) {
	negotiatetest.TestSink(t, newJSONLinesSink)
}

func TestSinkConformanceSlog(t *testing.T) {
	negotiatetest.TestSink(t, newSlogSink)
}

func TestSinkConformanceRecorder(t *testing.T) {
	negotiatetest.TestSink(t, func(t *testing.T, fault error) (events.Sink, func() []events.Event) {
		r := &negotiatetest.Recorder{}
		if fault != nil {
			r.Fail(fault)
		}
		return r, r.Events
	})
}

// The fan-out's recorded events are its JSON-lines store's; the recorder
// beside it must have seen the same ones.
func TestSinkConformanceFanout(t *testing.T) {
	negotiatetest.TestSink(t, func(t *testing.T, fault error) (events.Sink, func() []events.Event) {
		jsonl, recorded := newJSONLinesSink(t, fault)
		r := &negotiatetest.Recorder{}
		f := events.NewFanout(jsonl, r)
		if fault != nil {
			return f, nil
		}
		return f, func() []events.Event {
			got := recorded()
			if len(got) != len(r.Events()) {
				t.Errorf("fan-out: the JSON-lines store has %d events, the recorder beside it %d", len(got), len(r.Events()))
			}
			return got
		}
	})
}

func TestSinkConformanceAsync(t *testing.T) {
	defer events.VerifyNoLeak(t)
	for _, opts := range []events.AsyncOptions{
		{},
		{Buffer: 4, MaxWait: time.Minute},
		{Buffer: 16, Drop: true},
	} {
		t.Run(fmt.Sprintf("buffer=%d,drop=%t", opts.Buffer, opts.Drop), func(t *testing.T) {
			negotiatetest.TestSink(t, func(t *testing.T, fault error) (events.Sink, func() []events.Event) {
				store, recorded := newJSONLinesSink(t, fault)
				a := events.NewAsync(store, opts)
				// Checks that fail before closing must not leak the goroutine.
				t.Cleanup(func() { _ = a.Close() })
				return a, recorded
			})
		})
	}
}
