package mcphttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/egress"
	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/internal/tracectx"
	"github.com/wopneg/wopneg/negotiate"
)

// ErrVersionConflict is wrapped by the error of every request a
// [Transport] refuses to send: it names a revision other than the
// negotiated one, or cannot be stamped with it. Nothing of it was sent.
var ErrVersionConflict = errors.New("mcphttp: request does not carry the negotiated revision; nothing was sent")

// revisionError is a request a Transport refused to send, and why.
type revisionError struct {
	// Where names what is wrong: the header, a message's _meta, an
	// initialize's protocolVersion, or the body.
	Where string
	// Want is the negotiated revision; Got what the request carries, when
	// it carries one.
	Want, Got string
}

// Error says which part of the request names which revision.
func (e *revisionError) Error() string {
	if e.Got == "" {
		return fmt.Sprintf("mcphttp: %s: cannot carry the negotiated revision %q", e.Where, e.Want)
	}
	return fmt.Sprintf("mcphttp: %s names revision %q, not the negotiated %q", e.Where, e.Got, e.Want)
}

// Unwrap returns ErrVersionConflict.
func (e *revisionError) Unwrap() error { return ErrVersionConflict }

// Transport is an http.RoundTripper for a host's requests to one MCP
// server after [Negotiate] or [Connect]: it stamps every request with the
// negotiated revision, and refuses (sends nothing, returns an error
// wrapping [ErrVersionConflict]) a request that names another, under any
// spelling of the header's key. So a client library that would retry at a
// revision of its own choosing, or an initialize that asks for another,
// never reaches the server.
//
// At a revision from 2026-07-28 (the first without initialize) on, the revision goes in the
// MCP-Protocol-Version header and in params._meta of every JSON-RPC
// request in the body, as MCP requires of each request. At an earlier
// revision it goes in the header only: those revisions settle it at
// initialize, and a stateful server refuses a request that declares one in
// _meta (the go-sdk's does, with -32022).
//
// A Transport from [Connect] reads the answer to a POST that holds a
// request, up to 4 MiB (an event stream as far as its first response),
// before it hands it back, for the server's runtime refusal of the
// revision: an answer a JSON-RPC client reads as -32022 (as the inbound
// side reads one) is recorded as a refused negotiation.decided of that
// exchange and returned as an error carrying interop_version_unsupported
// instead; a longer answer is an error too, since it was not read. One
// from [NewTransport] has no sink: it hands every answer back as it came,
// for its caller to read (and record) a refusal in it.
//
// A Transport from [Connect] whose revision initialize settled carries
// the session: it sends notifications/initialized before the first
// request, puts the session's Mcp-Session-Id on every request (refusing
// one that names another session, or a second initialize), and ends it
// with [Transport.Close].
//
// A Transport from [Connect] with OutboundOptions.TraceContext set also
// carries the trace context in the headers and params._meta of every
// request (see "Trace context" in the package doc).
//
// Bodies are read whole, up to 4 MiB; a larger or non-JSON POST body is
// refused, because it cannot be checked.
type Transport struct {
	base      http.RoundTripper
	revision  string
	stateless bool

	// Set by Connect: the server, the session its initialize opened
	// ("" when none) and where a runtime refusal is recorded (nil: it is
	// not).
	peer, session string
	rec           *exchange.Peer
	// trace is OutboundOptions.TraceContext (nil: none stamped).
	trace negotiate.TraceContext

	mu              sync.Mutex
	needInitialized bool // notifications/initialized is still to send
	closed          bool
}

// NewTransport returns a Transport for an accepted MCP outcome o, that
// stamps o's revision on every request and sends it through base. A nil
// base is the egress transport of the zero policy (see "Outbound" in the
// package doc): public addresses only, so a host whose server is on
// loopback or a private address passes its own base, or uses [Connect]
// with OutboundOptions.AllowLoopback or AllowPrivate. It refuses a refused outcome: nothing is ever sent at a version the
// decision refused, below the floor or downgraded for an unauthenticated
// caller.
func NewTransport(o negotiate.Outcome, base http.RoundTripper) (*Transport, error) {
	if err := exchange.Sendable("mcphttp", o, facets.ProtocolMCP); err != nil {
		return nil, err
	}
	if base == nil {
		base = exchange.Egress{}.Base()
	}
	return &Transport{base: base, revision: o.Version, stateless: isStateless(o.Version)}, nil
}

// Version returns the revision t stamps.
func (t *Transport) Version() string { return t.revision }

// errClosed is a request through a Transport whose session was closed.
var errClosed = errors.New("mcphttp: the Transport's session is closed; nothing was sent")

// Close ends the session [Connect] opened, with an HTTP DELETE that
// carries its Mcp-Session-Id, bounded by ctx; later requests through t
// are refused. Without a session it does nothing. A server that does not
// let clients end sessions (405) is not an error.
func (t *Transport) Close(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.session == "" || t.closed {
		return nil
	}
	t.closed = true
	return endSession(ctx, t.base, t.peer, t.session, t.revision, t.trace)
}

