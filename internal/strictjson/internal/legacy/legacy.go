// Package legacy is the strict reader this module had before it moved to
// JSON v2, kept only so that FuzzAgreesWithLegacy can compare the two; it
// is deleted once the comparison has run. It was the one JSON reader of this module. Every JSON
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
package legacy

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
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
	_ Kind = iota
	Object
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
	Offset int    // where in the input the fault was found: the start of the value at fault, or where the syntax broke
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
	pos      int           // bytes read, when data is valid JSON
	dec      *json.Decoder // the reader of data that is not: it finds and names the fault
	maxDepth int
	depth    int
	path     []step
}

type step struct {
	key   string
	index int // -1 for an object member
}

// NewReader returns a Reader of data with the given nesting bound
// (MaxDepth when maxDepth <= 0). The Reader does not copy data; Raw returns
// subslices of it.
//
// Data that encoding/json finds valid (json.Valid, one linear pass with no
// allocation per value) is then walked by splitting it at its delimiters,
// which valid JSON makes unambiguous; other data is walked with
// encoding/json's Decoder.Token, which finds and names the fault. Both
// walks give the same answers up to the fault (FuzzValidAndTokenWalksAgree).
func NewReader(data []byte, maxDepth int) *Reader {
	if maxDepth <= 0 {
		maxDepth = MaxDepth
	}
	r := &Reader{data: data, maxDepth: maxDepth}
	if !json.Valid(data) {
		r.tokens()
	}
	return r
}

// tokens makes r walk with encoding/json's Decoder, from the start.
func (r *Reader) tokens() {
	r.dec = json.NewDecoder(bytes.NewReader(r.data))
	r.dec.UseNumber()
}

// Offset returns how many bytes of data have been read.
func (r *Reader) Offset() int {
	if r.dec == nil {
		return r.pos
	}
	return int(r.dec.InputOffset())
}

// Path returns the JSON path of the value being read: "" at the top,
// then keys joined by dots (a key that is not an identifier quoted in
// brackets: _meta["io.modelcontextprotocol/protocolVersion"]) and [index]
// for array elements.
func (r *Reader) Path() string { return pathOf(r.path) }

