// Package strictjson is the one JSON reader of this module. Every JSON
// document the module takes from outside — facets, Subjects, events, wire
// bodies, agent cards, CLI requests, vectors — is read through it, so that
// all of them agree on what a document says:
//
//   - keys are compared exactly as decoded: "Issuer" is not "issuer"
//     (encoding/json matches keys case-insensitively, even with
//     DisallowUnknownFields);
//   - a key repeated in one object is an error (encoding/json lets the last
//     one win, while other readers keep the first);
//   - nothing but white space may follow the value;
//   - nesting is bounded while reading, so input beyond the bound is never
//     decoded; strings must be valid UTF-8.
//
// Syntax is encoding/json's: the Reader walks its Decoder token by token, so
// this package writes no tokenizer of its own. Every error is an *Error
// naming the JSON path of the value at fault.
package strictjson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// MaxDepth is the nesting bound of a Reader made with maxDepth <= 0, and of
// Decode. No document this module reads comes near it.
const MaxDepth = 64

// Kind is the kind of a JSON value.
type Kind uint8

// The kinds of JSON values.
const (
	Object Kind = iota + 1
	Array
	String
	Number
	Bool
	Null
)

var kindNames = [...]string{"nothing", "an object", "an array", "a string", "a number", "a boolean", "null"}

// String returns the kind with its article, as error messages use it: "an object".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Error is every error this package returns.
type Error struct {
	Path   string // JSON path of the value at fault, e.g. offer.peerVersions[2]; "" for the whole document
	Offset int    // bytes of input read when the error was found
	Msg    string
}

// Error returns "PATH: MSG", or MSG alone for the whole document.
func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// Reader walks one JSON value held in memory. Its methods each read the
// next value; a method that finds a value of another kind returns an error
// without consuming anything.
type Reader struct {
	data     []byte
	dec      *json.Decoder
	maxDepth int
	depth    int
	reads    int // values read so far, to see whether an Object/Array callback read its value
	path     []step
}

type step struct {
	key   string
	index int // -1 for an object member
}

// NewReader returns a Reader of data with the given nesting bound
// (MaxDepth when maxDepth <= 0). The Reader does not copy data; Raw returns
// subslices of it.
func NewReader(data []byte, maxDepth int) *Reader {
	if maxDepth <= 0 {
		maxDepth = MaxDepth
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return &Reader{data: data, dec: dec, maxDepth: maxDepth}
}

// Offset returns how many bytes of data have been read.
func (r *Reader) Offset() int { return int(r.dec.InputOffset()) }

// Path returns the JSON path of the value being read: "" at the top,
// then keys joined by dots (a key that is not an identifier quoted in
// brackets: _meta["io.modelcontextprotocol/protocolVersion"]) and [index]
// for array elements.
func (r *Reader) Path() string {
	var b strings.Builder
	for _, s := range r.path {
		switch {
		case s.index >= 0:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
		case isIdentifier(s.key):
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		default:
			b.WriteByte('[')
			b.WriteString(strconv.Quote(s.key))
			b.WriteByte(']')
		}
	}
	return b.String()
}

func isIdentifier(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return s != ""
}

// errorf returns an error about the value that starts at the next offset.
func (r *Reader) errorf(format string, args ...any) *Error {
	return r.errorAt(r.start(), format, args...)
}

func (r *Reader) errorAt(offset int, format string, args ...any) *Error {
	return &Error{Path: r.Path(), Offset: offset, Msg: fmt.Sprintf(format, args...)}
}

// wrap turns an error of the underlying Decoder into an *Error.
func (r *Reader) wrap(err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return &Error{Path: r.Path(), Offset: int(se.Offset), Msg: se.Error()}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{Path: r.Path(), Offset: len(r.data), Msg: "unexpected end of JSON input"}
	}
	return &Error{Path: r.Path(), Offset: r.Offset(), Msg: err.Error()}
}

