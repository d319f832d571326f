package mcphttp

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/wopneg/wopneg/internal/strictjson"
)

// This file reads the few members of a JSON-RPC body that version
// negotiation depends on, without decoding the rest: the method, the id,
// params._meta's protocol revision, initialize's params.protocolVersion and
// the name that Mcp-Name mirrors. It reads through the module's one strict
// JSON reader (internal/strictjson), message by message, keeping nothing
// of a message once the next one is read, so that the work and the memory
// a body costs are bounded by the body itself, and a batch by its member
// bound. It keeps byte offsets, so that the one member the middleware may
// rewrite (initialize's protocolVersion) and the places the outbound
// Transport inserts _meta are exact spans of the body, and everything else
// stays byte for byte.
//
// The servers behind the middleware decode the body with parsers of their
// own, and two of their habits would let a body say one thing to the
// middleware and another to the server: encoding/json (mcp-go) matches
// struct fields case-insensitively under Unicode folding ("METHOD" and
// "paramſ" fill method and params), and most parsers let a repeated key
// overwrite the first. So a key in an object the middleware reads must
// appear once (the reader refuses a repeat), and a key it reads must be
// spelled exactly; a body that spells one another way is refused rather
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

// The keys the middleware reads, at each level.
const (
	keyJSONRPC         = "jsonrpc"
	keyID              = "id"
	keyMethod          = "method"
	keyParams          = "params"
	keyMeta            = "_meta"
	keyProtocolVersion = "protocolVersion"
	keyName            = "name"
	keyURI             = "uri"
)

// message is what the middleware reads of one JSON-RPC message.
type message struct {
	// obj is the message object; its first byte is '{'.
	obj span

	hasMethod bool
	method    string

	// id is the id as written, nil when there is none.
	id json.RawMessage

	// hasParams and paramsObject say whether params is there and is an
	// object; params is its span.
	hasParams    bool
	paramsObject bool
	params       span

	// hasMeta and metaObject say the same of params._meta.
	hasMeta    bool
	metaObject bool
	meta       span

	// metaVersion is params._meta["io.modelcontextprotocol/protocolVersion"]
	// when it is a string; hasMetaVersion is true when the member is there
	// at all, string or not.
	hasMetaVersion bool
	metaVersionStr bool
	metaVersion    string

	// protocolVersion is params.protocolVersion (initialize) when it is a
	// string, with the span of its JSON string for the rewrite.
	hasProtocolVersion bool
	protocolVersionStr bool
	protocolVersion    string
	protocolVersionAt  span

	// name and uri are params.name and params.uri when they are strings
	// (nameStr, uriStr): Mcp-Name mirrors one of them.
	nameStr bool
	name    string
	uriStr  bool
	uri     string
}

// isRequest reports whether m is a request (a method and an id), as
// opposed to a notification (a method, no id) or a response (no method).
func (m *message) isRequest() bool { return m.hasMethod && m.id != nil }

// scanBody reads a JSON-RPC body, one message or a batch of them, calling
// fn with each message as it is read, and batch (when not nil) at a
// batch's first member, before it is read. m is
// reused from one call to the next: fn copies what it keeps. A batch
// holding more than maxMembers messages (0: no bound) is refused at the
// first member past the bound, unread. scanBody returns whether the body
// is a batch, and errSyntax for a body that is not JSON, a *shapeError for
// JSON that is not a message or a non-empty batch of messages, or that
// spells a key ambiguously, or the first error fn returns.
func scanBody(b []byte, maxMembers int, fn func(m *message) error, batch func() error) (isBatch bool, err error) {
	if !json.Valid(b) {
		return false, errSyntax
	}
	r := strictjson.NewReader(b, 0)
	var m message
	switch kind, _ := r.Next(); kind {
	case strictjson.Object:
		if err := readMessage(r, b, &m); err != nil {
			return false, readerError(err)
		}
		return false, fn(&m)
	case strictjson.Array:
		empty := true
		err := r.Array(func(i int) error {
			if maxMembers > 0 && i == maxMembers {
				return shapef("the batch has more than " + strconv.Itoa(maxMembers) + " members")
			}
			if kind, _ := r.Next(); kind != strictjson.Object {
				return shapef("a batch member is not a JSON-RPC message object")
			}
			if i == 0 && batch != nil {
				if err := batch(); err != nil {
					return err
				}
			}
			m = message{}
			if err := readMessage(r, b, &m); err != nil {
				return err
			}
			empty = false
			return fn(&m)
		})
		if err == nil && empty {
			err = shapef("the batch is empty")
		}
		return true, readerError(err)
	}
	return false, shapef("the body is not a JSON-RPC message object or batch")
}

