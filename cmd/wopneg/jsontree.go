package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"
)

// jnode is one JSON value of a document, in an order-preserving tree that
// remembers where each part sits in the source bytes. migrate edits a
// document by splicing those bytes, so that every key, number, escape
// and space it does not own comes out exactly as it went in.
type jnode struct {
	// kind is the value's first byte: '{', '[', '"', 't', 'f', 'n', or
	// '0' for every number.
	kind byte
	// start and end delimit the value in the source; for an object or
	// array, start is the bracket that opens it and end-1 the one that
	// closes it.
	start, end int
	members    []jmember // object members, in document order, repeats kept
	elems      []*jnode  // array elements
	str        string    // a string's decoded value
}

// jmember is one key of an object with its value.
type jmember struct {
	key      string
	keyStart int // the key's opening quote
	value    *jnode
}

// notJSONError reports input that is not one well-formed JSON value in
// UTF-8; both commands answer it with exit code 2.
type notJSONError struct{ reason string }

func (e *notJSONError) Error() string { return "the input is not JSON: " + e.reason }

// parseTree checks that data is one JSON value in UTF-8 and returns its
// tree.
func parseTree(data []byte) (*jnode, error) {
	if !utf8.Valid(data) {
		return nil, &notJSONError{"it is not valid UTF-8"}
	}
	var raw json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, &notJSONError{err.Error()}
	}
	p := treeParser{data: data}
	return p.value(), nil
}

// treeParser walks input that json.Unmarshal has already accepted, so it
// never meets a syntax error.
type treeParser struct {
	data []byte
	pos  int
}

func (p *treeParser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *treeParser) value() *jnode {
	p.space()
	n := &jnode{kind: p.data[p.pos], start: p.pos}
	switch n.kind {
	case '{':
		p.pos++
		p.space()
		for p.data[p.pos] != '}' {
			p.space()
			m := jmember{keyStart: p.pos}
			m.key = p.string()
			p.space()
			p.pos++ // ':'
			m.value = p.value()
			n.members = append(n.members, m)
			p.space()
			if p.data[p.pos] == ',' {
				p.pos++
			}
		}
		p.pos++
	case '[':
		p.pos++
		p.space()
		for p.data[p.pos] != ']' {
			n.elems = append(n.elems, p.value())
			p.space()
			if p.data[p.pos] == ',' {
				p.pos++
			}
		}
		p.pos++
	case '"':
		n.str = p.string()
	case 't', 'n':
		p.pos += 4
	case 'f':
		p.pos += 5
	default:
		n.kind = '0'
		for p.pos < len(p.data) && slices.Contains([]byte("+-.eE0123456789"), p.data[p.pos]) {
			p.pos++
		}
	}
	n.end = p.pos
	return n
}

// string reads a string token and returns its decoded value.
func (p *treeParser) string() string {
	start := p.pos
	for p.pos++; p.data[p.pos] != '"'; p.pos++ {
		if p.data[p.pos] == '\\' {
			p.pos++
		}
	}
	p.pos++
	var s string
	_ = json.Unmarshal(p.data[start:p.pos], &s) // well-formed: cannot fail
	return s
}

// kindName names a node's JSON type for messages.
func (n *jnode) kindName() string {
	switch n.kind {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// isString reports whether n is the JSON string s.
func (n *jnode) isString(s string) bool { return n.kind == '"' && n.str == s }

// lookup returns the members of object n named key, in document order.
func (n *jnode) lookup(key string) []jmember {
	var ms []jmember
	for _, m := range n.members {
		if m.key == key {
			ms = append(ms, m)
		}
	}
	return ms
}

// edit replaces the source bytes in [start, end) with text.
type edit struct {
	start, end int
	text       string
}

// removeItems returns the edits that delete the items of container c at
// the indexes in drop (sorted, no repeats), commas and the space before
// them included, so that what stays reads as it did: the items after the
// first kept one go with the separator in front of them, those before it
// with the one behind them, and a container left empty becomes {} or [].
func removeItems(c *jnode, drop []int) []edit {
	n := len(c.elems)
	itemStart := func(i int) int { return c.elems[i].start }
	itemEnd := func(i int) int { return c.elems[i].end }
	if c.kind == '{' {
		n = len(c.members)
		itemStart = func(i int) int { return c.members[i].keyStart }
		itemEnd = func(i int) int { return c.members[i].value.end }
	}
	if len(drop) == 0 {
		return nil
	}
	if len(drop) == n {
		return []edit{{c.start + 1, c.end - 1, ""}}
	}
	firstKept := 0
	for _, i := range drop {
		if i != firstKept {
			break
		}
		firstKept++
	}
	var es []edit
	if firstKept > 0 {
		es = append(es, edit{itemStart(0), itemStart(firstKept), ""})
	}
	for _, i := range drop {
		if i > firstKept {
			es = append(es, edit{itemEnd(i - 1), itemEnd(i), ""})
		}
	}
	return es
}

// splice applies edits to data. Edits must not overlap; an overlap is a
// bug in the caller, reported rather than written out as broken JSON.
func splice(data []byte, edits []edit) ([]byte, error) {
	es := slices.Clone(edits)
	slices.SortFunc(es, func(a, b edit) int { return a.start - b.start })
	out := make([]byte, 0, len(data))
	at := 0
	for _, e := range es {
		if e.start < at || e.end < e.start || e.end > len(data) {
			return nil, errors.New(fmt.Sprint("internal error: overlapping edits at byte ", e.start))
		}
		out = append(out, data[at:e.start]...)
		out = append(out, e.text...)
		at = e.end
	}
	return append(out, data[at:]...), nil
}
