package exchange

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/wopneg/wopneg/internal/egress"
)

// Verdict is what an answer says of the version its request was sent at.
type Verdict uint8

const (
	// Undecided: more of the answer is needed.
	Undecided Verdict = iota
	// Served: nothing in the answer refuses the version.
	Served
	// Refused: the answer refuses the version.
	Refused
	// Unreadable: the answer cannot be read as its client reads it (an
	// encoding no client here decodes, a corrupt stream) or not within its
	// bound. It is never an acceptance: what cannot be read may hold a
	// refusal.
	Unreadable
)

// Classify is a protocol's reading of answer text, the one thing about an
// answer the protocols do not share: msg is a plain answer's JSON (whole
// when complete, as far as it has come otherwise) or the data of one
// server-sent event (always complete). It returns Undecided when it needs
// more; it never sees encoded bytes or a byte-order mark.
type Classify func(msg []byte, complete bool) Verdict

// content codings an Answer decodes, as the protocols' HTTP clients do.
const (
	identity = iota
	gzipped
	deflated
	unknownCoding
)

// bom is the UTF-8 byte-order mark, which a JSON reader and an event-stream
// reader alike skip at the start of what they read.
const bom = "\xEF\xBB\xBF"

// Answer reads one HTTP answer as the protocol's clients read it, the one
// reader of answers for every exchange: inbound, where a wrapped server
// writes it, and outbound, where a peer sends it. It decodes the
// Content-Encoding (gzip and deflate; anything else is Unreadable), skips a
// leading byte-order mark, and reads JSON or an event stream, handing
// each complete message to the protocol's Classify. Everything is read
// within one bound, on the bytes as sent and on the bytes decoded.
//
// An identity-coded event stream is read event by event as it comes; a
// plain answer when its reader asks (Peek) and at its end; an encoded one
// only at its end, since a compressed stream cannot be read in pieces
// without holding the decoder across writes. The zero Answer is not
// ready: Start it.
type Answer struct {
	classify Classify
	limit    int64
	coding   int
	sse      bool
	raw      []byte // the answer as sent: what is handed on
	scan     EventScanner
	started  bool // the stream's byte-order mark, if any, was skipped
	peeked   int  // len(raw) when Peek last read it: peeks double, so all of them read O(n)
	// plain is a stream's text as its client reads it: raw, or, for an
	// encoded stream, what End decoded. Follow reads on in it.
	plain []byte
	// past: the answer was settled, and Follow reads on for a refusal
	// alone; done: it found one, and reads no further.
	past, done bool
}

// Start readies a for an answer with head h, bounded by limit bytes, read by
// c; buf is reused to hold it.
func (a *Answer) Start(h http.Header, limit int64, c Classify, buf []byte) {
	*a = Answer{classify: c, limit: limit, raw: buf[:0], sse: IsEventStream(h.Get("Content-Type")), coding: codingOf(h)}
}

// codingOf is the content coding of a head: identity when none is named
// (or "identity"), unknownCoding for a coding no client here decodes or for
// more than one coding.
func codingOf(h http.Header) int {
	vs := h.Values("Content-Encoding")
	if len(vs) == 0 {
		return identity
	}
	if len(vs) > 1 || strings.Contains(vs[0], ",") {
		return unknownCoding
	}
	switch strings.ToLower(strings.Trim(vs[0], " \t")) {
	case "", "identity":
		return identity
	case "gzip", "x-gzip":
		return gzipped
	case "deflate":
		return deflated
	}
	return unknownCoding
}

// Held returns every byte of the answer written so far, as sent.
func (a *Answer) Held() []byte { return a.raw }

// Write adds p to the answer and returns what it shows so far: the verdict
// of the first event that decides, for an identity-coded event stream;
// past the bound, what a plain answer shows as far as it came, or
// Unreadable; Undecided otherwise.
func (a *Answer) Write(p []byte) Verdict {
	a.raw = append(a.raw, p...)
	return a.wrote()
}

// WriteString adds s to the answer as Write adds its bytes.
func (a *Answer) WriteString(s string) Verdict {
	a.raw = append(a.raw, s...)
	return a.wrote()
}

// wrote is what the answer shows once a write added to it.
func (a *Answer) wrote() Verdict {
	if int64(len(a.raw)) > a.limit {
		// What was written by the write that passed the bound may
		// decide already (a result member first, or the refusal it
		// completes); otherwise the rest is not read.
		if !a.sse && a.coding == identity {
			if plain, ok := skipBOM(a.raw); ok {
				if v := a.classify(plain, false); v != Undecided {
					return v
				}
			}
		}
		return Unreadable
	}
	if !a.sse || a.coding != identity {
		return Undecided
	}
	return a.events(a.raw, false)
}