// readerError turns what the strict reader refuses in a body that is JSON
// (a repeated key, nesting beyond its bound, a string that is not UTF-8)
// into a *shapeError naming it; other errors pass unchanged.
func readerError(err error) error {
	var re *strictjson.Error
	if errors.As(err, &re) {
		return shapef(re.Error())
	}
	return err
}

// readMessage reads the message object that is r's next value into m.
func readMessage(r *strictjson.Reader, b []byte, m *message) error {
	m.obj.start = valueStart(r, b)
	err := r.Object(bounded(r, func(key string) error {
		k, err := matchKey(key, keyJSONRPC, keyID, keyMethod, keyParams)
		if err != nil {
			return err
		}
		switch k {
		case keyID:
			m.id, err = r.Raw()
		case keyMethod:
			var ok bool
			m.method, ok, err = readString(r)
			if err == nil && !ok {
				err = shapef("method is not a string")
			}
			m.hasMethod = true
		case keyParams:
			m.hasParams = true
			m.paramsObject, m.params, err = readObject(r, b, func(key string) error { return readParam(r, b, m, key) })
		}
		return err
	}))
	m.obj.end = r.Offset()
	return err
}

// maxObjectMembers bounds the members of an object the scan walks (a
// message, its params, their _meta): the reader keeps every key of an
// object it walks, to refuse a repeat, so a wider object would cost memory
// in proportion to its keys rather than its bytes. No MCP message comes
// near it; the values the scan does not read (tool arguments among them)
// are skipped, and not bounded by it.
const maxObjectMembers = 1024

// bounded returns fn for the object that is r's next value, refusing the
// member past maxObjectMembers.
func bounded(r *strictjson.Reader, fn func(key string) error) func(key string) error {
	where := r.Path()
	if where == "" {
		where = "the message"
	}
	n := 0
	return func(key string) error {
		if n == maxObjectMembers {
			return shapef(where + " has more than " + strconv.Itoa(maxObjectMembers) + " members")
		}
		n++
		return fn(key)
	}
}

// readParam reads the member key of m.params, when the middleware uses it.
func readParam(r *strictjson.Reader, b []byte, m *message, key string) error {
	k, err := matchKey(key, keyMeta, keyProtocolVersion, keyName, keyURI)
	if err != nil {
		return err
	}
	switch k {
	case keyMeta:
		m.hasMeta = true
		m.metaObject, m.meta, err = readObject(r, b, func(key string) error {
			// _meta's keys are map keys to every server (no case
			// folding): only the revision key itself is read.
			if key != metaProtocolVersion {
				return nil
			}
			m.hasMetaVersion = true
			var err error
			m.metaVersion, m.metaVersionStr, err = readString(r)
			return err
		})
	case keyProtocolVersion:
		m.hasProtocolVersion = true
		m.protocolVersionAt.start = valueStart(r, b)
		m.protocolVersion, m.protocolVersionStr, err = readString(r)
		m.protocolVersionAt.end = r.Offset()
	case keyName:
		m.name, m.nameStr, err = readString(r)
	case keyURI:
		m.uri, m.uriStr, err = readString(r)
	}
	return err
}

// readObject reads r's next value: through fn, member by member, when it
// is an object (isObject true), else skipped. It returns the value's span.
func readObject(r *strictjson.Reader, b []byte, fn func(key string) error) (isObject bool, at span, err error) {
	at.start = valueStart(r, b)
	if kind, _ := r.Next(); kind == strictjson.Object {
		isObject = true
		err = r.Object(bounded(r, fn))
	} else {
		err = r.Skip()
	}
	at.end = r.Offset()
	return isObject, at, err
}

// readString reads r's next value, and returns it and true when it is a
// string; any other value is skipped.
func readString(r *strictjson.Reader) (string, bool, error) {
	if kind, _ := r.Next(); kind != strictjson.String {
		return "", false, r.Skip()
	}
	s, err := r.String()
	return s, true, err
}

// valueStart returns the offset in b of r's next value: what r has read,
// then the white space and the separator before the value. It is called
// only when a value follows, which the body passed json.Valid to promise,
// so the walk stops inside b.
func valueStart(r *strictjson.Reader, b []byte) int {
	i := r.Offset()
	for isWS(b[i]) || b[i] == ':' || b[i] == ',' {
		i++
	}
	return i
}

// matchKey returns which of names the key is. A key that equals one of
// them under Unicode case folding (as encoding/json matches struct fields:
// "METHOD", "paramſ") but is spelled otherwise is refused, as encoding/json
// would read it as that member. A key that is none of them returns "".
func matchKey(key string, names ...string) (string, error) {
	for _, n := range names {
		if key == n {
			return n, nil
		}
		if strings.EqualFold(key, n) {
			return "", shapef("the key " + strconv.Quote(key) + " is not spelled " + n + " but a server may read it as " + n)
		}
	}
	return "", nil
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
