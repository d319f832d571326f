package mcphttp

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadGrowing checks how the body buffer grows: doubling from 512
// bytes as bytes arrive, a declared length capping a growth only when the
// body is at least that long so far, and never past the bound.
func TestReadGrowing(t *testing.T) {
	cases := []struct {
		name     string
		size     int
		declared int64
		limit    int64
		cap      int // the buffer's capacity at the end; 0 when refused
	}{
		{"small, declared", 100, 100, 1 << 20, 512},
		{"declared the first buffer's size", 512, 512, 1 << 20, 513},
		{"declared a doubling, sent less", 600, 1024, 1 << 20, 1024},
		{"declared honestly: the last growth lands on it", 1000, 1000, 1 << 20, 1001},
		{"declared exactly a doubling", 1024, 1024, 1 << 20, 1025},
		{"not declared: doubling", 1000, -1, 1 << 20, 1024},
		{"declared short: doubling past it", 1000, 10, 1 << 20, 1024},
		{"declared long: doubling, never to the claim", 1000, 4 << 20, 1 << 20, 1024},
		{"the bound caps a growth", 700, -1, 700, 701},
		{"one byte over the bound", 701, -1, 700, 0},
		{"the bound exactly, declared", 700, 700, 700, 701},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := strings.Repeat("x", c.size)
			buf, err := readGrowing(iotest.HalfReader(strings.NewReader(body)), c.declared, c.limit)
			if c.cap == 0 {
				var tooBig *http.MaxBytesError
				if !errors.As(err, &tooBig) || tooBig.Limit != c.limit || buf != nil {
					t.Errorf("%q, %v; want refused over %d", buf, err, c.limit)
				}
				return
			}
			if err != nil || string(buf) != body || cap(buf) != c.cap {
				t.Errorf("%d bytes, cap %d, %v; want %d bytes, cap %d", len(buf), cap(buf), err, c.size, c.cap)
			}
		})
	}
	if _, err := readGrowing(iotest.ErrReader(errors.New("reset")), -1, 10); err == nil || err.Error() != "reset" {
		t.Errorf("a failed read: %v", err)
	}
}

// TestSessionIDCharacters takes a session id of visible ASCII, its ends
// included, and refuses one with any other byte.
func TestSessionIDCharacters(t *testing.T) {
	for id, ok := range map[string]bool{"!": true, "~": true, "a-b_c": true, "a b": false, "a\x7f": false, "é": false} {
		_, err := readHeaders(http.Header{HeaderSessionID: {id}})
		if (err == nil) != ok {
			t.Errorf("session id %q: %v, want accepted %t", id, err, ok)
		}
	}
}

// TestObjectMemberBound refuses a message, params or _meta object of more
// than maxObjectMembers members, and reads one of exactly that many.
func TestObjectMemberBound(t *testing.T) {
	members := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = `"k` + strconv.Itoa(i) + `":0`
		}
		return strings.Join(parts, ",")
	}
	for _, c := range []struct {
		name, body, err string
	}{
		{"message", `{"jsonrpc":"2.0",` + members(maxObjectMembers) + `}`, "the message has more than 1024 members"},
		{"a batch member", `[{"jsonrpc":"2.0",` + members(maxObjectMembers) + `}]`, "[0] has more than 1024 members"},
		{"params", `{"method":"m","params":{` + members(maxObjectMembers+1) + `}}`, "params has more than 1024 members"},
		{"_meta", `{"method":"m","params":{"_meta":{` + members(maxObjectMembers+1) + `}}}`, "params._meta has more than 1024 members"},
		{"params at the bound", `{"method":"m","params":{` + members(maxObjectMembers) + `}}`, ""},
	} {
		_, err := scanBody([]byte(c.body), 0, func(*message) error { return nil }, nil)
		if c.err == "" && err != nil || c.err != "" && (err == nil || err.Error() != c.err) {
			t.Errorf("%s: %v, want %q", c.name, err, c.err)
		}
	}
}

// TestDepthBound reads a body nested maxDepth deep and refuses one level
// more, before reading inside it, in a value the middleware reads and in
// one it skips alike.
func TestDepthBound(t *testing.T) {
	for _, c := range []struct {
		name, open string // open is the body before the nesting; the message holds two levels
		levels     int
	}{
		{"tool arguments", `{"method":"m","params":{"arguments":`, maxDepth - 2},
		{"an id", `{"method":"m","id":`, maxDepth - 1},
	} {
		for extra, want := range []bool{true, false} {
			n := c.levels + extra
			body := c.open + strings.Repeat("[", n) + strings.Repeat("]", n) + strings.Repeat("}", strings.Count(c.open, "{"))
			_, err := scanBody([]byte(body), 0, func(*message) error { return nil }, nil)
			var shape *shapeError
			if (err == nil) != want || !want && (!errors.As(err, &shape) || !strings.HasSuffix(err.Error(), "nested deeper than 64 levels")) {
				t.Errorf("%s, %d levels: %v, want accepted %t", c.name, n, err, want)
			}
		}
	}
}
