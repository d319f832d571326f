package mcphttp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
)

// ErrRevision is wrapped by every [*RevisionError].
var ErrRevision = errors.New("mcphttp: request does not carry the negotiated revision")

// RevisionError is a request a [Transport] refused to send because it
// names a revision other than the negotiated one, or cannot be stamped
// with it.
type RevisionError struct {
	// Where names what is wrong: the header, a message's _meta, an
	// initialize's protocolVersion, or the body.
	Where string
	// Want is the negotiated revision; Got what the request carries, when
	// it carries one.
	Want, Got string
}

// Error says which part of the request names which revision.
func (e *RevisionError) Error() string {
	if e.Got == "" {
		return fmt.Sprintf("mcphttp: %s: cannot carry the negotiated revision %q", e.Where, e.Want)
	}
	return fmt.Sprintf("mcphttp: %s names revision %q, not the negotiated %q", e.Where, e.Got, e.Want)
}

// Unwrap returns ErrRevision.
func (e *RevisionError) Unwrap() error { return ErrRevision }

// Transport is an http.RoundTripper for a host's requests to one MCP
// server after [Negotiate]: it stamps every request with the negotiated
// revision, and refuses (sends nothing, returns a [*RevisionError]) a
// request that names another, under any spelling of the header's key. So
// a client library that would retry at a revision of its own choosing, or
// an initialize that asks for another, never reaches the server.
//
// At a revision from StatelessRevision on, the revision goes in the
// MCP-Protocol-Version header and in params._meta of every JSON-RPC
// request in the body, as MCP requires of each request. At an earlier
// revision it goes in the header only: those revisions settle it at
// initialize, and a stateful server refuses a request that declares one in
// _meta (the go-sdk's does, with -32022).
//
// Bodies are read whole, up to DefaultMaxBodyBytes; a larger or non-JSON
// POST body is refused, because it cannot be checked.
type Transport struct {
	// Base sends the stamped request; nil means http.DefaultTransport.
	Base      http.RoundTripper
	revision  string
	stateless bool
}

// NewTransport returns a Transport that stamps o's revision on every
// request and sends it through base (nil: http.DefaultTransport). It
// refuses a refused outcome: nothing is ever sent at a version the
// decision refused, below the floor or downgraded for an unauthenticated
// caller.
func NewTransport(o negotiate.Outcome, base http.RoundTripper) (*Transport, error) {
	if o.Err() != nil {
		return nil, fmt.Errorf("mcphttp: NewTransport: the negotiation was refused: %w", o.Err())
	}
	if o.Protocol != facets.ProtocolMCP {
		return nil, fmt.Errorf("mcphttp: NewTransport: the outcome is for %q, not mcp", o.Protocol)
	}
	if _, err := facets.ParseVersion(facets.ProtocolMCP, o.Version); err != nil {
		return nil, fmt.Errorf("mcphttp: NewTransport: %w", err)
	}
	return &Transport{Base: base, revision: o.Version, stateless: isStateless(o.Version)}, nil
}

// Revision returns the revision t stamps.
func (t *Transport) Revision() string { return t.revision }

// RoundTrip stamps req with the negotiated revision and sends it, or
// refuses it. It does not change req: it sends a copy.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	out, err := t.stamp(req)
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(out)
}

