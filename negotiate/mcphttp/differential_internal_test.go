package mcphttp

import (
	"bytes"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// testBodies returns every JSON text written in this package's tests (a
// string literal that opens with { or [), so that the differential fuzz
// starts from every body a test sends.
func testBodies(t testing.TB) []string {
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, name := range files {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && strings.TrimLeft(s, " \t\r\n") != "" && strings.ContainsAny(strings.TrimLeft(s, " \t\r\n")[:1], "{[") {
					out = append(out, s)
				}
			}
			return true
		})
	}
	return out
}

// Sentinels a differential run's callbacks return, to compare how both
// readers end a scan that their caller stops.
var (
	errStopped = errors.New("stopped")
	errBatched = errors.New("no batches")
)

// readerRun is what one reader made of a body.
type readerRun struct {
	batch    bool
	err      error
	messages []message
}

func runReader(scan func([]byte, int, func(*message) error, func() error) (bool, error), data []byte, maxMembers, stopAt int, refuseBatch bool) readerRun {
	var run readerRun
	var batch func() error
	if refuseBatch {
		batch = func() error { return errBatched }
	}
	run.batch, run.err = scan(data, maxMembers, func(m *message) error {
		c := *m
		c.id = bytes.Clone(m.id)
		run.messages = append(run.messages, c)
		if len(run.messages) == stopAt {
			return errStopped
		}
		return nil
	}, batch)
	return run
}

// class is what a caller of scanBody tells apart in an error.
func class(err error) string {
	var shape *shapeError
	switch {
	case err == nil:
		return "accepted"
	case errors.Is(err, errSyntax):
		return "-32700"
	case errors.As(err, &shape):
		return "-32600"
	}
	return err.Error()
}

// sameRule reports whether two refusals name the same rule: the same
// message, or one whose JSON path differs where the new reader names the
// value inside a skipped one that broke it (the old reader named the
// skipped value).
func sameRule(was, is string) bool {
	if was == is {
		return true
	}
	_, rule, ok := strings.Cut(was, ": ")
	return ok && strings.HasSuffix(is, ": "+rule)
}

// FuzzReadersAgree feeds the reader of body.go (JSON v2's tokenizer) and
// the reader it replaced (internal/strictjson, oldScanBody) the same
// bodies, bounds and stops: they must accept and refuse alike, with the
// same codes, and read the same messages. The one difference allowed is
// the new reader's: it refuses, as -32600, a body the old one accepted
// when the body repeats a key or holds a string that is not valid UTF-8
// (or an unpaired surrogate escape) in a value the old reader skipped or
// never reached; those bodies are not valid under JSON v2's defaults.
func FuzzReadersAgree(f *testing.F) {
	seeds := append(testBodies(f), fuzzBodies...)
	for _, s := range seeds {
		f.Add([]byte(s), uint8(0), uint8(0), false)
		f.Add([]byte(s), uint8(2), uint8(1), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, maxMembers, stopAt uint8, refuseBatch bool) {
		max, stop := int(maxMembers%8), int(stopAt%4)
		was := runReader(oldScanBody, data, max, stop, refuseBatch)
		is := runReader(scanBody, data, max, stop, refuseBatch)
		// A body that repeats a key or holds invalid UTF-8 somewhere, which
		// the new reader refuses wherever it is.
		broken := !jsontext.Value(data).IsValid() && jsontext.Value(data).IsValid(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
		if class(was.err) != class(is.err) {
			if stricter := class(is.err) == "-32600" && class(was.err) != "-32700" && broken; !stricter {
				t.Fatalf("%q: old %v, new %v", data, was.err, is.err)
			}
			return
		}
		if class(is.err) == "-32600" && !sameRule(was.err.Error(), is.err.Error()) && !broken {
			t.Fatalf("%q: old %q, new %q", data, was.err, is.err)
		}
		if was.err == nil && was.batch != is.batch {
			t.Fatalf("%q: batch old %t, new %t", data, was.batch, is.batch)
		}
		if class(is.err) == "-32700" {
			return // what the callbacks saw of a body that is not JSON is disregarded
		}
		if len(was.messages) != len(is.messages) {
			t.Fatalf("%q: old read %d messages, new %d", data, len(was.messages), len(is.messages))
		}
		for i := range was.messages {
			a, b := was.messages[i], is.messages[i]
			if !bytes.Equal(a.id, b.id) {
				t.Fatalf("%q: message %d id old %q, new %q", data, i, a.id, b.id)
			}
			a.id, b.id = nil, nil
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("%q: message %d\nold %+v\nnew %+v", data, i, a, b)
			}
		}
	})
}