// Peek reads a plain identity-coded answer as far as it has come, for a
// reader that may decide early (a handler flushed, a peer paused): read
// whole when it is one JSON value so far, as the client of an answer that
// ends there reads it; otherwise it settles only on a refusal, since what
// shows a result so far may yet carry an error beside it, which a client
// reads (a2a-go's takes the error of a response that holds both). It
// reads again only once the answer has doubled since it last read, so
// that peeking after every write costs linear time.
func (a *Answer) Peek() Verdict {
	if a.sse || a.coding != identity || len(a.raw) < 2*a.peeked || len(a.raw) == 0 {
		return Undecided
	}
	a.peeked = len(a.raw)
	plain, ok := skipBOM(a.raw)
	switch {
	case !ok:
		return Undecided
	case jsontext.Value(plain).IsValid(lenient...):
		return a.classify(plain, true)
	case a.classify(plain, false) == Refused:
		return Refused
	}
	return Undecided
}

// End reads the whole answer once it is all written: decoded, whole, as
// its client reads it at the end. It returns Undecided for an event stream
// none of whose events decided, which the protocol reads as it reads the
// end of a stream.
func (a *Answer) End() Verdict {
	plain, err := a.decoded()
	if err != nil {
		return Unreadable
	}
	if a.sse {
		// An identity-coded stream goes on from the events Write read; an
		// encoded one was never scanned, and is read from its start.
		a.plain = plain
		return a.events(plain, true)
	}
	plain, _ = skipBOM(plain)
	return a.classify(plain, true)
}

// events reads the events of the stream that are complete in plain, and
// returns the verdict of the first that decides. At the end of the
// answer, the event its end cuts off ([EventScanner.End]) is read last.
// An event that not every client takes as a message counts only when it
// refuses, since some client reads the refusal in it: one the answer's
// end cuts off (the SDKs' clients read it, the event-stream format drops
// it), and one with an event type of its own ([EventScanner.Named]).
// Past the answer's settling (Follow), only a refusal decides.
func (a *Answer) events(plain []byte, end bool) Verdict {
	if !a.started {
		rest, ok := skipBOM(plain)
		if !ok {
			return Undecided
		}
		a.scan.pos, a.started = len(plain)-len(rest), true
	}
	for {
		data, ok := a.scan.Next(plain)
		whole := ok
		if !ok && end {
			data, ok, whole = a.scan.End(plain)
		}
		if !ok {
			return Undecided
		}
		sure := whole && !a.scan.Named()
		if a.scan.cut {
			if a.refusesAtBound(data) {
				return Refused
			}
			continue
		}
		if v := a.classify(data, true); v == Refused || v != Undecided && sure && !a.past {
			return v
		}
	}
}

// Follow reads an event stream on past the event that settled it Served,
// as its client is given it: p is what follows the bytes already given to
// Write (nil for an encoded stream, which End read whole), and end is the
// answer's end. It reports whether they complete an event that refuses
// the version, and is done once one has: a client that yields a stream's
// events one by one (a2a-go's does) gives its caller that refusal after
// the result, so the record must hold it too. An event counts as
// [Answer.events] counts one. Only the line being read and the data of
// the event being read are kept, each within the bound. A line or an
// event's data longer than that cuts its event: the event's data, with
// the line's first bytes up to the bound, is read as far as the bound for
// a refusal alone ([Answer.refusesAtBound]), and the rest of the event is
// passed over unread ([EventScanner.Pass]). The cut depends on the lines
// alone, so it falls at the same place whether the stream comes whole or
// in pieces. A client that reads longer events than the bound (a2a-go's
// reads up to 10 MB) is given a refusal padded past the bound, and one
// whose error object ends within the bound is read here too.
func (a *Answer) Follow(p []byte, end bool) bool {
	if !a.sse || a.done {
		return false
	}
	a.past, a.scan.limit = true, int(a.limit)
	if a.coding == identity {
		a.raw = append(a.raw, p...)
		a.plain = a.raw
	}
	if a.events(a.plain, end) == Refused {
		a.done = true
		return true
	}
	if a.coding == identity {
		// What was read is given on already: keep the line being read.
		n := a.scan.pos
		a.raw = a.raw[:copy(a.raw, a.raw[n:])]
		a.scan.pos, a.scan.searched = 0, max(a.scan.searched-n, 0)
		// (A \r at its end is its line break, held for a \n.)
		if line := bytes.TrimSuffix(a.raw, []byte("\r")); int64(len(line)) > a.limit {
			// A line too long to keep cuts its event as it would whole,
			// and the rest of it is dropped up to its line break: the \r
			// that ended it, when it came, stays for Next to end it with,
			// so that the \n of a CRLF after it is no blank line, and a
			// lone CR ends the line it ended.
			data, cut := a.scan.line(line)
			a.raw, a.scan.searched = a.raw[:copy(a.raw, a.raw[len(line):])], 0
			a.scan.Pass(true)
			if cut && a.refusesAtBound(data) {
				a.done = true
				return true
			}
		}
	}
	return false
}

