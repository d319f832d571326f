// Package strictjson is the one JSON reader of this module. Every JSON
// document the module takes from outside — facets, Subjects, events, wire
// bodies, agent cards, CLI requests, vectors — is read through it, so that
// all of them agree on what a document says.
//
// It is JSON v2 (github.com/go-json-experiment/json, which is the standard
// library's encoding/json/v2 under Go 1.27) with this module's rules on
// top; JSON v2 does the reading, and this package writes no tokenizer:
//
//   - keys are compared exactly as written: "Issuer" is not "issuer";
//   - a key repeated in one object is an error, wherever it is (readers
//     disagree on which of the two counts);
//   - nothing but white space may follow the value;
//   - strings must be valid UTF-8;
//   - nesting is bounded while reading (MaxDepth), so input beyond the
//     bound is never decoded;
//   - records are closed: Decode refuses a member its struct does not
//     name, and says which name was probably meant.
//
// Every error is an *Error naming the JSON path of the value at fault and
// the byte offset where it was found.
package strictjson

import (
	"bytes"
	"cmp"
	"encoding"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
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

// kindOf maps JSON v2's kinds to this package's.
func kindOf(k jsontext.Kind) Kind {
	switch k {
	case '{':
		return Object
	case '[':
		return Array
	case '"':
		return String
	case '0':
		return Number
	case 't', 'f':
		return Bool
	case 'n':
		return Null
	}
	return 0
}

// Error is every error this package returns.
type Error struct {
	Path     string // JSON path of the value at fault, e.g. offer.peerVersions[2]; "" for the whole document
	Offset   int    // where in the input the fault was found: the start of the value at fault, or where the syntax broke
	Msg      string
	Repeated bool   // the fault is that Key appears twice in the object at Path
	Key      string // the key given twice
}

// Error returns "PATH: MSG", or MSG alone for the whole document.
func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// Reader walks one JSON value held in memory with JSON v2's
// jsontext.Decoder. Its methods each read the next value; a method that
// finds a value of another kind returns an error without consuming
// anything.
type Reader struct {
	data     []byte
	dec      jsontext.Decoder
	buf      bytes.Buffer // data, which the Decoder reads in place
	maxDepth int
	path     []step
}

type step struct {
	key   string
	index int // -1 for an object member
}

// readers keeps Readers given back with Release: a Decoder's stacks grow
// as it reads, and a Reader reused keeps them.
var readers = sync.Pool{New: func() any { return new(Reader) }}

// NewReader returns a Reader of data with the given nesting bound
// (MaxDepth when maxDepth <= 0). The Reader does not copy data; Raw returns
// subslices of it.
//
// Object looks for repeated keys itself, so that Skip and Raw do not: a
// caller that reads a member as Raw reads it again (Decode does, and JSON
// v2's Unmarshal refuses a repeated name wherever it is).
func NewReader(data []byte, maxDepth int) *Reader { return newReader(data, maxDepth, true) }

// NewReaderRefusingRepeats is NewReader for a walk that reads only some
// members of a document that others read whole: a key repeated in any
// object is an error, in the values Skip and Raw read too (JSON v2's
// default).
func NewReaderRefusingRepeats(data []byte, maxDepth int) *Reader {
	return newReader(data, maxDepth, false)
}

func newReader(data []byte, maxDepth int, allowRepeats bool) *Reader {
	if maxDepth <= 0 {
		maxDepth = MaxDepth
	}
	r := readers.Get().(*Reader)
	r.data, r.maxDepth, r.path = data, maxDepth, r.path[:0]
	r.buf = *bytes.NewBuffer(data)
	r.dec.Reset(&r.buf, jsontext.AllowDuplicateNames(allowRepeats))
	return r
}

// Release gives r back for a later NewReader to reuse. Neither r nor what
// it returned but Raw's subslices of the data may be used after it.
func (r *Reader) Release() {
	r.data, r.buf = nil, bytes.Buffer{}
	readers.Put(r)
}

// Offset returns how many bytes of data have been read.
func (r *Reader) Offset() int { return int(r.dec.InputOffset()) }

// Path returns the JSON path of the value being read: "" at the top,
// then keys joined by dots (a key that is not an identifier quoted in
// brackets: _meta["io.modelcontextprotocol/protocolVersion"]) and [index]
// for array elements.
func (r *Reader) Path() string { return pathOf(r.path) }

// PointerPath returns ptr, a JSON Pointer into the document d is reading,
// written as this package writes paths (see [Reader.Path]): a reader
// that walks a document with its own jsontext.Decoder names places as
// every other reader of the module does.
//
// ptr may go deeper than d stands (an error inside a value d read whole):
// a level past d's stack is named as an array's element when its token is
// a number, since no kind is known of it there.
func PointerPath(ptr jsontext.Pointer, d *jsontext.Decoder) string {
	return pathOf(pointerSteps(ptr, 0, func(level int) jsontext.Kind {
		if level > d.StackDepth() {
			return '['
		}
		k, _ := d.StackIndex(level)
		return k
	}))
}

func pathOf(steps []step) string {
	var b strings.Builder
	for _, s := range steps {
		if s.index >= 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
		} else if len(s.key) <= maxKeyShown && isIdentifier(s.key) {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		} else {
			b.WriteByte('[')
			b.WriteString(QuoteKey(s.key))
			b.WriteByte(']')
		}
	}
	return b.String()
}

