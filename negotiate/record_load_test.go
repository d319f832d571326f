package negotiate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
)

// lineChecker is the io.Writer behind the load test's JSON-lines sink: it
// reads every line back as it is written and checks, per run, that the
// sequences come 0, 1, 2, … with no gap or repeat.
type lineChecker struct {
	next     map[string]int64
	ids      []string
	lines    int
	problems []string
}

func (w *lineChecker) Write(p []byte) (int, error) {
	// JSONLines writes one whole line per call, under its lock. Every
	// thousandth line is decoded strictly; the rest are scanned for the
	// three fields the check needs, which MarshalJSON writes unescaped (the
	// id alphabets have nothing to escape) and in a fixed order, so that
	// reading back costs the writer less than writing.
	line := bytes.TrimSuffix(p, []byte("\n"))
	if w.lines%1000 == 0 {
		var e events.Event
		if err := json.Unmarshal(line, &e); err != nil {
			w.problem("line %d does not decode as an event: %v", w.lines+1, err)
		}
	}
	w.lines++
	id, _ := field(line, `"eventId":"`, '"')
	w.ids = append(w.ids, string(id))
	run, isRun := field(line, `"runId":"`, '"')
	if !isRun {
		return len(p), nil
	}
	seq, ok := field(line, `"sequence":`, ',')
	n, err := strconv.ParseInt(string(seq), 10, 64)
	if !ok || err != nil {
		w.problem("run event %s has no sequence", id)
	}
	if want := w.next[string(run)]; n != want {
		w.problem("run %s: sequence %d where %d was due", run, n, want)
	}
	w.next[string(run)]++
	return len(p), nil
}

// field returns what follows key in line up to end.
func field(line []byte, key string, end byte) ([]byte, bool) {
	i := bytes.Index(line, []byte(key))
	if i < 0 {
		return nil, false
	}
	rest := line[i+len(key):]
	j := bytes.IndexByte(rest, end)
	if j < 0 {
		return nil, false
	}
	return rest[:j], true
}

func (w *lineChecker) problem(format string, args ...any) {
	if len(w.problems) < 10 {
		w.problems = append(w.problems, fmt.Sprintf(format, args...))
	}
}

// TestRecordUnderLoad sends 8 × 50,000 decisions through an asynchronous,
// dropping sink into a sequenced JSON-lines store: every accepted event is
// written exactly once, every run is numbered without a gap, and every
// decision is accounted for as accepted or dropped.
//
// Under Drop the eight goroutines decide far faster than one goroutine can
// write on a shared machine, so most events are dropped: the point is the
// accounting. Under Block (8 × 10,000, to keep the test short: every
// decision waits for the writer) nothing is dropped and every decision is
// written, through the path where Emits wait for room.
func TestRecordUnderLoad(t *testing.T) {
	t.Run("drop", func(t *testing.T) {
		recordUnderLoad(t, events.AsyncOptions{Buffer: 4096, Drop: true}, 50_000)
	})
	t.Run("block", func(t *testing.T) {
		// MaxWait well past the test's run: the point is that Block loses
		// nothing while the writer keeps going, however slow the machine.
		recordUnderLoad(t, events.AsyncOptions{Buffer: 4096, MaxWait: time.Hour}, 10_000)
	})
}

func recordUnderLoad(t *testing.T, opts events.AsyncOptions, perGoroutine int) {
	const goroutines, runs = 8, 16
	n, err := negotiate.Compile(recSet(), recPolicy(false))
	if err != nil {
		t.Fatal(err)
	}
	checker := &lineChecker{next: make(map[string]int64)}
	async := events.NewAsync(events.NewJSONLines(checker), opts)

	offers := []negotiate.Offer{
		recDowngrade(), // accepted, downgraded
		{Protocol: facets.ProtocolA2A, Requested: "1.0", PeerVersions: []string{"1.0"}},              // refused below the floor
		{Protocol: facets.ProtocolA2A, Peer: "https://other.example", PeerVersions: []string{"1.2"}}, // accepted at preferred
	}
	runIDs := make([]string, runs)
	for i := range runIDs {
		runIDs[i] = fmt.Sprintf("acme/load-run-%08d", i)
	}

	type tally struct {
		accepted     []string
		dropped      int
		otherFailure error
	}
	tallies := make([]tally, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			ta := &tallies[g]
			// Each goroutine learns which of its events were accepted by
			// wrapping the shared sink.
			sink := events.SinkFunc(func(ctx context.Context, e events.Event) error {
				err := async.Emit(ctx, e)
				if err == nil {
					ta.accepted = append(ta.accepted, e.ID)
				}
				return err
			})
			ctx := context.Background()
			for i := range perGoroutine {
				dest := negotiate.Destination{RunID: runIDs[(g*perGoroutine+i)%runs]}
				if i%8 == 7 {
					dest = negotiate.Destination{} // a host event now and then
				}
				_, err := n.DecideAndRecord(ctx, sink, dest, recUser(), offers[i%len(offers)])
				switch {
				case err == nil:
				case errors.Is(err, events.ErrDropped):
					ta.dropped++
				case ta.otherFailure == nil:
					ta.otherFailure = err
				}
			}
		})
	}
	wg.Wait()
	if err := async.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	var accepted []string
	dropped := 0
	for _, ta := range tallies {
		if ta.otherFailure != nil {
			t.Errorf("a decision failed to record for another reason than a drop: %v", ta.otherFailure)
		}
		accepted = append(accepted, ta.accepted...)
		dropped += ta.dropped
	}
	s := async.Stats()
	emitted := uint64(goroutines * perGoroutine)
	t.Logf("emitted %d, accepted %d, dropped %d; written %d lines", s.Emitted, s.Accepted, s.Dropped, checker.lines)

	if s.Emitted != emitted || s.Accepted+s.Dropped != emitted || s.Rejected != 0 {
		t.Errorf("Stats = %+v: want %d emitted = accepted + dropped", s, emitted)
	}
	if int(s.Accepted) != len(accepted) || int(s.Dropped) != dropped {
		t.Errorf("Stats say %d accepted and %d dropped; the callers saw %d and %d", s.Accepted, s.Dropped, len(accepted), dropped)
	}
	if s.Recorded != s.Accepted || s.Failed != 0 || s.Pending != 0 {
		t.Errorf("Stats = %+v: every accepted event must be recorded by Close", s)
	}
	for _, p := range checker.problems {
		t.Error(p)
	}
	// Every accepted event exactly once, and nothing else.
	slices.Sort(accepted)
	written := slices.Clone(checker.ids)
	slices.Sort(written)
	if !slices.Equal(accepted, written) {
		dups := len(written) - len(slices.Compact(slices.Clone(written)))
		t.Errorf("written %d events (%d repeated), accepted %d: the sets differ", len(written), dups, len(accepted))
	}
	var total int64
	for _, next := range checker.next {
		total += next
	}
	if !opts.Drop && s.Dropped != 0 {
		t.Errorf("%d events dropped under Block with a MaxWait longer than the test", s.Dropped)
	}
	if hosts := int64(checker.lines) - total; hosts <= 0 {
		t.Errorf("%d lines, %d of them run events: the load had no host events to check", checker.lines, total)
	}
}
