package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
)

// DefaultMaxBodyBytes bounds a request body when [Options.MaxBodyBytes] is
// zero: 4 MiB, the go-sdk streamable handler's own default.
const DefaultMaxBodyBytes = 4 << 20

// Options configures a [Handler]. The zero Options is safe: no caller is
// authenticated, bodies are bounded by DefaultMaxBodyBytes, sessions by
// DefaultMaxSessions, and every decision is a durable host event; only
// Sink must be set, because a negotiation with nowhere to be recorded is a
// configuration error, not a default.
type Options struct {
	// Sink records the negotiation.decided event of every decision. It is
	// required.
	Sink events.Sink

	// Subject returns the caller of a request, or nil when none was
	// resolved, as the host's authentication middleware established it. A
	// nil Subject func treats every caller as unauthenticated, which the
	// decision never downgrades.
	Subject func(*http.Request) *negotiate.Subject

	// Destination says where a request's event is recorded. When nil, every
	// event is a durable host event with no workspace (RFC 0242 §B), the
	// record of an exchange outside any run.
	Destination func(*http.Request) negotiate.Destination

	// MaxBodyBytes bounds a request body; a larger one is answered 413 and
	// never reaches the wrapped handler. Zero means DefaultMaxBodyBytes;
	// negative is an error.
	MaxBodyBytes int64

	// MaxSessions bounds how many legacy sessions are remembered. Zero means
	// DefaultMaxSessions; negative is an error.
	MaxSessions int

	// ByteExact forbids the one change the middleware otherwise makes to a
	// body: rewriting a counter-offered initialize's params.protocolVersion
	// to the revision the host decided, so that the wrapped server answers
	// with it. With ByteExact, initialize is decided without a counter-offer,
	// so what would have been counter-offered is refused instead.
	ByteExact bool

	// ErrorLog receives what the middleware cannot tell the client: a
	// negotiation.decided event that could not be recorded under a policy
	// that lets the outcome stand. When nil, slog.Default() is used.
	ErrorLog *slog.Logger
}

// Middleware is the inbound negotiation for MCP, checked once and ready to
// wrap handlers. Create one with [New]; it is safe for concurrent use.
type Middleware struct {
	*settings
}

// settings are what a Middleware and the Handlers it makes share.
type settings struct {
	n         *negotiate.Negotiator
	adv       facets.Advertised
	opts      Options
	maxBody   int64
	maxSess   int
	counter   bool // the preferred revision can be counter-offered at initialize
	supported []string
	log       *slog.Logger
}

// New checks n and opts and returns the middleware. n must advertise the
// mcp facet, and opts.Sink must be set.
//
// The servers it wraps should advertise the facet's revisions and nothing
// else (go-sdk: ServerOptions.SupportedProtocolVersions; mcp-go:
// server.WithStreamableHTTPProtocolVersions), so that their
// server/discover answer lists what the host advertises.
func New(n *negotiate.Negotiator, opts Options) (*Middleware, error) {
	switch {
	case n == nil:
		return nil, errors.New("mcphttp: the negotiator is nil")
	case opts.Sink == nil:
		return nil, errors.New("mcphttp: Options.Sink is nil; every negotiation must be recorded")
	case opts.MaxBodyBytes < 0:
		return nil, fmt.Errorf("mcphttp: Options.MaxBodyBytes is %d; want 0 (the default) or more", opts.MaxBodyBytes)
	case opts.MaxSessions < 0:
		return nil, fmt.Errorf("mcphttp: Options.MaxSessions is %d; want 0 (the default) or more", opts.MaxSessions)
	}
	adv, ok := n.Facets().Lookup(facets.ProtocolMCP)
	if !ok {
		return nil, errors.New("mcphttp: the negotiator does not advertise the mcp facet")
	}
	m := &settings{
		n:         n,
		adv:       adv,
		opts:      opts,
		maxBody:   opts.MaxBodyBytes,
		maxSess:   opts.MaxSessions,
		supported: slices.Clone(adv.Versions),
		// The handshake can only settle a revision before
		// StatelessRevision, so only such a preferred revision can be
		// counter-offered at initialize.
		counter: !opts.ByteExact && !isStateless(adv.Preferred),
		log:     opts.ErrorLog,
	}
	if m.maxBody == 0 {
		m.maxBody = DefaultMaxBodyBytes
	}
	if m.maxSess == 0 {
		m.maxSess = DefaultMaxSessions
	}
	if m.log == nil {
		m.log = slog.Default()
	}
	return &Middleware{m}, nil
}

