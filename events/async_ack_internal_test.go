package events

// Tests of the acknowledged mode, of riding out an unavailable store, and
// of the byte bound and the throttled log.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// durableStore is a batchStore that says it is durable.
type durableStore struct{ batchStore }

func (*durableStore) Durable() bool { return true }

// emitAll emits es concurrently into a, and returns each Emit's error,
// by position.
func emitAll(a *Async, es []Event) []error {
	errs := make([]error, len(es))
	var wg sync.WaitGroup
	for i := range es {
		wg.Go(func() { errs[i] = a.Emit(context.Background(), es[i]) })
	}
	wg.Wait()
	return errs
}

// In the acknowledged mode an Emit returns once its event is written, and
// the Emits that queued while a write was under way share the next one.
func TestAsyncAcknowledgedEmitsShareOneWrite(t *testing.T) {
	defer verifyNoLeak(t)
	synctest.Test(t, func(t *testing.T) {
		s := &batchStore{held: make(chan struct{})}
		a := NewAsync(s, AsyncOptions{Acknowledge: time.Minute})
		defer a.Close()
		first := make(chan error, 1)
		go func() { first <- a.Emit(context.Background(), mutantHostEvent(t)) }()
		synctest.Wait() // the first write holds the first event
		if got := a.Stats().Waiting; got != 1 {
			t.Errorf("Waiting = %d while the first write is held, want 1", got)
		}
		es, ids := freshEvents(t, 5)
		done := make(chan []error)
		go func() { done <- emitAll(a, es) }()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("acknowledged Emits returned before their write")
		default:
		}
		close(s.held)
		if err := <-first; err != nil {
			t.Errorf("first Emit = %v", err)
		}
		for i, err := range <-done {
			if err != nil {
				t.Errorf("Emit %d = %v, want nil once written", i, err)
			}
		}
		if len(s.batches) != 2 {
			t.Fatalf("%d writes, want 2: the five queued behind the first share one", len(s.batches))
		}
		got := slices.Clone(s.batches[1])
		slices.Sort(got)
		slices.Sort(ids)
		if !slices.Equal(got, ids) {
			t.Errorf("second write held %v, want the five queued", got)
		}
		if st := a.Stats(); st.Recorded != 6 || st.Unacknowledged != 0 || st.Waiting != 0 {
			t.Errorf("Stats = %+v, want 6 recorded, none unacknowledged or waiting", st)
		}
	})
}

// An acknowledged Emit whose event the store refuses returns the store's
// error; the others of its batch are written and return nil.
func TestAsyncAcknowledgedEmitReturnsItsEventsFailure(t *testing.T) {
	defer verifyNoLeak(t)
	synctest.Test(t, func(t *testing.T) {
		refused := errors.New("duplicate event id")
		es, ids := freshEvents(t, 4)
		s := &batchStore{
			held:       make(chan struct{}),
			batchFails: func(call int) error { return map[bool]error{true: refused}[call == 2] },
			eventFails: func(id string) error { return map[bool]error{true: refused}[id == ids[2]] },
		}
		a := NewAsync(s, AsyncOptions{Acknowledge: time.Minute})
		defer a.Close()
		go func() { _ = a.Emit(context.Background(), mutantHostEvent(t)) }()
		synctest.Wait()
		done := make(chan []error)
		go func() { done <- emitAll(a, es) }()
		synctest.Wait()
		close(s.held)
		for i, err := range <-done {
			if want := map[bool]error{true: refused}[i == 2]; err != want {
				t.Errorf("Emit %d = %v, want %v", i, err, want)
			}
		}
		if st := a.Stats(); st.Recorded != 4 || st.Failed != 1 || st.Unacknowledged != 1 {
			t.Errorf("Stats = %+v, want 4 recorded, 1 failed and unacknowledged", st)
		}
	})
}

// An acknowledged Emit gives up at Acknowledge, or when its context ends,
// with an error; its event stays queued and is written when the store
// comes back.
func TestAsyncAcknowledgedEmitIsBounded(t *testing.T) {
	defer verifyNoLeak(t)
	synctest.Test(t, func(t *testing.T) {
		s := &batchStore{held: make(chan struct{})}
		a := NewAsync(s, AsyncOptions{Acknowledge: 250 * time.Millisecond})
		defer a.Close()
		start := time.Now()
		err := a.Emit(context.Background(), mutantHostEvent(t))
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "250ms") {
			t.Errorf("Emit on a held store = %v, want ErrUnavailable naming the bound", err)
		}
		if took := time.Since(start); took != 250*time.Millisecond {
			t.Errorf("Emit gave up after %v, want 250ms", took)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if err := a.Emit(ctx, mutantHostEvent(t)); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Emit with a context ending first = %v, want its error", err)
		}
		close(s.held)
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if st := a.Stats(); st.Recorded != 2 || st.Unacknowledged != 2 {
			t.Errorf("Stats = %+v, want both written late and counted unacknowledged", st)
		}
	})
}

