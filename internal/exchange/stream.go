package exchange

import (
	"bytes"
	"strings"
)

// EventScanner reads server-sent events as an answer arrives, to find the
// events in it: each call is given all the bytes held so far, and it keeps
// its place, so that each byte is searched once however the answer is
// split into writes. The zero value is ready for an answer's first byte.
type EventScanner struct {
	pos int // bytes of complete lines read
	// searched is how far the held bytes have been searched for the end
	// of the line at pos.
	searched int
	data     []byte // the data of the event being read
	has      bool   // the event being read has a data field
	// typed: the event being read has an event type other than message;
	// named: the event Next or End returned last had one.
	typed, named bool
	// passing: the event being read is passed over, its data dropped as
	// it comes (Pass); midline: the line being read is too, from a byte
	// inside it.
	passing, midline bool
	// limit, when not 0, bounds a line and the data of an event: the line
	// that passes it cuts its event ([EventScanner.Next]); cut says that
	// the event Next or End returned last was cut so.
	limit int
	cut   bool
}

// Next reads the complete lines of held past what it has read, and
// returns the data of the next event it completes that has a data field
// (the data lines joined by "\n", as the event-stream format says), or
// false when held ends before such an event does. Comments, and events
// with no data, are passed over. With a limit, it also returns the data
// of an event that a line cuts past the limit, and cut says so.
func (s *EventScanner) Next(held []byte) ([]byte, bool) {
	for {
		rest := held[s.pos:]
		// Search only what was not searched before: a long line arriving
		// in many writes is searched once, not once a write.
		from := max(s.searched-s.pos, 0)
		i := bytes.IndexAny(rest[from:], "\r\n")
		if i < 0 {
			s.searched = len(held)
			return nil, false // the line is not complete yet
		}
		i += from
		if rest[i] == '\r' && i+1 == len(rest) {
			s.searched = s.pos + i // the \r again: a \n may follow it
			return nil, false
		}
		line := rest[:i]
		s.pos += i + 1
		if rest[i] == '\r' && rest[i+1] == '\n' {
			s.pos++
		}
		if s.midline { // the end of a line whose start was dropped: no blank line
			s.midline = false
			continue
		}
		if len(line) > 0 {
			if data, ok := s.line(line); ok {
				return data, true
			}
			continue
		}
		if data, ok := s.dispatch(); ok {
			return data, true
		}
	}
}

// End returns the data of the event that the end of held, the whole
// answer, leaves once Next has returned every event before it, and false
// when there is none. Mostly it is an event the end cuts off: its last
// line ends without a line break, or without the blank line after it.
// The event-stream format drops such an event, but the event-stream
// readers of both protocols' clients (go-sdk v1.8.0's scanEvents, a2a-go
// v2.4.0's ParseDataStream) read it as a whole one, so a refusal in it is
// one their callers are given. It is whole (whole is true) when held ends
// with the \r of the blank line that ends it, which Next left for a \n
// that could have followed.
func (s *EventScanner) End(held []byte) (data []byte, ok, whole bool) {
	// Next left no line break in held[s.pos:] but a \r its \n could
	// have followed.
	rest := held[s.pos:]
	s.pos = len(held)
	whole = string(rest) == "\r"
	if !whole {
		if data, ok = s.line(bytes.TrimSuffix(rest, []byte("\r"))); ok {
			return data, ok, false
		}
	}
	data, ok = s.dispatch()
	return data, ok, whole
}

// line reads one line of the event being read. Past the limit, when
// there is one, it cuts the event: a line longer than the limit is read
// as far as the limit, and once the event's data is longer than the
// limit it returns that data, the rest of the event passed over
// ([EventScanner.Pass]). The cut is the same however the stream is split,
// since it depends on the line and the data alone.
func (s *EventScanner) line(line []byte) ([]byte, bool) {
	long := s.limit > 0 && len(line) > s.limit
	if long {
		line = line[:s.limit]
	}
	s.field(line)
	if s.passing || !long && (s.limit == 0 || len(s.data) <= s.limit) {
		return nil, false
	}
	data := s.data
	s.Pass(false)
	s.cut = true
	return data, true
}

// field reads one line of the event being read: a data field adds its
// value to the event's data, and an event field sets its type. Comments
// and other fields are passed over.
func (s *EventScanner) field(line []byte) {
	field, value, _ := bytes.Cut(line, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(field) {
	case "event":
		s.typed = string(value) != "message"
	case "data":
		if s.passing {
			return
		}
		if s.has {
			s.data = append(s.data, '\n')
		}
		s.has = true
		s.data = append(s.data, value...)
	}
}

// dispatch ends the event being read, and returns its data when it has a
// data field.
func (s *EventScanner) dispatch() ([]byte, bool) {
	data, has := s.data, s.has && !s.passing
	s.named = s.typed
	s.data, s.has, s.typed, s.passing, s.midline, s.cut = nil, false, false, false, false, false
	return data, has
}

// Pass passes over the event being read, once it is too long to keep:
// its data is dropped, and so is what comes of it until the event ends.
// midline says that the bytes held past what Next has read, the start of
// a line, are dropped too: the line's end is then no blank line.
func (s *EventScanner) Pass(midline bool) {
	s.data, s.passing, s.midline = nil, true, s.midline || midline
}

// Named reports whether the event Next or End returned last has an event
// type of its own, other than message. The MCP clients (go-sdk's, the
// TypeScript SDK's) take no message from such an event; a2a-go's reader
// takes every event's data.
func (s *EventScanner) Named() bool { return s.named }

// IsEventStream reports whether a Content-Type is text/event-stream, in
// any case and with any parameters, as a client reading the answer takes
// it. Every reader of an answer in this module asks it, so that no two of
// them disagree on which answers are event streams.
func IsEventStream(ct string) bool {
	const sse = "text/event-stream"
	ct = strings.Trim(ct, " \t")
	if len(ct) < len(sse) || !strings.EqualFold(ct[:len(sse)], sse) {
		return false
	}
	rest := strings.Trim(ct[len(sse):], " \t")
	return rest == "" || rest[0] == ';'
}
