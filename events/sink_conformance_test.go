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

	"go.uber.org/goleak"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
)

// Every shipped sink runs the conformance kit, in the arrangement a host
// would use it: stores that cannot number events behind a Sequencer.

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

func (b *sinkBuffer) lines() [][]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b.b.Bytes()))
	for sc.Scan() {
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	return out
}

// parseJSONLines reads back what a JSONLines sink wrote, strictly.
func parseJSONLines(t *testing.T, buf *sinkBuffer) []events.Event {
	t.Helper()
	var out []events.Event
	for i, line := range buf.lines() {
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
		return events.NewSequencer(events.NewJSONLines(sinkFailingWriter{err: fault})), nil
	}
	var buf sinkBuffer
	return events.NewSequencer(events.NewJSONLines(&buf)), func() []events.Event { return parseJSONLines(t, &buf) }
}

// parseSlogJSON turns what a SlogSink wrote through a slog.JSONHandler back
// into events, checking the record's shape on the way.
func parseSlogJSON(t *testing.T, buf *sinkBuffer) []events.Event {
	t.Helper()
	var out []events.Event
	for i, line := range buf.lines() {
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
		e := events.Event{
			ID: str("eventId"), Type: str("msg"), Time: tm("time"),
			RunID: str("runId"), NodeID: str("nodeId"), CausationID: str("causationId"),
			Delivery: events.Delivery(str("delivery")), WorkspaceID: str("workspaceId"),
			Payload: events.NegotiationDecided{
				Protocol: facets.Protocol(str("protocol")), Outcome: events.Outcome(str("outcome")),
				Version: str("version"), Requested: str("requested"), Reason: events.Reason(str("reason")),
				Floor: str("floor"), PeerDigest: str("peerDigest"), At: tm("at"),
			},
		}
		if n, ok := num("schemaVersion"); ok {
			e.SchemaVersion = int(n)
		}
		if n, ok := num("sequence"); ok {
			e = e.WithSequence(n)
		}
		if n, ok := num("engineVersion"); ok {
			e = e.WithEngineVersion(n)
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
		return events.NewSequencer(events.NewSlogSink(faultHandler{slog.NewJSONHandler(io.Discard, nil), fault}, nil)), nil
	}
	var buf sinkBuffer
	return events.NewSequencer(events.NewSlogSink(slog.NewJSONHandler(&buf, nil), nil)), func() []events.Event { return parseSlogJSON(t, &buf) }
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
	defer goleak.VerifyNone(t)
	for _, opts := range []events.AsyncOptions{
		{},
		{Buffer: 4, Overflow: events.Block, MaxWait: time.Minute},
		{Buffer: 16, Overflow: events.Drop},
	} {
		t.Run(fmt.Sprintf("buffer=%d,overflow=%d", opts.Buffer, opts.Overflow), func(t *testing.T) {
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
