package exchange

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/wopneg/wopneg/internal/egress"
)

// compressed is s written through the writer newWriter makes.
func compressed(s string, newWriter func(io.Writer) io.WriteCloser) string {
	var b bytes.Buffer
	w := newWriter(&b)
	_, _ = io.WriteString(w, s)
	_ = w.Close()
	return b.String()
}

func gz(s string) string {
	return compressed(s, func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) })
}

func zl(s string) string {
	return compressed(s, func(w io.Writer) io.WriteCloser { return zlib.NewWriter(w) })
}

func rawDeflate(s string) string {
	return compressed(s, func(w io.Writer) io.WriteCloser { fw, _ := flate.NewWriter(w, flate.BestSpeed); return fw })
}

// tracing is a Classify that refuses on "NO", serves on "OK", and keeps
// what it was handed.
type tracing struct{ seen []string }

func (c *tracing) classify(msg []byte, complete bool) Verdict {
	c.seen = append(c.seen, string(msg))
	switch {
	case bytes.Contains(msg, []byte("NO")):
		return Refused
	case bytes.Contains(msg, []byte("OK")):
		return Served
	}
	return Undecided
}

// TestAnswer: each way an answer is written, read as its clients read it.
func TestAnswer(t *testing.T) {
	const sse, js = "text/event-stream", "application/json"
	for _, c := range []struct {
		name     string
		ct, ce   string
		writes   []string
		limit    int64
		peek     bool // Peek after the writes
		want     Verdict
		atWrite  int // the write that decided; -1: End decided
		lastSeen string
	}{
		{"plain JSON, read at its end", js, "", []string{`{"x":`, `"NO"}`}, 100, false, Refused, -1, `{"x":"NO"}`},
		{"plain JSON, peeked", js, "", []string{`{"x":"OK"`}, 100, true, Served, -1, `{"x":"OK"`},
		{"a BOM before JSON", js, "", []string{"\xEF\xBB", "\xBF{\"NO\":1}"}, 100, false, Refused, -1, `{"NO":1}`},
		{"identity named", js, "identity", []string{`{"NO":1}`}, 100, false, Refused, -1, `{"NO":1}`},
		{"gzip", js, "gzip", []string{gz(`{"NO":1}`)}, 100, false, Refused, -1, `{"NO":1}`},
		{"x-gzip, a BOM inside", js, "X-GZIP", []string{gz("\xEF\xBB\xBF{\"NO\":1}")}, 100, false, Refused, -1, `{"NO":1}`},
		{"deflate, zlib-wrapped", js, "deflate", []string{zl(`{"NO":1}`)}, 100, false, Refused, -1, `{"NO":1}`},
		{"deflate, raw", js, "deflate", []string{rawDeflate(`{"NO":1}`)}, 100, false, Refused, -1, `{"NO":1}`},
		{"an unknown coding", js, "br", []string{`{"OK":1}`}, 100, false, Unreadable, -1, ""},
		{"two codings", js, "gzip, gzip", []string{gz(gz(`{"OK":1}`))}, 100, false, Unreadable, -1, ""},
		{"corrupt gzip", js, "gzip", []string{"\x1f\x8b\x08garbage"}, 100, false, Unreadable, -1, ""},
		{"gzip decoding past the bound", js, "gzip", []string{gz(strings.Repeat(" ", 200) + `{"OK":1}`)}, 100, false, Unreadable, -1, ""},
		{"past the bound, decided within the write", js, "", []string{`{"OK":` + strings.Repeat(" ", 200) + "1}"}, 100, false, Served, 0, `{"OK":` + strings.Repeat(" ", 200) + "1}"},
		{"past the bound, undecided", js, "", []string{`{"x":` + strings.Repeat(" ", 200)}, 100, false, Unreadable, 0, `{"x":` + strings.Repeat(" ", 200)},
		{"a stream past the bound", sse, "", []string{"data: x" + strings.Repeat(" ", 200)}, 100, false, Unreadable, 0, ""},
		{"a stream, event by event", sse, "", []string{"data: a\n\n", "data: NO\n\n"}, 100, false, Refused, 1, "NO"},
		{"a stream after a BOM, in pieces", sse, "", []string{"\xEF", "\xBB\xBFdata: NO\r\n", "\r\n"}, 100, false, Refused, 2, "NO"},
		{"a stream that ends undecided", sse, "", []string{"data: a\n\n", ": NO"}, 100, false, Undecided, -1, "a"},
		{"a stream whose end cuts its last event off, read as its clients read it", sse, "", []string{"data: a\n\n", "data: NO"}, 100, false, Refused, -1, "NO"},
		{"a stream whose end cuts off an event that serves, which not every client reads", sse, "", []string{": note\n\n", "data: OK\r"}, 100, false, Undecided, -1, "OK"},
		{"an event of another type that serves settles nothing", sse, "", []string{"event: other\ndata: OK\n\n", "data: x\n\n"}, 100, false, Undecided, -1, "x"},
		{"an event of another type that refuses settles", sse, "", []string{"event: other\ndata: NO\n\n", "data: OK\n\n"}, 100, false, Refused, 0, "NO"},
		{"a message event serves", sse, "", []string{"event: other\n\nevent: message\ndata: OK\n\n"}, 100, false, Served, 0, "OK"},
		{"a gzip stream, read at its end", sse, "gzip", []string{gz("data: a\n\ndata: NO\n\n")}, 100, false, Refused, -1, "NO"},
		{"nothing at all", js, "", nil, 100, false, Undecided, -1, ""},
		{"exactly the bound", js, "", []string{strings.Repeat(" ", 100)}, 100, false, Undecided, -1, strings.Repeat(" ", 100)},
		{"gzip decoding to exactly the bound", js, "gzip", []string{gz(strings.Repeat(" ", 100))}, 100, false, Undecided, -1, strings.Repeat(" ", 100)},
		{"a BOM alone", js, "", []string{"\xEF\xBB\xBF"}, 100, false, Undecided, -1, ""},
		{"a lone partial BOM", js, "", []string{"\xEF\xBB"}, 100, true, Undecided, -1, "\xEF\xBB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{"Content-Type": {c.ct}}
			if c.ce != "" {
				h.Set("Content-Encoding", c.ce)
			}
			var tr tracing
			var a Answer
			a.Start(h, c.limit, tr.classify, make([]byte, 0, 4))
			v, at := Undecided, -1
			var all string
			for i, w := range c.writes {
				all += w
				if v = a.Write([]byte(w)); v != Undecided {
					at = i
					break
				}
			}
			if v == Undecided && c.peek {
				v = a.Peek()
			}
			if v == Undecided {
				v = a.End()
			}
			last := ""
			if len(tr.seen) > 0 {
				last = tr.seen[len(tr.seen)-1]
			}
			if v != c.want || at != c.atWrite || last != c.lastSeen {
				t.Errorf("verdict %d at write %d, last seen %q; want %d at %d, %q", v, at, last, c.want, c.atWrite, c.lastSeen)
			}
			if string(a.Held()) != all || a.Stream() != (c.ct == sse) {
				t.Errorf("held %q, stream %t", a.Held(), a.Stream())
			}
		})
	}
}

