package exchange

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

// side is a Side that refuses on "NO", holds what it is told to, and
// replaces refused answers with "REPLACED" when replace is set.
type side struct {
	holds   bool
	replace bool
	atEnd   Verdict
	settled []Verdict
}

func (s *side) Holds(int, bool) bool { return s.holds }

func (s *side) Classify(msg []byte, complete bool) Verdict {
	switch {
	case bytes.Contains(msg, []byte("NO")):
		return Refused
	case bytes.Contains(msg, []byte("OK")), complete:
		return Served
	}
	return Undecided
}

func (s *side) AtEnd(bool) Verdict { return s.atEnd }

func (s *side) Settle(h *Hold, v Verdict) bool {
	s.settled = append(s.settled, v)
	h.Header().Set("X-Settled", "yes")
	if s.replace && v != Served {
		h.Underlying().WriteHeader(http.StatusInternalServerError)
		_, _ = h.Underlying().Write([]byte("REPLACED"))
		return false
	}
	return true
}

// TestHold: the one answer watcher holds, reads, settles once, and
// releases or replaces.
func TestHold(t *testing.T) {
	for _, c := range []struct {
		name    string
		side    side
		handler func(w http.ResponseWriter)
		status  int
		body    string
		header  string // X-Late as sent
		settled []Verdict
		wantErr error
	}{
		{"held, read whole, released", side{holds: true}, func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusAccepted)
			w.Header().Set("X-Late", "changed after the status") // not sent, as net/http
			_, _ = w.Write([]byte(`{"a":`))
			_, _ = w.(interface{ WriteString(string) (int, error) }).WriteString(`1}`)
		}, http.StatusAccepted, `{"a":1}`, "", []Verdict{Served}, nil},
		{"decided by a write, then passed through", side{holds: true}, func(w http.ResponseWriter) {
			w.Header().Set("X-Late", "before")
			_, _ = w.Write([]byte(`{"OK":1}`))
			_, _ = w.(interface{ WriteString(string) (int, error) }).WriteString(" more")
			w.(http.Flusher).Flush()
		}, http.StatusOK, `{"OK":1} more`, "before", []Verdict{Served}, nil},
		{"flushed while held: read as far as it came", side{holds: true}, func(w http.ResponseWriter) {
			_, _ = w.Write([]byte(`{"OK"`))
			w.(http.Flusher).Flush()
			_, _ = w.Write([]byte(`:1}`))
		}, http.StatusOK, `{"OK":1}`, "", []Verdict{Served}, nil},
		{"not held", side{}, func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusCreated)
			w.WriteHeader(http.StatusTeapot) // superfluous: passed on, net/http's to ignore
			_, _ = w.Write([]byte("NO"))
		}, http.StatusCreated, "NO", "", []Verdict{Served}, nil},
		{"replaced", side{holds: true, replace: true}, func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusOK)
			w.WriteHeader(http.StatusTeapot) // superfluous while held
			_, _ = w.Write([]byte("NO"))
		}, http.StatusInternalServerError, "REPLACED", "", []Verdict{Refused}, ErrReplaced},
		{"nothing written", side{atEnd: Served}, func(http.ResponseWriter) {}, http.StatusOK, "", "", []Verdict{Served}, nil},
		{"informational first", side{holds: true}, func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusEarlyHints)
			_, _ = w.Write([]byte(`{"b":2}`))
			// The recorder keeps the first status it saw; net/http sends the
			// 103, then the 200 of the Write.
		}, http.StatusEarlyHints, `{"b":2}`, "", []Verdict{Served}, nil},
		{"a stream that ends undecided", side{holds: true, atEnd: Refused, replace: true}, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte(": x"))
		}, http.StatusInternalServerError, "REPLACED", "", []Verdict{Refused}, ErrReplaced},
		{"a stream whose end cuts its last event off, read as its clients read it", side{holds: true, atEnd: Served, replace: true}, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte("data: NO"))
		}, http.StatusInternalServerError, "REPLACED", "", []Verdict{Refused}, ErrReplaced},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			var h Hold
			h.Start(rec, &c.side, 1<<10)
			c.handler(&h)
			h.Finish()
			var err error
			if h.state == replaced {
				_, err = h.Write([]byte("late"))
			}
			if rec.Code != c.status || rec.Body.String() != c.body || rec.Header().Get("X-Late") != c.header ||
				rec.Header().Get("X-Settled") != "yes" || len(c.side.settled) != len(c.settled) || c.side.settled[0] != c.settled[0] || !errors.Is(err, c.wantErr) {
				t.Errorf("%d %q X-Late %q settled %v, late write %v", rec.Code, rec.Body, rec.Header().Get("X-Late"), c.side.settled, err)
			}
			if h.Unwrap() != rec {
				t.Error("Unwrap is not the writer underneath")
			}
		})
	}
}

// follower is a side that follows a stream released Served.
type follower struct {
	side
	contradicted int
}

