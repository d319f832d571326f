package mcphttp

import (
	"bytes"
	"errors"
	"io"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/internal/strictjson"
	"github.com/wopneg/wopneg/internal/tracectx"
)

// This file reads the few members of a JSON-RPC body that version
// negotiation depends on, in one pass of JSON v2's tokenizer
// (jsontext.Decoder), without decoding the rest: the method, the id,
// params._meta's protocol revision, initialize's params.protocolVersion and
// the name that Mcp-Name mirrors, with the byte spans the middleware and
// the Transport may rewrite. Each message is handed on as it is read and
// nothing of it is kept once the next one is read, so that what a body
// costs is bounded by the body itself, and a batch by its member bound.
//
// The servers behind the middleware decode the body with parsers of their
// own, and two of their habits would let a body say one thing to the
// middleware and another to the server: encoding/json (mcp-go) matches
// struct fields case-insensitively under Unicode folding ("METHOD" and
// "paramſ" fill method and params), and most parsers let a repeated key
// overwrite the first. So no object anywhere in the body may repeat a key
// (jsontext refuses it), every string must be valid UTF-8, a key the
// middleware reads must be spelled exactly, and nesting is bounded by
// maxDepth while reading; a body that breaks a rule is refused rather
// than guessed at.

// errSyntax is returned for a body that is not JSON.
var errSyntax = errors.New("malformed JSON")

// span is the half-open byte range [start, end) of a value in the body.
type span struct{ start, end int }

// shapeError is a body that is JSON but not a JSON-RPC message the
// middleware can read: answered with -32600 Invalid Request.
type shapeError struct{ msg string }

func (e *shapeError) Error() string { return e.msg }

func shapef(msg string) error { return &shapeError{msg} }

// message is what the middleware reads of one JSON-RPC message.
type message struct {
	obj span // the message object; its first byte is '{'

	hasMethod bool
	method    string
	id        []byte // as written; nil when there is none

	// hasParams and paramsObject say whether params is there and is an
	// object; hasMeta and metaObject the same of params._meta.
	hasParams, paramsObject bool
	params                  span
	hasMeta, metaObject     bool
	meta                    span
	// metaTrace: params._meta holds a traceparent or a tracestate
	// member, whatever its value (the caller's trace context).
	metaTrace bool

	// params._meta["io.modelcontextprotocol/protocolVersion"]:
	// hasMetaVersion when the member is there at all, metaVersionStr when
	// it is a string.
	hasMetaVersion, metaVersionStr bool
	metaVersion                    string

	// params.protocolVersion (initialize), with the span of its JSON
	// string for the rewrite.
	hasProtocolVersion, protocolVersionStr bool
	protocolVersion                        string
	protocolVersionAt                      span

	// params.name and params.uri when they are strings: Mcp-Name mirrors
	// one of them.
	nameStr, uriStr bool
	name, uri       string
}

// isRequest reports whether m is a request (a method and an id), as
// opposed to a notification (a method, no id) or a response (no method).
func (m *message) isRequest() bool { return m.hasMethod && m.id != nil }

// maxDepth bounds the nesting of a body, checked as it is read.
const maxDepth = 64

// maxObjectMembers bounds the members of an object the middleware reads
// (a message, its params, their _meta). No MCP message comes near it.
const maxObjectMembers = 1024

// bodyReader is one pass over a body: a pooled decoder reading b in
// place.
type bodyReader struct {
	d   jsontext.Decoder
	buf bytes.Buffer
	b   []byte
	m   message // the message being read
}

var bodyReaders = exchange.NewPool[bodyReader]()

// newReader returns a pooled reader of b, by the module's rules; release
// gives it back.
func newReader(b []byte) *bodyReader {
	r := bodyReaders.Get()
	r.b, r.buf = b, *bytes.NewBuffer(b)
	r.d.Reset(&r.buf)
	return r
}

// release lets go of the body, so that a pooled reader holds nothing of
// a request, and pools r.
func (r *bodyReader) release() {
	r.b, r.buf, r.m = nil, bytes.Buffer{}, message{}
	r.d.Reset(&r.buf)
	bodyReaders.Put(r)
}