// TestPeekDoubles: Peek reads again only once the answer has doubled since
// it last read, so that peeking after every write is linear; it never
// reads a stream or an encoded answer.
func TestPeekDoubles(t *testing.T) {
	var tr tracing
	var a Answer
	a.Start(http.Header{}, 1<<20, tr.classify, nil)
	if a.Peek() != Undecided || len(tr.seen) != 0 {
		t.Fatalf("an empty answer was read: %q", tr.seen)
	}
	reads := 0
	for range 64 {
		a.Write([]byte("xx"))
		a.Peek()
		if len(tr.seen) > reads {
			reads = len(tr.seen)
		}
	}
	if want := []string{"xx", "xxxx", "xxxxxxxx", strings.Repeat("x", 16), strings.Repeat("x", 32), strings.Repeat("x", 64), strings.Repeat("x", 128)}; strings.Join(tr.seen, ",") != strings.Join(want, ",") {
		t.Errorf("peeks read %q", tr.seen)
	}
	for _, h := range []http.Header{{"Content-Type": {"text/event-stream"}}, {"Content-Encoding": {"gzip"}}} {
		var tr tracing
		a.Start(h, 100, tr.classify, nil)
		a.Write([]byte("OK"))
		if a.Peek() != Undecided || len(tr.seen) != 0 {
			t.Errorf("%v: peeked %q", h, tr.seen)
		}
	}
}