// RoundTrip stamps req with the negotiated revision and sends it, or
// refuses it. It does not change req: it sends a copy.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	out, asks, err := t.stamp(req)
	if err == nil {
		err = t.opened(out)
	}
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	resp, err := t.rec.Send(t.base, out)
	if err != nil || asks == "" || t.rec == nil {
		return resp, err
	}
	return t.follow(out, resp, asks)
}

// opened puts the session on out and, before its first request, sends
// notifications/initialized, as the lifecycle requires once initialize
// has been answered. Without a session there is nothing to do.
func (t *Transport) opened(out *http.Request) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return errClosed
	}
	if t.session != "" {
		if vs := headerValues(out.Header, headerSessionID); len(vs) > 1 || len(vs) == 1 && vs[0] != t.session {
			return fmt.Errorf("mcphttp: the %s header names another session than the one Connect opened: %w", headerSessionID, ErrVersionConflict)
		}
		out.Header[headerSessionID] = []string{t.session}
	}
	if !t.needInitialized || out.Method == http.MethodDelete {
		return nil
	}
	tc := tracectx.From(out.Context(), t.trace)
	params := ""
	if m := tc.Members(); m != "" {
		params = `,"params":{"_meta":{` + m + `}}`
	}
	req, _ := http.NewRequestWithContext(out.Context(), http.MethodPost, t.peer, strings.NewReader(`{"jsonrpc":"2.0","method":"`+methodInitialized+`"`+params+`}`))
	req.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}, headerProtocolVersion: {t.revision}}
	tc.SetHeader(req.Header)
	if t.session != "" {
		req.Header[headerSessionID] = []string{t.session}
	}
	resp, err := egress.RoundTrip(t.base, req)
	if err != nil {
		return fmt.Errorf("mcphttp: %s: %w", methodInitialized, err)
	}
	resp.Body.Close()
	if resp.StatusCode > 299 {
		return fmt.Errorf("mcphttp: %s: %w", methodInitialized, egress.NotAnswer(resp, errors.New("the server did not accept it")))
	}
	t.needInitialized = false
	return nil
}

// follow reads the answer to a POST whose first request is the method
// asks, with the engine's one reader, for the server's runtime refusal of
// the revision, and hands it back as it came when there is none.
func (t *Transport) follow(req *http.Request, resp *http.Response, asks string) (*http.Response, error) {
	var refusal []byte
	sse := exchange.IsEventStream(resp.Header.Get("Content-Type"))
	held, v, err := exchange.Read(resp, defaultMaxBodyBytes, func(msg []byte, complete bool) exchange.Verdict {
		if !complete {
			return exchange.Undecided
		}
		responses, refused := readAnswer(msg)
		switch {
		case refused:
			refusal = msg
			return exchange.Refused
		case sse && responses == 0:
			return exchange.Undecided // a notification: the response is still to come
		}
		return exchange.Served
	})
	switch {
	case v == exchange.Refused:
		resp.Body.Close()
		return nil, t.refused(req, asks, refusal)
	case v == exchange.Unreadable:
		resp.Body.Close()
		return nil, exchange.UnreadableError(resp, held, defaultMaxBodyBytes)
	case v == exchange.Undecided && err != nil && err != io.EOF:
		resp.Body.Close()
		return nil, exchange.ReadFailure(resp, err)
	}
	if err == nil || err == io.EOF {
		err = nil // the rest, if any, is read from the body
	}
	resp.Body = exchange.NewReplay(held, err, resp.Body)
	return resp, nil
}

// refused is the error of a runtime refusal (-32022) of the revision,
// recorded as a refused negotiation.decided of the exchange: the revision
// requested, the server's data.supported as its offer, reason below-floor
// when every one of them is below the floor, unsupported otherwise.
func (t *Transport) refused(req *http.Request, method string, data []byte) error {
	what := fmt.Sprintf("mcphttp: the server refused %s at the negotiated revision %q (-32022)", method, t.revision)
	rep, _ := readReply(data) // its data.supported, when the strict reading finds one
	offer := refusal(t.rec.N, t.rec.Subject, negotiate.Offer{Protocol: facets.ProtocolMCP, Requested: t.revision}, rep.supported)
	o, aerr := t.rec.Refused(req.Context(), offer)
	return errors.Join(fmt.Errorf("%s: %w", what, exchange.PeerRefusal(o, rep.supported, rep.reason)), aerr)
}

