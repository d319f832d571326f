package events

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
)

// JSONLines is an event store in an io.Writer: it writes each event as one
// line of JSON, the closed envelope of [Event.MarshalJSON] and a newline,
// and it numbers run events as it writes them.
//
// A run event is given the next sequence of its run (0 for the run's
// first, then 1, 2, …), whatever sequence it carried: the store, not the
// caller, assigns it. A number is consumed only when the line was written
// whole, so a failed write leaves no gap and its number goes to the next
// event. Numbering happens when the event is recorded, not when it is
// decided, so behind an [Async] (NewAsync(NewJSONLines(w), …)) an event
// the buffer drops never takes a number. Host events have no sequence.
//
// Emit is safe for concurrent use: each event reaches the writer in a
// single Write call, under a lock, so lines never interleave and one run's
// lines are in sequence order.
//
// It keeps a counter per run it has written, in memory: forget a run that
// has ended ([JSONLines.Forget]); a run whose numbering must outlive the
// process needs a store that keeps its counters, such as a database. It
// does not own the writer and has no Close. The zero JSONLines has no
// writer and refuses every event with [ErrClosed].
//
// A JSONLines made by [NewJSONLines] hands each line to its writer and no
// further, and is not [Durable]; one made by [NewJSONLinesFile] syncs its
// file after each line, and is.
type JSONLines struct {
	w io.Writer
	// sync, when set, makes each written line durable before Emit
	// returns nil (the file's Sync).
	sync func() error
	mu   sync.Mutex
	// next is the next sequence of each run written to.
	next map[string]int64
	// buf is the line being written, reused under mu.
	buf []byte
	// torn is set when a Write failed part-way, leaving a partial line;
	// the next Write starts with a newline so that the fragment stays on a
	// line of its own and the next event's line parses.
	torn bool
}

// NewJSONLines returns a JSONLines writing to w.
func NewJSONLines(w io.Writer) *JSONLines { return &JSONLines{w: w} }

// NewJSONLinesFile returns a JSONLines writing to f that syncs f after
// each line (fsync), so that a nil from Emit means the line is on stable
// storage and survives a crash of the process and of the machine: it is
// [Durable], a sink a host that requires the audit may record into. Each
// Emit waits for the disk; open f for appending (os.O_APPEND), and give
// it a file, not a pipe or a terminal, whose Sync fails. A line whose
// sync failed was written and keeps its sequence, but Emit returns the
// error, since it may not survive a crash.
func NewJSONLinesFile(f *os.File) *JSONLines {
	if f == nil {
		return &JSONLines{}
	}
	return &JSONLines{w: f, sync: f.Sync}
}

// Durable reports whether a nil from Emit means the line is on stable
// storage: true for a JSONLines made by [NewJSONLinesFile].
func (j *JSONLines) Durable() bool { return j != nil && j.sync != nil }

// Emit numbers e when it is a run event and writes it as one line. It
// refuses an invalid event before writing anything, and returns the
// writer's error (a short write is io.ErrShortWrite) wrapped, when the line
// was not written whole.
func (j *JSONLines) Emit(ctx context.Context, e Event) error {
	if j == nil || j.w == nil {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := e.check(); err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if e.RunID != "" {
		e.Sequence, e.HasSequence = j.next[e.RunID], true
	}
	// Room for the newline that repairs a torn line, used or not.
	line := e.appendJSON(append(j.buf[:0], '\n'))
	line = append(line, '\n')
	j.buf = line[:0]
	if !j.torn {
		line = line[1:]
	}
	n, err := j.w.Write(line)
	if err == nil && n < len(line) {
		err = io.ErrShortWrite
	}
	if err != nil {
		j.torn = j.torn || n > 0
		return fmt.Errorf("events: JSON lines: %w", err)
	}
	j.torn = false
	if e.RunID != "" {
		if j.next == nil {
			j.next = make(map[string]int64)
		}
		j.next[e.RunID] = e.Sequence + 1
	}
	if j.sync != nil {
		if err := j.sync(); err != nil {
			return fmt.Errorf("events: JSON lines: sync: %w", err)
		}
	}
	return nil
}

// Forget drops the counter of runID, so that a run that has ended costs no
// memory. An event for runID afterwards starts again at 0, so forget only
// runs that will get no more events.
func (j *JSONLines) Forget(runID string) {
	if j == nil {
		return
	}
	j.mu.Lock()
	delete(j.next, runID)
	j.mu.Unlock()
}
