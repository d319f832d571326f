package events_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"

	slogmulti "github.com/samber/slog-multi"

	"github.com/wopneg/wopneg/events"
)

var sinkCtx = context.Background()

func TestZeroSinksRefuse(t *testing.T) {
	e := sinkHost("", sinkAccepted())
	for name, s := range map[string]events.Sink{
		"empty Fanout":     events.NewFanout(),
		"zero JSONLines":   &events.JSONLines{},
		"nil *JSONLines":   (*events.JSONLines)(nil),
		"NewSlogSink(nil)": events.NewSlogSink(nil, nil),
		"zero Async":       &events.Async{},
		"nil *Async":       (*events.Async)(nil),
		"NewAsync(nil)":    events.NewAsync(nil, events.AsyncOptions{}),
	} {
		if err := s.Emit(sinkCtx, e); err == nil || !errors.Is(err, events.ErrClosed) {
			t.Errorf("%s: Emit = %v, want ErrClosed", name, err)
		}
		if c, ok := s.(io.Closer); ok {
			if err := c.Close(); err != nil {
				t.Errorf("%s: Close = %v", name, err)
			}
		}
	}
	(*events.JSONLines)(nil).Forget("acme/0123456789abcdef") // must not panic
	(&events.JSONLines{}).Forget("acme/0123456789abcdef")
	if err := (&events.Async{}).Close(); err != nil {
		t.Errorf("zero Async: Close = %v", err)
	}
}

func TestFanoutReportsEveryFailure(t *testing.T) {
	errA, errB := errors.New("store A down"), errors.New("store B down")
	ok := &sinkMemory{}
	f := events.NewFanout(&sinkMemory{err: errA}, ok, &sinkMemory{err: errB})
	err := f.Emit(sinkCtx, sinkHost("", sinkAccepted()))
	if !errors.Is(err, errA) || !errors.Is(err, errB) {
		t.Errorf("Emit = %v, want both failures", err)
	}
	for _, want := range []string{"sink 0", "sink 2"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Emit = %v, does not name %s", err, want)
		}
	}
	if len(ok.all()) != 1 {
		t.Errorf("the healthy sink recorded %d events, want 1: a failure must not stop the others", len(ok.all()))
	}
}

func TestFanoutTurnsPanicsAndNilsIntoErrors(t *testing.T) {
	ok := &sinkMemory{}
	boom := events.SinkFunc(func(context.Context, events.Event) error { panic("boom") })
	f := events.NewFanout(boom, nil, ok)
	err := f.Emit(sinkCtx, sinkHost("", sinkAccepted()))
	var pe *events.PanicError
	if !errors.As(err, &pe) || pe.Value != "boom" || len(pe.Stack) == 0 {
		t.Errorf("Emit = %v, want a PanicError with its stack", err)
	}
	if !errors.Is(err, events.ErrClosed) {
		t.Errorf("Emit = %v, want ErrClosed for the nil sink", err)
	}
	if len(ok.all()) != 1 {
		t.Error("the healthy sink did not record the event")
	}
}

func TestFanoutValidatesOnce(t *testing.T) {
	calls := 0
	f := events.NewFanout(events.SinkFunc(func(context.Context, events.Event) error { calls++; return nil }))
	if err := f.Emit(sinkCtx, events.Event{}); !errors.As(err, new(*events.FieldError)) {
		t.Errorf("Emit(zero Event) = %v, want a *FieldError", err)
	}
	if calls != 0 {
		t.Errorf("an invalid event reached %d sinks", calls)
	}
}

// sinkCloser is a sink that counts its Close calls.
type sinkCloser struct {
	sinkMemory
	closed int
	err    error
}

func (c *sinkCloser) Close() error { c.closed++; return c.err }

