package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/internal/strictjson"
)

func TestParseTree(t *testing.T) {
	src := ` {"a" : [1.50, -2e3, "x\"y"], "b\u0063": {"t": true, "f": false, "n": null}, "z": {}} `
	root, err := parseTree([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if root.kind != '{' || src[root.start] != '{' || src[root.end-1] != '}' || len(root.members) != 3 {
		t.Fatalf("root %+v", root)
	}
	a := root.members[0].value
	if got := src[a.start:a.end]; got != `[1.50, -2e3, "x\"y"]` {
		t.Errorf("a spans %q", got)
	}
	if got := src[a.elems[0].start:a.elems[0].end]; got != "1.50" || a.elems[0].kindName() != "number" {
		t.Errorf("a[0] = %q (%s): numbers must keep their spelling", got, a.elems[0].kindName())
	}
	if !a.elems[2].isString(`x"y`) {
		t.Errorf("a[2] decoded as %q", a.elems[2].str)
	}
	if root.members[1].key != "bc" || src[root.members[1].keyStart] != '"' {
		t.Errorf("escaped key decoded as %q at %d", root.members[1].key, root.members[1].keyStart)
	}
	kinds := ""
	for _, m := range root.members[1].value.members {
		kinds += m.value.kindName() + " "
	}
	if kinds != "boolean boolean null " {
		t.Errorf("kinds %q", kinds)
	}
	if z := root.member("z"); z == nil || z.kind != '{' || src[z.start:z.end] != "{}" || root.member("y") != nil {
		t.Errorf("member z = %+v, member y = %+v", z, root.member("y"))
	}
	deep := strings.Repeat("[", strictjson.MaxDepth+1) + strings.Repeat("]", strictjson.MaxDepth+1)
	for _, bad := range []string{``, `{`, `{"a":1,}`, "\"\xff\"", `1 2`, deep, `{"a": "x` + "\xff" + `"}`} {
		var nj *notJSONError
		if _, err := parseTree([]byte(bad)); !errors.As(err, &nj) {
			t.Errorf("parseTree(%q) = %v, want *notJSONError", bad, err)
		}
	}
}

// TestParseTreeRepeatedKey checks that the strict reader's refusal of a
// key given twice comes back as a *repeatedKeyError naming the member's
// path, at the root and below it.
func TestParseTreeRepeatedKey(t *testing.T) {
	for _, tt := range []struct{ src, path, key string }{
		{`{"a": 1, "a": 2}`, "a", "a"},
		{`{"a": {"b": [], "c\n": 1, "c\n": 2}}`, "a.c\n", "c\n"},
		{`{"x": [{"k": 1, "k": 1}]}`, "x[0].k", "k"},
	} {
		_, err := parseTree([]byte(tt.src))
		var rk *repeatedKeyError
		if !errors.As(err, &rk) || rk.path != tt.path || rk.key != tt.key {
			t.Errorf("parseTree(%s) = %v, want key %q repeated at %s", tt.src, err, tt.key, tt.path)
			continue
		}
		if want := fmt.Sprintf("%s: key %q appears more than once", tt.path, tt.key); rk.Error() != want {
			t.Errorf("Error() = %q, want %q", rk.Error(), want)
		}
	}
	// A document cut short after a repeated key is not JSON at all.
	for _, src := range []string{`{"a": [], "a"`, `{"a": 1, "a": 2} x`, `{"a": 1, "a": "` + "\xff" + `"}`} {
		var nj *notJSONError
		if _, err := parseTree([]byte(src)); !errors.As(err, &nj) {
			t.Errorf("parseTree(%q) = %v, want *notJSONError", src, err)
		}
	}
}

func TestRemoveItems(t *testing.T) {
	tests := []struct {
		src  string
		drop []int
		want string
	}{
		{`[1, 2, 3]`, []int{0}, `[2, 3]`},
		{`[1, 2, 3]`, []int{1}, `[1, 3]`},
		{`[1, 2, 3]`, []int{2}, `[1, 2]`},
		{`[1, 2, 3]`, []int{0, 1}, `[3]`},
		{`[1, 2, 3]`, []int{0, 2}, `[2]`},
		{`[1, 2, 3]`, []int{1, 2}, `[1]`},
		{`[1, 2, 3]`, []int{0, 1, 2}, `[]`},
		{`[1, 2, 3]`, nil, `[1, 2, 3]`},
		{"[\n  1,\n  2\n]", []int{0}, "[\n  2\n]"},
		{"[\n  1,\n  2\n]", []int{1}, "[\n  1\n]"},
		{"[\n  1,\n  2\n]", []int{0, 1}, "[]"},
		{`{"a":1,"b":2,"c":3}`, []int{1}, `{"a":1,"c":3}`},
		{`{"a":1,"b":2,"c":3}`, []int{0, 2}, `{"b":2}`},
		{"{\n  \"a\": 1,\n  \"b\": {\"x\": [1]},\n  \"c\": 3\n}", []int{0, 1}, "{\n  \"c\": 3\n}"},
		{"{\n  \"a\": 1,\n  \"b\": {\"x\": [1]},\n  \"c\": 3\n}", []int{2}, "{\n  \"a\": 1,\n  \"b\": {\"x\": [1]}\n}"},
	}
	for _, tt := range tests {
		root, err := parseTree([]byte(tt.src))
		if err != nil {
			t.Fatal(err)
		}
		out, err := splice([]byte(tt.src), removeItems(root, tt.drop))
		if err != nil || string(out) != tt.want {
			t.Errorf("remove %v from %q = %q, %v; want %q", tt.drop, tt.src, out, err, tt.want)
		}
	}
}

func TestSpliceRefusesOverlap(t *testing.T) {
	if _, err := splice([]byte("abcdef"), []edit{{1, 4, ""}, {3, 5, "x"}}); err == nil {
		t.Error("overlapping edits were applied")
	}
	out, err := splice([]byte("abcdef"), []edit{{4, 5, "E"}, {0, 1, "A"}, {1, 1, "+"}})
	if err != nil || string(out) != "A+bcdEf" {
		t.Errorf("splice = %q, %v", out, err)
	}
}

// TestSpliceBounds checks splice at the ends of the data: an edit may
// replace or append at the very end, but one reaching past it is refused.
func TestSpliceBounds(t *testing.T) {
	for _, tt := range []struct {
		edits []edit
		want  string
	}{
		{[]edit{{4, 6, "EF"}}, "abcdEF"},
		{[]edit{{6, 6, "!"}}, "abcdef!"},
		{[]edit{{0, 6, ""}}, ""},
	} {
		if out, err := splice([]byte("abcdef"), tt.edits); err != nil || string(out) != tt.want {
			t.Errorf("splice(%v) = %q, %v; want %q", tt.edits, out, err, tt.want)
		}
	}
	if out, err := splice([]byte("abcdef"), []edit{{5, 7, "x"}}); err == nil {
		t.Errorf("an edit past the end was applied: %q", out)
	}
}