// chunks is a body that returns its pieces one read at a time, then err,
// keeping what it returned.
type chunks struct {
	pieces []string
	err    error
	closed bool
	read   []byte
}

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.pieces) == 0 {
		return 0, c.err
	}
	n := copy(p, c.pieces[0])
	c.read = append(c.read, p[:n]...)
	if c.pieces[0] = c.pieces[0][n:]; c.pieces[0] == "" {
		c.pieces = c.pieces[1:]
	}
	return n, nil
}

func (c *chunks) Close() error { c.closed = true; return nil }

// TestRead: an outbound answer is read until it decides, at most one byte
// past the bound. One that cannot be read within it, or whose read fails
// before it decided, is a typed error; a refused one is not handed on;
// the body is closed with either. Any other is handed on whole, the bytes
// held first.
func TestRead(t *testing.T) {
	hangUp := errors.New("connection reset")
	long := `{"x":"` + strings.Repeat("y", 200) + `"}`
	for _, c := range []struct {
		name    string
		ct      string
		pieces  []string
		end     error
		limit   int64
		want    Verdict
		fails   egress.Kind // the error's kind; 0 for none
		held    string
		handed  string // what the body reads after, when it is handed on
		thenErr error  // and the error it ends with (io.ReadAll's nil at io.EOF)
	}{
		{"a refusal so far decides early", "application/json", []string{`{"NO":`, `1} and more`}, io.EOF, 100, Refused, 0, `{"NO":`, "", nil},
		{"a result so far is read on, as an error may follow it", "application/json", []string{`{"OK":`, `1} and more`}, io.EOF, 100, Served, 0, `{"OK":1} and more`, `{"OK":1} and more`, nil},
		{"a whole value so far decides early", "application/json", []string{`{"OK":1}`, ` and more`}, io.EOF, 100, Served, 0, `{"OK":1}`, `{"OK":1} and more`, nil},
		{"read as far as it must", "application/json", []string{`{"x":`, `"NO"}`}, io.EOF, 100, Refused, 0, `{"x":"NO"}`, "", nil},
		{"read to its end", "application/json", []string{`{"x":`, `"y"}`}, io.EOF, 100, Undecided, 0, `{"x":"y"}`, `{"x":"y"}`, nil},
		{"a stream up to its deciding event", "text/event-stream", []string{"data: a\n\n", "data: NO\n\n", "data: more\n\n"}, io.EOF, 100, Refused, 0, "data: a\n\ndata: NO\n\n", "", nil},
		{"a stream that ends undecided", "text/event-stream", []string{"data: a\n\n"}, io.EOF, 100, Undecided, 0, "data: a\n\n", "data: a\n\n", nil},
		{"a stream that breaks after it decided", "text/event-stream", []string{"data: OK\n\n"}, hangUp, 100, Served, 0, "data: OK\n\n", "data: OK\n\n", hangUp},
		{"a hang-up before it decided", "application/json", []string{`{"x":`}, hangUp, 100, Undecided, egress.HangUp, `{"x":`, "", nil},
		{"one byte past the bound, in pieces", "application/json", []string{`{"x":`, long[5:]}, io.EOF, 10, Unreadable, egress.TooLarge, `{"x":"yyyyy`, "", nil},
		{"one byte past the bound", "application/json", []string{long}, io.EOF, 10, Unreadable, egress.TooLarge, `{"x":"yyyyy`, "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var tr tracing
			body := &chunks{pieces: c.pieces, err: c.end}
			resp := &http.Response{Header: http.Header{"Content-Type": {c.ct}}, Body: body}
			v, err := Read(resp, c.limit, tr.classify, nil)
			if v != c.want || string(body.read) != c.held {
				t.Errorf("%d, read %q; want %d, %q", v, body.read, c.want, c.held)
			}
			var e *egress.Error
			if c.fails == 0 && err != nil || c.fails != 0 && (!errors.As(err, &e) || e.Kind != c.fails) {
				t.Errorf("error %v; want kind %v", err, c.fails)
			}
			if handed := c.fails == 0 && v != Refused; body.closed == handed {
				t.Errorf("closed %v; handed on %v", body.closed, handed)
			}
			if c.handed == "" {
				return
			}
			rest, err := io.ReadAll(resp.Body)
			if string(rest) != c.handed || err != c.thenErr {
				t.Errorf("handed on %q, %v; want %q, %v", rest, err, c.handed, c.thenErr)
			}
		})
	}
	// One byte a read, the whole answer comes back.
	resp := &http.Response{Header: http.Header{}, Body: io.NopCloser(iotest.OneByteReader(strings.NewReader(`{"OK":1} and more`)))}
	var tr tracing
	if v, err := Read(resp, 100, tr.classify, nil); v != Served || err != nil {
		t.Fatalf("%d %v", v, err)
	}
	if rest, err := io.ReadAll(resp.Body); string(rest) != `{"OK":1} and more` || err != nil {
		t.Errorf("replayed %q, %v", rest, err)
	}
	ended := NewReplay([]byte("ab"), hangUp, io.NopCloser(strings.NewReader("never")))
	if b, err := io.ReadAll(ended); string(b) != "ab" || err != hangUp || ended.Close() != nil {
		t.Errorf("replayed %q, %v", b, err)
	}
}