func pathOf(steps []step) string {
	var b strings.Builder
	for _, s := range steps {
		if s.index >= 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
		} else if isIdentifier(s.key) {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		} else {
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

// firstByte maps the first byte of a value to its kind.
var firstByte = [256]Kind{'{': Object, '[': Array, '"': String, 't': Bool, 'f': Bool, 'n': Null,
	'-': Number, '0': Number, '1': Number, '2': Number, '3': Number, '4': Number, '5': Number,
	'6': Number, '7': Number, '8': Number, '9': Number}

// Next returns the kind of the next value without reading it.
func (r *Reader) Next() (Kind, error) {
	i := r.start()
	if i == len(r.data) {
		return 0, &Error{Path: r.Path(), Offset: i, Msg: "unexpected end of JSON input"}
	}
	k := firstByte[r.data[i]]
	if k == 0 {
		return 0, &Error{Path: r.Path(), Offset: i, Msg: "invalid character " + strconv.QuoteRune(rune(r.data[i])) + " looking for beginning of value"}
	}
	return k, nil
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

// delim reads the delimiter Next or more found.
func (r *Reader) delim() error {
	if r.dec == nil {
		r.pos = r.start() + 1
		return nil
	}
	_, err := r.token()
	return err
}

// more reports whether the object or array being read has another member.
func (r *Reader) more() bool {
	if r.dec == nil {
		c := r.data[r.start()] // valid JSON closes what it opens
		return c != '}' && c != ']'
	}
	return r.dec.More()
}

// scalar reads the number or literal Next found, when the data is valid,
// and returns its bytes: returning a json.Token would cost an allocation
// to hold it.
func (r *Reader) scalar() []byte {
	from := r.start()
	r.pos = scalarEnd(r.data, from)
	return r.data[from:r.pos]
}

// scalarEnd returns where the number or literal at data[i] ends: at the
// first byte that may follow a value in valid JSON.
func scalarEnd(data []byte, i int) int {
	for i < len(data) && !isSpace(data[i]) && data[i] != ',' && data[i] != '}' && data[i] != ']' {
		i++
	}
	return i
}

// stringEnd returns the offset of the quote that closes the string opening
// at data[i], and whether the string holds an escape.
func stringEnd(data []byte, i int) (int, bool) {
	escaped := false
	for i++; data[i] != '"'; i++ {
		if data[i] == '\\' {
			escaped = true
			i++
		}
	}
	return i, escaped
}

// enter reads an opening delimiter, refusing it past the depth bound before
// anything inside is read.
func (r *Reader) enter(k Kind) error {
	if err := r.expect(k); err != nil {
		return err
	}
	if r.depth >= r.maxDepth {
		return r.errorf("nested deeper than %d levels", r.maxDepth)
	}
	if err := r.delim(); err != nil {
		return err
	}
	r.depth++
	return nil
}

// leave reads a closing delimiter.
func (r *Reader) leave() error {
	if err := r.delim(); err != nil {
		return err
	}
	r.depth--
	return nil
}

// Object reads an object, calling fn with each key in document order. fn
// reads the member's value with any method of r; a value fn leaves unread
// is skipped, and a nil fn skips them all. A key that appears twice is an
// error naming it, returned before fn sees it again. The first error, fn's
// included, ends the walk.
func (r *Reader) Object(fn func(key string) error) error {
	if err := r.enter(Object); err != nil {
		return err
	}
	if fn == nil {
		fn = func(string) error { return nil }
	}
	var seen map[string]struct{}
	var first [16]string // the keys of small objects, without a map
	n := 0
	for r.more() {
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
				seen = make(map[string]struct{})
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
		if err := r.member(step{key: key, index: -1}, fn, nil); err != nil {
			return err
		}
	}
	return r.leave()
}

// Array reads an array, calling fn with each element's index. fn reads the
// element with any method of r; an element fn leaves unread is skipped,
// and a nil fn skips them all.
func (r *Reader) Array(fn func(i int) error) error {
	if err := r.enter(Array); err != nil {
		return err
	}
	if fn == nil {
		fn = func(int) error { return nil }
	}
	for i := 0; r.more(); i++ {
		if err := r.member(step{index: i}, nil, fn); err != nil {
			return err
		}
	}
	return r.leave()
}

// member reads one member or element with read, and skips it if read
// left it unread.
func (r *Reader) member(s step, member func(string) error, element func(int) error) error {
	r.path = append(r.path, s)
	from := r.start()
	var err error
	if member != nil {
		err = member(s.key)
	} else {
		err = element(s.index)
	}
	if err == nil && r.Offset() <= from {
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
	var s string
	if r.dec == nil {
		end, escaped := stringEnd(r.data, from)
		r.pos = end + 1
		if !escaped {
			s = string(r.data[from+1 : end])
		} else if err := unquote(r.data[from:r.pos], &s); err != nil {
			return "", r.wrap(err) // not reached: the data is valid
		}
	} else {
		t, err := r.token()
		if err != nil {
			return "", err
		}
		s, _ = t.(string) // the Decoder reads nothing else as a key, and String checked first
	}
	if !utf8.Valid(r.data[from:r.Offset()]) {
		return "", r.errorAt(from, "invalid UTF-8 in string")
	}
	return s, nil
}

// unquote decodes the JSON string quoted into *s. It is apart from
// stringToken so that only a string with an escape, which it decodes
// through a pointer, costs an allocation.
func unquote(quoted []byte, s *string) error {
	var v string
	err := json.Unmarshal(quoted, &v)
	*s = v
	return err
}

// String reads a string.
func (r *Reader) String() (string, error) {
	if err := r.expect(String); err != nil {
		return "", err
	}
	return r.stringToken()
}

// Number reads a number, as written.
func (r *Reader) Number() (json.Number, error) {
	if err := r.expect(Number); err != nil {
		return "", err
	}
	if r.dec == nil {
		return json.Number(r.scalar()), nil
	}
	t, err := r.token()
	if err != nil {
		return "", err
	}
	return t.(json.Number), nil
}

// Bool reads true or false.
func (r *Reader) Bool() (bool, error) {
	if err := r.expect(Bool); err != nil {
		return false, err
	}
	if r.dec == nil {
		return r.scalar()[0] == 't', nil
	}
	t, err := r.token()
	if err != nil {
		return false, err
	}
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
	if r.dec == nil {
		return r.rawValid(from)
	}
	for {
		t, err := r.token()
		if err != nil {
			return nil, err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			if r.depth >= r.maxDepth {
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
	return raw, nil
}

// rawValid is Raw over valid data.
func (r *Reader) rawValid(from int) ([]byte, error) {
	i, base := from, r.depth
	for {
		switch c := r.data[i]; c {
		case '{', '[':
			if r.depth >= r.maxDepth {
				r.pos = i
				return nil, r.errorAt(i, "nested deeper than %d levels", r.maxDepth)
			}
			r.depth++
			i++
		case '}', ']':
			r.depth--
			i++
		case '"':
			end, _ := stringEnd(r.data, i)
			i = end + 1
		case ' ', '\t', '\r', '\n', ',', ':':
			i++
			continue
		default:
			i = scalarEnd(r.data, i)
		}
		if r.depth == base {
			break
		}
	}
	r.pos = i
	raw := r.data[from:i]
	if !utf8.Valid(raw) { // outside strings JSON is ASCII
		return nil, r.errorAt(from, "invalid UTF-8 in string")
	}
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
	path := len(r.path) // the steps to this value, read as a path only for an error
	if err := r.check(rv.Type().Elem()); err != nil {
		return err
	}
	if err := json.Unmarshal(r.data[from:r.Offset()], v); err != nil {
		// check matched every kind and ran every UnmarshalJSON, so what
		// is left is a number out of the range of its field.
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return &Error{Path: joinPath(pathOf(r.path[:path]), te.Field), Offset: from + int(te.Offset), Msg: te.Value + " is out of range"}
		}
		return &Error{Path: pathOf(r.path[:path]), Offset: from, Msg: err.Error()}
	}
	return nil
}

func joinPath(outer, inner string) string {
	if outer == "" || inner == "" || inner[0] == '[' {
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
		path, from := len(r.path), r.start()
		raw, err := r.Raw()
		if err != nil {
			return err
		}
		if err := reflect.New(t).Interface().(json.Unmarshaler).UnmarshalJSON(raw); err != nil {
			var e *Error
			if errors.As(err, &e) {
				return &Error{Path: joinPath(pathOf(r.path[:path]), e.Path), Offset: from + e.Offset, Msg: e.Msg}
			}
			return &Error{Path: pathOf(r.path[:path]), Offset: from, Msg: err.Error()}
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
		fields, object := fieldsOf(t), len(r.path)
		return r.Object(func(key string) error {
			f, ok := fields[key]
			if !ok {
				return &Error{Path: pathOf(r.path[:object]), Offset: r.start(), Msg: fmt.Sprintf("unknown field %q", key)}
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
		if f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
			maps.Copy(m, fieldsOf(f.Type))
		} else if full != "-" && f.IsExported() {
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
