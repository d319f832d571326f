package mcphttp

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/internal/rpcerr"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"

	"github.com/go-json-experiment/json/jsontext"
)

// A POST is served in the order of this file: its MCP headers (whose
// names and reading come first) and body are read once (the body by
// body.go, into one view of each message), checked against each other,
// decided, and forwarded with the decision in its context, through the
// watcher of answer.go when the record waits for the server's answer.

// The streamable-HTTP headers and _meta keys of MCP that carry or mirror the
// protocol revision. Header names are in Go's canonical form, which is how
// net/http stores them; on the wire they match in any case.
const (
	// headerProtocolVersion names the revision of every request after the
	// legacy handshake, and of every 2026-07-28-era request.
	headerProtocolVersion = "Mcp-Protocol-Version"
	// headerMethod mirrors the JSON-RPC method (2026-07-28 era).
	headerMethod = "Mcp-Method"
	// headerName mirrors params.name of tools/call and prompts/get, and
	// params.uri of resources/read (2026-07-28 era).
	headerName = "Mcp-Name"
	// headerSessionID carries the session a legacy server created at
	// initialize.
	headerSessionID = "Mcp-Session-Id"
	// metaProtocolVersion is the params._meta key in which a 2026-07-28-era
	// request declares its revision.
	metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
)

// Revisions with a meaning of their own in the protocol.
const (
	// statelessRevision is the first revision without the initialize
	// handshake: from it on, every request declares its revision itself,
	// and initialize cannot settle it (both the go-sdk and mcp-go servers
	// answer initialize with at most 2025-11-25).
	statelessRevision = "2026-07-28"
	// impliedRevision is the revision a request without
	// MCP-Protocol-Version is read as (the MCP rule for servers since
	// 2025-06-18): it is refused unless the host offers it.
	impliedRevision = "2025-03-26"
)

var (
	statelessParsed = facets.MustParseVersion(facets.ProtocolMCP, statelessRevision)
	impliedParsed   = facets.MustParseVersion(facets.ProtocolMCP, impliedRevision)
)

// isStateless reports whether rev is a revision at or after
// statelessRevision. A malformed revision is not: it is decided, and
// refused, like any revision the host does not speak.
func isStateless(rev string) bool {
	v, err := facets.ParseVersion(facets.ProtocolMCP, rev)
	return err == nil && v.Compare(statelessParsed) >= 0
}

// singleHeader returns the value of the header name, whose values are vs:
// "" when it is absent or empty. More than one field line, or
// (unless commasAllowed) a comma-separated list, is an error: a client
// sends one revision, and a guess between two would be a downgrade nobody
// decided.
func singleHeader(vs []string, name string, commasAllowed bool) (string, error) {
	if len(vs) > 1 {
		return "", errors.New("more than one " + name + " header")
	}
	if len(vs) == 0 {
		return "", nil
	}
	v := strings.Trim(vs[0], " \t")
	if !commasAllowed && strings.ContainsRune(v, ',') {
		return "", errors.New(name + " holds a list; one value is allowed")
	}
	return v, nil
}

// headerRevision is what a request whose headers could not be read names
// as its revision, for the record: every value of MCP-Protocol-Version,
// which the decision refuses as no revision when there is more than one,
// or impliedRevision when there is none.
func headerRevision(h http.Header) string {
	return cmp.Or(strings.Trim(strings.Join(exchange.HeaderValues(h, headerProtocolVersion), ", "), " \t"), impliedRevision)
}

// requestHeaders are the MCP headers of one request.
type requestHeaders struct {
	version string // MCP-Protocol-Version, "" when absent
	method  string // Mcp-Method
	name    string // Mcp-Name, decoded
	session string // Mcp-Session-Id
	hasName bool
}

// revision is the revision the request names, as MCP reads it:
// impliedRevision when it names none.
func (rh *requestHeaders) revision() string { return cmp.Or(rh.version, impliedRevision) }