// TestReadFollows: a stream Read hands on Served is followed as the caller
// reads it past the bytes held, and later is called once, when the caller
// reads the refusal, the end of the stream included; nothing is followed
// without later, for an answer that is no stream, or past what the caller
// reads.
func TestReadFollows(t *testing.T) {
	hangUp := errors.New("connection reset")
	for _, c := range []struct {
		name   string
		ce     string
		pieces []string
		end    error
		later  bool
		read   int // bytes the caller reads past the held ones; -1: all
		want   int // the times later was called
	}{
		{"a refusal after the result", "", []string{"data: OK\n\n", "data: NO\n\n"}, io.EOF, true, -1, 1},
		{"a refusal in pieces", "", []string{"data: OK\n\n", "data: N", "O\n\n"}, io.EOF, true, -1, 1},
		{"a refusal the end cuts off", "", []string{"data: OK\n\n", "data: N", "O"}, io.EOF, true, -1, 1},
		{"a refusal a hang-up cuts off", "", []string{"data: OK\n\n", "data: N", "O"}, hangUp, true, -1, 0},
		{"a refusal held with the result", "", []string{"data: OK\n\ndata: NO\n\n"}, io.EOF, true, -1, 1},
		{"two refusals", "", []string{"data: OK\n\n", "data: NO\n\n", "data: NO\n\n"}, io.EOF, true, -1, 1},
		{"a refusal in a gzip stream the end cuts off", "gzip", []string{gz("data: OK\n\ndata: NO")}, io.EOF, true, -1, 1},
		{"a refusal the caller does not read", "", []string{"data: OK\n\n", "data: NO\n\n"}, io.EOF, true, 0, 0},
		{"without later", "", []string{"data: OK\n\n", "data: NO\n\n"}, io.EOF, false, -1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var tr tracing
			resp := &http.Response{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: &chunks{pieces: c.pieces, err: c.end}}
			if c.ce != "" {
				resp.Header.Set("Content-Encoding", c.ce)
			}
			called := 0
			var later func()
			if c.later {
				later = func() { called++ }
			}
			if v, err := Read(resp, 100, tr.classify, later); v != Served || err != nil {
				t.Fatalf("%d %v", v, err)
			}
			held := len(resp.Body.(*Replay).held)
			if c.read < 0 {
				_, _ = io.ReadAll(resp.Body)
				_, _ = resp.Body.Read(make([]byte, 1)) // once more at the end: nothing new
			} else {
				_, _ = io.ReadFull(resp.Body, make([]byte, held+c.read))
			}
			if called != c.want {
				t.Errorf("later called %d times, want %d (seen %q)", called, c.want, tr.seen)
			}
		})
	}
	// A plain answer is handed on unfollowed.
	resp := &http.Response{Header: http.Header{"Content-Type": {"application/json"}}, Body: &chunks{pieces: []string{`{"OK":1}`, "data: NO\n\n"}, err: io.EOF}}
	if _, err := Read(resp, 100, (&tracing{}).classify, func() { t.Error("a plain answer followed") }); err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(resp.Body)
}