// start returns the offset at which the next value begins: past white
// space and the separator the Decoder has not consumed yet.
func (r *Reader) start() int {
	i := r.Offset()
	for i < len(r.data) {
		switch r.data[i] {
		case ':', ',':
			i++
		default:
			if !isSpace(r.data[i]) {
				return i
			}
			i++
		}
	}
	return i
}

// Next returns the kind of the next value without reading it.
func (r *Reader) Next() (Kind, error) {
	i := r.start()
	if i == len(r.data) {
		return 0, &Error{Path: r.Path(), Offset: i, Msg: "unexpected end of JSON input"}
	}
	switch c := r.data[i]; {
	case c == '{':
		return Object, nil
	case c == '[':
		return Array, nil
	case c == '"':
		return String, nil
	case c == 't' || c == 'f':
		return Bool, nil
	case c == 'n':
		return Null, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return Number, nil
	default:
		return 0, &Error{Path: r.Path(), Offset: i, Msg: "invalid character " + strconv.QuoteRune(rune(c)) + " looking for beginning of value"}
	}
}

func (r *Reader) expect(want Kind) error {
	k, err := r.Next()
	if err != nil {
		return err
	}
	if k != want {
		return r.errorf("want %v, got %v", want, k)
	}
	return nil
}

func (r *Reader) token() (json.Token, error) {
	t, err := r.dec.Token()
	if err != nil {
		return nil, r.wrap(err)
	}
	return t, nil
}

// enter reads an opening delimiter, refusing it past the depth bound before
// anything inside is read.
func (r *Reader) enter(k Kind) error {
	if err := r.expect(k); err != nil {
		return err
	}
	if r.depth == r.maxDepth {
		return r.errorf("nested deeper than %d levels", r.maxDepth)
	}
	if _, err := r.token(); err != nil {
		return err
	}
	r.depth++
	return nil
}

// leave reads a closing delimiter.
func (r *Reader) leave() error {
	if _, err := r.token(); err != nil {
		return err
	}
	r.depth--
	r.reads++
	return nil
}

// Object reads an object, calling fn with each key in document order. fn
// reads the member's value with any method of r; a value fn leaves unread
// is skipped. A key that appears twice is an error naming it, returned
// before fn sees it again. The first error, fn's included, ends the walk.
func (r *Reader) Object(fn func(key string) error) error {
	if err := r.enter(Object); err != nil {
		return err
	}
	var seen map[string]struct{}
	var first [8]string // the keys of small objects, without a map
	n := 0
	for r.dec.More() {
		at := r.start()
		key, err := r.stringToken()
		if err != nil {
			return err
		}
		if n < len(first) {
			for _, k := range first[:n] {
				if k == key {
					return r.errorAt(at, "the key %q appears twice", key)
				}
			}
			first[n] = key
		} else {
			if seen == nil {
				seen = make(map[string]struct{}, 2*len(first))
				for _, k := range first {
					seen[k] = struct{}{}
				}
			}
			if _, dup := seen[key]; dup {
				return r.errorAt(at, "the key %q appears twice", key)
			}
			seen[key] = struct{}{}
		}
		n++
		if err := r.member(step{key: key, index: -1}, func() error { return fn(key) }); err != nil {
			return err
		}
	}
	return r.leave()
}

// Array reads an array, calling fn with each element's index. fn reads the
// element with any method of r; an element fn leaves unread is skipped.
func (r *Reader) Array(fn func(i int) error) error {
	if err := r.enter(Array); err != nil {
		return err
	}
	for i := 0; r.dec.More(); i++ {
		if err := r.member(step{index: i}, func() error { return fn(i) }); err != nil {
			return err
		}
	}
	return r.leave()
}

func (r *Reader) member(s step, read func() error) error {
	r.path = append(r.path, s)
	before := r.reads
	err := read()
	if err == nil && r.reads == before {
		err = r.Skip()
	}
	if err != nil {
		return err
	}
	r.path = r.path[:len(r.path)-1]
	return nil
}

