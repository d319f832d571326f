package negotiatetest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
)

// NewSinkFunc makes a fresh sink for one check of [TestSink], and a
// function that returns every event the sink has recorded, in any order,
// with the sequence its store assigned. TestSink closes the sink first when
// it is an io.Closer, so a buffering sink has flushed.
//
// When fault is not nil, the sink's storage must fail with it (a writer,
// handler or connection that returns it), so that the kit can check the
// failure reaches the caller; return a nil Sink when the sink cannot be
// made to fail that way, and the fault check is skipped.
type NewSinkFunc func(t *testing.T, fault error) (sink events.Sink, recorded func() []events.Event)

// TestSink checks that the sinks newSink makes keep the [events.Sink]
// contract, as testing/slogtest checks a slog.Handler: run it from a test
// of any custom sink. Each check is a subtest with a sink of its own:
//
//   - RunAndHostEvents: a run event and a host event are recorded field
//     for field, the run event as its run's sequence 0, the host event with
//     no sequence;
//   - SequencePerRun: events of runs emitted interleaved from one
//     goroutine are numbered 0, 1, 2, … per run, in the order emitted;
//   - Concurrent: eight goroutines emitting at once, each on a run of its
//     own and all on a shared one, with host events among them: every
//     event Emit accepted is recorded exactly once, each run is numbered
//     with no gap and no repeat, and each goroutine's own run keeps its
//     order; an Emit may fail only with [events.ErrDropped], and then the
//     event is not recorded;
//   - Invalid: an event that fails [events.Event.Validate] is refused with
//     an error holding an [*events.FieldError] naming the field, and
//     nothing is recorded;
//   - CanceledContext: an Emit whose context is done returns an error
//     matching ctx.Err() and records nothing;
//   - Close (io.Closer only): Close returns nil after recording everything
//     accepted, and Emit afterwards returns an error;
//   - Fault: a storage failure reaches the caller, from Emit or, for a
//     buffering sink, from Close: it is never swallowed.
func TestSink(t *testing.T, newSink NewSinkFunc) {
	t.Helper()
	checks := []struct {
		name string
		run  func(*testing.T, NewSinkFunc)
	}{
		{"RunAndHostEvents", checkRunAndHostEvents},
		{"SequencePerRun", checkSequencePerRun},
		{"Concurrent", checkConcurrent},
		{"Invalid", checkInvalid},
		{"CanceledContext", checkCanceled},
		{"Close", checkClose},
		{"Fault", checkFault},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) { c.run(t, newSink) })
	}
}

// kitAt is the decision time of the kit's events: whole milliseconds, which
// every store keeps exactly.
var kitAt = time.Date(2026, 11, 29, 12, 0, 0, 250_000_000, time.UTC)

func kitAccepted() events.NegotiationDecided {
	return events.NegotiationDecided{
		Protocol: facets.ProtocolA2A, Outcome: "accepted", Version: "1.1", Requested: "1.2",
		Reason: events.ReasonOK, Floor: "1.1",
		PeerDigest: "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0", At: kitAt,
	}
}

func kitRefused() events.NegotiationDecided {
	return events.NegotiationDecided{
		Protocol: facets.ProtocolMCP, Outcome: "refused", Requested: "2025-06-18",
		Reason: events.ReasonBelowFloor, Floor: "2025-11-25", At: kitAt,
	}
}

// kitRuns returns n run ids no other check (or earlier run of the kit
// against a shared store) uses.
func kitRuns(n int) []string {
	tenant := "kit-" + strings.ToLower(rand.Text()[:8])
	runs := make([]string, n)
	for i := range runs {
		runs[i] = fmt.Sprintf("%s/run-%s-%02d", tenant, rand.Text()[:12], i)
	}
	return runs
}

func kitRun(t *testing.T, runID string, p events.NegotiationDecided) events.Event {
	t.Helper()
	e, err := events.NewRunEvent(runID, p)
	return kitMust(t, e, err)
}