// TestFailures: the typed errors of an answer that could not be read name
// the origin at most.
func TestFailures(t *testing.T) {
	u, _ := url.Parse("https://user:pw@peer.example:8443/mcp/sk-1?key=2")
	resp := &http.Response{StatusCode: 200, Request: &http.Request{URL: u}}
	var e *egress.Error
	if err := unreadable(resp, make([]byte, 11), 10); !errors.As(err, &e) || e.Kind != egress.TooLarge || e.Status != 200 || e.URL != "" {
		t.Errorf("past the bound: %v", err)
	}
	if err := unreadable(resp, make([]byte, 10), 10); !errors.As(err, &e) || e.Kind != egress.NotAnAnswer {
		t.Errorf("within the bound: %v", err)
	}
	for cause, kind := range map[error]egress.Kind{
		&http.MaxBytesError{Limit: 1}: egress.TooLarge,
		context.DeadlineExceeded:      egress.Timeout,
		context.Canceled:              egress.Canceled,
		io.ErrUnexpectedEOF:           egress.HangUp,
	} {
		err := readFailure(resp, cause)
		if !errors.As(err, &e) || e.Kind != kind || e.URL != "https://peer.example:8443" || !errors.Is(err, cause) || e.Status != 200 {
			t.Errorf("%v: %v", cause, err)
		}
	}
	own := &egress.Error{Kind: egress.Denied}
	if err := readFailure(resp, own); err != own {
		t.Errorf("an *egress.Error was rewrapped: %v", err)
	}
	if err := readFailure(&http.Response{}, io.EOF); !errors.As(err, &e) || e.URL != "" {
		t.Errorf("no request: %v", err)
	}
}