func TestFanoutOwnsItsSinks(t *testing.T) {
	errClose := errors.New("flush failed")
	a, b := &sinkCloser{}, &sinkCloser{err: errClose}
	f := events.NewFanout(a, &sinkMemory{}, b).(io.Closer)
	if err := f.Close(); !errors.Is(err, errClose) {
		t.Errorf("Close = %v, want the member's error", err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if a.closed != 1 || b.closed != 1 {
		t.Errorf("members closed %d and %d times, want once each", a.closed, b.closed)
	}
	if err := f.(events.Sink).Emit(sinkCtx, sinkHost("", sinkAccepted())); !errors.Is(err, events.ErrClosed) {
		t.Errorf("Emit after Close = %v, want ErrClosed", err)
	}
}

// switchWriter fails every write with err while err is set.
type switchWriter struct {
	bytes.Buffer
	err error
}

func (w *switchWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	return w.Buffer.Write(p)
}

// jsonLinesSequences decodes the lines w holds and lists each run event as
// "<last digit of its run>:<sequence>", and a host event as "h".
func jsonLinesSequences(t *testing.T, w interface{ Bytes() []byte }) string {
	t.Helper()
	var got []string
	for _, e := range parseJSONLines(t, w) {
		if e.RunID == "" {
			got = append(got, "h")
			continue
		}
		got = append(got, e.RunID[len(e.RunID)-1:]+":"+strconv.FormatInt(e.Sequence, 10))
	}
	return strings.Join(got, " ")
}

func TestJSONLinesNumbersEachRun(t *testing.T) {
	var buf bytes.Buffer
	j := events.NewJSONLines(&buf)
	a, b := sinkRunID(1), sinkRunID(2)
	for _, run := range []string{a, b, a, "", a, b} {
		e := sinkHost("", sinkAccepted())
		if run != "" {
			// A sequence the caller set is the store's to replace.
			e = withSeq(sinkRun(run, sinkAccepted()), 99)
		}
		if err := j.Emit(sinkCtx, e); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := jsonLinesSequences(t, &buf), "1:0 2:0 1:1 h 1:2 2:1"; got != want {
		t.Errorf("sequences %s, want %s", got, want)
	}
}

// A failed write consumes no number: the next event takes it, so the
// store's numbering has no gap.
func TestJSONLinesFailureLeavesNoGap(t *testing.T) {
	w := &switchWriter{}
	j := events.NewJSONLines(w)
	run := sinkRunID(1)
	if err := j.Emit(sinkCtx, sinkRun(run, sinkAccepted())); err != nil {
		t.Fatal(err)
	}
	down := errors.New("disk full")
	w.err = down
	if err := j.Emit(sinkCtx, sinkRun(run, sinkAccepted())); !errors.Is(err, down) {
		t.Fatalf("Emit = %v, want the writer's error", err)
	}
	w.err = nil
	if err := j.Emit(sinkCtx, sinkRun(run, sinkAccepted())); err != nil {
		t.Fatal(err)
	}
	if got, want := jsonLinesSequences(t, w), "1:0 1:1"; got != want {
		t.Errorf("sequences %s, want %s", got, want)
	}
}

func TestJSONLinesForget(t *testing.T) {
	var buf bytes.Buffer
	j := events.NewJSONLines(&buf)
	run, other := sinkRunID(1), sinkRunID(2)
	for _, r := range []string{run, run, other} {
		if err := j.Emit(sinkCtx, sinkRun(r, sinkAccepted())); err != nil {
			t.Fatal(err)
		}
	}
	j.Forget(run)
	for _, r := range []string{run, other} {
		if err := j.Emit(sinkCtx, sinkRun(r, sinkAccepted())); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := jsonLinesSequences(t, &buf), "1:0 1:1 2:0 1:0 2:1"; got != want {
		t.Errorf("sequences %s, want %s: after Forget the run restarts at 0, and only that run", got, want)
	}
}

func TestJSONLinesWritesOneLinePerEvent(t *testing.T) {
	var buf bytes.Buffer
	j := events.NewJSONLines(&buf)
	e := sinkRun(sinkRunID(1), sinkAccepted())
	h := sinkHost("", sinkRefused())
	for _, ev := range []events.Event{e, h} {
		if err := j.Emit(sinkCtx, ev); err != nil {
			t.Fatal(err)
		}
	}
	wantRun, _ := json.Marshal(withSeq(e, 0))
	wantHost, _ := json.Marshal(h)
	if want := string(wantRun) + "\n" + string(wantHost) + "\n"; buf.String() != want {
		t.Errorf("wrote\n%s\nwant\n%s", buf.String(), want)
	}
}

func TestJSONLinesRefusesBeforeWriting(t *testing.T) {
	var buf bytes.Buffer
	j := events.NewJSONLines(&buf)
	bad := sinkHost("", sinkAccepted())
	bad.Payload.PeerDigest = "SHA256:abc"
	var fe *events.FieldError
	if err := j.Emit(sinkCtx, bad); !errors.As(err, &fe) || fe.Field != "payload.peerDigest" {
		t.Errorf("Emit(bad digest) = %v, want a *FieldError for payload.peerDigest", err)
	}
	badRun := sinkRun(sinkRunID(1), sinkAccepted())
	badRun.SchemaVersion = 0
	if err := j.Emit(sinkCtx, badRun); !errors.As(err, &fe) || fe.Field != "schemaVersion" {
		t.Errorf("Emit(bad run event) = %v, want a *FieldError for schemaVersion", err)
	}
	if buf.Len() != 0 {
		t.Errorf("wrote %q for refused events", buf.String())
	}
}

func TestJSONLinesReturnsWriterErrors(t *testing.T) {
	down := errors.New("EIO")
	e := sinkHost("", sinkAccepted())
	if err := events.NewJSONLines(sinkFailingWriter{err: down}).Emit(sinkCtx, e); !errors.Is(err, down) {
		t.Errorf("Emit = %v, want the writer's error", err)
	}
	if err := events.NewJSONLines(sinkFailingWriter{n: 10}).Emit(sinkCtx, e); !errors.Is(err, io.ErrShortWrite) {
		t.Errorf("Emit with a short write = %v, want io.ErrShortWrite", err)
	}
}

// tearingWriter fails its first write half-way, then writes normally.
type tearingWriter struct {
	bytes.Buffer
	torn bool
}

func (w *tearingWriter) Write(p []byte) (int, error) {
	if !w.torn {
		w.torn = true
		n, _ := w.Buffer.Write(p[:len(p)/2])
		return n, errors.New("connection reset")
	}
	return w.Buffer.Write(p)
}

// After a write that failed part-way, the next event still gets a line of
// its own that parses.
func TestJSONLinesRepairsATornLine(t *testing.T) {
	w := &tearingWriter{}
	j := events.NewJSONLines(w)
	if err := j.Emit(sinkCtx, sinkHost("", sinkAccepted())); err == nil {
		t.Fatal("the torn write was not reported")
	}
	next := sinkHost("", sinkRefused())
	if err := j.Emit(sinkCtx, next); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("wrote %d lines, want the fragment and the next event:\n%s", len(lines), w.String())
	}
	var back events.Event
	if err := json.Unmarshal([]byte(lines[1]), &back); err != nil || back.ID != next.ID {
		t.Errorf("the line after the fragment does not parse as the next event: %v\n%s", err, lines[1])
	}
}

func TestJSONLinesIsSafeForConcurrentUse(t *testing.T) {
	var buf sinkBuffer
	j := events.NewJSONLines(&buf)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if err := j.Emit(sinkCtx, sinkHost("", sinkAccepted())); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if got := parseJSONLines(t, &buf); len(got) != 800 {
		t.Errorf("%d lines parsed, want 800", len(got))
	}
}

func TestSlogSinkRecord(t *testing.T) {
	var buf bytes.Buffer
	s := events.NewSlogSink(slog.NewJSONHandler(&buf, nil), nil)
	run := withEngine(withSeq(sinkRun(sinkRunID(1), sinkAccepted()), 2), 5)
	run.ID = "evt-0123456789abcdef"
	run.NodeID, run.CausationID = "node", "cause-0123456789ab"
	host := sinkHost("ws", sinkRefused())
	host.ID = "evt-fedcba9876543210"
	unsequenced := sinkRun(sinkRunID(2), sinkRefused())
	unsequenced.ID = "evt-0000000000000000"
	for _, e := range []events.Event{run, host, unsequenced} {
		if err := s.Emit(sinkCtx, e); err != nil {
			t.Fatal(err)
		}
	}
	want := `{"time":"2026-11-29T12:00:00.123Z","level":"INFO","msg":"negotiation.decided","eventId":"evt-0123456789abcdef","runId":"acme/run-0000000000000001","sequence":2,"schemaVersion":1,"nodeId":"node","engineVersion":5,"causationId":"cause-0123456789ab","protocol":"a2a","outcome":"accepted","version":"1.1","requested":"1.2","reason":"ok","floor":"1.1","peerDigest":"` + sinkPeerDigest + `","at":"2026-11-29T12:00:00.123Z"}
{"time":"2026-11-29T12:00:00.123Z","level":"INFO","msg":"negotiation.decided","eventId":"evt-fedcba9876543210","delivery":"durable","workspaceId":"ws","protocol":"mcp","outcome":"refused","requested":"2025-06-18","reason":"below-floor","floor":"2025-11-25","at":"2026-11-29T12:00:00.123Z"}
{"time":"2026-11-29T12:00:00.123Z","level":"INFO","msg":"negotiation.decided","eventId":"evt-0000000000000000","runId":"acme/run-0000000000000002","schemaVersion":1,"protocol":"mcp","outcome":"refused","requested":"2025-06-18","reason":"below-floor","floor":"2025-11-25","at":"2026-11-29T12:00:00.123Z"}
`
	if buf.String() != want {
		t.Errorf("records\n%s\nwant\n%s", buf.String(), want)
	}
}

// panicHandler is a slog.Handler whose Handle panics.
type panicHandler struct{ slog.Handler }

func (panicHandler) Handle(context.Context, slog.Record) error { panic("handler bug") }

func TestSlogSinkTurnsAPanicIntoAnError(t *testing.T) {
	s := events.NewSlogSink(panicHandler{slog.NewJSONHandler(io.Discard, nil)}, nil)
	var pe *events.PanicError
	if err := s.Emit(sinkCtx, sinkHost("", sinkAccepted())); !errors.As(err, &pe) || pe.Value != "handler bug" {
		t.Errorf("Emit = %v, want a PanicError", err)
	}
}

func TestSlogSinkRefusesWhatItWouldNotWrite(t *testing.T) {
	var buf bytes.Buffer
	h := slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})
	if err := events.NewSlogSink(h, nil).Emit(sinkCtx, sinkHost("", sinkAccepted())); err == nil || !strings.Contains(err.Error(), "not enabled") {
		t.Errorf("Emit below the handler's level = %v, want an error: a skipped audit record is a lost one", err)
	}
	if err := events.NewSlogSink(h, slog.LevelWarn).Emit(sinkCtx, sinkHost("", sinkAccepted())); err != nil {
		t.Errorf("Emit at the handler's level: %v", err)
	}
	if !strings.Contains(buf.String(), `"level":"WARN"`) {
		t.Errorf("the record was not written at WARN: %s", buf.String())
	}
	if err := events.NewSlogSink(h, nil).Emit(sinkCtx, events.Event{}); !errors.As(err, new(*events.FieldError)) {
		t.Errorf("Emit(zero Event) = %v, want a *FieldError", err)
	}
}

// Through slog-multi: refusals go to the security log and everything to
// the audit log; a failing primary fails over; a failing member of a
// fan-out is reported.
func TestSlogSinkWithSlogMulti(t *testing.T) {
	var security, audit bytes.Buffer
	routed := events.NewSlogSink(slogmulti.Router().
		Add(slog.NewJSONHandler(&security, nil), slogmulti.AttrValueIs("outcome", "refused")).
		Add(slog.NewJSONHandler(&audit, nil)).
		Handler(), nil)
	acc, ref := sinkHost("", sinkAccepted()), sinkHost("", sinkRefused())
	for _, e := range []events.Event{acc, ref} {
		if err := routed.Emit(sinkCtx, e); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Count(audit.String(), "\n") != 2 || strings.Count(security.String(), "\n") != 1 || !strings.Contains(security.String(), ref.ID) {
		t.Errorf("audit log\n%s\nsecurity log\n%s\nwant both events in the audit log and the refusal alone in the security log", audit.String(), security.String())
	}

	down := errors.New("collector unreachable")
	var backup bytes.Buffer
	failover := events.NewSlogSink(slogmulti.Failover()(faultHandler{slog.NewJSONHandler(io.Discard, nil), down}, slog.NewJSONHandler(&backup, nil)), nil)
	if err := failover.Emit(sinkCtx, acc); err != nil {
		t.Errorf("Failover: %v", err)
	}
	if !strings.Contains(backup.String(), acc.ID) {
		t.Error("Failover: the backup did not get the event")
	}

	fanout := events.NewSlogSink(slogmulti.Fanout(slog.NewJSONHandler(io.Discard, nil), panicHandler{slog.NewJSONHandler(io.Discard, nil)}), nil)
	if err := fanout.Emit(sinkCtx, acc); err == nil || !strings.Contains(err.Error(), "handler bug") {
		t.Errorf("Fanout with a panicking member: Emit = %v, want its panic as an error", err)
	}

	var recovered []error
	recovering := events.NewSlogSink(slogmulti.RecoverHandlerError(func(_ context.Context, _ slog.Record, err error) {
		recovered = append(recovered, err)
	})(faultHandler{slog.NewJSONHandler(io.Discard, nil), down}), nil)
	if err := recovering.Emit(sinkCtx, acc); !errors.Is(err, down) || len(recovered) != 1 {
		t.Errorf("RecoverHandlerError: Emit = %v with %d recoveries, want the handler's error returned and seen once", err, len(recovered))
	}
}