func (t *Transport) stamp(req *http.Request) (*http.Request, error) {
	// Every spelling of the key: a hand-built header can hold
	// "MCP-Protocol-Version" beside the canonical key, and the peer would
	// read both.
	vs := headerValues(req.Header, HeaderProtocolVersion)
	if len(vs) > 1 {
		return nil, &RevisionError{Where: "the " + HeaderProtocolVersion + " header", Want: t.revision, Got: fmt.Sprint(vs)}
	}
	if len(vs) == 1 && vs[0] != t.revision {
		return nil, &RevisionError{Where: "the " + HeaderProtocolVersion + " header", Want: t.revision, Got: vs[0]}
	}
	out := req.Clone(req.Context())
	for k := range out.Header {
		if strings.EqualFold(k, HeaderProtocolVersion) {
			delete(out.Header, k)
		}
	}
	out.Header[HeaderProtocolVersion] = []string{t.revision}
	if req.Body == nil || req.Body == http.NoBody || req.Method != http.MethodPost {
		return out, nil
	}
	raw, err := readGrowing(req.Body, req.ContentLength, DefaultMaxBodyBytes)
	req.Body.Close()
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, &RevisionError{Where: "a body over " + strconv.Itoa(DefaultMaxBodyBytes) + " bytes", Want: t.revision}
	}
	if err != nil {
		return nil, fmt.Errorf("mcphttp: reading the request body: %w", err)
	}
	stamped, err := t.stampBody(raw)
	if err != nil {
		return nil, err
	}
	out.Body = io.NopCloser(bytes.NewReader(stamped))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(stamped)), nil }
	out.ContentLength = int64(len(stamped))
	return out, nil
}

// edit inserts text at pos.
type edit struct {
	pos  int
	text string
}

// stampBody checks every message of a JSON-RPC body and, at a stateless
// revision, inserts the revision into the _meta of each request that
// lacks it.
func (t *Transport) stampBody(raw []byte) ([]byte, error) {
	quoted := strconv.Quote(t.revision)
	metaMember := strconv.Quote(MetaProtocolVersion) + ":" + quoted
	var edits []edit
	_, err := scanBody(raw, 0, func(m *message) error {
		if !m.hasMethod {
			return nil // a response to the server carries no revision
		}
		if m.method == methodInitialize && m.hasProtocolVersion && (!m.protocolVersionStr || m.protocolVersion != t.revision) {
			return &RevisionError{Where: "initialize's params.protocolVersion", Want: t.revision, Got: m.protocolVersion}
		}
		if m.hasMetaVersion {
			if !m.metaVersionStr || m.metaVersion != t.revision {
				return &RevisionError{Where: "params._meta of " + m.method, Want: t.revision, Got: m.metaVersion}
			}
			return nil
		}
		if !t.stateless || !m.isRequest() {
			return nil
		}
		if !m.hasParams {
			edits = append(edits, edit{m.obj.start + 1, `"params":{"_meta":{` + metaMember + `}},`})
		} else if !m.paramsObject {
			return &RevisionError{Where: "params of " + m.method + ", which is not an object", Want: t.revision}
		} else if !m.hasMeta {
			edits = append(edits, edit{m.params.start + 1, `"_meta":{` + metaMember + `}` + commaUnlessEmpty(raw, m.params.start)})
		} else if !m.metaObject {
			return &RevisionError{Where: "params._meta of " + m.method + ", which is not an object", Want: t.revision}
		} else {
			edits = append(edits, edit{m.meta.start + 1, metaMember + commaUnlessEmpty(raw, m.meta.start)})
		}
		return nil
	}, nil)
	var re *RevisionError
	if errors.As(err, &re) {
		return nil, err
	}
	if err != nil {
		return nil, &RevisionError{Where: "a body that is not a JSON-RPC message (" + err.Error() + ")", Want: t.revision}
	}
	if len(edits) == 0 {
		return raw, nil
	}
	size := len(raw)
	for _, e := range edits {
		size += len(e.text)
	}
	out := make([]byte, 0, size)
	at := 0
	for _, e := range edits {
		out = append(out, raw[at:e.pos]...)
		out = append(out, e.text...)
		at = e.pos
	}
	return append(out, raw[at:]...), nil
}

// commaUnlessEmpty returns "," unless the object that opens at b[open] is
// empty, so that a member inserted first keeps the object valid. The body
// is JSON, so a key or the closing brace follows within b.
func commaUnlessEmpty(b []byte, open int) string {
	i := open + 1
	for isWS(b[i]) {
		i++
	}
	if b[i] == '}' {
		return ""
	}
	return ","
}