// unavailable is a BatchSink whose store is down for the first down
// attempts, batch or single, and records afterwards.
type unavailable struct {
	batchStore
	down     int
	attempts []time.Time
}

func (u *unavailable) attempt() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.attempts = append(u.attempts, time.Now())
	if len(u.attempts) <= u.down {
		return fmt.Errorf("connection refused: %w", ErrUnavailable)
	}
	return nil
}

func (u *unavailable) EmitBatch(ctx context.Context, batch []Event) error {
	if err := u.attempt(); err != nil {
		return err
	}
	return u.batchStore.EmitBatch(ctx, batch)
}

func (u *unavailable) Emit(ctx context.Context, e Event) error {
	if err := u.attempt(); err != nil {
		return err
	}
	return u.batchStore.Emit(ctx, e)
}

// singles hides EmitBatch, so that the Async writes one event at a time.
type singles struct{ u *unavailable }

func (s singles) Emit(ctx context.Context, e Event) error { return s.u.Emit(ctx, e) }

// A write that fails with ErrUnavailable is tried again, whole, after
// pauses of 10 ms doubling up to Backoff, until the store is back: nothing
// is lost, and the attempts are counted and logged once per LogEvery.
func TestAsyncRidesOutAnUnavailableStore(t *testing.T) {
	defer verifyNoLeak(t)
	for _, batched := range []bool{true, false} {
		t.Run(fmt.Sprint("batched=", batched), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				u := &unavailable{down: 7}
				var sink Sink = u
				if !batched {
					sink = singles{u}
				}
				var log bytes.Buffer
				a := NewAsync(sink, AsyncOptions{Backoff: 50 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&log, nil)), LogEvery: 70 * time.Millisecond})
				ids := emitN(t, a, context.Background(), 3)
				if err := a.Close(); err != nil {
					t.Fatalf("Close = %v, want every event written once the store is back", err)
				}
				if !slices.Equal(u.ids, ids) {
					t.Errorf("recorded %v, want %v in order", u.ids, ids)
				}
				var pauses []time.Duration
				for i := 1; i < 8; i++ {
					pauses = append(pauses, u.attempts[i].Sub(u.attempts[i-1]))
				}
				want := []time.Duration{10, 20, 40, 50, 50, 50, 50}
				for i := range want {
					want[i] *= time.Millisecond
				}
				if !slices.Equal(pauses, want) {
					t.Errorf("pauses %v, want %v", pauses, want)
				}
				if st := a.Stats(); st.Retries != 7 || st.Recorded != 3 || st.Failed != 0 {
					t.Errorf("Stats = %+v, want 7 retries and all 3 recorded", st)
				}
				// Retries at 0, 10, 30, 70, 120, 170 and 220 ms, logged at 0
				// (1), at 70 (3: LogEvery has passed, to the nanosecond), at
				// 170 (2), and the last at Close.
				lines := strings.Split(strings.TrimSpace(log.String()), "\n")
				wantLines := []string{"retries=1 ", "retries=3 ", "retries=2 ", "retries=1"}
				if len(lines) != len(wantLines) {
					t.Fatalf("logged %q, want the retries counted in %d lines", lines, len(wantLines))
				}
				for i := range wantLines {
					if !strings.Contains(lines[i], wantLines[i]) {
						t.Errorf("line %d = %q, want %q", i, lines[i], wantLines[i])
					}
				}
			})
		})
	}
}

// A pause after a success starts again at 10 ms.
func TestAsyncBackoffStartsOverAfterASuccess(t *testing.T) {
	defer verifyNoLeak(t)
	synctest.Test(t, func(t *testing.T) {
		u := &unavailable{down: 2}
		a := NewAsync(u, AsyncOptions{})
		emitN(t, a, context.Background(), 1)
		for a.Stats().Recorded == 0 {
			time.Sleep(time.Millisecond)
		}
		u.mu.Lock()
		u.down = 4 // the next write fails twice more, attempts 4 and 5
		u.mu.Unlock()
		emitN(t, a, context.Background(), 1)
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if got := u.attempts[4].Sub(u.attempts[3]); got != 10*time.Millisecond {
			t.Errorf("first pause after a success = %v, want 10ms", got)
		}
	})
}