// stringToken reads a string token, refusing invalid UTF-8 that
// encoding/json would silently replace.
func (r *Reader) stringToken() (string, error) {
	from := r.start()
	t, err := r.token()
	if err != nil {
		return "", err
	}
	s, ok := t.(string)
	if !ok {
		return "", r.errorf("want a string, got %v", kindOf(t))
	}
	if !utf8.Valid(r.data[from:r.Offset()]) {
		return "", r.errorAt(from, "invalid UTF-8 in string")
	}
	return s, nil
}

func kindOf(t json.Token) Kind {
	switch t := t.(type) {
	case json.Delim:
		if t == '{' || t == '}' {
			return Object
		}
		return Array
	case string:
		return String
	case json.Number:
		return Number
	case bool:
		return Bool
	}
	return Null
}

// String reads a string.
func (r *Reader) String() (string, error) {
	if err := r.expect(String); err != nil {
		return "", err
	}
	s, err := r.stringToken()
	if err == nil {
		r.reads++
	}
	return s, err
}

// Number reads a number, as written.
func (r *Reader) Number() (json.Number, error) {
	if err := r.expect(Number); err != nil {
		return "", err
	}
	t, err := r.token()
	if err != nil {
		return "", err
	}
	r.reads++
	return t.(json.Number), nil
}

// Bool reads true or false.
func (r *Reader) Bool() (bool, error) {
	if err := r.expect(Bool); err != nil {
		return false, err
	}
	t, err := r.token()
	if err != nil {
		return false, err
	}
	r.reads++
	return t.(bool), nil
}

// Skip reads any value, checking its syntax, its depth token by token and
// its strings' UTF-8. What it skips is not interpreted, so repeated keys
// inside it are not looked for.
func (r *Reader) Skip() error {
	_, err := r.Raw()
	return err
}

// Raw reads any value, as Skip does, and returns its bytes exactly as
// written: a subslice of the Reader's data.
func (r *Reader) Raw() ([]byte, error) {
	if _, err := r.Next(); err != nil {
		return nil, err
	}
	from, base := r.start(), r.depth
	for {
		t, err := r.token()
		if err != nil {
			return nil, err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			if r.depth == r.maxDepth {
				return nil, r.errorAt(r.Offset()-1, "nested deeper than %d levels", r.maxDepth)
			}
			r.depth++
		case json.Delim('}'), json.Delim(']'):
			r.depth--
		}
		if r.depth == base {
			break
		}
	}
	raw := r.data[from:r.Offset()]
	if !utf8.Valid(raw) { // outside strings JSON is ASCII
		return nil, r.errorAt(from, "invalid UTF-8 in string")
	}
	r.reads++
	return raw, nil
}

// End reports an error unless nothing but white space follows the value read.
func (r *Reader) End() error {
	i := r.Offset()
	for i < len(r.data) && isSpace(r.data[i]) {
		i++
	}
	if i != len(r.data) {
		return &Error{Offset: i, Msg: "data after the JSON value"}
	}
	return nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// Decode decodes data, one JSON value, into v, a non-nil pointer, as
// strictly as the package says: every object that maps to a struct may hold
// only the exact JSON names of that struct's fields, each once; a value of
// the wrong kind is an error naming its path, never a Go type. JSON null is
// accepted where encoding/json accepts it (it leaves the target unchanged)
// except for strings, numbers and booleans, which must be present as such.
// Types with their own UnmarshalJSON read their own values.
func Decode(data []byte, v any) error {
	r := NewReader(data, 0)
	if err := r.Value(v); err != nil {
		return err
	}
	return r.End()
}

// Value reads the next value into v, a non-nil pointer, as Decode does.
func (r *Reader) Value(v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("strictjson: Value needs a non-nil pointer, got %T", v)
	}
	from := r.start()
	path := r.Path()
	if err := r.check(rv.Type().Elem()); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(r.data[from:r.Offset()]))
	if err := dec.Decode(v); err != nil {
		// check matched every kind and ran every UnmarshalJSON, so what
		// is left is a number out of the range of its field.
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return &Error{Path: joinPath(path, te.Field), Offset: from + int(te.Offset), Msg: te.Value + " is out of range"}
		}
		return &Error{Path: path, Offset: from, Msg: err.Error()}
	}
	return nil
}