// Wrap returns next, an MCP streamable-HTTP handler (the go-sdk's
// mcp.StreamableHTTPHandler, mcp-go's server.StreamableHTTPServer, or any
// other), behind the negotiation. Each handler it returns remembers its own
// sessions. Like http.Handle, it panics on a nil handler: that is a
// mistake in the host's wiring, not a request to answer.
func (m *Middleware) Wrap(next http.Handler) *Handler {
	if next == nil {
		panic("mcphttp: Wrap of a nil handler")
	}
	return &Handler{settings: m.settings, next: next, sessions: newSessions(m.maxSess)}
}

// Handler is one MCP handler behind the [Middleware]; [Middleware.Wrap]
// makes it. It is safe for concurrent use.
type Handler struct {
	*settings
	next     http.Handler
	sessions *sessions
}

// contextKey keys the outcome in a request's context.
type contextKey struct{}

// Version returns the revision the middleware settled for the request
// whose context ctx is: the wrapped handler serves that revision. It
// returns false when ctx did not come through a [Handler].
func Version(ctx context.Context) (string, bool) {
	o, ok := ctx.Value(contextKey{}).(*negotiate.Outcome)
	if !ok {
		return "", false
	}
	return o.Version, true
}

// Outcome returns the whole accepted [negotiate.Outcome] of the request
// whose context ctx is (a downgrade shows as Kind Downgraded, a
// counter-offer as CounterOffered), and false when ctx did not come
// through a [Handler].
func Outcome(ctx context.Context) (negotiate.Outcome, bool) {
	o, ok := ctx.Value(contextKey{}).(*negotiate.Outcome)
	if !ok {
		return negotiate.Outcome{}, false
	}
	return *o, true
}

// Sessions returns how many legacy sessions h remembers.
func (h *Handler) Sessions() int { return h.sessions.len() }

// ServeHTTP checks and negotiates the request, then passes it to the
// wrapped handler with its body unchanged, or answers it with the refusal.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		h.servePost(w, r)
	case http.MethodGet, http.MethodDelete:
		h.serveBodiless(w, r)
	case http.MethodOptions:
		// A CORS preflight carries no MCP message and names no revision.
		h.next.ServeHTTP(w, r)
	default:
		// Streamable HTTP has POST, GET and DELETE; anything else is no MCP
		// request this middleware could vouch for.
		w.Header().Set("Allow", "GET, POST, DELETE, OPTIONS")
		writeRPCError(w, http.StatusMethodNotAllowed, nil, wperrors.RPCError{Code: codeInvalidRequest, Message: "method " + r.Method + " is not allowed on an MCP endpoint"})
	}
}

// JSON-RPC codes the middleware answers with besides the version errors.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeInternalError  = -32603
)

func (h *Handler) servePost(w http.ResponseWriter, r *http.Request) {
	rh, err := readHeaders(r.Header)
	if err != nil {
		writeRPCError(w, http.StatusBadRequest, nil, wperrors.MCPHeaderMismatch(err.Error()))
		return
	}
	raw, err := h.readBody(r)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeRPCError(w, http.StatusRequestEntityTooLarge, nil, wperrors.RPCError{
				Code: codeInvalidRequest, Message: "the request body exceeds " + strconv.FormatInt(h.maxBody, 10) + " bytes",
			})
			return
		}
		writeRPCError(w, http.StatusBadRequest, nil, wperrors.RPCError{Code: codeInvalidRequest, Message: "the request body could not be read"})
		return
	}
	b, err := parseBody(raw)
	if err != nil {
		var shape *shapeError
		if errors.As(err, &shape) {
			writeRPCError(w, http.StatusBadRequest, nil, wperrors.RPCError{Code: codeInvalidRequest, Message: shape.msg})
			return
		}
		writeRPCError(w, http.StatusBadRequest, nil, wperrors.RPCError{Code: codeParseError, Message: "the request body is not JSON"})
		return
	}
	var id json.RawMessage // the id a refusal answers, when there is exactly one
	if !b.batch && b.messages[0].hasID {
		m := b.messages[0]
		id = json.RawMessage(raw[m.id.start:m.id.end])
	}
	for i := range b.messages {
		if b.messages[i].method == methodInitialize && b.messages[i].hasMethod {
			if b.batch {
				writeRPCError(w, http.StatusBadRequest, nil, wperrors.RPCError{Code: codeInvalidRequest, Message: "initialize must not be batched"})
				return
			}
			h.serveInitialize(w, r, rh, raw, &b.messages[0], id)
			return
		}
	}
	if err := checkAgreement(rh, b); err != nil {
		writeRPCError(w, http.StatusBadRequest, id, wperrors.MCPHeaderMismatch(err.Error()))
		return
	}
	h.serveDecided(w, r, rh, raw, id)
}

