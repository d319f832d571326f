package mcphttp

// The reader of bodies before JSON v2, on internal/strictjson, kept as the
// oracle of FuzzReadersAgree, which holds the reader of body.go to the
// same answers, or stricter ones.

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/wopneg/wopneg/internal/strictjson"
	"github.com/wopneg/wopneg/internal/tracectx"
)

// oldScanBody reads a JSON-RPC body, one message or a batch of them, calling
// fn with each message as it is read, and batch (when not nil) at a
// batch's first member, before it is read. m is
// reused from one call to the next: fn copies what it keeps. A batch
// holding more than maxMembers messages (0: no bound) is refused at the
// first member past the bound, unread. scanBody returns whether the body
// is a batch, and errSyntax for a body that is not JSON, a *shapeError for
// JSON that is not a message or a non-empty batch of messages, or that
// spells a key ambiguously, or the first error fn returns.
func oldScanBody(b []byte, maxMembers int, fn func(m *message) error, batch func() error) (isBatch bool, err error) {
	if !json.Valid(b) {
		return false, errSyntax
	}
	r := strictjson.NewReader(b, 0)
	var m message
	switch kind, _ := r.Next(); kind {
	case strictjson.Object:
		if err := oldReadMessage(r, b, &m); err != nil {
			return false, oldReaderError(err)
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
			if err := oldReadMessage(r, b, &m); err != nil {
				return err
			}
			empty = false
			return fn(&m)
		})
		if err == nil && empty {
			err = shapef("the batch is empty")
		}
		return true, oldReaderError(err)
	}
	return false, shapef("the body is not a JSON-RPC message object or batch")
}

// oldReaderError turns what the strict reader refuses in a body that is JSON
// (a repeated key, nesting beyond its bound, a string that is not UTF-8)
// into a *shapeError naming it; other errors pass unchanged.
func oldReaderError(err error) error {
	var re *strictjson.Error
	if errors.As(err, &re) {
		return shapef(re.Error())
	}
	return err
}

// oldReadMessage reads the message object that is r's next value into m.
func oldReadMessage(r *strictjson.Reader, b []byte, m *message) error {
	m.obj.start = oldValueStart(r, b)
	err := r.Object(oldBounded(r, func(key string) error {
		k, err := oldMatchKey(key, "jsonrpc", "id", "method", "params")
		if err != nil {
			return err
		}
		switch k {
		case "id":
			m.id, err = r.Raw()
		case "method":
			var ok bool
			m.method, ok, err = oldReadString(r)
			if err == nil && !ok {
				err = shapef("method is not a string")
			}
			m.hasMethod = true
		case "params":
			m.hasParams = true
			m.paramsObject, m.params, err = oldReadObject(r, b, func(key string) error { return oldReadParam(r, b, m, key) })
		}
		return err
	}))
	m.obj.end = r.Offset()
	return err
}

// oldBounded returns fn for the object that is r's next value, refusing the
// member past maxObjectMembers.
func oldBounded(r *strictjson.Reader, fn func(key string) error) func(key string) error {
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

// oldReadParam reads the member key of m.params, when the middleware uses it.
func oldReadParam(r *strictjson.Reader, b []byte, m *message, key string) error {
	k, err := oldMatchKey(key, "_meta", "protocolVersion", "name", "uri")
	if err != nil {
		return err
	}
	switch k {
	case "_meta":
		m.hasMeta = true
		m.metaObject, m.meta, err = oldReadObject(r, b, func(key string) error {
			// _meta's keys are map keys to every server (no case
			// folding): only the revision key itself is read.
			if key != metaProtocolVersion {
				m.metaTrace = m.metaTrace || key == tracectx.Parent || key == tracectx.State
				return nil
			}
			m.hasMetaVersion = true
			var err error
			m.metaVersion, m.metaVersionStr, err = oldReadString(r)
			return err
		})
	case "protocolVersion":
		m.hasProtocolVersion = true
		m.protocolVersionAt.start = oldValueStart(r, b)
		m.protocolVersion, m.protocolVersionStr, err = oldReadString(r)
		m.protocolVersionAt.end = r.Offset()
	case "name":
		m.name, m.nameStr, err = oldReadString(r)
	case "uri":
		m.uri, m.uriStr, err = oldReadString(r)
	}
	return err
}

// oldReadObject reads r's next value: through fn, member by member, when it
// is an object (isObject true), else skipped. It returns the value's span.
func oldReadObject(r *strictjson.Reader, b []byte, fn func(key string) error) (isObject bool, at span, err error) {
	at.start = oldValueStart(r, b)
	if kind, _ := r.Next(); kind == strictjson.Object {
		isObject = true
		err = r.Object(oldBounded(r, fn))
	} else {
		err = r.Skip()
	}
	at.end = r.Offset()
	return isObject, at, err
}

// oldReadString reads r's next value, and returns it and true when it is a
// string; any other value is skipped.
func oldReadString(r *strictjson.Reader) (string, bool, error) {
	if kind, _ := r.Next(); kind != strictjson.String {
		return "", false, r.Skip()
	}
	s, err := r.String()
	return s, true, err
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// oldValueStart returns the offset in b of r's next value: what r has read,
// then the white space and the separator before the value. It is called
// only when a value follows, which the body passed json.Valid to promise,
// so the walk stops inside b.
func oldValueStart(r *strictjson.Reader, b []byte) int {
	i := r.Offset()
	for isWS(b[i]) || b[i] == ':' || b[i] == ',' {
		i++
	}
	return i
}

// oldMatchKey returns which of names the key is. A key that equals one of
// them under Unicode case folding (as encoding/json matches struct fields:
// "METHOD", "paramſ") but is spelled otherwise is refused, as encoding/json
// would read it as that member. A key that is none of them returns "".
func oldMatchKey(key string, names ...string) (string, error) {
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