// readHeaders reads and checks the MCP headers of r. It walks the map
// once to see whether any of them is also under another spelling of its
// key; only then are their values gathered by exchange.HeaderValues, which walks
// the map again for each. Otherwise (every map net/http reads off the
// wire) a header's values are its canonical key's.
func readHeaders(h http.Header) (requestHeaders, error) {
	values := func(name string) []string { return h[name] }
	if respelled(h) {
		values = func(name string) []string { return exchange.HeaderValues(h, name) }
	}
	var rh requestHeaders
	var err error
	if rh.version, err = singleHeader(values(headerProtocolVersion), headerProtocolVersion, false); err != nil {
		return rh, err
	}
	if rh.method, err = singleHeader(values(headerMethod), headerMethod, false); err != nil {
		return rh, err
	}
	if rh.session, err = singleHeader(values(headerSessionID), headerSessionID, false); err != nil {
		return rh, err
	}
	for i := 0; i < len(rh.session); i++ {
		// The session id is visible ASCII (MCP transports §session
		// management); anything else is not one a server issued.
		if c := rh.session[i]; c < 0x21 || c > 0x7e {
			return rh, errors.New(headerSessionID + " holds a character outside visible ASCII")
		}
	}
	names := values(headerName)
	rh.hasName = len(names) > 0
	if rh.name, err = singleHeader(names, headerName, true); err == nil && rh.hasName {
		rh.name, err = decodeHeaderValue(rh.name)
	}
	return rh, err
}

// readHeaderNames are the headers readHeaders reads.
var readHeaderNames = [...]string{headerProtocolVersion, headerMethod, headerSessionID, headerName}

// respelled reports whether h holds one of readHeaderNames under a key
// other than its canonical one (see exchange.HeaderValues).
func respelled(h http.Header) bool {
	for k := range h {
		for _, name := range readHeaderNames {
			if k != name && strings.EqualFold(k, name) {
				return true
			}
		}
	}
	return false
}

// decodeHeaderValue undoes the base64 wrapper of an Mcp-Name value, so that
// a name outside ASCII compares with the body's: the wrapper MCP
// (SEP-2243) puts around a header value that is not plain visible ASCII,
// "=?base64?" + standard base64 + "?=".
func decodeHeaderValue(v string) (string, error) {
	inner, opens := strings.CutPrefix(v, "=?base64?")
	inner, closes := strings.CutSuffix(inner, "?=")
	if !opens || !closes {
		return v, nil
	}
	dec, err := base64.StdEncoding.DecodeString(inner)
	if err != nil {
		return "", errors.New(headerName + " has a malformed base64 value")
	}
	return string(dec), nil
}

func (h *handler) servePost(w http.ResponseWriter, r *http.Request, subject *negotiate.Subject, rh *requestHeaders) {
	raw, err := h.readBody(r)
	if err != nil {
		status, msg := http.StatusBadRequest, "the request body could not be read"
		if tooBig := new(http.MaxBytesError); errors.As(err, &tooBig) {
			status, msg = http.StatusRequestEntityTooLarge, "the request body exceeds "+strconv.FormatInt(h.maxBody, 10)+" bytes"
		}
		exchange.WriteError(w, status, nil, rpcerr.RPCError{Code: codeInvalidRequest, Message: msg})
		return
	}
	// The body is read in a function of its own, whose frame is gone
	// before the request is served, and so is not under the record.
	if method, id, asked, requests, decide := h.readPost(w, r, subject, rh, raw); decide {
		h.serveDecided(w, r, subject, rh, raw, method, id, asked, requests)
	}
}

