package negotiatetest_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
)

// flawedSink is a store with one flaw chosen by name, to show that the kit
// catches each: a kit that passes a broken sink checks nothing.
type flawedSink struct {
	flaw   string
	mu     sync.Mutex
	events []events.Event
	next   map[string]int64
	global int64
	emits  int
}

func (s *flawedSink) Emit(ctx context.Context, e events.Event) error {
	if s.flaw != "ignores-context" {
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	if s.flaw != "skips-validation" {
		if err := e.Validate(); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.emits++
	if e.RunID != "" {
		switch s.flaw {
		case "leaves-sequence-unassigned":
		case "numbers-across-runs":
			e.Sequence, e.HasSequence = s.global, true
			s.global++
		default:
			if s.next == nil {
				s.next = make(map[string]int64)
			}
			e.Sequence, e.HasSequence = s.next[e.RunID], true
			s.next[e.RunID]++
		}
	}
	switch {
	case s.flaw == "records-twice":
		s.events = append(s.events, e, e)
	case s.flaw == "loses-every-seventh" && s.emits%7 == 0:
	default:
		s.events = append(s.events, e)
	}
	return nil
}

func (s *flawedSink) recorded() []events.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]events.Event(nil), s.events...)
}

// flawedCloser adds a Close that does not stop later emits.
type flawedCloser struct{ *flawedSink }

func (flawedCloser) Close() error { return nil }

// flaws maps each flaw to the checks that must catch it.
var flaws = map[string][]string{
	"leaves-sequence-unassigned": {"RunAndHostEvents", "SequencePerRun", "Concurrent"},
	"numbers-across-runs":        {"SequencePerRun", "Concurrent"},
	"records-twice":              {"RunAndHostEvents", "SequencePerRun", "Concurrent"},
	"loses-every-seventh":        {"Concurrent"},
	"skips-validation":           {"Invalid"},
	"ignores-context":            {"CanceledContext"},
	"open-after-close":           {"Close"},
	"swallows-faults":            {"Fault"},
}

// flawSays is what the kit's report of a flaw must say: which kind of
// event it touched.
var flawSays = map[string]string{
	"leaves-sequence-unassigned": "run event: sequence = 0 (assigned false), want 0",
	"swallows-faults":            `Emit returned nil for ["run" "host"] although the storage failed`,
}

// TestFlawedSinkChild runs the kit against the sink with the flaw named in
// the environment. It is run by TestSinkKitCatchesFlaws in a child
// process, because a failing kit fails the test that runs it.
func TestFlawedSinkChild(t *testing.T) {
	flaw := os.Getenv("NEGOTIATETEST_FLAW")
	if flaw == "" {
		t.Skip("run by TestSinkKitCatchesFlaws")
	}
	negotiatetest.TestSink(t, func(t *testing.T, fault error) (events.Sink, func() []events.Event) {
		s := &flawedSink{flaw: flaw}
		switch {
		case fault != nil && flaw != "swallows-faults":
			r := &negotiatetest.Recorder{}
			r.Fail(fault)
			return r, nil
		case flaw == "open-after-close":
			return flawedCloser{s}, s.recorded
		}
		return s, s.recorded
	})
}

func TestSinkKitCatchesFlaws(t *testing.T) {
	if os.Getenv("NEGOTIATETEST_FLAW") != "" {
		return
	}
	for flaw, checks := range flaws {
		t.Run(flaw, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestFlawedSinkChild$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), "NEGOTIATETEST_FLAW="+flaw)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the kit passed a sink that %s:\n%s", flaw, out)
			}
			for _, check := range checks {
				if !strings.Contains(string(out), "--- FAIL: TestFlawedSinkChild/"+check+" ") {
					t.Errorf("check %s did not catch a sink that %s:\n%s", check, flaw, out)
				}
			}
			if says, ok := flawSays[flaw]; ok && !strings.Contains(string(out), says) {
				t.Errorf("the kit's report of a sink that %s does not say %q:\n%s", flaw, says, out)
			}
		})
	}
}

// The kit passes the Recorder, which every other test of a host relies on.
func TestRecorderPassesTheKit(t *testing.T) {
	negotiatetest.TestSink(t, func(t *testing.T, fault error) (events.Sink, func() []events.Event) {
		r := &negotiatetest.Recorder{}
		if fault != nil {
			r.Fail(fault)
		}
		return r, r.Events
	})
}

// A buffering sink passes the kit too: events.NewAsync over a Recorder
// accepts every Emit and reports a storage fault from Close, which the
// Fault check takes as reported, not swallowed.
func TestBufferingSinkPassesTheKit(t *testing.T) {
	negotiatetest.TestSink(t, func(t *testing.T, fault error) (events.Sink, func() []events.Event) {
		r := &negotiatetest.Recorder{}
		if fault != nil {
			r.Fail(fault)
		}
		return events.NewAsync(r, events.AsyncOptions{}), r.Events
	})
}