// maxKeyShown bounds how much of a key a path or an error shows: keys are
// whoever wrote the document's (a peer's, for a card or an answer), and
// an error is logged.
const maxKeyShown = 64

// QuoteKey is key quoted as a path or an error shows it: at most
// maxKeyShown bytes of it, cut at a character boundary, "..." after the
// quote marking the cut.
func QuoteKey(key string) string {
	if len(key) <= maxKeyShown {
		return strconv.Quote(key)
	}
	cut := maxKeyShown
	for cut > 0 && !utf8.RuneStart(key[cut]) {
		cut--
	}
	return strconv.Quote(key[:cut]) + "..."
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
	return &Error{Path: r.Path(), Offset: r.Start(), Msg: fmt.Sprintf(format, args...)}
}

// wrap turns an error of the Decoder into an *Error at the Reader's path.
func (r *Reader) wrap(err error) error {
	return wrapAt(err, r.path, len(r.path), 0, r.kind)
}

// kind returns the kind of the container the Decoder is in at level.
func (r *Reader) kind(level int) jsontext.Kind {
	k, _ := r.dec.StackIndex(level)
	return k
}

// here returns the path of the value the Decoder reads next, which may
// be deeper than the Reader's own path inside Raw.
func (r *Reader) here() string {
	tokens := slices.Collect(r.dec.StackPointer().Tokens())
	steps, depth := r.path[:len(r.path):len(r.path)], r.dec.StackDepth()
	for level := len(r.path) + 1; level <= depth; level++ {
		k, n := r.dec.StackIndex(level)
		if k == '{' && n%2 == 0 && level == depth { // a name, not a value, comes next
			break
		}
		if k == '{' {
			steps = append(steps, step{key: tokens[level-1], index: -1})
			continue
		}
		if level < depth {
			n-- // an element being read is counted from its start
		}
		steps = append(steps, step{index: int(n)})
	}
	return pathOf(steps)
}

// wrapAt turns an error of JSON v2 into an *Error: outer is the path of the
// value that was being read, skip how many levels of the error's JSON
// Pointer outer already names, base the offset of the input v2 read in the
// Reader's data, and kind the kind of container at each level of the
// Pointer (which v2 writes without telling an array index from an object
// key).
func wrapAt(err error, outer []step, skip, base int, kind func(level int) jsontext.Kind) error {
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		ptr := se.JSONPointer
		if errors.Is(se.Err, jsontext.ErrDuplicateName) {
			ptr = ptr.Parent()
		}
		path := append(outer[:len(outer):len(outer)], pointerSteps(ptr, skip, kind)...)
		e := &Error{Path: pathOf(path), Offset: base + int(se.ByteOffset)}
		switch msg := se.Err.Error(); {
		case errors.Is(se.Err, jsontext.ErrDuplicateName):
			e.Repeated, e.Key = true, se.JSONPointer.LastToken()
			e.Msg = "the key " + QuoteKey(e.Key) + " appears twice"
		case errors.Is(se.Err, io.ErrUnexpectedEOF):
			e.Msg = "unexpected end of JSON input"
		default:
			e.Msg = cmp.Or(renamed[msg], strings.Replace(msg, "at start of value", "looking for beginning of value", 1))
		}
		return e
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &Error{Path: pathOf(outer), Offset: base, Msg: "unexpected end of JSON input"}
	}
	return &Error{Path: pathOf(outer), Offset: base, Msg: err.Error()}
}