// refusesAtBound reports whether data, the data of an event too long to
// keep, refuses the version as far as the bound: it is read as a plain
// answer past its bound is read ([Answer.Write]), and only a refusal
// counts, since the rest of the event is not read.
func (a *Answer) refusesAtBound(data []byte) bool {
	return a.classify(data[:min(int64(len(data)), a.limit)], false) == Refused
}

// skipBOM returns b without its leading byte-order mark; ok is false while
// b is too short to tell.
func skipBOM(b []byte) (rest []byte, ok bool) {
	if len(b) < len(bom) && strings.HasPrefix(bom, string(b)) {
		return b, false // nothing yet, or the start of a mark
	}
	return bytes.TrimPrefix(b, []byte(bom)), true
}

// errOverBound is a decoded answer larger than its bound.
var errOverBound = errors.New("the decoded answer exceeds its bound")

// decoded returns the answer's bytes as its client reads them.
func (a *Answer) decoded() ([]byte, error) {
	var zr io.Reader
	var err error
	switch a.coding {
	case identity:
		return a.raw, nil
	case gzipped:
		zr, err = gzip.NewReader(bytes.NewReader(a.raw))
	case deflated:
		// "deflate" is zlib-wrapped (RFC 9110 §8.4.1.2); clients accept the
		// raw form servers often send too.
		if zr, err = zlib.NewReader(bytes.NewReader(a.raw)); err != nil {
			zr, err = flate.NewReader(bytes.NewReader(a.raw)), nil
		}
	default:
		return nil, errors.New("the answer's Content-Encoding is not one its clients decode")
	}
	if err != nil {
		return nil, err
	}
	plain, err := io.ReadAll(io.LimitReader(zr, a.limit+1))
	if err == nil && int64(len(plain)) > a.limit {
		err = errOverBound
	}
	return plain, err
}

// Read reads resp's answer until it shows a verdict, within limit bytes,
// as the inbound side reads a wrapped server's: an event stream up to its
// deciding event, a plain answer as far as it must. It is the one reader
// of an outbound answer, and what becomes of the answer is said here once
// for every protocol:
//
//   - an answer that cannot be read as its clients read it, or not within
//     limit (Unreadable), is an *egress.Error of kind TooLarge or
//     NotAnAnswer, never an answer: what cannot be read may hold a
//     refusal;
//   - a failure to read it before it showed a verdict is a transport
//     failure, an *egress.Error of the kind [readFailure] gives;
//   - a refused answer is not handed on: its body is closed, and the
//     bytes held are the protocol's, to read what the refusal says;
//   - any other is handed on whole: resp.Body gives back the bytes held,
//     then the rest, or the error that ended the read;
//   - an event stream handed on Served is followed as its caller reads it
//     past the bytes held ([Answer.Follow]), when later is not nil: later
//     is called once, as the caller reads it, for an event that refuses
//     the version after all.
//
// The body is closed with every error. It returns the verdict, Undecided
// for a stream that ended without deciding; the protocol's Classify keeps
// what it read of a refusal, a later one included.
func Read(resp *http.Response, limit int64, c Classify, later func()) (v Verdict, err error) {
	var a Answer
	a.Start(resp.Header, limit, c, make([]byte, 0, 512))
	chunk := make([]byte, 8<<10)
	for v == Undecided && err == nil {
		// At most one byte past the bound is read: enough to know it is
		// passed, as a writer's last write is.
		var n int
		n, err = resp.Body.Read(chunk[:min(int64(len(chunk)), a.limit+1-int64(len(a.raw)))])
		v = a.Write(chunk[:n])
		switch {
		case v == Undecided && err == nil:
			v = a.Peek()
		case v == Undecided && err == io.EOF:
			v = a.End()
		}
	}
	if v == Unreadable {
		err = unreadable(resp, a.raw, limit)
	} else if v == Undecided && err != io.EOF {
		err = readFailure(resp, err)
	} else if v == Refused {
		err = nil
	} else {
		replay := NewReplay(a.raw, err, resp.Body)
		if later != nil && a.sse && v == Served {
			follow := a // a copy: a itself stays on the stack
			replay.follow, replay.later = &follow, later
		}
		resp.Body = replay
		return v, nil
	}
	resp.Body.Close()
	return v, err
}