const methodInitialize = "initialize"

// checkAgreement is the header/body check that comes before any version is
// decided (MCP 2026-07-28, HeaderMismatchError): MCP-Protocol-Version
// against every _meta revision, Mcp-Method against every method, and
// Mcp-Name against the name it mirrors.
func checkAgreement(rh requestHeaders, b body) error {
	stateless := isStateless(rh.version)
	// A header that names no stateless revision still decides the request,
	// but a body that declares a revision must declare the same one; a
	// missing header reads as ImpliedRevision, which no body declares.
	header := rh.version
	if header == "" {
		header = ImpliedRevision
	}
	for i := range b.messages {
		m := &b.messages[i]
		switch {
		case m.hasMetaVersion && !m.metaVersionStr:
			return fmt.Errorf("params._meta[%q] is not a string", MetaProtocolVersion)
		case m.hasMetaVersion && m.metaVersion != header:
			return fmt.Errorf("%s %s does not match params._meta[%q] %q", HeaderProtocolVersion, quoteOrAbsent(rh.version), MetaProtocolVersion, m.metaVersion)
		case stateless && m.isRequest() && !m.hasMetaVersion:
			return fmt.Errorf("%s %q needs params._meta[%q] to match it", HeaderProtocolVersion, rh.version, MetaProtocolVersion)
		}
		if !m.hasMethod {
			continue
		}
		switch {
		case rh.method != "" && rh.method != m.method:
			return fmt.Errorf("%s %q does not match method %q", HeaderMethod, rh.method, m.method)
		case stateless && rh.method == "":
			return fmt.Errorf("%s is required at %s %q", HeaderMethod, HeaderProtocolVersion, rh.version)
		}
		want, named, present := mirroredName(m)
		switch {
		case rh.hasName && named && (!present || rh.name != want):
			return fmt.Errorf("%s %q does not match the %s's name %s", HeaderName, rh.name, m.method, quoteOrAbsent(want))
		case stateless && named && !rh.hasName && m.isRequest():
			return fmt.Errorf("%s is required for %s at %s %q", HeaderName, m.method, HeaderProtocolVersion, rh.version)
		}
	}
	return nil
}

// mirroredName returns the body value Mcp-Name mirrors for m's method,
// whether the method has one, and whether the body holds it as a string;
// a member that is missing or not a string matches no header.
func mirroredName(m *message) (want string, named, present bool) {
	switch m.method {
	case "tools/call", "prompts/get":
		return m.name, true, m.nameStr
	case "resources/read":
		return m.uri, true, m.uriStr
	}
	return "", false, false
}

func quoteOrAbsent(v string) string {
	if v == "" {
		return "(absent)"
	}
	return strconv.Quote(v)
}