// renamed are JSON v2's messages that say less than the module's.
var renamed = map[string]string{"invalid UTF-8": "invalid UTF-8 in string"}

// pointerSteps returns the steps of a JSON Pointer that starts at depth
// from; kind tells an array from an object at each level.
func pointerSteps(ptr jsontext.Pointer, from int, kind func(level int) jsontext.Kind) []step {
	var steps []step
	level := 0
	for tok := range ptr.Tokens() {
		level++
		if level <= from {
			continue
		}
		if i, err := strconv.Atoi(tok); err == nil && kind(level) == '[' {
			steps = append(steps, step{index: i})
		} else {
			steps = append(steps, step{key: tok, index: -1})
		}
	}
	return steps
}

// Start returns the offset at which the next value begins: past white
// space and the separator the Decoder has not consumed yet.
func (r *Reader) Start() int {
	return len(r.data) - len(bytes.TrimLeft(r.data[r.Offset():], " \t\r\n:,"))
}

// Next returns the kind of the next value without reading it.
func (r *Reader) Next() (Kind, error) {
	k := r.dec.PeekKind()
	if kind := kindOf(k); kind != 0 {
		return kind, nil
	}
	if k == '}' || k == ']' {
		return 0, r.errorf("invalid character %q looking for beginning of value", rune(k))
	}
	_, err := r.dec.ReadToken() // the error PeekKind found
	return 0, r.wrap(err)
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

// enter reads an opening delimiter, refusing it past the depth bound before
// anything inside is read.
func (r *Reader) enter(k Kind) error {
	if err := r.expect(k); err != nil {
		return err
	}
	if r.dec.StackDepth() >= r.maxDepth {
		return r.errorf("nested deeper than %d levels", r.maxDepth)
	}
	return r.token()
}

// token reads one token, which Next or the grammar has already told.
func (r *Reader) token() error {
	if _, err := r.dec.ReadToken(); err != nil {
		return r.wrap(err)
	}
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
	var seen map[string]struct{}
	var first [16]string // the keys of small objects, without a map
	for n := 0; r.dec.PeekKind() != '}'; n++ {
		at := r.Start()
		name, err := r.dec.ReadToken()
		if err != nil {
			return r.wrap(err)
		}
		key := name.String()
		if n < len(first) {
			if slices.Contains(first[:n], key) {
				return r.repeated(at, key)
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
				return r.repeated(at, key)
			}
			seen[key] = struct{}{}
		}
		r.path = append(r.path, step{key: key, index: -1})
		from := r.Offset()
		if fn != nil {
			err = fn(key)
		}
		if err := r.finish(from, err); err != nil {
			return err
		}
	}
	return r.token()
}

func (r *Reader) repeated(at int, key string) error {
	return &Error{Path: r.Path(), Offset: at, Msg: "the key " + QuoteKey(key) + " appears twice", Repeated: true, Key: key}
}

// Array reads an array, calling fn with each element's index. fn reads the
// element with any method of r; an element fn leaves unread is skipped,
// and a nil fn skips them all.
func (r *Reader) Array(fn func(i int) error) error {
	if err := r.enter(Array); err != nil {
		return err
	}
	for i := 0; r.dec.PeekKind() != ']'; i++ {
		r.path = append(r.path, step{index: i})
		from := r.Offset()
		var err error
		if fn != nil {
			err = fn(i)
		}
		if err := r.finish(from, err); err != nil {
			return err
		}
	}
	return r.token()
}

// finish ends one member or element: err is what reading it returned; a
// value left unread is skipped.
func (r *Reader) finish(from int, err error) error {
	if err == nil && r.Offset() <= from {
		err = r.Skip()
	}
	if err != nil {
		return err
	}
	r.path = r.path[:len(r.path)-1]
	return nil
}

// String reads a string.
func (r *Reader) String() (string, error) {
	if err := r.expect(String); err != nil {
		return "", err
	}
	t, err := r.dec.ReadToken()
	if err != nil {
		return "", r.wrap(err)
	}
	return t.String(), nil
}

// Number reads a number, as written. The value is the caller's: it does
// not alias the input, which later reads may move. As a json.Marshaler it
// writes the number back as written, which is what a tree read by mrtr
// needs.
func (r *Reader) Number() (jsontext.Value, error) {
	if err := r.expect(Number); err != nil {
		return nil, err
	}
	v, err := r.dec.ReadValue()
	if err != nil {
		return nil, r.wrap(err)
	}
	return v.Clone(), nil
}

// Bool reads true or false.
func (r *Reader) Bool() (bool, error) {
	if err := r.expect(Bool); err != nil {
		return false, err
	}
	t, err := r.dec.ReadToken()
	if err != nil {
		return false, r.wrap(err)
	}
	return t.Bool(), nil
}

// Skip reads any value, checking its syntax, its depth and its strings'
// UTF-8. What it skips is not interpreted, so repeated keys inside it are
// not looked for.
func (r *Reader) Skip() error {
	_, err := r.Raw()
	return err
}

// Raw reads any value, as Skip does, and returns its bytes exactly as
// written: a subslice of the Reader's data.
func (r *Reader) Raw() ([]byte, error) {
	raw, _, err := r.raw()
	return raw, err
}

// raw is Raw, and tells whether the value holds a null.
func (r *Reader) raw() (raw []byte, null bool, err error) {
	if _, err := r.Next(); err != nil {
		return nil, false, err
	}
	from, base := r.Start(), r.dec.StackDepth()
	for {
		k := r.dec.PeekKind()
		if (k == '{' || k == '[') && r.dec.StackDepth() >= r.maxDepth {
			return nil, false, &Error{Path: r.here(), Offset: r.Start(), Msg: fmt.Sprintf("nested deeper than %d levels", r.maxDepth)}
		}
		null = null || k == 'n'
		if err := r.token(); err != nil {
			return nil, false, err
		}
		if r.dec.StackDepth() == base {
			return r.data[from:r.Offset()], null, nil
		}
	}
}

// End reports an error unless nothing but white space follows the value read.
func (r *Reader) End() error {
	rest := r.data[r.Offset():]
	if trimmed := bytes.TrimLeft(rest, " \t\r\n"); len(trimmed) > 0 {
		return &Error{Offset: len(r.data) - len(trimmed), Msg: "data after the JSON value"}
	}
	return nil
}

// Decode decodes data, one JSON value, into v, a non-nil pointer, with JSON
// v2 and the package's rules: every object that maps to a struct may hold
// only the exact JSON names of that struct's fields, each once; a value of
// the wrong kind is an error naming its path, never a Go type. JSON null
// is accepted where JSON v2 accepts it (it sets the target to its zero
// value) except for strings, numbers, booleans and text, which must be
// present as such. Types with their own UnmarshalJSON read their own
// values.
func Decode(data []byte, v any) error {
	return decode(data, v, closedRecords[:])
}

// DecodeOpen is Decode for a document of someone else's — a peer's card
// or answer — that may carry members this module does not read: those
// are skipped instead of refused. Every other rule holds: they are read,
// so bounded and well-formed, and no key in the document may repeat.
func DecodeOpen(data []byte, v any) error {
	return decode(data, v, openRecords[:])
}

func decode(data []byte, v any, opts []jsonv2.Options) error {
	r := NewReader(data, 0)
	defer r.Release()
	if err := r.value(v, opts); err != nil {
		return err
	}
	return r.End()
}

// Value reads the next value into v, a non-nil pointer, as Decode does.
// The value is read twice: once by the Reader, which bounds its depth and
// checks its syntax, then by JSON v2's Unmarshal, into a copy of *v that
// replaces it only when the whole value was read: on error *v is as it was
// (unless it holds maps or pointers that the copy shares).
func (r *Reader) Value(v any) error { return r.value(v, closedRecords[:]) }

// value is Value with opts: JSON v2's options for a value without null
// and for one with.
func (r *Reader) value(v any, opts []jsonv2.Options) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("strictjson: Value needs a non-nil pointer, got %T", v)
	}
	from, outer := r.Start(), r.path
	raw, null, err := r.raw()
	if err != nil {
		return err
	}
	opt := opts[0]
	if null {
		opt = opts[1]
	}
	into := reflect.New(rv.Type().Elem())
	into.Elem().Set(rv.Elem())
	if err := jsonv2.Unmarshal(raw, into.Interface(), opt); err != nil {
		return semantic(err, raw, outer, from)
	}
	rv.Elem().Set(into.Elem())
	return nil
}

