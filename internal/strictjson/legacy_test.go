package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/internal/strictjson/internal/legacy"
)

// reader is what the two Readers have in common.
type reader[K ~uint8] interface {
	Next() (K, error)
	Object(func(string) error) error
	Array(func(int) error) error
	String() (string, error)
	Number() (json.Number, error)
	Bool() (bool, error)
	Skip() error
	End() error
	Offset() int
}

// walkAny reads every value of r into a tree, as walk does, for either Reader.
func walkAny[K ~uint8](r reader[K]) (any, error) {
	k, err := r.Next()
	if err != nil {
		return nil, err
	}
	switch Kind(k) {
	case Object:
		m := map[string]any{}
		err := r.Object(func(key string) error {
			v, err := walkAny(r)
			m[key] = v
			return err
		})
		return m, err
	case Array:
		l := []any{}
		err := r.Array(func(int) error {
			v, err := walkAny(r)
			l = append(l, v)
			return err
		})
		return l, err
	case String:
		return r.String()
	case Number:
		return r.Number()
	case Bool:
		return r.Bool()
	}
	return nil, r.Skip()
}

func walkAll[K ~uint8](r reader[K]) (any, int, error) {
	v, err := walkAny(r)
	if err == nil {
		err = r.End()
	}
	return v, r.Offset(), err
}

// seeds returns every JSON body the module's tests hold: the string
// literals of its test files that start like a JSON value, its testdata
// files, and its fuzz corpora.
func seeds(tb testing.TB) [][]byte {
	var out [][]byte
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "node_modules" || d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasSuffix(path, "_test.go"):
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil {
						if t := strings.TrimSpace(s); t != "" && strings.ContainsAny(t[:1], `{["`) {
							out = append(out, []byte(s))
						}
					}
				}
				return true
			})
		case strings.Contains(path, "testdata") && strings.HasSuffix(path, ".json"):
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out = append(out, data)
		case strings.Contains(path, filepath.Join("testdata", "fuzz")):
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, line := range strings.Split(string(data), "\n") {
				for _, prefix := range []string{"[]byte(", "string("} {
					if q, ok := strings.CutPrefix(line, prefix); ok {
						if s, err := strconv.Unquote(strings.TrimSuffix(q, ")")); err == nil {
							out = append(out, []byte(s))
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func TestSeedsFound(t *testing.T) {
	if n := len(seeds(t)); n < 1000 {
		t.Errorf("%d seeds, want the module's test bodies (over a thousand)", n)
	}
}

// targets are the Go values FuzzAgreesWithLegacy decodes into.
func targets() []func() any {
	return []func() any{
		func() any { return new(closed) },
		func() any { return new(any) },
		func() any { return new(map[string]any) },
		func() any { return new([]string) },
		func() any { return new(outer) },
	}
}

// FuzzAgreesWithLegacy feeds the JSON v2 reader and the reader it
// replaced the same input: the same accept or refuse and the same values,
// except that the new one may refuse what the old accepted (it is
// stricter; the README lists where).
func FuzzAgreesWithLegacy(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, depth := range []int{0, 3} {
			got, gotAt, err := walkAll[Kind](NewReader(data, depth))
			want, wantAt, legacyErr := walkAll[legacy.Kind](legacy.NewReader(data, depth))
			if err == nil && legacyErr != nil {
				t.Fatalf("depth %d: accepted %q, which the old reader refused: %v", depth, data, legacyErr)
			}
			if err == nil && (!reflect.DeepEqual(got, want) || gotAt != wantAt) {
				t.Fatalf("depth %d: %q read as %#v to %d, by the old reader as %#v to %d", depth, data, got, gotAt, want, wantAt)
			}
			if err != nil && legacyErr == nil && !stricter(err) {
				t.Fatalf("depth %d: refused %q, which the old reader accepted: %v", depth, data, err)
			}
			raw, err := NewReader(data, depth).Raw()
			legacyRaw, legacyErr := legacy.NewReader(data, depth).Raw()
			if err != nil && legacyErr == nil && stricter(err) {
				continue
			}
			if (err == nil) != (legacyErr == nil) || !bytes.Equal(raw, legacyRaw) {
				t.Fatalf("depth %d: Raw(%q) = %q, %v; old %q, %v", depth, data, raw, err, legacyRaw, legacyErr)
			}
		}
		for _, target := range targets() {
			got, want := target(), target()
			err, legacyErr := Decode(data, got), legacy.Decode(data, want)
			if err == nil && legacyErr != nil {
				t.Fatalf("Decode into %T accepted %q, which the old reader refused: %v", got, data, legacyErr)
			}
			if err == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("Decode(%q) = %#v, by the old reader %#v", data, got, want)
			}
			if err != nil && legacyErr == nil && !decodeStricter(err) {
				t.Fatalf("Decode into %T refused %q, which the old reader accepted: %v", got, data, err)
			}
		}
	})
}

// stricter reports whether err, the Reader's refusal of what the old
// one accepted, is one of the ways JSON v2 is stricter: an escaped UTF-16
// surrogate without its pair (the old reader read it as U+FFFD).
func stricter(err error) bool {
	var e *Error
	return errors.As(err, &e) && strings.Contains(e.Msg, "surrogate")
}

// decodeStricter reports whether err, Decode's refusal of what the old one
// accepted, is one of the ways JSON v2 is stricter: the Reader's; a
// repeated name in a value the old reader handed to encoding/json whole
// (into any, where the last one won); an array of another length than the
// Go array it is read into (encoding/json dropped or zeroed the rest).
func decodeStricter(err error) bool {
	var e *Error
	return stricter(err) || errors.As(err, &e) && (e.Repeated || strings.HasSuffix(e.Msg, "array elements"))
}

// BenchmarkLegacyBodies is BenchmarkBodies for the reader JSON v2 replaced.
func BenchmarkLegacyBodies(b *testing.B) {
	for _, body := range benchBodies {
		data := []byte(body.data)
		b.Run(body.name+"/legacy.Decode", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := legacy.Decode(data, body.into()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(body.name+"/legacy.Reader.Skip", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := legacy.NewReader(data, 0)
				if err := r.Skip(); err != nil || r.End() != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(body.name+"/legacy.Reader.Object", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := legacy.NewReader(data, 0)
				if err := r.Object(func(string) error { return nil }); err != nil || r.End() != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