// serveDecided serves a request that is not initialize: on a session the
// middleware remembers, at the session's revision; otherwise at the
// revision its header names, decided now.
func (h *Handler) serveDecided(w http.ResponseWriter, r *http.Request, rh requestHeaders, raw []byte, id json.RawMessage) {
	requested := rh.version
	if requested == "" {
		requested = ImpliedRevision
	}
	subject := h.subject(r)
	if rh.session != "" && !isStateless(requested) {
		if s, ok := h.sessions.get(rh.session); ok {
			if s.outcome.Version != requested {
				writeRPCError(w, http.StatusBadRequest, id, sessionMismatch(rh.version, s.outcome.Version))
				return
			}
			if sameSubject(s.subject, subject) {
				h.forward(w, r, raw, &s.outcome, false)
				return
			}
			// Another caller on this session: the session's decision was
			// not made for it, so it is decided on its own.
		}
	}
	offer := negotiate.Inbound(h.adv, "", requested)
	o, ok := h.decide(r, subject, offer)
	if !ok {
		if o.Rule == negotiate.RuleAudit {
			writeRPCError(w, http.StatusInternalServerError, id, wperrors.RPCError{Code: codeInternalError, Message: o.Error.Message})
			return
		}
		writeRPCError(w, http.StatusBadRequest, id, wperrors.MCPUnsupportedProtocolVersion(rh.version, h.supported))
		return
	}
	h.forward(h.follow(w, r, subject, offer, &o, rh.method, id), r, raw, &o, false)
}

// sessionMismatch is the refusal of a request whose revision is not the
// one its session settled: the session serves that one revision only.
func sessionMismatch(requested, settled string) wperrors.RPCError {
	e := wperrors.MCPUnsupportedProtocolVersion(requested, []string{settled})
	e.Message = HeaderProtocolVersion + " " + quoteOrAbsent(requested) + " is not the revision " + strconv.Quote(settled) + " this session negotiated"
	return e
}

// serveInitialize decides a legacy handshake: params.protocolVersion, with
// a counter-offer when the preferred revision can be one.
func (h *Handler) serveInitialize(w http.ResponseWriter, r *http.Request, rh requestHeaders, raw []byte, m *message, id json.RawMessage) {
	if rh.method != "" && rh.method != methodInitialize {
		writeRPCError(w, http.StatusBadRequest, id, wperrors.MCPHeaderMismatch(fmt.Sprintf("%s %q does not match method %q", HeaderMethod, rh.method, methodInitialize)))
		return
	}
	if !m.paramsObject || !m.hasProtocolVersion || !m.protocolVersionStr {
		e := wperrors.MCPLegacyInitializeUnsupported("", h.supported)
		e.Message = "initialize needs params.protocolVersion, a string"
		writeRPCError(w, http.StatusOK, id, e)
		return
	}
	requested := m.protocolVersion
	if m.hasMetaVersion && (!m.metaVersionStr || m.metaVersion != requested) {
		// The body names two revisions; which one a server reads is its
		// own business, so neither is decided.
		writeRPCError(w, http.StatusBadRequest, id, wperrors.MCPHeaderMismatch(fmt.Sprintf("initialize's params._meta[%q] does not match its params.protocolVersion %q", MetaProtocolVersion, requested)))
		return
	}
	if isStateless(requested) {
		// Not a negotiation: the handshake cannot settle this revision, and
		// a server would answer with an older one than the host decided.
		e := wperrors.MCPLegacyInitializeUnsupported(requested, h.supported)
		e.Message = "initialize cannot negotiate " + strconv.Quote(requested) + "; use server/discover"
		writeRPCError(w, http.StatusOK, id, e)
		return
	}
	offer := negotiate.Offer{
		Protocol:     facets.ProtocolMCP,
		Requested:    requested,
		PeerVersions: []string{requested},
		CounterOffer: h.counter,
	}
	subject := h.subject(r)
	o, ok := h.decide(r, subject, offer)
	if !ok {
		if o.Rule == negotiate.RuleAudit {
			writeRPCError(w, http.StatusInternalServerError, id, wperrors.RPCError{Code: codeInternalError, Message: o.Error.Message})
			return
		}
		writeRPCError(w, http.StatusOK, id, wperrors.MCPLegacyInitializeUnsupported(requested, h.supported))
		return
	}
	if o.Version != requested {
		// The counter-offer: the server must answer with the host's
		// revision, and answers with the one it is asked for. This is the
		// one change the middleware makes to a body (see Options.ByteExact).
		raw = replaceSpan(raw, m.protocolVersionAt, strconv.Quote(o.Version))
	}
	rec := &sessionRecorder{ResponseWriter: w, h: h, session: session{outcome: o}}
	rec.session.subject, rec.comparable = cloneSubject(subject)
	h.forward(h.follow(rec, r, subject, offer, &o, methodInitialize, id), r, raw, &o, true)
}