// openRecords are JSON v2's defaults (exact-case names, no repeated names,
// valid UTF-8), then those with no null for a scalar, which costs JSON v2 a
// call for every value and so is asked for only where the value holds a
// null; closedRecords refuse unknown members too.
var (
	noNull        = jsonv2.WithUnmarshalers(jsonv2.UnmarshalFromFunc(refuseNull))
	unknown       = jsonv2.RejectUnknownMembers(true)
	openRecords   = [2]jsonv2.Options{jsonv2.JoinOptions(), noNull}
	closedRecords = [2]jsonv2.Options{unknown, jsonv2.JoinOptions(unknown, noNull)}
)

var (
	jsonUnmarshaler   = reflect.TypeFor[interface{ UnmarshalJSON([]byte) error }]()
	jsonUnmarshalerV2 = reflect.TypeFor[jsonv2.UnmarshalerFrom]()
	textUnmarshaler   = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// nullError is refuseNull's error: want is the kind the target takes.
type nullError struct{ want Kind }

func (e *nullError) Error() string { return fmt.Sprintf("want %v, got null", e.want) }

// refuseNull refuses null for a string, number, boolean or text that does
// not read its own JSON; every other value is left to JSON v2.
func refuseNull(dec *jsontext.Decoder, v any) error {
	if dec.PeekKind() != 'n' {
		return errors.ErrUnsupported
	}
	t := reflect.TypeOf(v) // always a non-nil pointer
	if t.Implements(jsonUnmarshaler) || t.Implements(jsonUnmarshalerV2) {
		return errors.ErrUnsupported
	}
	if t.Implements(textUnmarshaler) || scalar(t.Elem()) != 0 {
		return &nullError{want(t)}
	}
	return errors.ErrUnsupported
}

// scalar returns the kind of JSON value a Go type of kind string, number
// or bool decodes from, and 0 for other types.
func scalar(t reflect.Type) Kind {
	switch t.Kind() {
	case reflect.String:
		return String
	case reflect.Bool:
		return Bool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return Number
	}
	return 0
}

// integer names the numbers Go type t holds, when it holds integers only.
func integer(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "a non-negative integer"
	}
	return ""
}