func kitHost(t *testing.T, workspace string, p events.NegotiationDecided) events.Event {
	t.Helper()
	e, err := events.NewHostEvent(workspace, p)
	return kitMust(t, e, err)
}

// kitMust returns e, or fails the test when building it failed: the
// kit's own events are valid.
func kitMust(t *testing.T, e events.Event, err error) events.Event {
	t.Helper()
	if err != nil {
		t.Fatalf("negotiatetest: building an event: %v", err)
	}
	return e
}

// makeSink calls newSink for a working sink and fails the test when it
// gives none.
func makeSink(t *testing.T, newSink NewSinkFunc) (events.Sink, func() []events.Event) {
	t.Helper()
	sink, recorded := newSink(t, nil)
	if sink == nil || recorded == nil {
		t.Fatal("negotiatetest: newSink(t, nil) returned no sink or no recorded func")
	}
	return sink, recorded
}

// closeAndRead closes sink when it is an io.Closer, failing the test on an
// error, and returns what it recorded, by event id.
func closeAndRead(t *testing.T, sink events.Sink, recorded func() []events.Event) map[string]events.Event {
	t.Helper()
	if c, ok := sink.(io.Closer); ok {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	byID := make(map[string]events.Event)
	for _, e := range recorded() {
		if _, dup := byID[e.ID]; dup {
			t.Errorf("event %s was recorded more than once", e.ID)
		}
		byID[e.ID] = e
	}
	return byID
}

func checkRunAndHostEvents(t *testing.T, newSink NewSinkFunc) {
	sink, recorded := makeSink(t, newSink)
	runs := kitRuns(1)
	run := kitRun(t, runs[0], kitAccepted())
	run.NodeID = "node-7"
	run.CausationID = rand.Text()
	run.EngineVersion, run.HasEngineVersion = 3, true
	host := kitHost(t, "workspace-1", kitRefused())
	ctx := context.Background()
	for _, e := range []events.Event{run, host} {
		if err := sink.Emit(ctx, e); err != nil {
			t.Fatalf("Emit(%s event): %v", kind(e), err)
		}
	}
	got := closeAndRead(t, sink, recorded)
	if len(got) != 2 {
		t.Errorf("recorded %d events, want 2", len(got))
	}
	for _, want := range []events.Event{run, host} {
		e, ok := got[want.ID]
		if !ok {
			t.Errorf("the %s event %s was not recorded", kind(want), want.ID)
			continue
		}
		for _, d := range diffEvent(want, e) {
			t.Errorf("%s event: %s", kind(want), d)
		}
	}
	if e, ok := got[run.ID]; ok {
		if n, has := e.Sequence, e.HasSequence; !has || n != 0 {
			t.Errorf("run event: sequence = %d (assigned %t), want 0: the first event of a run is sequence 0", n, has)
		}
	}
	if e, ok := got[host.ID]; ok {
		if n, has := e.Sequence, e.HasSequence; has {
			t.Errorf("host event: sequence = %d; a host event never carries one", n)
		}
	}
}

func checkSequencePerRun(t *testing.T, newSink NewSinkFunc) {
	sink, recorded := makeSink(t, newSink)
	runs := kitRuns(2)
	// Two runs interleaved, with a refusal now and then: the payload must
	// not change how an event is numbered.
	order := []struct {
		run     int
		refused bool
	}{{0, false}, {1, false}, {0, true}, {0, false}, {1, false}, {0, true}, {1, false}, {1, false}, {0, true}}
	emitted := make(map[string][]string) // run → event ids in emission order
	ctx := context.Background()
	for i, o := range order {
		p := kitAccepted()
		if o.refused {
			p = kitRefused()
		}
		e := kitRun(t, runs[o.run], p)
		if err := sink.Emit(ctx, e); err != nil {
			t.Fatalf("Emit #%d: %v", i, err)
		}
		emitted[e.RunID] = append(emitted[e.RunID], e.ID)
	}
	got := closeAndRead(t, sink, recorded)
	checkRuns(t, got, emitted, nil)
	if len(got) != len(order) {
		t.Errorf("recorded %d events, want %d", len(got), len(order))
	}
}

// checkRuns checks that the run events in got are numbered 0..n-1 per run
// with no gap or repeat, that each run in ordered holds exactly those
// events in that order, and each run in unordered exactly that set.
func checkRuns(t *testing.T, got map[string]events.Event, ordered, unordered map[string][]string) {
	t.Helper()
	byRun := make(map[string][]events.Event)
	for _, e := range got {
		if e.RunID != "" {
			byRun[e.RunID] = append(byRun[e.RunID], e)
		}
	}
	for run, es := range byRun {
		slices.SortFunc(es, func(a, b events.Event) int {
			x, y := a.Sequence, b.Sequence
			return int(x - y)
		})
		for i, e := range es {
			if n, ok := e.Sequence, e.HasSequence; !ok || n != int64(i) {
				t.Errorf("run %s: the event at position %d has sequence %d (assigned %t), want %d: sequences must run 0..n-1 with no gap or repeat", run, i, n, ok, i)
				break
			}
		}
		ids := make([]string, len(es))
		for i, e := range es {
			ids[i] = e.ID
		}
		if want, ok := ordered[run]; ok {
			if !slices.Equal(ids, want) {
				t.Errorf("run %s: recorded in sequence order\n\t%v\nwant the emission order\n\t%v", run, ids, want)
			}
			continue
		}
		if want, ok := unordered[run]; ok {
			slices.Sort(ids)
			want = slices.Sorted(slices.Values(want))
			if !slices.Equal(ids, want) {
				t.Errorf("run %s: recorded %d events, want the %d accepted ones exactly", run, len(ids), len(want))
			}
			continue
		}
		t.Errorf("run %s was recorded but never emitted", run)
	}
	for _, runs := range []map[string][]string{ordered, unordered} {
		for run, want := range runs {
			if _, ok := byRun[run]; !ok {
				t.Errorf("run %s: none of its %d events was recorded", run, len(want))
			}
		}
	}
}

func checkConcurrent(t *testing.T, newSink NewSinkFunc) {
	const goroutines, perGoroutine = 8, 30
	sink, recorded := makeSink(t, newSink)
	runs := kitRuns(goroutines + 1)
	shared := runs[goroutines]

	var (
		mu        sync.Mutex
		own       = make(map[string][]string)
		sharedIDs []string
		hostIDs   = make(map[string]bool)
		dropped   = make(map[string]bool)
		failures  []error
	)
	// The events are built here: t.Fatal belongs to the test's goroutine.
	// Each goroutine's batch cycles through ten: four on its own run, four
	// on the shared one and two host events, interleaved.
	ownEvent := func(g int) events.Event { return kitRun(t, runs[g], kitAccepted()) }
	sharedEvent := func(int) events.Event { return kitRun(t, shared, kitRefused()) }
	hostEvent := func(int) events.Event { return kitHost(t, "", kitAccepted()) }
	cycle := []func(int) events.Event{
		ownEvent, sharedEvent, ownEvent, sharedEvent, hostEvent,
		sharedEvent, ownEvent, sharedEvent, ownEvent, hostEvent,
	}
	batches := make([][]events.Event, goroutines)
	for g := range batches {
		for i := range perGoroutine {
			batches[g] = append(batches[g], cycle[i%len(cycle)](g))
		}
	}
	var wg sync.WaitGroup
	for _, batch := range batches {
		wg.Go(func() {
			ctx := context.Background()
			for _, e := range batch {
				err := sink.Emit(ctx, e)
				mu.Lock()
				if errors.Is(err, events.ErrDropped) {
					dropped[e.ID] = true
				} else if err != nil {
					failures = append(failures, err)
				} else if e.RunID == "" {
					hostIDs[e.ID] = true
				} else if e.RunID == shared {
					sharedIDs = append(sharedIDs, e.ID)
				} else {
					own[e.RunID] = append(own[e.RunID], e.ID)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, err := range failures {
		t.Errorf("Emit failed under concurrency: %v", err)
	}
	got := closeAndRead(t, sink, recorded)
	accepted := len(hostIDs) + len(sharedIDs)
	for _, ids := range own {
		accepted += len(ids)
	}
	if accepted == 0 {
		t.Fatal("no Emit succeeded: nothing to check")
	}
	if len(got) != accepted {
		t.Errorf("recorded %d events, want the %d accepted ones (%d dropped)", len(got), accepted, len(dropped))
	}
	for id := range dropped {
		if _, ok := got[id]; ok {
			t.Errorf("event %s was recorded although Emit returned ErrDropped", id)
		}
	}
	for id := range hostIDs {
		e, ok := got[id]
		if !ok {
			t.Errorf("host event %s was accepted but not recorded", id)
		} else if e.HasSequence || e.RunID != "" {
			t.Errorf("host event %s came back as a run event or with a sequence", id)
		}
	}
	sharedRun := map[string][]string{}
	if sharedIDs != nil { // a dropping sink may have recorded none of them
		sharedRun[shared] = sharedIDs
	}
	checkRuns(t, got, own, sharedRun)
}

func checkInvalid(t *testing.T, newSink NewSinkFunc) {
	sink, recorded := makeSink(t, newSink)
	runs := kitRuns(1)
	badPayload := kitRun(t, runs[0], kitAccepted())
	badPayload.Payload.Protocol = "ftp"
	badRun := kitRun(t, runs[0], kitAccepted())
	badRun.RunID = "no-tenant-separator"
	hostSeq := kitHost(t, "", kitAccepted())
	hostSeq.HasSequence = true
	mixed := kitRun(t, runs[0], kitAccepted())
	mixed.WorkspaceID = "ws"
	badID := kitRun(t, runs[0], kitAccepted())
	badID.ID = "short"
	cases := []struct {
		name  string
		e     events.Event
		field string
	}{
		{"zero Event", events.Event{}, "eventId"},
		{"payload protocol ftp", badPayload, "protocol"},
		{"runId without a tenant", badRun, "runId"},
		{"host event with a sequence", hostSeq, "sequence"},
		{"run event with a workspace", mixed, "workspaceId"},
		{"eventId too short", badID, "eventId"},
	}
	ctx := context.Background()
	for _, c := range cases {
		err := sink.Emit(ctx, c.e)
		if err == nil {
			t.Errorf("%s: Emit returned nil, want it refused", c.name)
		} else if !errors.As(err, new(*events.FieldError)) {
			t.Errorf("%s: Emit error %q holds no *events.FieldError", c.name, err)
		} else if !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: Emit error %q does not name the field %s", c.name, err, c.field)
		}
	}
	if got := closeAndRead(t, sink, recorded); len(got) != 0 {
		t.Errorf("recorded %d invalid events, want none", len(got))
	}
}

func checkCanceled(t *testing.T, newSink NewSinkFunc) {
	sink, recorded := makeSink(t, newSink)
	runs := kitRuns(1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, e := range []events.Event{kitRun(t, runs[0], kitAccepted()), kitHost(t, "", kitRefused())} {
		if err := sink.Emit(ctx, e); !errors.Is(err, context.Canceled) {
			t.Errorf("Emit(%s event) with a canceled context = %v, want context.Canceled", kind(e), err)
		}
	}
	if got := closeAndRead(t, sink, recorded); len(got) != 0 {
		t.Errorf("recorded %d events emitted with a canceled context, want none", len(got))
	}
}

func checkClose(t *testing.T, newSink NewSinkFunc) {
	sink, recorded := makeSink(t, newSink)
	c, ok := sink.(io.Closer)
	if !ok {
		t.Skipf("%T is not an io.Closer", sink)
	}
	runs := kitRuns(1)
	ctx := context.Background()
	var ids []string
	for range 3 {
		e := kitRun(t, runs[0], kitAccepted())
		if err := sink.Emit(ctx, e); err != nil {
			t.Fatalf("Emit: %v", err)
		}
		ids = append(ids, e.ID)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	got := make(map[string]bool)
	for _, e := range recorded() {
		got[e.ID] = true
	}
	for _, id := range ids {
		if !got[id] {
			t.Errorf("event %s was accepted before Close but not recorded after it", id)
		}
	}
	if err := sink.Emit(ctx, kitRun(t, runs[0], kitAccepted())); err == nil {
		t.Error("Emit after Close returned nil, want an error")
	}
	_ = c.Close() // a second Close must not panic; what it returns is the sink's business
}

func checkFault(t *testing.T, newSink NewSinkFunc) {
	fault := errors.New("negotiatetest: injected storage fault")
	sink, _ := newSink(t, fault)
	if sink == nil {
		t.Skip("newSink cannot make this sink fail")
	}
	runs := kitRuns(1)
	ctx := context.Background()
	var swallowed []string // the kinds of event Emit accepted
	for _, e := range []events.Event{kitRun(t, runs[0], kitAccepted()), kitHost(t, "", kitRefused())} {
		err := sink.Emit(ctx, e)
		if err == nil {
			swallowed = append(swallowed, kind(e))
		} else if !errors.Is(err, fault) {
			t.Errorf("Emit(%s event) = %v, want an error wrapping the storage fault", kind(e), err)
		}
	}
	if swallowed == nil {
		if c, ok := sink.(io.Closer); ok {
			_ = c.Close()
		}
		return
	}
	c, ok := sink.(io.Closer)
	if !ok {
		t.Fatalf("Emit returned nil for %q although the storage failed, and %T has no Close to report it: the failure was swallowed", swallowed, sink)
	}
	if err := c.Close(); !errors.Is(err, fault) {
		t.Errorf("Emit accepted %q events the storage could not record, and Close returned %v, want an error wrapping the storage fault", swallowed, err)
	}
}

func kind(e events.Event) string {
	if e.RunID != "" {
		return "run"
	}
	return "host"
}

// diffEvent lists how got differs from want, sequences aside.
func diffEvent(want, got events.Event) []string {
	var d []string
	ne := func(field string, w, g any) { d = append(d, fmt.Sprintf("%s = %v, want %v", field, g, w)) }
	if got.ID != want.ID {
		ne("eventId", want.ID, got.ID)
	}
	if !got.Time.Equal(want.Time) {
		ne("timestamp", want.Time, got.Time)
	}
	if got.RunID != want.RunID {
		ne("runId", want.RunID, got.RunID)
	}
	if got.SchemaVersion != want.SchemaVersion {
		ne("schemaVersion", want.SchemaVersion, got.SchemaVersion)
	}
	if got.NodeID != want.NodeID {
		ne("nodeId", want.NodeID, got.NodeID)
	}
	if got.CausationID != want.CausationID {
		ne("causationId", want.CausationID, got.CausationID)
	}
	if got.EngineVersion != want.EngineVersion || got.HasEngineVersion != want.HasEngineVersion {
		ne("engineVersion", fmt.Sprint(want.EngineVersion, want.HasEngineVersion), fmt.Sprint(got.EngineVersion, got.HasEngineVersion))
	}
	if got.WorkspaceID != want.WorkspaceID {
		ne("workspaceId", want.WorkspaceID, got.WorkspaceID)
	}
	wp, gp := want.Payload, got.Payload
	if !gp.At.Equal(wp.At) {
		ne("payload.at", wp.At, gp.At)
	}
	wp.At, gp.At = time.Time{}, time.Time{}
	if gp != wp {
		ne("payload", fmt.Sprintf("%+v", wp), fmt.Sprintf("%+v", gp))
	}
	return d
}