// TestFollow: a stream settled Served is read on as it passes, for the
// refusal a client that yields each event reads after the result; what is
// kept between pieces stays within the bound, and an event longer than
// the bound is read as far as the bound for a refusal alone, whole or in
// pieces, and passed over.
func TestFollow(t *testing.T) {
	const limit = 20
	long := strings.Repeat("x", 30)
	end := -1 // the refusal came with the answer's end
	for _, c := range []struct {
		name    string
		coding  string
		settle  []string // written until the answer is Served; gzip: read at its end
		pieces  []string
		refused int // the piece that completed the refusal, end, or -2 for none
	}{
		{"a refusal after the result", "", []string{"data: OK\n\n"}, []string{"data: NO\n\n"}, 0},
		{"a refusal byte by byte", "", []string{"data: OK\n\n"}, strings.Split("data: NO\n\n", ""), 9},
		{"a refusal the end cuts off", "", []string{"data: OK\n\n"}, []string{"data: NO"}, end},
		{"a refusal held past the result", "", []string{"data: OK\n\ndata: NO\n\n"}, nil, end},
		{"a refusal after a CR the next piece ends", "", []string{"data: OK\n\n"}, []string{"data: x\r", "\n\r\ndata: NO\n\n"}, 1},
		{"a refusal of an event type of its own", "", []string{"data: OK\n\n"}, []string{"event: other\ndata: NO\n\n"}, 0},
		{"two refusals, the first counted", "", []string{"data: OK\n\n"}, []string{"data: NO\n\n", "data: NO\n\n"}, 0},
		{"results only", "", []string{"data: OK\n\n"}, []string{"data: OK\n\n", "data: x\n\n"}, -2},
		{"a refusal after more results in one piece", "", []string{"data: OK\n\n"}, []string{"data: OK\n\ndata: OK\n\ndata: NO\n\n"}, 0},
		{"a refusal after a line past the bound, in pieces", "", []string{"data: OK\n\n"}, []string{"data: " + long, long + "\n\n", "data: NO\n\n"}, 2},
		{"a refusal after an event whose lines pass the bound", "", []string{"data: OK\n\n"}, []string{"data: 123456789\n", "data: 123456789\n", "data: 123456789\n", "\n", "data: NO\n\n"}, 4},
		{"a refusal on a line of an event passed over", "", []string{"data: OK\n\n"}, []string{"data: " + long, "\ndata: NO\n\n"}, -2},
		{"a refusal whose data passes the bound, read as far as the bound", "", []string{"data: OK\n\n"}, []string{"data: NO" + strings.Repeat(" ", 20) + "\n\n"}, 0},
		{"a refusal whose line passes the bound, read as far as the bound", "", []string{"data: OK\n\n"}, []string{"data: NO" + strings.Repeat(" ", 20), "\n\n"}, 0},
		{"a refusal whose lines pass the bound, read as far as the bound", "", []string{"data: OK\n\n"}, []string{"data: NO\n", "data: " + long + "\n"}, 1},
		{"a refusal spelled past the bound", "", []string{"data: OK\n\n"}, []string{"data: " + strings.Repeat(" ", 20) + "NO\n\n"}, -2},
		{"a refusal spelled past the bound, in pieces", "", []string{"data: OK\n\n"}, []string{"data: " + strings.Repeat(" ", 20), "NO\n\n"}, -2},
		{"a refusal before a comment past the bound", "", []string{"data: OK\n\n"}, []string{"data: NO\n", ": " + long, "\n\n"}, 1},
		{"a refusal after the bound's line in an event passed over", "", []string{"data: OK\n\n"}, []string{"data: " + long, "NO" + long, "\n\n"}, -2},
		{"a refusal whose data is the bound", "", []string{"data: OK\n\n"}, []string{"data: NO" + strings.Repeat(" ", 18) + "\n\n"}, 0},
		{"a refusal whose data is the bound, over lines, its end to come", "", []string{"data: OK\n\n"}, []string{"data: NO3456789\n", "data: 1234567890\n", "\n"}, 2},
		{"a refusal whose data passes the bound, over lines", "", []string{"data: OK\n\n"}, []string{"data: NO3456789\n", "data: 12345678901\n", "\n"}, 1},
		{"a refusal whose line passes the bound, its end to come", "", []string{"data: OK\n\n"}, []string{"data: NO" + strings.Repeat(" ", 13) + "\n", "\n"}, 0},
		{"a refusal whose line is the bound, its end to come", "", []string{"data: OK\n\n"}, []string{"data: NO" + strings.Repeat(" ", 12), "\n\n"}, 1},
		{"a refusal in a gzip stream", "gzip", []string{gz("data: OK\n\ndata: x\n\ndata: NO\n\n")}, nil, end},
		{"results only, gzip", "gzip", []string{gz("data: OK\n\ndata: OK\n\n")}, nil, -2},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{"Content-Type": {"text/event-stream"}}
			if c.coding != "" {
				h.Set("Content-Encoding", c.coding)
			}
			var tr tracing
			var a Answer
			a.Start(h, limit+100, tr.classify, nil) // the bound while held: the settling writes fit
			v := Undecided
			for _, w := range c.settle {
				v = a.Write([]byte(w))
			}
			if c.coding != "" {
				v = a.End()
			}
			if v != Served {
				t.Fatalf("settled %d, want Served", v)
			}
			a.limit = limit
			refused := -2
			for i, p := range append(c.pieces, "") {
				if a.Follow([]byte(p), i == len(c.pieces)) {
					if refused != -2 {
						t.Errorf("a second refusal at piece %d", i)
					}
					refused = i
					if i == len(c.pieces) {
						refused = end
					}
				}
				if refused == -2 && (c.coding == "" && len(a.raw) > limit || len(a.scan.data) > limit) {
					t.Errorf("after piece %d, %d bytes kept and %d of data", i, len(a.raw), len(a.scan.data))
				}
			}
			if refused != c.refused {
				t.Errorf("refused at piece %d, want %d (seen %q)", refused, c.refused, tr.seen)
			}
		})
	}
	// A plain answer is not followed.
	var a Answer
	a.Start(http.Header{"Content-Type": {"application/json"}}, limit, (&tracing{}).classify, nil)
	if a.Write([]byte(`{"OK":1}`)); a.Follow([]byte("data: NO\n\n"), true) {
		t.Error("a plain answer followed")
	}
}