// want returns the kind of JSON value Go type t decodes from.
func want(t reflect.Type) Kind {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(textUnmarshaler) {
		return String
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return Object
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return String // base64
		}
		return Array
	case reflect.Array:
		return Array
	}
	return scalar(t)
}

// semantic turns an error of JSON v2's Unmarshal of raw, which starts at
// offset from with path outer, into an *Error.
func semantic(err error, raw []byte, outer []step, from int) error {
	var se *jsonv2.SemanticError
	if !errors.As(err, &se) {
		var syn *jsontext.SyntacticError // a repeated name, which the Reader left to v2
		if errors.As(err, &syn) {
			return wrapAt(err, outer, 0, from, containerKinds(raw, syn.JSONPointer.Parent()))
		}
		return wrapAt(err, outer, 0, from, nil)
	}
	kinds := containerKinds(raw, se.JSONPointer)
	path := append(outer[:len(outer):len(outer)], pointerSteps(se.JSONPointer, 0, kinds)...)
	e := &Error{Path: pathOf(path), Offset: from + int(se.ByteOffset)}
	var inner *Error
	var null *nullError
	switch {
	case errors.As(se.Err, &inner): // a nested UnmarshalJSON of ours
		e.Path = joinPath(e.Path, inner.Path)
		e.Offset, e.Msg, e.Repeated, e.Key = from+int(se.ByteOffset)+inner.Offset, inner.Msg, inner.Repeated, inner.Key
	case errors.Is(se.Err, jsonv2.ErrUnknownName):
		key := se.JSONPointer.LastToken()
		e.Path = pathOf(path[:len(path)-1])
		e.Msg = "unknown field " + QuoteKey(key)
		if t := se.GoType; t != nil && t.Kind() == reflect.Struct {
			e.Msg += Suggest(key, fieldNames(t))
		}
	case errors.As(se.Err, &null):
		e.Msg = null.Error()
	default:
		e.Msg = refusal(se)
	}
	return e
}