// A negative Backoff fails such a write at once, and Close gives up on a
// store still down after CloseWait, failing what is left.
func TestAsyncGivesUpOnAnUnavailableStore(t *testing.T) {
	defer verifyNoLeak(t)
	for _, tc := range []struct {
		name string
		opts AsyncOptions
		// Close takes from wait to wait+pause: it tries again until wait
		// has passed, each try a pause of at most pause after the last.
		wait, pause time.Duration
	}{
		{"no retry", AsyncOptions{Backoff: -1}, 0, 0},
		{"close wait", AsyncOptions{CloseWait: time.Second, Backoff: 300 * time.Millisecond}, time.Second, 300 * time.Millisecond},
		{"default close wait", AsyncOptions{}, 10 * time.Second, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				u := &unavailable{down: 1 << 30}
				var handed []string
				tc.opts.OnError = func(e Event, _ error) { handed = append(handed, e.ID) }
				a := NewAsync(u, tc.opts)
				ids := emitN(t, a, context.Background(), 2)
				if tc.opts.Backoff < 0 {
					synctest.Wait()
					if st := a.Stats(); st.Failed != 2 || st.Retries != 0 {
						t.Errorf("Stats = %+v, want both failed at once", st)
					}
				}
				start := time.Now()
				if err := a.Close(); !errors.Is(err, ErrUnavailable) {
					t.Errorf("Close = %v, want the store's error", err)
				}
				if took := time.Since(start); took < tc.wait || took > tc.wait+tc.pause {
					t.Errorf("Close took %v, want from %v to %v", took, tc.wait, tc.wait+tc.pause)
				}
				if st := a.Stats(); st.Failed != 2 || st.Recorded != 0 {
					t.Errorf("Stats = %+v, want both failed", st)
				}
				if !slices.Equal(handed, ids) {
					t.Errorf("OnError got %v, want %v", handed, ids)
				}
				if tc.opts.Backoff >= 0 && len(u.batches) != 0 {
					t.Errorf("the batch was split into %v: an unavailable store fails it whole", u.batches)
				}
			})
		})
	}
}

