package events

import (
	"context"
	"hash/maphash"
	"sync"
)

// sequencerShards spreads runs over independent locks, so that runs do not
// wait on one another while one run's events stay strictly serialized.
const sequencerShards = 16

// Sequencer is the part of a store that numbers run events, for sinks that
// cannot number them themselves (a file, a logger): it assigns each run
// event the next sequence of its run and records it in the sink it wraps.
// A database numbers events in the transaction that inserts them instead.
//
// Numbering happens when the event is recorded, not when it is decided,
// so an event an [Async] buffer drops never takes a number: put the
// Sequencer behind the buffer (NewAsync(NewSequencer(store), …)), never in
// front of it.
//
// A sequence is consumed only when the wrapped sink records the event:
// a failed write leaves no gap, and its number goes to the next event. One
// run's events are handed to the wrapped sink one at a time, in sequence
// order. Wrap one store per Sequencer: in front of a [Fanout], a store that
// failed an event it has not recorded and one that did would disagree on
// the next number.
//
// The Sequencer keeps a counter per run it has seen, in memory: a run that
// ends should be forgotten ([Sequencer.Forget]), and a run that outlives
// the process needs a store that numbers its events itself. Host events
// have no sequence and pass straight through.
type Sequencer struct {
	next   Sink
	seed   maphash.Seed
	shards [sequencerShards]sequencerShard
	// mu lets Close wait for the emits in flight.
	mu     sync.RWMutex
	closed bool
}

type sequencerShard struct {
	mu   sync.Mutex
	next map[string]int64
}

// NewSequencer returns a Sequencer that records in next. Its Close closes
// next when next is an io.Closer: the Sequencer owns the store it numbers
// for.
func NewSequencer(next Sink) *Sequencer {
	return &Sequencer{next: next, seed: maphash.MakeSeed()}
}

// Emit assigns e the next sequence of its run and records it in the
// wrapped sink; a host event is recorded as it is. It refuses an invalid
// event, and a context done before the sequence was assigned.
func (s *Sequencer) Emit(ctx context.Context, e Event) error {
	if s == nil || s.next == nil {
		return ErrNoSink
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := e.Validate(); err != nil {
		return err
	}
	if !e.IsRun() {
		return emitSafely(ctx, s.next, e)
	}
	sh := &s.shards[maphash.String(s.seed, e.RunID)%sequencerShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	// The wait for the shard may have outlasted the caller.
	if err := ctx.Err(); err != nil {
		return err
	}
	n := sh.next[e.RunID]
	if err := emitSafely(ctx, s.next, e.WithSequence(n)); err != nil {
		return err
	}
	if sh.next == nil {
		sh.next = make(map[string]int64)
	}
	sh.next[e.RunID] = n + 1
	return nil
}

// Forget drops the counter of runID, so that a run that has ended costs no
// memory. An event for runID afterwards starts again at 0, so forget only
// runs that will get no more events.
func (s *Sequencer) Forget(runID string) {
	if s == nil || s.next == nil { // a zero Sequencer has no seed and no counters
		return
	}
	sh := &s.shards[maphash.String(s.seed, runID)%sequencerShards]
	sh.mu.Lock()
	delete(sh.next, runID)
	sh.mu.Unlock()
}

// Close waits for the emits in flight, then closes the wrapped sink when it
// is an io.Closer. Emit afterwards returns [ErrClosed]; a second Close does
// nothing.
func (s *Sequencer) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return closeIfCloser(s.next)
}