// An event within the bound, its lines and its data, is read whole, as
// any is; one whose line or data passes the bound by a byte is read only
// as far as the bound, and then not whole, for a refusal alone. The
// reader here refuses only what it is given whole.
func TestFollowReadsAnEventOfTheBoundWhole(t *testing.T) {
	const limit = 20
	whole := func(msg []byte, complete bool) Verdict {
		switch {
		case complete && bytes.HasPrefix(msg, []byte("NO")):
			return Refused
		case bytes.Equal(msg, []byte("OK")):
			return Served
		}
		return Undecided
	}
	for event, refused := range map[string]bool{
		"data: NO" + strings.Repeat(" ", limit-8) + "\n\n":           true,  // a line of the bound
		"data: NO" + strings.Repeat(" ", limit-7) + "\n\n":           false, // one past it
		"data: NO3456789\ndata: " + strings.Repeat(" ", 10) + "\n\n": true,  // data of the bound
		"data: NO3456789\ndata: " + strings.Repeat(" ", 11) + "\n\n": false, // one past it
	} {
		var a Answer
		a.Start(http.Header{"Content-Type": {"text/event-stream"}}, 100, whole, nil)
		if v := a.Write([]byte("data: OK\n\n")); v != Served {
			t.Fatalf("settled %d, want Served", v)
		}
		a.limit = limit
		if got := a.Follow([]byte(event), false); got != refused {
			t.Errorf("%q: refused %t, want %t", event, got, refused)
		}
	}
}

// followBounded follows pieces, a stream's rest after an event that
// settled it Served, past a bound of 20 bytes, and returns after how many
// bytes of them it found a refusal, or -1.
func followBounded(pieces ...string) int {
	var a Answer
	a.Start(http.Header{"Content-Type": {"text/event-stream"}}, 100, (&tracing{}).classify, nil)
	a.Write([]byte("data: OK\n\n"))
	a.limit = 20
	read := 0
	for i, p := range append(pieces, "") {
		read += len(p)
		if a.Follow([]byte(p), i == len(pieces)) {
			return read
		}
	}
	return -1
}

// followedAlike reports, when it is not "", how the stream read
// differently past the bound whole, split at at, and byte by byte.
func followedAlike(stream string, at int) string {
	var bytewise []string
	for i := range len(stream) {
		bytewise = append(bytewise, stream[i:i+1])
	}
	whole, split, single := followBounded(stream), followBounded(stream[:at], stream[at:]), followBounded(bytewise...)
	if (split < 0) != (whole < 0) || (single < 0) != (whole < 0) {
		return fmt.Sprintf("%q: refused after %d bytes whole, %d split at %d, %d byte by byte", stream, whole, split, at, single)
	}
	return ""
}

// followSplitSeeds are streams with lines, events and data past the
// bound of followBounded.
func followSplitSeeds() []string {
	long := strings.Repeat("x", 30)
	return []string{
		"data: NO" + strings.Repeat(" ", 13) + "\n\n",
		"data: " + strings.Repeat(" ", 12) + "NO\n\n",
		"data: " + strings.Repeat(" ", 13) + "NO\n\n",
		"data: {\n: " + long + "\ndata: NO\n\n",
		"data: NO\n: " + long + "\n\n",
		"data: NO3456789\ndata: 12345678901\n\n",
		"data: 123456789\ndata: 12345678NO\n\n",
		"data: " + long + "\r\ndata: NO\r\n\r\ndata: NO\n\n",
		"event: " + long + "\ndata: NO\n\n",
		"data: " + long + "\n\ndata: NO\n\n",
		"data: " + long + "\rdata: NO\r\rdata: NO\r\r",
		"data: " + long + "\r\rdata: NO",
	}
}

// What Follow reads of a stream past the bound is the same however the
// stream is split: a line or an event's data cuts its event at the same
// place whether it comes whole or in pieces.
func TestFollowAnySplit(t *testing.T) {
	for _, stream := range followSplitSeeds() {
		for at := range len(stream) + 1 {
			if differs := followedAlike(stream, at); differs != "" {
				t.Error(differs)
			}
		}
	}
}

// FuzzFollowAnySplit is TestFollowAnySplit's property for any stream.
func FuzzFollowAnySplit(f *testing.F) {
	for _, stream := range followSplitSeeds() {
		f.Add([]byte(stream), uint16(17))
	}
	f.Fuzz(func(t *testing.T, b []byte, cut uint16) {
		if len(b) > 1<<10 {
			return
		}
		if differs := followedAlike(string(b), int(cut)%(len(b)+1)); differs != "" {
			t.Fatal(differs)
		}
	})
}