// Replay is an answer's body whose first bytes were read: it gives them
// back, then the rest, or the error that ended what was read.
type Replay struct {
	held []byte
	err  error // what ended the read of held; nil when more is to come
	rc   io.ReadCloser
	// follow, when not nil, is the stream read on past held as the caller
	// reads it, and later is called when it refuses (see Read).
	follow *Answer
	later  func()
}

// NewReplay returns the body that reads held, then err (nil: the rest of
// rc).
func NewReplay(held []byte, err error, rc io.ReadCloser) *Replay {
	return &Replay{held: held, err: err, rc: rc}
}

// Read reads what was held, then the rest.
func (r *Replay) Read(p []byte) (int, error) {
	if len(r.held) > 0 {
		n := copy(p, r.held)
		r.held = r.held[n:]
		return n, nil
	}
	if r.err != nil {
		r.read(nil, r.err == io.EOF)
		return 0, r.err
	}
	n, err := r.rc.Read(p)
	r.read(p[:n], err == io.EOF)
	return n, err
}

// read follows p, which the caller is given past the bytes held.
func (r *Replay) read(p []byte, end bool) {
	if r.follow != nil && r.follow.Follow(p, end) {
		r.later()
	}
}

// Close closes the body.
func (r *Replay) Close() error { return r.rc.Close() }

// Stream reports whether the answer is an event stream.
func (a *Answer) Stream() bool { return a.sse }

// unreadable is the error of an outbound answer [Read] found Unreadable:
// larger than limit (TooLarge), or not in a coding its clients decode, or
// corrupt (NotAnAnswer). It names no URL.
func unreadable(resp *http.Response, held []byte, limit int64) error {
	if int64(len(held)) > limit {
		return &egress.Error{Kind: egress.TooLarge, Status: resp.StatusCode, Err: &http.MaxBytesError{Limit: limit}}
	}
	return &egress.Error{Kind: egress.NotAnAnswer, Status: resp.StatusCode,
		Err: errors.New("the answer is not in a Content-Encoding its clients decode, or does not decode within its bound")}
}

// readFailure is the *egress.Error of a failure to read resp's body:
// the one inside err, or one of kind TooLarge for a bound, Timeout or
// Canceled for the context, HangUp for any other.
func readFailure(resp *http.Response, err error) error {
	var e *egress.Error
	if errors.As(err, &e) {
		return err
	}
	kind := egress.HangUp
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		kind = egress.TooLarge
	case errors.Is(err, context.DeadlineExceeded):
		kind = egress.Timeout
	case errors.Is(err, context.Canceled):
		kind = egress.Canceled
	}
	e = &egress.Error{Kind: kind, Status: resp.StatusCode, Err: err}
	if resp.Request != nil {
		e.URL = egress.Where(resp.Request.URL)
	}
	return e
}

// MayHoldCode reports whether b may hold the JSON-RPC error code code in
// any spelling a JSON reader takes for it (-32022, -32022.0, -3.2022e4,
// -320220e-1, ...): whatever the spelling, the digits of code's magnitude
// stand in a row, one decimal point perhaps among them, or, for a number
// a float64 reader rounds up to it (-32021.99999999999999999), the digits
// of the magnitude less one followed by a 9. false is certain, so a
// protocol may skip reading an answer for its refusal; true asks for the
// full read.
func MayHoldCode(b []byte, code int) bool {
	if code < 0 {
		code = -code
	}
	var exact, below [21]byte
	return holds(b, strconv.AppendInt(exact[:0], int64(code), 10)) ||
		holds(b, append(strconv.AppendInt(below[:0], int64(code)-1, 10), '9'))
}

// holds reports whether digits stand in b in a row, one decimal point
// perhaps among them.
func holds(b, digits []byte) bool {
	for rest := b; ; {
		i := bytes.IndexByte(rest, digits[0])
		if i < 0 {
			return false
		}
		rest = rest[i+1:]
		if digitsFollow(rest, digits[1:]) {
			return true
		}
	}
}

// digitsFollow reports whether b starts with digits, a decimal point
// allowed once among them.
func digitsFollow(b, digits []byte) bool {
	point := false
	for _, c := range digits {
		if len(b) > 0 && b[0] == '.' && !point {
			point, b = true, b[1:]
		}
		if len(b) == 0 || b[0] != c {
			return false
		}
		b = b[1:]
	}
	return true
}