// BufferBytes bounds the buffer by size: an event that would take the
// held events past it is dropped, each drop logged at most once per
// LogEvery; an empty buffer takes an event of any size.
func TestAsyncBufferBytesBoundsTheBuffer(t *testing.T) {
	defer verifyNoLeak(t)
	synctest.Test(t, func(t *testing.T) {
		s := &batchStore{held: make(chan struct{})}
		e := mutantHostEvent(t)
		size := sizeOf(&e)
		var log bytes.Buffer
		// Exactly two events: the second fills the buffer to its bound.
		a := NewAsync(s, AsyncOptions{BufferBytes: 2 * size, Drop: true, Logger: slog.New(slog.NewTextHandler(&log, nil))})
		for i := range 4 { // the first held by the store, the second queued
			err := a.Emit(context.Background(), e)
			if want := map[bool]error{true: ErrDropped}[i >= 2]; err != want {
				t.Errorf("Emit %d of 4 = %v, want %v", i, err, want)
			}
			synctest.Wait()
		}
		if st := a.Stats(); st.PendingBytes != uint64(2*size) || st.Dropped != 2 {
			t.Errorf("Stats = %+v, want %d bytes pending and 2 dropped", st, 2*size)
		}
		// Two drops within LogEvery: one line at once, the other at Close.
		if got := strings.Count(log.String(), "dropped=1 "); got != 1 {
			t.Errorf("logged %q, want one line at the first drop", log.String())
		}
		close(s.held)
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(log.String(), "dropped=1 "); got != 2 || !strings.Contains(log.String(), "droppedTotal=2") {
			t.Errorf("logged %q, want the second drop logged at Close", log.String())
		}
		if st := a.Stats(); st.PendingBytes != 0 || st.Recorded != 2 {
			t.Errorf("after Close: Stats = %+v, want 2 recorded and nothing held", st)
		}

		small := NewAsync(&batchStore{}, AsyncOptions{BufferBytes: 1})
		if err := small.Emit(context.Background(), e); err != nil {
			t.Errorf("an event larger than BufferBytes, into an empty buffer: %v", err)
		}
		if err := small.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// sizeOf counts every string of the event, and a fixed overhead.
func TestAsyncSizeOfCountsEveryString(t *testing.T) {
	e := Event{
		ID: "i", RunID: "rr", NodeID: "nnn", CausationID: "cccc", WorkspaceID: "wwwww", Tenant: "tttttt",
		Payload: NegotiationDecided{Protocol: "ppppppp", Outcome: "oooooooo", Version: "vvvvvvvvv", Requested: "qqqqqqqqqq",
			Reason: "rrrrrrrrrrr", Floor: "ffffffffffff", PeerDigest: "ddddddddddddd"},
	}
	if got, want := sizeOf(&e), asyncEventOverhead+13*14/2; got != want {
		t.Errorf("sizeOf = %d, want %d", got, want)
	}
}

// Drops are logged at most once per LogEvery, with the count since the
// last line.
func TestAsyncLogsDropsOncePerInterval(t *testing.T) {
	defer verifyNoLeak(t)
	synctest.Test(t, func(t *testing.T) {
		s := &batchStore{held: make(chan struct{})}
		var log bytes.Buffer
		a := NewAsync(s, AsyncOptions{Buffer: 1, Drop: true, Logger: slog.New(slog.NewTextHandler(&log, nil))})
		emitN(t, a, context.Background(), 1)
		synctest.Wait()
		e := mutantHostEvent(t)
		for range 5 {
			_ = a.Emit(context.Background(), e)
		}
		time.Sleep(10 * time.Second)
		for range 3 {
			_ = a.Emit(context.Background(), e)
		}
		close(s.held)
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		want := []string{"dropped=1 droppedTotal=1", "dropped=5 droppedTotal=6", "dropped=2 droppedTotal=8"}
		lines := strings.Split(strings.TrimSpace(log.String()), "\n")
		if len(lines) != len(want) {
			t.Fatalf("logged %q, want %d lines", lines, len(want))
		}
		for i := range want {
			if !strings.Contains(lines[i], want[i]) {
				t.Errorf("line %d = %q, want %q", i, lines[i], want[i])
			}
		}
	})
}

// An Async is durable only in the acknowledged mode over a durable sink;
// a fan-out, when one of its sinks is.
func TestAsyncDurable(t *testing.T) {
	defer verifyNoLeak(t)
	durable, plain := &durableStore{}, &batchStore{}
	for _, tc := range []struct {
		name string
		sink Durable
		want bool
	}{
		{"acknowledged over durable", NewAsync(durable, AsyncOptions{Acknowledge: time.Second}), true},
		{"queued over durable", NewAsync(durable, AsyncOptions{}), false},
		{"acknowledged over plain", NewAsync(plain, AsyncOptions{Acknowledge: time.Second}), false},
		{"zero", &Async{}, false},
		{"nil", (*Async)(nil), false},
	} {
		if got := tc.sink.Durable(); got != tc.want {
			t.Errorf("%s: Durable = %v, want %v", tc.name, got, tc.want)
		}
		if a, ok := tc.sink.(*Async); ok {
			_ = a.Close()
		}
		f := NewFanout(NewJSONLines(&bytes.Buffer{}), tc.sink.(Sink))
		if got := f.(Durable).Durable(); got != tc.want {
			t.Errorf("fan-out with %s: Durable = %v, want %v", tc.name, got, tc.want)
		}
	}
	if NewFanout(NewJSONLines(&bytes.Buffer{})).(Durable).Durable() {
		t.Error("a fan-out of no durable sink says it is durable")
	}
}

// When the recording goroutine is ended, the acknowledged Emits waiting on
// it, in hand and queued, return the error that says so.
func TestAsyncAcknowledgedEmitsLearnTheGoroutineEnded(t *testing.T) {
	defer verifyNoLeak(t)
	synctest.Test(t, func(t *testing.T) {
		s := &batchStore{held: make(chan struct{}), batchFails: func(int) error { runtime.Goexit(); return nil }}
		a := NewAsync(s, AsyncOptions{Acknowledge: time.Minute})
		first := make(chan error, 1)
		go func() { first <- a.Emit(context.Background(), mutantHostEvent(t)) }()
		synctest.Wait()
		queued := make(chan error, 1)
		go func() { queued <- a.Emit(context.Background(), mutantHostEvent(t)) }()
		synctest.Wait()
		close(s.held)
		for _, err := range []error{<-first, <-queued} {
			if !errors.Is(err, errAsyncStopped) {
				t.Errorf("Emit = %v, want errAsyncStopped", err)
			}
		}
		_ = a.Close()
		if st := a.Stats(); st.Failed != 2 || st.PendingBytes != 0 {
			t.Errorf("Stats = %+v, want both failed, nothing held", st)
		}
	})
}

// A retry's log line counts what is pending: accepted, less recorded and
// failed.
func TestAsyncLogsWhatIsPendingWhenItRetries(t *testing.T) {
	defer verifyNoLeak(t)
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		sink := SinkFunc(func(context.Context, Event) error {
			calls++
			switch calls {
			case 2:
				return errors.New("refused")
			case 3:
				return fmt.Errorf("down: %w", ErrUnavailable)
			}
			return nil
		})
		var log bytes.Buffer
		a := NewAsync(sink, AsyncOptions{Logger: slog.New(slog.NewTextHandler(&log, nil))})
		for range 3 { // recorded, failed, then tried again once
			emitN(t, a, context.Background(), 1)
			synctest.Wait()
		}
		_ = a.Close()
		if !strings.Contains(log.String(), "retries=1 pending=1 ") {
			t.Errorf("logged %q, want the retry with 1 event pending of 3 accepted, 1 recorded, 1 failed", log.String())
		}
	})
}
