package mcphttp

import (
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"
)

// This file reads the few members of a JSON-RPC body that version
// negotiation depends on, without decoding the rest: the method, the id,
// params._meta's protocol revision, initialize's params.protocolVersion and
// the name that Mcp-Name mirrors. It works on byte offsets, so that the one
// member the middleware may rewrite (initialize's protocolVersion) and the
// places the outbound Transport inserts _meta are exact spans of the body,
// and everything else stays byte for byte.
//
// The body has already passed json.Valid, so the scanner only has to find
// things, but it still checks every bound: fuzzing holds it to never
// panicking on any input.
//
// The servers behind the middleware decode the body with parsers of their
// own, and two of their habits would let a body say one thing to the
// middleware and another to the server: encoding/json (mcp-go) matches
// struct fields case-insensitively under Unicode folding ("METHOD" and
// "paramſ" fill method and params), and most parsers let a repeated key
// overwrite the first. So a key the middleware reads must appear once, and
// exactly as spelled; a body that repeats one, or spells one another way,
// is refused rather than guessed at.

// errSyntax is returned for a body that is not what json.Valid promised;
// it is never expected, and is answered as a parse error.
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

	hasID bool
	id    span

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
	hasName bool
	nameStr bool
	name    string
	hasURI  bool
	uriStr  bool
	uri     string
}

// isRequest reports whether m is a request (a method and an id), as
// opposed to a notification (a method, no id) or a response (no method).
func (m *message) isRequest() bool { return m.hasMethod && m.hasID }

// body is a parsed JSON-RPC body: one message, or a batch.
type body struct {
	batch    bool
	messages []message
}

// parseBody reads a JSON-RPC body. It returns errSyntax (wrapped) for a
// body that is not JSON, and a *shapeError for JSON that is not a message
// or a non-empty batch of messages, or that spells a key the middleware
// reads twice or in another case.
func parseBody(b []byte) (body, error) {
	if !json.Valid(b) {
		return body{}, errSyntax
	}
	i := skipWS(b, 0)
	if i >= len(b) {
		return body{}, errSyntax
	}
	switch b[i] {
	case '{':
		m, _, err := parseMessage(b, i)
		if err != nil {
			return body{}, err
		}
		return body{messages: []message{m}}, nil
	case '[':
		var out body
		out.batch = true
		j := skipWS(b, i+1)
		if j < len(b) && b[j] == ']' {
			return body{}, shapef("the batch is empty")
		}
		for j < len(b) {
			if b[j] != '{' {
				return body{}, shapef("a batch member is not a JSON-RPC message object")
			}
			m, end, err := parseMessage(b, j)
			if err != nil {
				return body{}, err
			}
			out.messages = append(out.messages, m)
			j = skipWS(b, end)
			if j < len(b) && b[j] == ',' {
				j = skipWS(b, j+1)
				continue
			}
			if j < len(b) && b[j] == ']' {
				return out, nil
			}
			return body{}, errSyntax
		}
		return body{}, errSyntax
	}
	return body{}, shapef("the body is not a JSON-RPC message object or batch")
}

// parseMessage reads the message object that starts at b[i] == '{' and
// returns it with the index just past it.
func parseMessage(b []byte, i int) (message, int, error) {
	var m message
	var seenJSONRPC bool
	end, err := members(b, i, func(key []byte, esc bool, v span) error {
		k, err := matchKey(key, esc, keyJSONRPC, keyID, keyMethod, keyParams)
		if err != nil {
			return err
		}
		switch k {
		case keyJSONRPC:
			if seenJSONRPC {
				return duplicate(k)
			}
			seenJSONRPC = true
		case keyID:
			if m.hasID {
				return duplicate(k)
			}
			m.hasID, m.id = true, v
		case keyMethod:
			if m.hasMethod {
				return duplicate(k)
			}
			s, ok, err := stringAt(b, v)
			if err != nil {
				return err
			}
			if !ok {
				return shapef("method is not a string")
			}
			m.hasMethod, m.method = true, s
		case keyParams:
			if m.hasParams {
				return duplicate(k)
			}
			m.hasParams, m.params = true, v
			if v.start < len(b) && b[v.start] == '{' {
				m.paramsObject = true
				return parseParams(b, &m)
			}
		}
		return nil
	})
	if err != nil {
		return message{}, 0, err
	}
	m.obj = span{i, end}
	return m, end, nil
}

// parseParams reads the members of m.params that the middleware uses.
func parseParams(b []byte, m *message) error {
	_, err := members(b, m.params.start, func(key []byte, esc bool, v span) error {
		k, err := matchKey(key, esc, keyMeta, keyProtocolVersion, keyName, keyURI)
		if err != nil {
			return err
		}
		switch k {
		case keyMeta:
			if m.hasMeta {
				return duplicate(k)
			}
			m.hasMeta, m.meta = true, v
			if v.start < len(b) && b[v.start] == '{' {
				m.metaObject = true
				return parseMeta(b, m)
			}
		case keyProtocolVersion:
			if m.hasProtocolVersion {
				return duplicate(k)
			}
			s, ok, err := stringAt(b, v)
			if err != nil {
				return err
			}
			m.hasProtocolVersion, m.protocolVersionStr, m.protocolVersion, m.protocolVersionAt = true, ok, s, v
		case keyName:
			if m.hasName {
				return duplicate(k)
			}
			s, ok, err := stringAt(b, v)
			if err != nil {
				return err
			}
			m.hasName, m.nameStr, m.name = true, ok, s
		case keyURI:
			if m.hasURI {
				return duplicate(k)
			}
			s, ok, err := stringAt(b, v)
			if err != nil {
				return err
			}
			m.hasURI, m.uriStr, m.uri = true, ok, s
		}
		return nil
	})
	return err
}

