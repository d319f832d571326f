package events

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
)

// batchStore is a BatchSink that keeps what it records, batch by batch,
// and fails (or panics, or ends the goroutine in) the batches and events
// its hooks pick.
type batchStore struct {
	mu      sync.Mutex
	batches [][]string // the ids of each EmitBatch call, failed ones included
	ids     []string   // the ids recorded, by either method
	ctxs    []context.Context
	// batchFails and eventFails say what fails; nil fails nothing.
	batchFails func(call int) error
	eventFails func(id string) error
	// held, when set, holds the first EmitBatch until it is closed, so
	// that a test can queue events behind it.
	held chan struct{}
}

func (s *batchStore) EmitBatch(ctx context.Context, batch []Event) error {
	if len(batch) == 0 {
		// A bug in Async: ending its goroutine fails the test at once,
		// where returning would let it hand over empty batches forever.
		runtime.Goexit()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held != nil && len(s.batches) == 0 {
		s.mu.Unlock()
		<-s.held
		s.mu.Lock()
	}
	ids := make([]string, len(batch))
	for i := range batch {
		ids[i] = batch[i].ID
	}
	s.batches = append(s.batches, ids)
	s.ctxs = append(s.ctxs, ctx)
	if s.batchFails != nil {
		if err := s.batchFails(len(s.batches)); err != nil {
			return err
		}
	}
	s.ids = append(s.ids, ids...)
	return nil
}

func (s *batchStore) Emit(_ context.Context, e Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.eventFails != nil {
		if err := s.eventFails(e.ID); err != nil {
			return err
		}
	}
	s.ids = append(s.ids, e.ID)
	return nil
}

// freshEvents returns n fresh host events and their ids.
func freshEvents(t *testing.T, n int) ([]Event, []string) {
	t.Helper()
	es, ids := make([]Event, n), make([]string, n)
	for i := range es {
		es[i] = mutantHostEvent(t)
		ids[i] = es[i].ID
	}
	return es, ids
}

// emitEach emits es into a, each with the context ctx.
func emitEach(t *testing.T, a *Async, ctx context.Context, es []Event) {
	t.Helper()
	for _, e := range es {
		if err := a.Emit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
}

// emitN emits n fresh host events into a and returns their ids in order.
func emitN(t *testing.T, a *Async, ctx context.Context, n int) []string {
	t.Helper()
	es, ids := freshEvents(t, n)
	emitEach(t, a, ctx, es)
	return ids
}

// A BatchSink is handed what is queued, in order, at most Batch events at
// a time, with a context that carries no caller's values; what it records
// in batches is counted as recorded.
func TestAsyncHandsABatchSinkWhatIsQueued(t *testing.T) {
	defer verifyNoLeak(t)
	for _, tc := range []struct {
		name  string
		batch int
		sizes []int // of the EmitBatch calls, after one event alone
	}{
		{"default batch", 0, []int{1, 10}},
		{"batch of 4", 4, []int{1, 4, 4, 2}},
		{"batch of 1", 1, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
		{"batch of 10", 10, []int{1, 10}},
		{"batch of 9", 9, []int{1, 9, 1}},
	} {
		synctest.Test(t, func(t *testing.T) {
			s := &batchStore{held: make(chan struct{})}
			a := NewAsync(s, AsyncOptions{Batch: tc.batch})
			ctx := context.WithValue(t.Context(), mutantCtxKey{}, "trace-1")
			want := emitN(t, a, ctx, 1)
			synctest.Wait() // the first is held in the store alone; the next ten queue behind it
			want = append(want, emitN(t, a, ctx, 10)...)
			close(s.held)
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			var sizes []int
			for _, b := range s.batches {
				sizes = append(sizes, len(b))
			}
			if !slices.Equal(sizes, tc.sizes) {
				t.Errorf("%s: EmitBatch sizes %v, want %v", tc.name, sizes, tc.sizes)
			}
			if !slices.Equal(s.ids, want) {
				t.Errorf("%s: recorded %v, want %v in the order emitted", tc.name, s.ids, want)
			}
			for _, c := range s.ctxs {
				if c.Value(mutantCtxKey{}) != nil {
					t.Errorf("%s: a batch's context carries a caller's value", tc.name)
				}
			}
			if got, want := a.Stats(), (AsyncStats{Emitted: 11, Accepted: 11, Recorded: 11}); got != want {
				t.Errorf("%s: Stats = %+v, want %+v", tc.name, got, want)
			}
		})
	}
}

// A batch that fails, by an error or a panic, is recorded again one event
// at a time, so that only the events the store refuses one by one fail:
// each is counted, handed to OnError and reported by Close.
func TestAsyncRecordsAFailedBatchOneByOne(t *testing.T) {
	defer verifyNoLeak(t)
	refused := errors.New("refused")
	for _, tc := range []struct {
		name       string
		batchFails func(call int) error
	}{
		{"batch error", func(call int) error {
			if call == 2 {
				return errors.New("batch down")
			}
			return nil
		}},
		{"batch panic", func(call int) error {
			if call == 2 {
				panic("batch bug")
			}
			return nil
		}},
	} {
		synctest.Test(t, func(t *testing.T) {
			rest, ids := freshEvents(t, 5)
			bad := ids[1] // in the second batch, which fails
			s := &batchStore{held: make(chan struct{}), batchFails: tc.batchFails, eventFails: func(id string) error {
				if id == bad {
					return refused
				}
				return nil
			}}
			var onError []string
			a := NewAsync(s, AsyncOptions{Batch: 3, OnError: func(e Event, err error) {
				if err != refused {
					t.Errorf("%s: OnError saw %v, want the event's own error", tc.name, err)
				}
				onError = append(onError, e.ID)
			}})
			want := emitN(t, a, t.Context(), 1)
			synctest.Wait() // the first is held in the store; the rest queue behind it
			emitEach(t, a, t.Context(), rest)
			want = append(want, ids...)
			close(s.held)
			if err := a.Close(); err != refused {
				t.Errorf("%s: Close = %v, want the refused event's error", tc.name, err)
			}
			recorded := slices.DeleteFunc(slices.Clone(want), func(id string) bool { return id == bad })
			if !slices.Equal(s.ids, recorded) {
				t.Errorf("%s: recorded %v, want %v", tc.name, s.ids, recorded)
			}
			if !slices.Equal(onError, []string{bad}) {
				t.Errorf("%s: OnError saw %v, want only %s", tc.name, onError, bad)
			}
			if got, want := a.Stats(), (AsyncStats{Emitted: 6, Accepted: 6, Recorded: 5, Failed: 1}); got != want {
				t.Errorf("%s: Stats = %+v, want %+v", tc.name, got, want)
			}
		})
	}
}

// goexitBatch ends the recording goroutine in its first EmitBatch, once
// held is closed, so that a test can queue events behind that batch first.
type goexitBatch struct{ batchStore }

func (s *goexitBatch) EmitBatch(context.Context, []Event) error {
	<-s.held
	runtime.Goexit()
	return nil
}

// A BatchSink that ends the recording goroutine fails its whole batch and
// what is queued behind it, as a Sink that does so fails its event.
func TestAsyncBatchSinkGoexitFailsTheBatch(t *testing.T) {
	defer verifyNoLeak(t)
	synctest.Test(t, func(t *testing.T) {
		s := &goexitBatch{batchStore{held: make(chan struct{})}}
		var failed int
		a := NewAsync(s, AsyncOptions{OnError: func(Event, error) { failed++ }})
		emitN(t, a, t.Context(), 3)
		close(s.held)
		synctest.Wait()
		if err := a.Emit(t.Context(), mutantHostEvent(t)); err != errAsyncStopped {
			t.Errorf("Emit after the store ended the goroutine = %v, want %v", err, errAsyncStopped)
		}
		if err := a.Close(); err != errAsyncStopped {
			t.Errorf("Close = %v, want %v", err, errAsyncStopped)
		}
		if got, want := a.Stats(), (AsyncStats{Emitted: 4, Accepted: 3, Rejected: 1, Failed: 3}); got != want {
			t.Errorf("Stats = %+v, want %+v", got, want)
		}
		if failed != 3 {
			t.Errorf("OnError saw %d events, want 3", failed)
		}
	})
}
