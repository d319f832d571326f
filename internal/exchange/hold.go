package exchange

import (
	"errors"
	"io"
	"net/http"
	"runtime"
)

// Side is a protocol's part in holding a wrapped server's answer: what the
// engine cannot know about the protocol. Everything else about holding,
// reading and releasing the answer is [Hold]'s.
type Side interface {
	// Holds reports whether an answer of status, an event stream or not,
	// must be read before it leaves; one that need not is settled Served
	// as soon as its head is written.
	Holds(status int, stream bool) bool
	// Classify is the protocol's reading of the answer's messages.
	Classify(msg []byte, complete bool) Verdict
	// AtEnd is the verdict of an answer that ended without showing one:
	// written is false when the handler wrote nothing at all.
	AtEnd(written bool) Verdict
	// Settle records the verdict v and makes the head ready to leave,
	// through h.Header(). It returns false when it answered in the
	// server's place, through h.Underlying(); the held answer is then
	// dropped and the handler's later writes fail.
	Settle(h *Hold, v Verdict) bool
}

// Follower is a Side whose clients read an event stream on, event by
// event, past the response that settled it Served: a2a-go yields each
// event of a streaming call to its caller, so a refusal after a result
// reaches the caller too. A Hold follows such a stream as it passes
// ([Answer.Follow]) and calls Contradicted once, for the first event that
// refuses the version after all, while the handler runs or as it returns.
type Follower interface {
	Side
	Contradicted()
}

// The states of a Hold.
const (
	watching = iota // nothing written yet
	holding         // the head and the first bytes are held
	released        // settled; the answer goes through
	replaced        // settled; the protocol answered instead
)

// ErrReplaced is what the wrapped handler's writes return once its answer
// has been replaced by the protocol's.
var ErrReplaced = errors.New("the answer was replaced by the middleware's: its negotiation could not be recorded as the server answered")

// Hold is the ResponseWriter a wrapped handler answers through, the one
// answer watcher of every inbound exchange. It holds the head of the answer
// as it was when its status was written (as net/http sends it: what the
// handler changes later is not sent) and, while the answer must be read,
// its bytes, up to the bound; it reads them with the one answer reader,
// and once they show a verdict hands it to the protocol's Settle, then
// writes what it held and lets the rest through unchanged.
//
// The zero Hold is not ready: Start it. As net/http requires, the wrapped
// handler must not use it once it has returned.
type Hold struct {
	http.ResponseWriter
	side     Side
	classify Classify // side.Classify, bound once per pooled Hold, not per answer
	limit    int64
	answer   Answer
	buf      []byte // the pooled buffer the answer is held in
	state    uint8
	status   int
	// implicit: the status came from a Write, not WriteHeader, and is left
	// to the Write underneath, which also sniffs a missing Content-Type.
	implicit bool
	late     http.Header // the head the handler changes while it is held
	werr     error       // the error of writing what was held
	// follows is side when it is a Follower, asked once per side as
	// classify is; following: the answer is a stream it follows, released
	// Served.
	follows   Follower
	following bool
}

// Start readies h for the answer to one request, written to w, read by
// side within limit bytes. The buffer [Hold.Release] kept, the one h held
// its last answer in, is reused.
func (h *Hold) Start(w http.ResponseWriter, side Side, limit int64) {
	classify, follows := h.classify, h.follows
	if h.side != side || classify == nil {
		classify = side.Classify
		follows, _ = side.(Follower)
	}
	*h = Hold{ResponseWriter: w, side: side, classify: classify, follows: follows, limit: limit, buf: h.buf[:0]}
}

// Release empties h for a pool once the handler has returned, keeping the
// buffer its answer was held in when it is at most maxBuffer bytes.
//
// It is never inlined: its caller's frame is under the record, and the
// copy that empties h would be in it (see "The record runs deep").
//
//go:noinline
func (h *Hold) Release(maxBuffer int) {
	buf := h.buf[:0]
	if held := h.answer.Held(); cap(held) > cap(buf) {
		buf = held[:0]
	}
	if cap(buf) > maxBuffer {
		buf = nil
	}
	*h = Hold{buf: buf, side: h.side, classify: h.classify, follows: h.follows}
}

// Underlying is the ResponseWriter the answer goes to.
func (h *Hold) Underlying() http.ResponseWriter { return h.ResponseWriter }

// Held returns the bytes of the answer held so far, as written.
func (h *Hold) Held() []byte { return h.answer.Held() }

// Stream reports whether the answer is an event stream.
func (h *Hold) Stream() bool { return h.answer.Stream() }

// Status returns the status the handler wrote; 0 when it wrote none.
func (h *Hold) Status() int { return h.status }

// Header returns the head the handler writes: while it is held, a copy,
// so that what the handler changes after writing its status is not sent.
func (h *Hold) Header() http.Header {
	if h.state != holding {
		return h.ResponseWriter.Header()
	}
	if h.late == nil {
		h.late = h.ResponseWriter.Header().Clone()
	}
	return h.late
}

// WriteHeader holds the head until the answer shows its verdict. An
// informational status passes through while nothing else was written.
func (h *Hold) WriteHeader(status int) {
	if h.state == released || h.state == watching && status < 200 {
		h.ResponseWriter.WriteHeader(status)
		return
	}
	if h.state != watching {
		return // superfluous while held; dropped once replaced
	}
	h.status = status
	h.answer.Start(h.ResponseWriter.Header(), h.limit, h.classify, h.buf)
	if !h.side.Holds(status, h.answer.Stream()) {
		h.settle(Served)
		return
	}
	h.state = holding
}

