package policy

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// runeByRune is textProblem as it reads without its ASCII tables: each
// character decoded and given to bad.
func runeByRune(v, field string, max int, bad func(rune) bool, named string) string {
	if v == "" {
		return "is empty; the " + field + " is required"
	}
	if !utf8.ValidString(v) {
		return "is not valid UTF-8"
	}
	if utf8.RuneCountInString(v) > max {
		return "is longer than " + strconv.Itoa(max) + " characters"
	}
	if strings.IndexFunc(v, bad) >= 0 {
		return "contains " + named
	}
	return ""
}

// eachText calls fn with the texts both readings are held to: every
// character alone and after an ASCII letter, and texts at and past the
// bound in characters of one to four bytes.
func eachText(max int, fn func(v string)) {
	var buf [1 + utf8.UTFMax]byte
	buf[0] = 'a'
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if utf8.ValidRune(r) {
			n := utf8.EncodeRune(buf[1:], r)
			fn(string(buf[1 : 1+n]))
			fn(string(buf[:1+n]))
		}
	}
	for _, c := range []string{"a", "é", "€", "😀", " ", "/"} {
		fn(strings.Repeat(c, max))
		fn(strings.Repeat(c, max+1))
		fn(strings.Repeat(c, max-1) + " ")
	}
	for _, v := range []string{"\xff", "a\xc3", "\xed\xa0\x80", "https://idp.example/\u3000", "x\ufeff"} {
		fn(v)
	}
}

// The tables change nothing: textProblem says what the reading rune by
// rune says, for both fields that use it.
func TestTextProblemReadsAsRuneByRune(t *testing.T) {
	for _, f := range []struct {
		max   int
		bad   func(rune) bool
		ascii *[utf8.RuneSelf]bool
	}{{8, isSpace, &asciiSpace}, {8, isSlashOrSpace, &asciiSlashOrSpace}} {
		refused, differ := 0, 0
		eachText(f.max, func(v string) {
			got, want := textProblem(v, "f", f.max, f.bad, f.ascii, "bad"), runeByRune(v, "f", f.max, f.bad, "bad")
			if got != want && differ < 5 {
				t.Errorf("%q: %q, want %q", v, got, want)
			}
			if got != want {
				differ++
			}
			if want != "" {
				refused++
			}
		})
		if refused < 30 {
			t.Errorf("only %d texts were refused: the cases do not test the refusals", refused)
		}
	}
}

// FuzzTextProblem holds textProblem to the rune-by-rune reading for any
// bytes.
func FuzzTextProblem(f *testing.F) {
	for _, s := range []string{"", "https://idp.example", "a b", "a/b", "é\u00a0", "\xff", strings.Repeat("€", 9)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		for _, bad := range []struct {
			fn    func(rune) bool
			ascii *[utf8.RuneSelf]bool
		}{{isSpace, &asciiSpace}, {isSlashOrSpace, &asciiSlashOrSpace}} {
			if got, want := textProblem(v, "f", 8, bad.fn, bad.ascii, "bad"), runeByRune(v, "f", 8, bad.fn, "bad"); got != want {
				t.Fatalf("%q: %q, want %q", v, got, want)
			}
		}
	})
}
