package events

import (
	"context"
	"fmt"
	"io"
	"sync"
)

// JSONLines writes each event to an io.Writer as one line of JSON: the
// closed envelope of [Event.AppendJSON] and a newline. It is safe for
// concurrent use: each event reaches the writer in a single Write call,
// under a lock, so lines never interleave.
//
// It writes the sequence a run event carries and refuses one that has
// none, so put it behind a [Sequencer] (or another store that numbers
// events). It does not own the writer and has no Close.
type JSONLines struct {
	w  io.Writer
	mu sync.Mutex
	// torn is set when a Write failed part-way, leaving a partial line;
	// the next Write starts with a newline so that the fragment stays on a
	// line of its own and the next event's line parses.
	torn bool
}

// NewJSONLines returns a JSONLines writing to w.
func NewJSONLines(w io.Writer) *JSONLines { return &JSONLines{w: w} }

// lineBufs recycles line buffers: encoding happens outside the lock, so
// each concurrent Emit needs its own.
var lineBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// Emit writes e as one line. It refuses an invalid or unsequenced event
// before writing anything, and returns the writer's error (a short write
// is io.ErrShortWrite) wrapped, when the line was not written whole.
func (j *JSONLines) Emit(ctx context.Context, e Event) error {
	if j == nil || j.w == nil {
		return ErrNoSink
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	bp := lineBufs.Get().(*[]byte)
	defer lineBufs.Put(bp)
	// Room for the newline that repairs a torn line, used or not.
	line, err := e.AppendJSON(append((*bp)[:0], '\n'))
	if err != nil {
		return err
	}
	line = append(line, '\n')
	*bp = line[:0]

	j.mu.Lock()
	defer j.mu.Unlock()
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
	return nil
}