// readPost reads the body raw of a POST, and answers it when it is no
// request a revision is decided for by its header: decide is false then.
// Otherwise it returns the method and the id of its one message, the ids
// of a batch's requests, and how many of its messages ask for a response.
func (h *handler) readPost(w http.ResponseWriter, r *http.Request, subject *negotiate.Subject, rh *requestHeaders, raw []byte) (method string, id jsontext.Value, asked []jsontext.Value, requests int, decide bool) {
	requested := rh.revision()
	stateless := isStateless(requested)
	var (
		first      message // the message, or the batch member last read
		initialize bool
		mismatch   error
	)
	batch, err := scanBody(raw, h.maxBatch, func(m *message) error {
		first = *m
		if m.isRequest() {
			requests++
			if asked != nil {
				asked = append(asked, m.id)
			}
		}
		if m.hasMethod && m.method == methodInitialize {
			initialize = true
			return errStopScan
		}
		mismatch = checkAgreement(rh, stateless, m) // which, when not nil, ends the scan
		return mismatch
	}, func() error {
		if !batchesAllowed(requested) {
			return errBatchRevision
		}
		asked = []jsontext.Value{} // a batch's request ids, from its first member
		return nil
	})
	// id is the id a refusal answers, when there is exactly one; method
	// the method of the one message, for Options.Observe.
	if !batch {
		id = first.id
		method = first.method
	}
	// scanBody's errors are its own, never wrapped: a type assertion, not
	// errors.As, whose target would cost an allocation per request.
	shape, isShape := err.(*shapeError)
	if errors.Is(err, errSyntax) {
		// Whatever was read of it before it broke: a body that is not JSON
		// is no message a server would read.
		exchange.WriteError(w, http.StatusBadRequest, nil, rpcerr.RPCError{Code: codeParseError, Message: "the request body is not JSON"})
	} else if initialize && batch {
		h.refuse(w, r, subject, "", first.protocolVersion, nil, http.StatusBadRequest, rpcerr.RPCError{Code: codeInvalidRequest, Message: "initialize must not be batched"})
	} else if initialize {
		h.serveInitialize(w, r, subject, rh, raw, &first, id)
	} else if mismatch != nil {
		h.refuse(w, r, subject, method, requested, id, http.StatusBadRequest, rpcerr.MCPHeaderMismatch(mismatch.Error()))
	} else if err == errBatchRevision {
		h.refuse(w, r, subject, "", requested, nil, http.StatusBadRequest, rpcerr.RPCError{Code: codeInvalidRequest, Message: "a JSON-RPC batch is not allowed at " + headerProtocolVersion + " " + strconv.Quote(requested) + "; MCP has batches only at " + impliedRevision})
	} else if isShape {
		exchange.WriteError(w, http.StatusBadRequest, nil, rpcerr.RPCError{Code: codeInvalidRequest, Message: shape.msg})
	} else {
		return method, id, asked, requests, true
	}
	return "", nil, nil, 0, false
}

// readBody reads r's body whole, up to the bound; a larger one is an
// *http.MaxBytesError and nothing of it is kept.
func (h *handler) readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return []byte{}, nil
	}
	defer r.Body.Close()
	if r.ContentLength > h.maxBody {
		return nil, &http.MaxBytesError{Limit: h.maxBody}
	}
	return readGrowing(r.Body, r.ContentLength, h.maxBody)
}