// parseMeta reads params._meta. Its keys are map keys to every server (no
// case folding), so only an exact repeat of the revision key is refused.
func parseMeta(b []byte, m *message) error {
	_, err := members(b, m.meta.start, func(key []byte, esc bool, v span) error {
		k, err := keyString(key, esc)
		if err != nil {
			return err
		}
		if k != MetaProtocolVersion {
			return nil
		}
		if m.hasMetaVersion {
			return duplicate("_meta." + MetaProtocolVersion)
		}
		s, ok, err := stringAt(b, v)
		if err != nil {
			return err
		}
		m.hasMetaVersion, m.metaVersionStr, m.metaVersion = true, ok, s
		return nil
	})
	return err
}

// keyString returns a raw key (the bytes between its quotes) as the
// string it stands for.
func keyString(raw []byte, esc bool) (string, error) {
	if !esc {
		return string(raw), nil
	}
	return decodeString(append(append([]byte{'"'}, raw...), '"'))
}

func duplicate(k string) error { return shapef("the key " + k + " appears twice") }

// matchKey returns which of names the key is. A key that equals one of
// them under Unicode case folding but is spelled otherwise is refused, as
// encoding/json would read it as that member. A key that is none of them
// returns "".
func matchKey(raw []byte, esc bool, names ...string) (string, error) {
	key := raw
	if esc {
		s, err := keyString(raw, esc)
		if err != nil {
			return "", err
		}
		key = []byte(s)
	}
	for _, n := range names {
		if string(key) == n {
			return n, nil
		}
		if foldEqual(key, n) {
			return "", shapef("the key " + strconvQuote(key) + " is not spelled " + n + " but a server may read it as " + n)
		}
	}
	return "", nil
}

// foldEqual reports whether key equals name (ASCII) under Unicode simple
// case folding, as encoding/json matches struct fields.
func foldEqual(key []byte, name string) bool {
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return strings.EqualFold(string(key), name)
		}
	}
	if len(key) != len(name) {
		return false
	}
	for i, c := range key {
		d := name[i]
		if c == d {
			continue
		}
		if lc := c | 0x20; lc < 'a' || lc > 'z' || lc != d|0x20 {
			return false
		}
	}
	return true
}

func strconvQuote(b []byte) string {
	q, _ := json.Marshal(string(b))
	return string(q)
}

// stringAt returns the string at v and true, or false when v is not a
// JSON string.
func stringAt(b []byte, v span) (string, bool, error) {
	if v.start >= len(b) || v.end > len(b) || b[v.start] != '"' || v.end-v.start < 2 {
		return "", false, nil
	}
	raw := b[v.start:v.end]
	for _, c := range raw[1 : len(raw)-1] {
		if c == '\\' || c >= utf8.RuneSelf {
			s, err := decodeString(raw)
			return s, err == nil, err
		}
	}
	return string(raw[1 : len(raw)-1]), true, nil
}

// decodeString decodes a JSON string literal, escapes and all, as the
// servers will.
func decodeString(raw []byte) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", errSyntax
	}
	return s, nil
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipWS(b []byte, i int) int {
	for i < len(b) && isWS(b[i]) {
		i++
	}
	return i
}

// endString returns the index just past the JSON string that starts at
// b[i] == '"', and whether it holds an escape.
func endString(b []byte, i int) (int, bool, error) {
	esc := false
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			esc = true
			j++
		case '"':
			return j + 1, esc, nil
		}
	}
	return 0, false, errSyntax
}

// endValue returns the index just past the JSON value that starts at b[i].
func endValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errSyntax
	}
	switch b[i] {
	case '"':
		end, _, err := endString(b, i)
		return end, err
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, _, err := endString(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errSyntax
	}
	j := i
	for j < len(b) && isScalar(b[j]) {
		j++
	}
	if j == i {
		return 0, errSyntax
	}
	return j, nil
}

// isScalar reports whether c can be part of a JSON number or literal.
func isScalar(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c == '-' || c == '+' || c == '.' || c == 'E'
}

// members calls fn with each member of the JSON object that starts at
// b[i] == '{' (the raw key between its quotes, whether the key holds an
// escape, and the value's span) and returns the index just past the
// object. It stops at the first error fn returns.
func members(b []byte, i int, fn func(key []byte, esc bool, v span) error) (int, error) {
	if i >= len(b) || b[i] != '{' {
		return 0, errSyntax
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for i < len(b) {
		if b[i] != '"' {
			return 0, errSyntax
		}
		kend, kesc, err := endString(b, i)
		if err != nil {
			return 0, err
		}
		key := b[i+1 : kend-1]
		i = skipWS(b, kend)
		if i >= len(b) || b[i] != ':' {
			return 0, errSyntax
		}
		vs := skipWS(b, i+1)
		ve, err := endValue(b, vs)
		if err != nil {
			return 0, err
		}
		if err := fn(key, kesc, span{vs, ve}); err != nil {
			return 0, err
		}
		i = skipWS(b, ve)
		if i < len(b) && b[i] == ',' {
			i = skipWS(b, i+1)
			continue
		}
		if i < len(b) && b[i] == '}' {
			return i + 1, nil
		}
		return 0, errSyntax
	}
	return 0, errSyntax
}