// Write holds p while the answer must be read, and passes it through
// once it has been.
func (h *Hold) Write(p []byte) (int, error) {
	switch h.begin() {
	case released:
		if h.following {
			return h.writeFollowed(p)
		}
		return h.ResponseWriter.Write(p)
	case replaced:
		return 0, ErrReplaced
	}
	return len(p), h.held(h.answer.Write(p))
}

// WriteString writes s as Write does, without copying it.
func (h *Hold) WriteString(s string) (int, error) {
	switch h.begin() {
	case released:
		if h.following {
			return h.writeFollowed([]byte(s))
		}
		return io.WriteString(h.ResponseWriter, s)
	case replaced:
		return 0, ErrReplaced
	}
	return len(s), h.held(h.answer.WriteString(s))
}

// begin starts the answer at an implicit 200 on its first write, and
// returns the state the write meets.
func (h *Hold) begin() uint8 {
	if h.state == watching {
		h.implicit = true
		h.WriteHeader(http.StatusOK)
	}
	return h.state
}

// held settles the answer once v decided it; the error is the write's:
// ErrReplaced when the protocol answered instead, or the error of
// writing what was held.
func (h *Hold) held(v Verdict) error {
	if v == Undecided {
		return nil
	}
	h.settle(v)
	if h.state == replaced {
		return ErrReplaced
	}
	return h.werr
}

// Flush reads a held plain answer as far as it has come, and settles it
// when that shows the verdict; a released answer is flushed.
func (h *Hold) Flush() {
	if h.state == holding {
		if v := h.answer.Peek(); v != Undecided {
			h.settle(v)
		}
	}
	if h.state != released {
		return
	}
	if f, ok := h.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (h *Hold) Unwrap() http.ResponseWriter { return h.ResponseWriter }

// Finish settles the answer once the handler has returned: one it did not
// write at all, or one still held, read whole; and reads a followed
// stream to its end.
func (h *Hold) Finish() {
	switch h.state {
	case watching:
		h.settle(h.side.AtEnd(false))
	case holding:
		v := h.answer.End()
		if v == Undecided {
			v = h.side.AtEnd(true)
		}
		h.settle(v)
	}
	if h.following {
		h.followToEnd()
	}
}

// followToEnd reads a followed stream to its end, out of line: Finish's
// frame is under the record.
//
//go:noinline
func (h *Hold) followToEnd() { h.follow(nil, true) }

// writeFollowed writes p to the client, and follows what was written.
// Like follow, it is never inlined: Write's frame is under the record.
//
//go:noinline
func (h *Hold) writeFollowed(p []byte) (int, error) {
	n, err := h.ResponseWriter.Write(p)
	h.follow(p[:n], false)
	return n, err
}

// follow reads p, which the client was given, on the stream followed,
// and hands the side the refusal it completes.
//
//go:noinline
func (h *Hold) follow(p []byte, end bool) {
	if h.answer.Follow(p, end) {
		h.follows.Contradicted()
	}
}

// settle hands v to the protocol, then releases what was held or, when
// the protocol answered instead, drops it.
func (h *Hold) settle(v Verdict) {
	prev := h.state
	h.state = released // the protocol readies the head that leaves, not the held copy
	if !h.side.Settle(h, v) {
		h.state = replaced
		return
	}
	if h.status != 0 && !h.implicit {
		h.ResponseWriter.WriteHeader(h.status)
	}
	if prev == holding {
		_, h.werr = h.ResponseWriter.Write(h.answer.Held())
	}
	h.following = h.follows != nil && v == Served && h.answer.Stream()
}

// Pool keeps values for the next request, as a sync.Pool does, except
// that a garbage collection does not empty it. A sync.Pool keeps what it
// held before a collection for one more at most (its victim cache), and
// what a P kept for itself for that P alone; behind an SDK that allocates
// hundreds of kilobytes a request, and so collects every few requests, a
// request after a collection often found the pool empty and made its
// answer watcher and body reader anew, then grew their buffers and their
// decoders' stacks again. Every pool of the engine and its adapters is a
// Pool.
//
// What it keeps is bounded: four values for each P (runtime.GOMAXPROCS
// when it is made), about as many as run at once. A value put past that
// is left to the collector, and a Get that finds none kept makes one. The
// zero Pool keeps nothing: its Get makes a value every time. Make one with
// [NewPool].
type Pool[T any] struct{ free chan *T }

// NewPool returns a Pool that keeps up to four values for each P.
func NewPool[T any]() Pool[T] { return Pool[T]{make(chan *T, 4*runtime.GOMAXPROCS(0))} }

// Get returns a kept value, or a new zero one when none is kept.
func (p Pool[T]) Get() *T {
	select {
	case v := <-p.free:
		return v
	default:
		return new(T)
	}
}

// Put keeps v for a later Get, unless p holds as many as it keeps.
//
// It is never inlined, for the reason Release is not.
//
//go:noinline
func (p Pool[T]) Put(v *T) {
	select {
	case p.free <- v:
	default:
	}
}