// readGrowing reads body whole, up to limit bytes (more is an
// *http.MaxBytesError). A declared length is only a claim, so the buffer
// grows as bytes arrive, doubling: a request that declares 4 MiB and sends
// nothing holds 512 bytes. The claim only caps a growth: when it is honest
// the last buffer is the body's size (one byte more, to see its end), so
// the read peaks at the body and the half of it the buffer held before,
// not at twice the body, as doubling past it would.
func readGrowing(body io.Reader, declared, limit int64) ([]byte, error) {
	buf := make([]byte, 0, 512)
	for {
		if len(buf) == cap(buf) {
			next := 2 * int64(cap(buf))
			if declared >= int64(len(buf)) && declared < next {
				next = declared + 1
			}
			grown := make([]byte, len(buf), min(next, limit+1))
			copy(grown, buf)
			buf = grown
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return nil, &http.MaxBytesError{Limit: limit}
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// errStopScan ends a body's scan at an initialize, which settles the
// answer; errBatchRevision, at a batch under a revision that has none.
var (
	errStopScan      = errors.New("stop")
	errBatchRevision = errors.New("batch at a revision without batches")
)

// batchesAllowed reports whether a request at rev may be a JSON-RPC batch:
// MCP 2025-03-26 has them, 2025-06-18 removed them (the go-sdk refuses one
// at a later revision). A malformed revision is left to the decision.
func batchesAllowed(rev string) bool {
	v, err := facets.ParseVersion(facets.ProtocolMCP, rev)
	return err != nil || v.Compare(impliedParsed) <= 0
}

const methodInitialize = "initialize"

// checkAgreement is the header/body check that comes before any version is
// decided (MCP 2026-07-28, HeaderMismatchError), for one message m of a
// request whose headers are rh (stateless when they name a stateless
// revision): MCP-Protocol-Version against the _meta revision, Mcp-Method
// against the method, and Mcp-Name against the name it mirrors.
func checkAgreement(rh *requestHeaders, stateless bool, m *message) error {
	// A header that names no stateless revision still decides the request,
	// but a body that declares a revision must declare the same one; a
	// missing header reads as impliedRevision, which no body declares.
	if m.hasMetaVersion && !m.metaVersionStr {
		return fmt.Errorf("params._meta[%q] is not a string", metaProtocolVersion)
	}
	if m.hasMetaVersion && m.metaVersion != rh.revision() {
		return fmt.Errorf("%s %s does not match params._meta[%q] %q", headerProtocolVersion, quoteOrAbsent(rh.version), metaProtocolVersion, m.metaVersion)
	}
	if stateless && m.isRequest() && !m.hasMetaVersion {
		return fmt.Errorf("%s %q needs params._meta[%q] to match it", headerProtocolVersion, rh.version, metaProtocolVersion)
	}
	if !m.hasMethod {
		return nil
	}
	if rh.method != "" && rh.method != m.method {
		return fmt.Errorf("%s %q does not match method %q", headerMethod, rh.method, m.method)
	}
	if stateless && rh.method == "" {
		return fmt.Errorf("%s is required at %s %q", headerMethod, headerProtocolVersion, rh.version)
	}
	// Mcp-Name mirrors params.name of tools/call and prompts/get and
	// params.uri of resources/read; a member that is missing or not a
	// string (present false) matches no header.
	named := m.method == "tools/call" || m.method == "prompts/get" || m.method == "resources/read"
	want, present := m.name, m.nameStr
	if m.method == "resources/read" {
		want, present = m.uri, m.uriStr
	}
	if rh.hasName && named && (!present || rh.name != want) {
		return fmt.Errorf("%s %q does not match the %s's name %s", headerName, rh.name, m.method, quoteOrAbsent(want))
	}
	if stateless && named && !rh.hasName && m.isRequest() {
		return fmt.Errorf("%s is required for %s at %s %q", headerName, m.method, headerProtocolVersion, rh.version)
	}
	return nil
}

func quoteOrAbsent(v string) string {
	if v == "" {
		return "(absent)"
	}
	return strconv.Quote(v)
}

// serveDecided serves a request that is not initialize: on a session the
// middleware remembers, at the session's revision; otherwise at the
// revision its header names, decided now. method is the method of its one
// message, id its id; asked are a batch's request ids, and requests is how
// many of its messages ask for a response.
//
// A session and a refusal are answered by functions of their own: this
// frame is under the record of the answer (see internal/exchange, "The
// record runs deep").
func (h *handler) serveDecided(w http.ResponseWriter, r *http.Request, subject *negotiate.Subject, rh *requestHeaders, raw []byte, method string, id jsontext.Value, asked []jsontext.Value, requests int) {
	requested := rh.revision()
	if rh.session != "" && h.serveSession(w, r, subject, rh, raw, method, id, asked, requests) {
		return
	}
	// Anything but a discover may act (a tools/call runs a tool; a
	// response resumes the request that asked for it; a DELETE ends a
	// session): which it is, the body says, not a header.
	var o negotiate.Outcome
	var e events.NegotiationDecided
	recorded := h.rec.Decided(r.Context(), h.dest(r), subject, exchange.Offer(h.adv, requested), false, method != methodDiscover, &o, &e)
	if o.Err() != nil {
		h.refuseRevision(w, r, subject, rh, method, id, &o)
		return
	}
	a := h.follow(w, r, subject, &o, &e, rh.method, method, id, asked, requests, recorded)
	h.forward(a, r, raw, &o, false)
	a.release()
}

// serveSession serves a request on the session rh names, when the
// session's decision serves it, or refuses it, and reports whether it
// did either: a request of another caller on the session is decided on
// its own, at the session's revision or not at all. A request the
// session serves is watched as any other: its acceptance is the
// session's, on the record since initialize, and the server's refusal
// of the revision is recorded in an event of its own.
func (h *handler) serveSession(w http.ResponseWriter, r *http.Request, subject *negotiate.Subject, rh *requestHeaders, raw []byte, method string, id jsontext.Value, asked []jsontext.Value, requests int) bool {
	requested := rh.revision()
	s, ok := h.sessions.get(rh.session)
	if !ok && r.Method != http.MethodDelete {
		// The pin is gone (evicted, or never made here): serving the
		// session at whatever its header names now could differ from
		// what its server settled, so the client must initialize again,
		// which MCP asks of a client told 404 on its session. Ending an
		// unknown session serves nothing, and is decided afresh.
		h.refuse(w, r, subject, method, requested, id, http.StatusNotFound, rpcerr.RPCError{Code: codeInvalidRequest, Message: "the session is not known here (it ended, or its negotiated revision was forgotten); initialize a new session"})
		return true
	}
	if ok && s.outcome.Version != requested {
		// The session serves the one revision it settled.
		e := rpcerr.MCPUnsupportedProtocolVersion(requested, []string{s.outcome.Version})
		e.Message = headerProtocolVersion + " " + quoteOrAbsent(rh.version) + " is not the revision " + strconv.Quote(s.outcome.Version) + " this session negotiated"
		h.refuse(w, r, subject, method, requested, id, http.StatusBadRequest, e)
		return true
	}
	if ok && sameSubject(s.subject, subject) {
		// The event a refusal is recorded from: the session's revision
		// decided for this caller now, so that it bears this time.
		_, e := h.n.Decide(subject, exchange.Offer(h.adv, s.outcome.Version))
		a := h.follow(w, r, subject, &s.outcome, &e, rh.method, method, id, asked, requests, true)
		a.onSession = true
		h.forward(a, r, raw, &s.outcome, false)
		a.release()
		return true
	}
	return false
}

// refuseRevision answers the decision o, which refused the revision rh
// names.
func (h *handler) refuseRevision(w http.ResponseWriter, r *http.Request, subject *negotiate.Subject, rh *requestHeaders, method string, id jsontext.Value, o *negotiate.Outcome) {
	h.refuseDecided(w, r, method, id, http.StatusBadRequest, o, rpcerr.MCPUnsupportedProtocolVersion(rh.revision(), nil), "unsupported MCP protocol version: "+headerProtocolVersion+" "+quoteOrAbsent(rh.version), subject)
}

// serveInitialize decides a legacy handshake: params.protocolVersion, with
// a counter-offer when the preferred revision can be one.
func (h *handler) serveInitialize(w http.ResponseWriter, r *http.Request, subject *negotiate.Subject, rh *requestHeaders, raw []byte, m *message, id jsontext.Value) {
	requested := m.protocolVersion
	if rh.method != "" && rh.method != methodInitialize {
		h.refuse(w, r, subject, methodInitialize, requested, id, http.StatusBadRequest, rpcerr.MCPHeaderMismatch(fmt.Sprintf("%s %q does not match method %q", headerMethod, rh.method, methodInitialize)))
		return
	}
	if !m.paramsObject || !m.hasProtocolVersion || !m.protocolVersionStr {
		// It names no revision: nothing to decide or record.
		e := rpcerr.MCPLegacyInitializeUnsupported("", h.servable(subject))
		e.Message = "initialize needs params.protocolVersion, a string"
		exchange.WriteError(w, http.StatusOK, id, e)
		return
	}
	if m.hasMetaVersion && (!m.metaVersionStr || m.metaVersion != requested) {
		// The body names two revisions; which one a server reads is its
		// own business, so neither is served.
		h.refuse(w, r, subject, methodInitialize, requested, id, http.StatusBadRequest, rpcerr.MCPHeaderMismatch(fmt.Sprintf("initialize's params._meta[%q] does not match its params.protocolVersion %q", metaProtocolVersion, requested)))
		return
	}
	if isStateless(requested) {
		// The handshake cannot settle this revision, and a server would
		// answer with an older one than the host decided.
		e := rpcerr.MCPLegacyInitializeUnsupported(requested, h.servable(subject))
		e.Message = "Unsupported protocol version: initialize cannot negotiate " + strconv.Quote(requested) + "; use server/discover"
		h.refuse(w, r, subject, methodInitialize, requested, id, http.StatusOK, e)
		return
	}
	var o negotiate.Outcome
	var e events.NegotiationDecided
	h.rec.Decided(r.Context(), h.dest(r), subject, negotiate.Offer{Protocol: facets.ProtocolMCP, Requested: requested, PeerVersions: []string{requested}, CounterOffer: h.counter}, false, false, &o, &e)
	if o.Err() != nil {
		h.refuseDecided(w, r, methodInitialize, id, http.StatusOK, &o, rpcerr.MCPLegacyInitializeUnsupported(requested, nil), "Unsupported protocol version: initialize's params.protocolVersion "+strconv.Quote(requested), subject)
		return
	}
	if o.Version != requested {
		// The counter-offer: the server must answer with the host's
		// revision, and answers with the one it is asked for. This is the
		// one change the middleware makes to a body (see Options.ByteExact).
		at := m.protocolVersionAt
		raw = slices.Concat(raw[:at.start], []byte(strconv.Quote(o.Version)), raw[at.end:])
	}
	a := h.follow(w, r, subject, &o, &e, methodInitialize, methodInitialize, id, nil, 1, false)
	a.session = &session{outcome: o, subject: cloneSubject(subject), authenticated: policy.Policy{}.IsAuthenticated(subject)}
	h.forward(a, r, raw, &o, true)
	a.release()
}

// refuse answers a request the middleware refuses for something other than
// the decision (its headers and body disagree, or its session cannot serve
// it), and records the refusal of the revision it named: every refusal of
// a request that names a revision is on the record. The negotiator records
// only what it decides, so it is asked to decide an offer it must refuse.
// method is the request's, for Options.Observe.
//
// A request whose headers and body disagree (-32020), or whose shape MCP
// does not allow (-32600), is refused before any version is weighed, as
// MCP checks it: its outcome is negotiate.RuleInput, reason unsupported,
// with e as its Cause, so that neither the record nor Observe says a
// rule of the decision refused it. Otherwise the reason e's data gives
// is the one recorded, so that the wire and the record agree.
func (h *handler) refuse(w http.ResponseWriter, r *http.Request, subject *negotiate.Subject, method, requested string, id jsontext.Value, status int, e rpcerr.RPCError) {
	offer := negotiate.Offer{Protocol: facets.ProtocolMCP, Requested: requested, PeerVersions: []string{exchange.Unserved(facets.ProtocolMCP)}}
	o, ev := h.n.Decide(subject, offer)
	if e.Code == rpcerr.RPCMCPHeaderMismatch || e.Code == codeInvalidRequest {
		o.Rule, o.Reason, o.Cause = negotiate.RuleInput, events.ReasonUnsupported, e
		o.Error = o.Error.WithDetail("reason", events.ReasonUnsupported)
		ev.Reason = events.ReasonUnsupported
	}
	o, _ = h.rec.Record(r.Context(), h.dest(r), subject, &o, &ev)
	if d, ok := e.Data.(rpcerr.VersionData); ok {
		d.Reason = string(o.Reason)
		e.Data = d
	}
	h.answerRefusal(w, r, method, id, status, &o, e)
}

// answerRefusal answers the refusal o with e on status, or, when o is the
// audit's (its record failed under RequireAudit), with the audit's error
// on HTTP 500; and hands the exchange to Options.Observe.
func (h *handler) answerRefusal(w http.ResponseWriter, r *http.Request, method string, id jsontext.Value, status int, o *negotiate.Outcome, e rpcerr.RPCError) {
	if o.Rule == negotiate.RuleAudit {
		status, e = http.StatusInternalServerError, rpcerr.RPCError{Code: codeInternalError, Message: o.Error.Message}
	}
	exchange.WriteError(w, status, id, e)
	h.observe(r, method, o, e.Code)
}

// refuseDecided answers a refusal the decision made: e is the wire error,
// named opens its message, which then says why; data lists what this
// caller could be served instead, and the reason. r and method are the
// request's, for Options.Observe.
func (h *handler) refuseDecided(w http.ResponseWriter, r *http.Request, method string, id jsontext.Value, status int, o *negotiate.Outcome, e rpcerr.RPCError, named string, subject *negotiate.Subject) {
	if o.Rule != negotiate.RuleAudit {
		servable := h.servable(subject)
		// Never nothing served: the preferred revision is served to anyone.
		e.Message = named + why(o, h.adv) + "; this caller can be served " + strings.Join(servable, ", ")
		d := e.Data.(rpcerr.VersionData)
		d.Supported, d.Reason = servable, string(o.Reason)
		e.Data = d
	}
	h.answerRefusal(w, r, method, id, status, o, e)
}

// why says, for people, why the revision named was refused: the go-sdk
// client shows the message alone, so the reason must be in it.
func why(o *negotiate.Outcome, adv facets.Advertised) string {
	switch o.Rule {
	case negotiate.RuleFloor:
		return " is below the minimum revision " + adv.Floor
	case negotiate.RuleAuthenticated:
		return " is below the preferred revision " + adv.Preferred + " and is served only to an authenticated caller"
	case negotiate.RulePolicy:
		return " is not served to this caller by the host's policy"
	}
	return " is not a revision this server serves"
}

// servable returns the revisions subject could be served at, in the
// facet's order: the ones the decision accepts when asked for by name.
// None is below the floor, and an unauthenticated caller is never offered
// one below the preferred revision it would be refused.
func (h *handler) servable(subject *negotiate.Subject) []string {
	out := []string{}
	for _, v := range h.adv.Versions {
		if o, _ := h.n.Decide(subject, negotiate.InboundOffer(h.adv, "", v)); o.Err() == nil {
			out = append(out, v)
		}
	}
	return out
}

// forward passes r, with raw as its body, to the wrapped handler, with the
// outcome in its context.
func (h *handler) forward(w http.ResponseWriter, r *http.Request, raw []byte, o *negotiate.Outcome, rewritten bool) {
	r = r.WithContext(exchange.WithOutcome(r.Context(), facets.ProtocolMCP, o))
	if raw != nil {
		b := &forwardedBody{Reader: *bytes.NewReader(raw), raw: raw}
		r.Body, r.GetBody = b, b.again
		r.ContentLength = int64(len(raw))
		if rewritten || r.Header.Get("Content-Length") != "" {
			r.Header.Set("Content-Length", strconv.Itoa(len(raw)))
		}
	}
	h.next.ServeHTTP(w, r)
	if o, ok := w.(observer); ok {
		// A handler that returned without writing answered 200.
		o.observe(http.StatusOK)
	}
}

// forwardedBody is the body the wrapped handler reads: raw, read whole
// before, again each time GetBody asks.
type forwardedBody struct {
	bytes.Reader
	raw []byte
}

func (*forwardedBody) Close() error { return nil }

func (b *forwardedBody) again() (io.ReadCloser, error) {
	return &forwardedBody{Reader: *bytes.NewReader(b.raw), raw: b.raw}, nil
}

// observer is a ResponseWriter that watches the status of the answer.
type observer interface{ observe(status int) }