// stamp returns the copy of req to send, and the method of the first
// request its body holds ("" when it holds none).
func (t *Transport) stamp(req *http.Request) (*http.Request, string, error) {
	// Every spelling of the key: a hand-built header can hold
	// "MCP-Protocol-Version" beside the canonical key, and the peer would
	// read both.
	vs := headerValues(req.Header, headerProtocolVersion)
	if len(vs) > 1 {
		return nil, "", &revisionError{Where: "the " + headerProtocolVersion + " header", Want: t.revision, Got: fmt.Sprint(vs)}
	}
	if len(vs) == 1 && vs[0] != t.revision {
		return nil, "", &revisionError{Where: "the " + headerProtocolVersion + " header", Want: t.revision, Got: vs[0]}
	}
	out := req.Clone(req.Context())
	for k := range out.Header {
		if strings.EqualFold(k, headerProtocolVersion) {
			delete(out.Header, k)
		}
	}
	out.Header[headerProtocolVersion] = []string{t.revision}
	tc := tracectx.From(req.Context(), t.trace)
	tc.SetHeader(out.Header)
	if req.Body == nil || req.Body == http.NoBody || req.Method != http.MethodPost {
		return out, "", nil
	}
	raw, err := readGrowing(req.Body, req.ContentLength, defaultMaxBodyBytes)
	req.Body.Close()
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, "", &revisionError{Where: "a body over " + strconv.Itoa(defaultMaxBodyBytes) + " bytes", Want: t.revision}
	}
	if err != nil {
		return nil, "", fmt.Errorf("mcphttp: reading the request body: %w", err)
	}
	stamped, asks, err := t.stampBody(raw, tc)
	if err != nil {
		return nil, "", err
	}
	out.Body = io.NopCloser(bytes.NewReader(stamped))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(stamped)), nil }
	out.ContentLength = int64(len(stamped))
	return out, asks, nil
}

// stampBody checks every message of a JSON-RPC body and, at a stateless
// revision, inserts the revision into the _meta of each request that
// lacks it; and inserts the trace context tc into the _meta of each
// request and notification whose _meta holds neither of its keys (one
// that holds either is the caller's, and stays as it is). A params or
// _meta that is not an object gets no trace context: it never makes a
// request fail.
func (t *Transport) stampBody(raw []byte, tc tracectx.Context) (stamped []byte, asks string, err error) {
	metaMember := strconv.Quote(metaProtocolVersion) + ":" + strconv.Quote(t.revision)
	trace := tc.Members()
	at := 0 // stamped is raw up to at, with the insertions before it
	insert := func(pos int, text string) {
		stamped = append(append(stamped, raw[at:pos]...), text...)
		at = pos
	}
	_, err = scanBody(raw, 0, func(m *message) error {
		if !m.hasMethod {
			return nil // a response to the server carries no revision
		}
		if m.isRequest() && asks == "" {
			asks = m.method
		}
		if m.method == methodInitialize && t.session != "" {
			return &revisionError{Where: "initialize, on the session Connect initialized already,", Want: t.revision}
		}
		if m.method == methodInitialize && m.hasProtocolVersion && (!m.protocolVersionStr || m.protocolVersion != t.revision) {
			return &revisionError{Where: "initialize's params.protocolVersion", Want: t.revision, Got: m.protocolVersion}
		}
		if m.hasMetaVersion && (!m.metaVersionStr || m.metaVersion != t.revision) {
			return &revisionError{Where: "params._meta of " + m.method, Want: t.revision, Got: m.metaVersion}
		}
		var members []string
		version := t.stateless && m.isRequest() && !m.hasMetaVersion
		if version {
			members = append(members, metaMember)
		}
		if trace != "" && !m.metaTrace {
			members = append(members, trace)
		}
		// Each message gets one insertion at most, after the last one's.
		switch inner := strings.Join(members, ","); {
		case inner == "":
		case !m.hasParams:
			insert(m.obj.start+1, `"params":{"_meta":{`+inner+`}},`)
		case !m.paramsObject:
			if version {
				return &revisionError{Where: "params of " + m.method + ", which is not an object", Want: t.revision}
			}
		case !m.hasMeta:
			insert(m.params.start+1, `"_meta":{`+inner+`}`+commaUnlessEmpty(raw, m.params.start))
		case !m.metaObject:
			if version {
				return &revisionError{Where: "params._meta of " + m.method + ", which is not an object", Want: t.revision}
			}
		default:
			insert(m.meta.start+1, inner+commaUnlessEmpty(raw, m.meta.start))
		}
		return nil
	}, nil)
	var re *revisionError
	if err != nil && !errors.As(err, &re) {
		err = &revisionError{Where: "a body that is not a JSON-RPC message (" + err.Error() + ")", Want: t.revision}
	}
	if err != nil {
		return nil, "", err
	}
	if stamped == nil {
		return raw, asks, nil
	}
	return append(stamped, raw[at:]...), asks, nil
}

// commaUnlessEmpty returns "," unless the object that opens at b[open] is
// empty, so that a member inserted first keeps the object valid. The body
// is JSON, so a key or the closing brace follows within b.
func commaUnlessEmpty(b []byte, open int) string {
	if bytes.TrimLeft(b[open+1:], " \t\r\n")[0] == '}' {
		return ""
	}
	return ","
}