// scanBody reads a JSON-RPC body, one message or a batch of them, calling
// fn with each message as it is read, and batch (when not nil) at a
// batch's first member, before it is read. m is reused from one call to
// the next: fn copies what it keeps. A batch holding more than maxMembers
// messages (0: no bound) is refused at the first member past the bound,
// unread. scanBody returns whether the body is a batch, and errSyntax for
// a body that is not JSON, a *shapeError for JSON that is not a message or
// a non-empty batch of messages, or that breaks a rule above, or the first
// error fn or batch returns. Whatever ends the reading, the rest of the
// body is still read for its syntax: a body that is not JSON is errSyntax
// wherever it breaks, and what fn saw of it must then be disregarded.
func scanBody(b []byte, maxMembers int, fn func(m *message) error, batch func() error) (isBatch bool, err error) {
	r := newReader(b)
	defer r.release()
	m := &r.m // zero: a new reader's, or as release left it
	switch r.d.PeekKind() {
	case '{':
		if err = r.message(m); err == nil {
			err = fn(m)
		}
	case '[':
		isBatch = true
		_, err = r.d.ReadToken()
		n := 0
		for ; err == nil && r.d.PeekKind() != ']'; n++ {
			switch {
			case maxMembers > 0 && n == maxMembers:
				err = shapef("the batch has more than " + strconv.Itoa(maxMembers) + " members")
			case r.d.PeekKind() != '{':
				err = shapef("a batch member is not a JSON-RPC message object")
			case n == 0 && batch != nil:
				err = batch()
			}
			if err == nil {
				*m = message{}
				if err = r.message(m); err == nil {
					err = fn(m)
				}
			}
		}
		if err == nil && n == 0 {
			err = shapef("the batch is empty")
		}
	default:
		return false, r.syntax(nil, shapef("the body is not a JSON-RPC message object or batch"))
	}
	return isBatch, r.finish(err)
}

// finish reads what is left of the body after err (nil when all was read)
// for its syntax alone, and returns the error the body is refused for.
func (r *bodyReader) finish(err error) error {
	if syn, ok := err.(*jsontext.SyntacticError); ok {
		return r.syntax(syn, nil)
	}
	for r.d.StackDepth() > 0 {
		if _, e := r.d.ReadToken(); e != nil {
			return r.syntax(e, err)
		}
	}
	if _, e := r.d.ReadToken(); e != io.EOF {
		return r.syntax(e, err)
	}
	return err
}

// syntax returns the error of a body the decoder refused (err): errSyntax
// when it is not JSON even to a lenient parser (encoding/json's json.Valid
// takes repeated keys and invalid UTF-8); else prior, the error already
// found, which the rest of the body does not change; else the rule err
// names.
func (r *bodyReader) syntax(err, prior error) error {
	if !jsontext.Value(r.b).IsValid(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)) {
		return errSyntax
	}
	if prior != nil {
		return prior
	}
	var syn *jsontext.SyntacticError
	if !errors.As(err, &syn) {
		return shapef("the body is not JSON text this middleware reads")
	}
	if errors.Is(err, jsontext.ErrDuplicateName) {
		return shapef(prefixed(r.path(syn.JSONPointer.Parent()), "the key "+strictjson.QuoteKey(syn.JSONPointer.LastToken())+" appears twice"))
	}
	return shapef(prefixed(r.path(syn.JSONPointer), "invalid UTF-8 in string"))
}

// prefixed is msg about the value at path.
func prefixed(path, msg string) string {
	if path == "" {
		return msg
	}
	return path + ": " + msg
}

// path is ptr as the module writes paths.
func (r *bodyReader) path(ptr jsontext.Pointer) string { return strictjson.PointerPath(ptr, &r.d) }

// message reads the message object that is the next value into m.
func (r *bodyReader) message(m *message) error {
	return r.value(&m.obj, func(key []byte) error {
		switch k, err := matchKey(key, "jsonrpc", "id", "method", "params"); {
		case err != nil:
			return err
		case k == "id":
			var id span
			err := r.value(&id, nil)
			m.id = r.b[id.start:id.end]
			return err
		case k == "method":
			m.hasMethod = true
			var ok bool
			if m.method, ok, err = r.string(); err == nil && !ok {
				err = shapef("method is not a string")
			}
			return err
		case k == "params":
			m.hasParams = true
			m.paramsObject = r.d.PeekKind() == '{'
			return r.value(&m.params, func(key []byte) error { return r.param(m, key) })
		}
		return r.skip()
	})
}

// param reads the member key of m.params, when the middleware uses it.
func (r *bodyReader) param(m *message, key []byte) error {
	var err error
	switch k, kerr := matchKey(key, "_meta", "protocolVersion", "name", "uri"); k {
	case "_meta":
		m.hasMeta = true
		m.metaObject = r.d.PeekKind() == '{'
		return r.value(&m.meta, func(key []byte) error {
			// _meta's keys are map keys to every server (no case
			// folding): only the revision key itself is read.
			if string(key) != metaProtocolVersion {
				m.metaTrace = m.metaTrace || string(key) == tracectx.Parent || string(key) == tracectx.State
				return r.skip()
			}
			m.hasMetaVersion = true
			var err error
			m.metaVersion, m.metaVersionStr, err = r.string()
			return err
		})
	case "protocolVersion":
		m.hasProtocolVersion = true
		at := int(r.d.InputOffset())
		m.protocolVersion, m.protocolVersionStr, err = r.string()
		m.protocolVersionAt = r.since(at)
	case "name":
		m.name, m.nameStr, err = r.string()
	case "uri":
		m.uri, m.uriStr, err = r.string()
	default:
		if kerr != nil {
			return kerr
		}
		return r.skip()
	}
	return err
}

