package cli

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/wopneg/wopneg/internal/strictjson"
)

// jnode is one JSON value of a document, in an order-preserving tree that
// remembers where each part sits in the source bytes, read through the
// module's strict reader (internal/strictjson). migrate edits a
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
	members    []jmember // object members, in document order (a key is never repeated)
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
// UTF-8 (nested no deeper than strictjson.MaxDepth); both commands answer
// it with exit code 2.
type notJSONError struct{ reason string }

func (e *notJSONError) Error() string { return "the input is not JSON: " + e.reason }

// repeatedKeyError reports an object that gives a key twice. The module's
// strict reader refuses such a document, since readers disagree on which
// value counts; lint reports it as a duplicate-key finding and migrate
// refuses it.
type repeatedKeyError struct {
	path string // the repeated member's path, e.g. "mcp.refreshedAt"
	key  string
}

func (e *repeatedKeyError) Error() string {
	return fmt.Sprintf("%s: key %q appears more than once", e.path, e.key)
}

// parseTree reads data, one JSON value, through the module's strict
// reader and returns its tree. It fails with a *repeatedKeyError or a
// *notJSONError.
func parseTree(data []byte) (*jnode, error) {
	r := strictjson.NewReader(data, 0)
	root, err := readNode(r, data)
	if err == nil {
		err = r.End()
	}
	var se *strictjson.Error
	if !errors.As(err, &se) {
		return root, err // nil: the reader returns nothing but *strictjson.Error
	}
	if key := se.Key; se.Repeated && wellFormed(data) {
		path := key
		if se.Path != "" {
			path = se.Path + "." + key
		}
		return nil, &repeatedKeyError{path, key}
	}
	return nil, &notJSONError{fmt.Sprintf("%v (at byte %d)", se, se.Offset)}
}

// wellFormed reports whether data is one JSON value the strict reader
// accepts, repeated keys aside: a repeated key is reported as one only in
// a document that is JSON, which one cut short after it is not.
func wellFormed(data []byte) bool {
	r := strictjson.NewReader(data, 0)
	return r.Skip() == nil && r.End() == nil
}

// readNode reads the next value of r into a node. The reader gives the
// offsets: a value starts past the white space and separator after the
// offset it is read at, and ends at the offset after it; a key starts
// past those after the value before it (or the brace).
func readNode(r *strictjson.Reader, data []byte) (*jnode, error) {
	k, err := r.Next()
	if err != nil {
		return nil, err
	}
	n := &jnode{start: valueStart(data, r.Offset())}
	switch k {
	case strictjson.Object:
		n.kind = '{'
		prev := n.start + 1
		err = r.Object(func(key string) error {
			m := jmember{key: key, keyStart: valueStart(data, prev)}
			v, err := readNode(r, data)
			if err != nil {
				return err
			}
			m.value, prev = v, v.end
			n.members = append(n.members, m)
			return nil
		})
	case strictjson.Array:
		n.kind = '['
		err = r.Array(func(int) error {
			v, err := readNode(r, data)
			n.elems = append(n.elems, v)
			return err
		})
	case strictjson.String:
		n.kind = '"'
		n.str, err = r.String()
	case strictjson.Number:
		n.kind = '0'
		err = r.Skip()
	default: // true, false, null: their first byte
		n.kind = data[n.start]
		err = r.Skip()
	}
	n.end = r.Offset()
	return n, err
}

// valueStart returns where the value or key after offset at begins: past
// white space and the ':' or ',' before it.
func valueStart(data []byte, at int) int {
	return len(data) - len(bytes.TrimLeft(data[at:], " \t\r\n:,"))
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

// member returns the value of object n's member key, or nil.
func (n *jnode) member(key string) *jnode {
	for _, m := range n.members {
		if m.key == key {
			return m.value
		}
	}
	return nil
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