func (f *follower) Contradicted() { f.contradicted++ }

// TestHoldFollows: a Hold follows a stream its Follower released Served,
// through Write and WriteString and to the handler's end, and hands it the
// first refusal after the result once; it follows nothing for a Side that
// is no Follower, nor an answer that is no stream or was refused.
func TestHoldFollows(t *testing.T) {
	for _, c := range []struct {
		name        string
		notFollower bool
		ct          string
		writes      []string
		want        int
	}{
		{"a refusal after the result", false, "text/event-stream", []string{"data: OK\n\n", "data: NO\n\n"}, 1},
		{"a refusal written as a string", false, "text/event-stream", []string{"data: OK\n\n", "S:data: NO\n\n"}, 1},
		{"a refusal the handler's end cuts off", false, "text/event-stream", []string{"data: OK\n\n", "data: NO"}, 1},
		{"a refusal in the result's write", false, "text/event-stream", []string{"data: OK\n\ndata: NO"}, 1},
		{"refusals after the first, not again", false, "text/event-stream", []string{"data: OK\n\n", "data: NO\n\n", "S:data: NO\n\n"}, 1},
		{"results only", false, "text/event-stream", []string{"data: OK\n\n", "S:data: OK\n\n"}, 0},
		{"a side that is no Follower", true, "text/event-stream", []string{"data: OK\n\n", "data: NO\n\n"}, 0},
		{"no stream", false, "application/json", []string{`{"OK":1}`, "S:data: NO\n\n"}, 0},
		{"a stream refused first", false, "text/event-stream", []string{"data: NO\n\n", "data: OK\n\n", "data: NO\n\n"}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &follower{side: side{holds: true}}
			var sd Side = f
			if c.notFollower {
				sd = &f.side
			}
			rec := httptest.NewRecorder()
			var h Hold
			h.Start(rec, sd, 1<<10)
			h.Header().Set("Content-Type", c.ct)
			var all string
			for _, w := range c.writes {
				if s, ok := strings.CutPrefix(w, "S:"); ok {
					_, _ = h.WriteString(s)
					all += s
					continue
				}
				_, _ = h.Write([]byte(w))
				all += w
			}
			h.Finish()
			if f.contradicted != c.want || rec.Body.String() != all {
				t.Errorf("contradicted %d times, answered %q; want %d, %q", f.contradicted, rec.Body, c.want, all)
			}
		})
	}
}

// TestHoldRelease: a released Hold keeps only its buffer, emptied, and not
// even that past the bound; Start keeps the side's Classify bound once.
func TestHoldRelease(t *testing.T) {
	for _, c := range []struct {
		size int
		kept bool
	}{{16, true}, {17, false}} {
		s := &side{holds: true}
		var h Hold
		h.Start(httptest.NewRecorder(), s, 1<<10)
		_, _ = h.Write(bytes.Repeat([]byte("x"), c.size))
		h.Release(16)
		if kept := h.buf != nil; kept != c.kept || len(h.buf) != 0 || h.ResponseWriter != nil || h.state != watching || h.status != 0 || len(h.Held()) != 0 {
			t.Errorf("%d bytes released: %+v", c.size, h)
		}
		h.Start(httptest.NewRecorder(), s, 1<<10)
		if h.classify == nil || h.side != s || cap(h.buf) < c.size && c.kept {
			t.Errorf("restarted: %+v", h)
		}
	}
}

// TestHoldWriteThatReplaces: the write that settles an answer its side
// replaces is told so, by Write and WriteString alike, and so is every
// later one; a write that settles an answer that stands succeeds.
func TestHoldWriteThatReplaces(t *testing.T) {
	writes := map[string]func(h *Hold, s string) error{
		"Write":       func(h *Hold, s string) error { _, err := h.Write([]byte(s)); return err },
		"WriteString": func(h *Hold, s string) error { _, err := h.WriteString(s); return err },
	}
	for name, write := range writes {
		for _, c := range []struct {
			event string
			want  error
		}{{"data: NO\n\n", ErrReplaced}, {"data: OK\n\n", nil}} {
			rec := httptest.NewRecorder()
			rec.Header().Set("Content-Type", "text/event-stream")
			var h Hold
			h.Start(rec, &side{holds: true, replace: true}, 1<<10)
			if err := write(&h, c.event); !errors.Is(err, c.want) || c.want == nil && err != nil {
				t.Errorf("%s of %q, which settles the answer: %v, want %v", name, c.event, err, c.want)
			}
			if err := write(&h, "data: more\n\n"); !errors.Is(err, c.want) || c.want == nil && err != nil {
				t.Errorf("%s after %q settled the answer: %v, want %v", name, c.event, err, c.want)
			}
		}
	}
}

// spy is a ResponseWriter that logs what reaches it, in order.
type spy struct {
	httptest.ResponseRecorder
	log []string
}

func (s *spy) WriteHeader(status int) {
	s.log = append(s.log, http.StatusText(status))
	s.ResponseRecorder.WriteHeader(status)
}