func joinPath(outer, inner string) string {
	switch {
	case outer == "":
		return inner
	case inner == "":
		return outer
	case inner[0] == '[':
		return outer + inner
	}
	return outer + "." + inner
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// check walks the next value against t, the type it will be decoded into.
func (r *Reader) check(t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	k, err := r.Next()
	if err != nil {
		return err
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		// It reads its own value (strictly, if it is one of ours); run it
		// here, where the path of its errors is known.
		path, from := r.Path(), r.start()
		raw, err := r.Raw()
		if err != nil {
			return err
		}
		if err := reflect.New(t).Interface().(json.Unmarshaler).UnmarshalJSON(raw); err != nil {
			var e *Error
			if errors.As(err, &e) {
				return &Error{Path: joinPath(path, e.Path), Offset: from + e.Offset, Msg: e.Msg}
			}
			return &Error{Path: path, Offset: from, Msg: err.Error()}
		}
		return nil
	}
	if k == Null {
		switch t.Kind() {
		case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
			return r.errorf("want %v, got null", kindFor(t))
		}
		return r.Skip()
	}
	if reflect.PointerTo(t).Implements(textUnmarshaler) {
		_, err := r.String()
		return err
	}
	switch t.Kind() {
	case reflect.Struct:
		fields := fieldsOf(t)
		return r.Object(func(key string) error {
			f, ok := fields[key]
			if !ok {
				r.path = r.path[:len(r.path)-1] // name the object, not the key
				err := r.errorf("unknown field %q", key)
				r.path = append(r.path, step{key: key, index: -1})
				return err
			}
			if f.quoted {
				return r.expect(String)
			}
			return r.check(f.typ)
		})
	case reflect.Map:
		return r.Object(func(string) error { return r.check(t.Elem()) })
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			_, err := r.String() // base64
			return err
		}
		return r.Array(func(int) error { return r.check(t.Elem()) })
	case reflect.Interface:
		return r.Skip()
	}
	if want := kindFor(t); want != k {
		return r.errorf("want %v, got %v", want, k)
	}
	return r.Skip()
}

func kindFor(t reflect.Type) Kind {
	switch t.Kind() {
	case reflect.String:
		return String
	case reflect.Bool:
		return Bool
	case reflect.Struct, reflect.Map:
		return Object
	case reflect.Slice, reflect.Array:
		return Array
	}
	return Number
}

type field struct {
	typ    reflect.Type
	quoted bool // the ",string" option: the value is a string holding a scalar
}

var fieldCache sync.Map // reflect.Type → map[string]field

// fieldsOf returns the JSON names of t's fields as encoding/json names
// them, with those promoted from embedded structs.
func fieldsOf(t reflect.Type) map[string]field {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]field)
	}
	m := map[string]field{}
	for i := range t.NumField() {
		f := t.Field(i)
		full := f.Tag.Get("json")
		tag, opts, _ := strings.Cut(full, ",")
		switch {
		case full == "-":
		case f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct:
			for k, v := range fieldsOf(f.Type) {
				m[k] = v
			}
		case !f.IsExported():
		default:
			name := tag
			if name == "" {
				name = f.Name
			}
			m[name] = field{typ: f.Type, quoted: hasOption(opts, "string")}
		}
	}
	fieldCache.Store(t, m)
	return m
}

func hasOption(opts, want string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == want {
			return true
		}
	}
	return false
}