// value reads the next value through object, and sets *at to its span.
func (r *bodyReader) value(at *span, member func(key []byte) error) error {
	start := int(r.d.InputOffset())
	err := r.object(member)
	*at = r.since(start)
	return err
}

// since returns the span of the value read since offset at, where the
// decoder stood before the separator and white space that precede it.
func (r *bodyReader) since(at int) span {
	end := int(r.d.InputOffset())
	return span{end - len(bytes.TrimLeft(r.b[at:end], " \t\r\n:,")), end}
}

// object reads the next value: an object member by member, calling member
// with each key (unquoted; valid until the next read) to read its value,
// and refusing the member past maxObjectMembers; any other value, or any
// value when member is nil, is skipped.
func (r *bodyReader) object(member func(key []byte) error) error {
	if member == nil || r.d.PeekKind() != '{' {
		return r.skip()
	}
	if err := r.token(); err != nil {
		return err
	}
	for n := 0; r.d.PeekKind() == '"'; n++ {
		if n == maxObjectMembers {
			where := r.path(r.d.StackPointer().Parent())
			if where == "" {
				where = "the message"
			}
			return shapef(where + " has more than " + strconv.Itoa(maxObjectMembers) + " members")
		}
		name, err := r.d.ReadValue()
		if err != nil {
			return err
		}
		if err := member(unquoted(name)); err != nil {
			return err
		}
	}
	_, err := r.d.ReadToken() // '}', or the syntax error that stands in its place
	return err
}

// token reads the next token, refusing an object or array that opens
// past maxDepth before anything inside it is read.
func (r *bodyReader) token() error {
	if _, err := r.d.ReadToken(); err != nil {
		return err
	}
	if r.d.StackDepth() > maxDepth {
		return shapef(prefixed(r.path(r.d.StackPointer()), "nested deeper than "+strconv.Itoa(maxDepth)+" levels"))
	}
	return nil
}

// skip reads the next value token by token, bounding its depth.
func (r *bodyReader) skip() error {
	base := r.d.StackDepth()
	err := r.token()
	for err == nil && r.d.StackDepth() > base {
		err = r.token()
	}
	return err
}

// unquoted is the content of the JSON string v, unescaped.
func unquoted(v jsontext.Value) []byte {
	s := v[1 : len(v)-1]
	if bytes.IndexByte(s, '\\') >= 0 {
		s, _ = jsontext.AppendUnquote(nil, v)
	}
	return s
}

// string reads the next value, and returns it and true when it is a
// string; any other value is skipped.
func (r *bodyReader) string() (string, bool, error) {
	if r.d.PeekKind() != '"' {
		return "", false, r.skip()
	}
	v, err := r.d.ReadValue()
	if err != nil {
		return "", false, err
	}
	s := unquoted(v)
	if known, ok := interned[string(s)]; ok {
		return known, true, nil
	}
	return string(s), true, nil
}

// interned are strings a body often holds, which reading one of them
// does not copy.
var interned = func() map[string]string {
	m := map[string]string{}
	for _, s := range []string{
		methodDiscover, methodInitialize, "ping", "tools/list", "tools/call", "resources/list",
		"resources/read", "resources/templates/list", "prompts/list", "prompts/get", "completion/complete",
		"logging/setLevel", "notifications/initialized", "notifications/cancelled", "notifications/progress",
		"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", statelessRevision,
	} {
		m[s] = s
	}
	return m
}()

// strings reads the next value, an array of strings, into *dst.
func (r *bodyReader) strings(dst *[]string) error {
	if r.d.PeekKind() != '[' {
		return shapef(prefixed(r.path(r.d.StackPointer()), "want an array of strings"))
	}
	if err := r.token(); err != nil {
		return err
	}
	*dst = []string{}
	for r.d.PeekKind() != ']' {
		s, ok, err := r.string()
		if err == nil && !ok {
			err = shapef(prefixed(r.path(r.d.StackPointer()), "want a string"))
		}
		if err != nil {
			return err
		}
		*dst = append(*dst, s)
	}
	_, err := r.d.ReadToken()
	return err
}

// matchKey returns which of names the key is. A key that equals one of
// them under Unicode case folding (as encoding/json matches struct fields:
// "METHOD", "paramſ") but is spelled otherwise is refused, as encoding/json
// would read it as that member. A key that is none of them returns "".
func matchKey(key []byte, names ...string) (string, error) {
	for _, n := range names {
		if string(key) == n {
			return n, nil
		}
		if bytes.EqualFold(key, []byte(n)) {
			return "", shapef("the key " + strconv.Quote(string(key)) + " is not spelled " + n + " but a server may read it as " + n)
		}
	}
	return "", nil
}