func (s *spy) Write(p []byte) (int, error) {
	s.log = append(s.log, "write "+string(p))
	return s.ResponseRecorder.Write(p)
}

func (s *spy) Flush() { s.log = append(s.log, "flush") }

// TestHoldPassesWhatItNeedNotHold: an informational status goes to the
// client when it is written, the final status is still held and sent;
// a flush of a plain answer that already shows its verdict (read whole,
// or a refusal so far) sends it then, and one that does not yet sends
// nothing.
func TestHoldPassesWhatItNeedNotHold(t *testing.T) {
	for _, c := range []struct {
		name    string
		handler func(w http.ResponseWriter, seen func() string)
		want    string
	}{
		{"an informational status, then the final one", func(w http.ResponseWriter, seen func() string) {
			w.WriteHeader(http.StatusEarlyHints)
			if seen() != "Early Hints" {
				t.Errorf("after the 103: %q", seen())
			}
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write([]byte(`{"OK":1}`))
		}, "Early Hints, Accepted, write {\"OK\":1}"},
		{"a flush of a whole answer", func(w http.ResponseWriter, seen func() string) {
			_, _ = w.Write([]byte(`{"a":1}`))
			w.(http.Flusher).Flush()
			if seen() != "write {\"a\":1}, flush" { // the 200 is implicit, as it was written
				t.Errorf("after the flush: %q", seen())
			}
		}, "write {\"a\":1}, flush"},
		{"a flush of a part that shows a refusal", func(w http.ResponseWriter, seen func() string) {
			_, _ = w.Write([]byte(`{"NO"`))
			w.(http.Flusher).Flush()
			if seen() != "write {\"NO\", flush" {
				t.Errorf("after the flush: %q", seen())
			}
			_, _ = w.Write([]byte(`:1}`))
		}, "write {\"NO\", flush, write :1}"},
		{"a flush of a part that serves so far, which what follows may contradict", func(w http.ResponseWriter, seen func() string) {
			_, _ = w.Write([]byte(`{"OK"`))
			w.(http.Flusher).Flush()
			if seen() != "" {
				t.Errorf("after the flush: %q", seen())
			}
			_, _ = w.Write([]byte(`:1}`))
		}, "write {\"OK\":1}"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &spy{ResponseRecorder: *httptest.NewRecorder()}
			var h Hold
			h.Start(s, &side{holds: true}, 1<<10)
			c.handler(&h, func() string { return strings.Join(s.log, ", ") })
			h.Finish()
			if got := strings.Join(s.log, ", "); got != c.want {
				t.Errorf("the client saw %q, want %q", got, c.want)
			}
		})
	}
}

// refusing is a side that refuses every complete answer.
type refusing struct{ side }

func (*refusing) Classify(_ []byte, complete bool) Verdict {
	if complete {
		return Refused
	}
	return Undecided
}

// TestHoldStartsWithItsSide: a Hold pooled for one side and started for
// another reads with the new side's Classify; started again for the same
// side, it binds nothing anew.
func TestHoldStartsWithItsSide(t *testing.T) {
	var h Hold
	serving, refusal := &side{holds: true}, &refusing{side{holds: true}}
	h.Start(httptest.NewRecorder(), serving, 1<<10)
	h.Release(1 << 10)
	h.Start(httptest.NewRecorder(), refusal, 1<<10)
	_, _ = h.Write([]byte(`{"a":1}`))
	h.Finish()
	if len(refusal.settled) != 1 || refusal.settled[0] != Refused {
		t.Errorf("started for another side: settled %v, want [Refused]", refusal.settled)
	}
	w := httptest.NewRecorder()
	if n := testing.AllocsPerRun(100, func() { h.Start(w, refusal, 1<<10) }); n != 0 {
		t.Errorf("a restart for the same side allocates %v times", n)
	}
}

// TestPool: a Pool hands back what was put, first in first out, across a
// garbage collection; keeps four values for each P and drops the rest;
// makes a zero value when it keeps none; and the zero Pool keeps nothing.
func TestPool(t *testing.T) {
	p := NewPool[int]()
	kept := 4 * runtime.GOMAXPROCS(0)
	put := make([]*int, kept+1)
	for i := range put {
		put[i] = new(i)
		p.Put(put[i])
	}
	runtime.GC()
	for i := range kept {
		if got := p.Get(); got != put[i] {
			t.Fatalf("Get %d after a collection = %p (%d), want the value put %d", i, got, *got, i)
		}
	}
	if got := p.Get(); got == put[kept] || *got != 0 {
		t.Errorf("Get past what the Pool keeps = %p (%d), want a new zero value", got, *got)
	}
	var zero Pool[int]
	zero.Put(put[0])
	if got := zero.Get(); got == put[0] || *got != 0 {
		t.Errorf("the zero Pool's Get = %p (%d), want a new zero value", got, *got)
	}
}