// refusal says why JSON v2 refused a value for its Go type, in the
// module's words: the kind wanted and got, never the Go type.
func refusal(se *jsonv2.SemanticError) string {
	got, wanted := kindOf(se.JSONKind), Kind(0)
	if se.GoType != nil {
		wanted = want(se.GoType)
	}
	if se.Err != nil {
		if got == Number && strings.HasSuffix(se.Err.Error(), "out of range") {
			return fmt.Sprintf("number %s is out of range", se.JSONValue)
		}
		if got == Number && wanted == Number && integer(se.GoType) != "" {
			return fmt.Sprintf("want %s, got %s", integer(se.GoType), se.JSONValue)
		}
		return se.Err.Error()
	}
	if got == 0 || wanted == 0 {
		return se.Error()
	}
	if got == wanted {
		// The kind the type takes, refused: only the string option does
		// that, which wants the number inside a string.
		return fmt.Sprintf("want a string, got %v", got)
	}
	return fmt.Sprintf("want %v, got %v", wanted, got)
}

func joinPath(outer, inner string) string {
	if outer == "" || inner == "" || inner[0] == '[' {
		return outer + inner
	}
	return outer + "." + inner
}

// containerKinds returns the kind of container at each level of ptr in
// raw, which is valid JSON: it reads raw again up to the value ptr names.
// It is called only to name the path of an error.
func containerKinds(raw []byte, ptr jsontext.Pointer) func(level int) jsontext.Kind {
	dec := jsontext.NewDecoder(bytes.NewBuffer(raw))
	var kinds []jsontext.Kind
	for {
		if _, err := dec.ReadToken(); err != nil {
			break
		}
		if at := dec.StackPointer(); at == ptr || strings.HasPrefix(string(ptr), string(at)+"/") && dec.StackDepth() > len(kinds) {
			kinds = kinds[:0]
			for i := 1; i <= dec.StackDepth(); i++ {
				k, _ := dec.StackIndex(i)
				kinds = append(kinds, k)
			}
			if at == ptr {
				break
			}
		}
	}
	return func(level int) jsontext.Kind {
		if level <= len(kinds) {
			return kinds[level-1]
		}
		return 0
	}
}

// fieldNames returns the JSON names of struct type t's fields, as JSON v2
// names them (embedded structs without a name inlined).
func fieldNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if tag == "-" {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			names = append(names, fieldNames(f.Type)...)
		} else if f.IsExported() {
			names = append(names, cmp.Or(name, f.Name))
		}
	}
	return names
}

// Suggest returns ` (did you mean "NAME"?)` when key is a near miss of
// one of known — the same name in another case, or one a few letters
// away — and "" when none is near: a typo gets the name it missed, and an
// unrelated key no guess.
func Suggest(key string, known []string) string {
	for _, k := range known {
		if strings.EqualFold(k, key) {
			return fmt.Sprintf(" (field names are case-sensitive: did you mean %q?)", k)
		}
	}
	best, bestDist := "", 0
	for _, k := range known {
		d := distance(strings.ToLower(key), strings.ToLower(k))
		if d <= max(1, min(len(key), len(k))/4) && (best == "" || d < bestDist) {
			best, bestDist = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// distance is the optimal string alignment distance of a and b: the
// insertions, deletions, substitutions and swaps of neighbours that turn
// one into the other.
func distance(a, b string) int {
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