// decide decides offer for r's caller. A refusal is recorded now; an
// accepted outcome is recorded when the wrapped server answers, as it
// answered (see follow), so the caller must forward it through follow.
// It returns false when the outcome is a refusal, which the caller answers.
func (h *Handler) decide(r *http.Request, subject *negotiate.Subject, offer negotiate.Offer) (negotiate.Outcome, bool) {
	if o, _ := h.n.Decide(subject, offer); o.Accepted() {
		return o, true
	}
	o := h.record(r, h.opts.Sink, subject, offer)
	return o, o.Accepted()
}

func (h *Handler) subject(r *http.Request) *negotiate.Subject {
	if h.opts.Subject == nil {
		return nil
	}
	return h.opts.Subject(r)
}

// forward passes r, with raw as its body, to the wrapped handler, with the
// outcome in its context.
func (h *Handler) forward(w http.ResponseWriter, r *http.Request, raw []byte, o *negotiate.Outcome, rewritten bool) {
	r = r.WithContext(context.WithValue(r.Context(), contextKey{}, o))
	if raw != nil {
		r.Body = io.NopCloser(bytes.NewReader(raw))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }
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

// observer is a ResponseWriter that watches the status of the answer.
type observer interface{ observe(status int) }

// readBody reads r's body whole, up to the bound; a larger one is an
// *http.MaxBytesError and nothing of it is kept.
func (h *Handler) readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return []byte{}, nil
	}
	defer r.Body.Close()
	if r.ContentLength > h.maxBody {
		return nil, &http.MaxBytesError{Limit: h.maxBody}
	}
	if r.ContentLength >= 0 {
		// net/http holds a body to its declared length, so reading that
		// many bytes reads it whole, in one allocation.
		buf := make([]byte, r.ContentLength)
		if _, err := io.ReadFull(r.Body, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, h.maxBody+1))
	if err != nil {
		return nil, err
	}
	if int64(len(raw)) > h.maxBody {
		return nil, &http.MaxBytesError{Limit: h.maxBody}
	}
	return raw, nil
}

// serveBodiless serves GET (a legacy session's event stream) and DELETE
// (the end of a legacy session): there is no body to check, only the
// revision the header names.
func (h *Handler) serveBodiless(w http.ResponseWriter, r *http.Request) {
	rh, err := readHeaders(r.Header)
	if err != nil {
		writeRPCError(w, http.StatusBadRequest, nil, wperrors.MCPHeaderMismatch(err.Error()))
		return
	}
	if r.Method == http.MethodDelete && rh.session != "" {
		w = &deleteRecorder{ResponseWriter: w, h: h, id: rh.session}
	}
	h.serveDecided(w, r, rh, nil, nil)
}

// replaceSpan returns a copy of b with the bytes at s replaced by with.
func replaceSpan(b []byte, s span, with string) []byte {
	out := make([]byte, 0, len(b)-(s.end-s.start)+len(with))
	out = append(out, b[:s.start]...)
	out = append(out, with...)
	return append(out, b[s.end:]...)
}

// writeRPCError answers with a JSON-RPC error response. id is the
// request's id, or nil for null (a batch, or no id to answer).
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, e wperrors.RPCError) {
	if id == nil {
		id = json.RawMessage("null")
	}
	body, err := json.Marshal(struct {
		JSONRPC string            `json:"jsonrpc"`
		ID      json.RawMessage   `json:"id"`
		Error   wperrors.RPCError `json:"error"`
	}{"2.0", id, e})
	if err != nil {
		// Only an id that is not JSON could fail, and ids come from a body
		// that passed json.Valid; answer null rather than nothing.
		body, _ = json.Marshal(struct {
			JSONRPC string            `json:"jsonrpc"`
			ID      any               `json:"id"`
			Error   wperrors.RPCError `json:"error"`
		}{"2.0", nil, e})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
