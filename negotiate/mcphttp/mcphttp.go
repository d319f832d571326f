package mcphttp

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/internal/rpcerr"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// defaultMaxBodyBytes bounds a request body when Options.MaxBodyBytes is
// zero: 4 MiB, the go-sdk streamable handler's own default.
const defaultMaxBodyBytes = 4 << 20

// defaultMaxAnswerBytes bounds what is held of an answer when
// Options.MaxAnswerBytes is zero.
const defaultMaxAnswerBytes = 4 << 20

// defaultMaxBatchMembers bounds a batch when Options.MaxBatchMembers is
// zero: far more than a client batches, far fewer than a body can hold.
const defaultMaxBatchMembers = 100

// Options configures a [Middleware]. The zero Options is safe: no caller is
// authenticated, bodies are bounded by 4 MiB, sessions by 10,000, and every
// decision is a durable host event; only
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
	// never reaches the wrapped handler. Zero means 4 MiB, the go-sdk
	// streamable handler's own default;
	// negative is an error.
	MaxBodyBytes int64

	// MaxAnswerBytes bounds what the middleware holds of the wrapped
	// server's answer to read it before the decision is recorded (see "The
	// record follows the server" in the package doc): a JSON answer whole,
	// an event stream up to the responses the request asks for. An answer
	// longer than that never leaves unread: it is replaced with -32603 on
	// HTTP 502 and recorded refused. Zero means 4 MiB, more than a
	// discover or initialize result (the server's capabilities, info,
	// icons and instructions) holds; negative is an error.
	MaxAnswerBytes int64

	// MaxSessions bounds how many legacy sessions the Middleware
	// remembers, for all the handlers it wraps. Zero means 10,000; negative is an error.
	MaxSessions int

	// MaxBatchMembers bounds how many messages a JSON-RPC batch may hold
	// (batches exist only at MCP 2025-03-26); a larger one is refused with
	// -32600 at the first member past the bound, unread. Zero means 100;
	// negative is an error.
	MaxBatchMembers int

	// ByteExact forbids the one change the middleware otherwise makes to a
	// body: rewriting a counter-offered initialize's params.protocolVersion
	// to the revision the host decided, so that the wrapped server answers
	// with it. With ByteExact, initialize is decided without a counter-offer,
	// so what would have been counter-offered is refused instead.
	ByteExact bool

	// StrictSubject refuses a request whose Subject func returned an
	// invalid Subject (one the v2 Subject schema refuses, such as a
	// SubjectID "users/42" or a Tenant "Acme Corp") with JSON-RPC -32603 on
	// HTTP 500, before any negotiation, naming the violation. Without it
	// such a request is decided as unauthenticated. Either way the
	// violation is logged through ErrorLog as
	// "wopneg: invalid Subject: <violation>": an invalid Subject is a
	// mistake in the host's authentication, never silently anonymous.
	StrictSubject bool

	// DisableLocalhostProtection turns off the DNS-rebinding protection
	// that the go-sdk's streamable handler applies by default, and that the
	// middleware applies first, so that a request the server would refuse
	// for its origin never gets a negotiation answer: a request that
	// arrived on a loopback address (127.0.0.1, [::1]) is answered 403 when
	// its Host, or its Origin when it has one, names a host that is not a
	// loopback one. Disable it only where the go-sdk's is disabled too
	// (behind a proxy on loopback that rewrites nothing).
	DisableLocalhostProtection bool

	// ErrorLog receives what the middleware cannot tell the client: a
	// negotiation.decided event that could not be recorded under a policy
	// that lets the outcome stand, and an invalid Subject. When nil,
	// slog.Default() is used.
	ErrorLog *slog.Logger

	// Observe, when set, is called once for every request the middleware
	// decides and records, with the request's context, once its answer
	// is settled: the method of the request (when it is one message), the
	// outcome as answered (the refusal the record says when the wrapped
	// server refused the revision, the audit's when a required record
	// failed) and the JSON-RPC code of the answer: the middleware's own,
	// or the error code of the server's answer to a discover or initialize
	// and -32022 when the server refused the revision; 0 otherwise. A
	// request served on a legacy session the middleware remembers is not
	// decided again, and is observed only when the server refuses the
	// revision, a refusal recorded in an event of its own. It runs on the
	// request's path and must not block; wopnegotel's Telemetry.Observe
	// puts the exchange on the request's span.
	Observe func(context.Context, negotiate.Exchange)
}

// Middleware is the inbound negotiation for MCP, checked once and ready to
// wrap handlers. Create one with [New]; it is safe for concurrent use. The
// zero Middleware has nothing to decide with: what it wraps is never
// reached, and every request is answered HTTP 500.
type Middleware struct {
	*settings
}

// settings are what a Middleware and the Handlers it makes share.
type settings struct {
	n         *negotiate.Negotiator
	adv       facets.Advertised
	opts      Options
	maxBody   int64
	maxAnswer int64
	maxBatch  int
	counter   bool // the preferred revision can be counter-offered at initialize
	log       *slog.Logger
	sessions  *sessions // the legacy sessions' pins, for every wrapped handler
	rec       *exchange.Recorder
}

// New checks n and opts and returns the middleware. n must advertise the
// mcp facet, and opts.Sink must be set.
//
// The servers it wraps should advertise the facet's revisions and nothing
// else (go-sdk: ServerOptions.SupportedProtocolVersions; mcp-go:
// server.WithStreamableHTTPProtocolVersions), so that their
// server/discover answer lists what the host advertises.
//
// The refreshedAt of the facet, when the host wrote one, must lie in its
// refresh window (at most 90 days old, at most a day ahead, RFC 0175 §D.4)
// on the clock of n's policy, or the error names the fix. One that
// negotiate.Compile gave from the release list embedded in the module (the
// host left it empty) never stops a host: when that list has aged past the
// window, New warns on opts.ErrorLog that the discovery is non-conformant.
func New(n *negotiate.Negotiator, opts Options) (*Middleware, error) {
	adv, err := exchange.Starts("mcphttp", n, opts.Sink, facets.ProtocolMCP, opts.ErrorLog)
	if err != nil {
		return nil, err
	}
	for _, bound := range []struct {
		name  string
		value int64
	}{{"MaxBodyBytes", opts.MaxBodyBytes}, {"MaxAnswerBytes", opts.MaxAnswerBytes}, {"MaxSessions", int64(opts.MaxSessions)}, {"MaxBatchMembers", int64(opts.MaxBatchMembers)}} {
		if bound.value < 0 {
			return nil, fmt.Errorf("mcphttp: Options.%s is %d; want 0 (the default) or more", bound.name, bound.value)
		}
	}
	m := &settings{
		n:         n,
		adv:       adv,
		opts:      opts,
		maxBody:   cmp.Or(opts.MaxBodyBytes, defaultMaxBodyBytes),
		maxAnswer: cmp.Or(opts.MaxAnswerBytes, defaultMaxAnswerBytes),
		maxBatch:  cmp.Or(opts.MaxBatchMembers, defaultMaxBatchMembers),
		// The handshake can only settle a revision before
		// statelessRevision, so only such a preferred revision can be
		// counter-offered at initialize.
		counter:  !opts.ByteExact && !isStateless(adv.Preferred),
		log:      cmp.Or(opts.ErrorLog, slog.Default()),
		sessions: newSessions(cmp.Or(opts.MaxSessions, defaultMaxSessions)),
		rec:      &exchange.Recorder{Pkg: "mcphttp", N: n, Sink: opts.Sink, Log: opts.ErrorLog},
	}
	return &Middleware{m}, nil
}

// Wrap returns next, an MCP streamable-HTTP handler (the go-sdk's
// mcp.StreamableHTTPHandler, mcp-go's server.StreamableHTTPServer, or any
// other), behind the negotiation. Its method value m.Wrap is a
// func(http.Handler) http.Handler, the shape routers chain (chi's r.Use).
// The legacy sessions are remembered by m, for every handler it wraps, so
// a router that calls Wrap for every request (echo.WrapMiddleware does)
// loses no pin. Each handler it returns is safe for concurrent use. Like http.Handle, it panics on a nil handler: that is a
// mistake in the host's wiring, not a request to answer.
func (m *Middleware) Wrap(next http.Handler) http.Handler {
	if next == nil {
		panic("mcphttp: Wrap of a nil handler")
	}
	if m.settings == nil {
		return exchange.Refusing(errUnmade) // the zero Middleware
	}
	return &handler{settings: m.settings, next: next}
}

// errUnmade is what a zero Middleware answers and Check returns.
var errUnmade = exchange.Unmade("mcphttp", "Middleware", "New")

// handler is one MCP handler behind the Middleware; Middleware.Wrap makes
// it.
type handler struct {
	*settings
	next http.Handler
}

// Version returns the revision the middleware settled for the request
// whose context ctx is: the wrapped handler serves that revision. It
// returns false when ctx did not come through a [Middleware].
func Version(ctx context.Context) (string, bool) {
	o, ok := exchange.Outcome(ctx, facets.ProtocolMCP)
	return o.Version, ok
}

// Outcome returns the whole accepted [negotiate.Outcome] of the request
// whose context ctx is (a downgrade shows as Kind Downgraded, a
// counter-offer as CounterOffered), and false when ctx did not come
// through a [Middleware].
func Outcome(ctx context.Context) (negotiate.Outcome, bool) {
	return exchange.Outcome(ctx, facets.ProtocolMCP)
}

// ServeHTTP checks and negotiates the request, then passes it to the
// wrapped handler with its body unchanged, or answers it with the refusal.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.opts.DisableLocalhostProtection {
		if what := rebound(r); what != "" {
			refuseRebound(w, what)
			return
		}
	}
	switch r.Method {
	case http.MethodPost, http.MethodGet, http.MethodDelete:
		subject, ok := h.caller(w, r)
		if !ok {
			return
		}
		rh, err := readHeaders(r.Header)
		if err != nil {
			h.refuseHeaders(w, r, subject, err)
			return
		}
		if r.Method == http.MethodPost {
			h.servePost(w, r, subject, &rh)
			return
		}
		// GET (a legacy session's event stream) or DELETE: no body to
		// check, only the revision the header names. The DELETE that ends
		// a legacy session is watched: the session is forgotten once its
		// server ended it.
		if r.Method == http.MethodDelete && rh.session != "" {
			w = &answerWatcher{ResponseWriter: w, seen: h.forgetSession(rh.session)}
		}
		h.serveDecided(w, r, subject, &rh, nil, "", nil, nil, 0)
	case http.MethodOptions:
		// A CORS preflight carries no MCP message and names no revision.
		h.next.ServeHTTP(w, r)
	default:
		// Streamable HTTP has POST, GET and DELETE; anything else is no MCP
		// request this middleware could vouch for.
		refuseMethod(w, r.Method)
	}
}

// refuseHeaders answers, and records, a request whose MCP headers could
// not be read (err). Like refuseMethod and refuseRebound, it is a function
// of its own, so that ServeHTTP's frame, under the record, holds none of
// what these refusals need.
func (h *handler) refuseHeaders(w http.ResponseWriter, r *http.Request, subject *negotiate.Subject, err error) {
	h.refuse(w, r, subject, "", headerRevision(r.Header), nil, http.StatusBadRequest, rpcerr.MCPHeaderMismatch(err.Error()))
}

// refuseMethod answers a request of an HTTP method MCP does not use.
func refuseMethod(w http.ResponseWriter, method string) {
	w.Header().Set("Allow", "GET, POST, DELETE, OPTIONS")
	exchange.WriteError(w, http.StatusMethodNotAllowed, nil, rpcerr.RPCError{Code: codeInvalidRequest, Message: "method " + method + " is not allowed on an MCP endpoint"})
}

// refuseRebound answers a request that DNS rebinding may have brought:
// what names the host that is not a loopback one.
func refuseRebound(w http.ResponseWriter, what string) {
	exchange.WriteError(w, http.StatusForbidden, nil, rpcerr.RPCError{Code: codeInvalidRequest, Message: "forbidden: " + what + " is not a loopback host, on a loopback address (DNS-rebinding protection)"})
}

// observe hands the exchange of r to Options.Observe, when set.
func (h *handler) observe(r *http.Request, method string, o *negotiate.Outcome, code int) {
	if h.opts.Observe != nil {
		h.opts.Observe(r.Context(), negotiate.Exchange{Method: method, Outcome: *o, Code: code})
	}
}

// JSON-RPC codes the middleware answers with besides the version errors.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeInternalError  = -32603
)

// caller returns r's Subject ([exchange.Subject]): under
// Options.StrictSubject, an invalid one refuses the request (ok false,
// answered).
func (h *handler) caller(w http.ResponseWriter, r *http.Request) (subject *negotiate.Subject, ok bool) {
	if h.opts.Subject != nil {
		subject = h.opts.Subject(r)
	}
	subject, invalid := exchange.Subject(r.Context(), subject, h.opts.StrictSubject, h.log)
	if invalid != "" {
		exchange.WriteError(w, http.StatusInternalServerError, nil, rpcerr.RPCError{Code: codeInternalError, Message: "invalid Subject: " + invalid})
		return nil, false
	}
	return subject, true
}

// rebound returns the header that names a host other than a loopback one
// on a request that arrived on a loopback address, or "" when there is
// none: the go-sdk's rule for the Host (a DNS-rebinding attacker's page
// reaches a local server under its own name), and the same for the Origin a
// browser sends, which the go-sdk leaves alone. The stricter reading: a
// local server has no business with a page of another origin.
func rebound(r *http.Request) string {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if local == nil || !isLoopback(local.String()) {
		return ""
	}
	if !isLoopback(r.Host) {
		return "Host " + strconv.Quote(r.Host)
	}
	for _, o := range r.Header.Values("Origin") {
		if u, err := url.Parse(o); err != nil || !isLoopback(u.Host) {
			return "Origin " + strconv.Quote(o)
		}
	}
	return ""
}

// isLoopback reports whether addr, a host with or without a port, is
// localhost or a loopback IP address, as the go-sdk decides it.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// Check asks server, the handler the host gives to [Middleware.Wrap],
// whether it serves the preferred revision the mcp facet advertises, the
// one every caller can be served and an anonymous one is told to use, and
// returns an error that names what the server answered and the fix when
// it does not. Call it when the host starts, before any client arrives: a
// server that cannot serve the preferred revision otherwise shows only as
// refusals on the record, one per client.
//
// The question is one request, in process, straight to server: a
// server/discover at the preferred revision when that is 2026-07-28 or
// later (the answer must list it), an initialize of it otherwise (the
// answer must name it; a session the server opens for it is ended with a
// DELETE). It carries the decision in its context, as the middleware
// would hand it over, but goes around the middleware, so nothing is
// decided, recorded or observed. The answer is read up to
// Options.MaxAnswerBytes.
//
// The known case is the go-sdk's streamable handler as it is by default,
// stateful, which answers server/discover with the handshake revisions
// only, behind a facet that prefers 2026-07-28: mount it with
// mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{Stateless: true}).
func (m *Middleware) Check(ctx context.Context, server http.Handler) error {
	if server == nil {
		return fmt.Errorf("mcphttp: Check of a nil handler")
	}
	if m.settings == nil {
		return errUnmade
	}
	preferred := m.adv.Preferred
	o, _ := m.n.Decide(nil, negotiate.InboundOffer(m.adv, "", preferred))
	ctx = exchange.WithOutcome(ctx, facets.ProtocolMCP, &o)
	method := methodDiscover
	if !isStateless(preferred) {
		method = methodInitialize
	}
	// ctx is not nil (WithOutcome would have panicked) and the URL is
	// fixed: the request is made.
	req, _ := askRevision(ctx, "http://127.0.0.1/", method, preferred, nil, map[string]any{"name": "wopneg-check", "version": "1"})
	w := exchange.NewCapture(m.maxAnswer)
	server.ServeHTTP(w, req)
	if id := w.Header().Get(headerSessionID); id != "" {
		end, _ := http.NewRequestWithContext(ctx, http.MethodDelete, "http://127.0.0.1/", http.NoBody)
		end.Header.Set(headerSessionID, id)
		end.Header.Set(headerProtocolVersion, preferred)
		server.ServeHTTP(exchange.NewCapture(0), end)
	}
	// Read as the middleware reads the server's answers, with the
	// engine's one reader.
	data, err := readAnswerBody(&http.Response{StatusCode: w.Status(), Header: w.Header(), Body: io.NopCloser(bytes.NewReader(w.Body))})
	var rep reply
	if err == nil {
		rep, err = readReply(data)
	}
	if err == nil && confirms(rep, method, preferred) {
		return nil
	}
	answered := "HTTP " + strconv.Itoa(w.Status()) + " with no JSON-RPC response"
	switch {
	case w.Over:
		answered = "more than " + strconv.FormatInt(m.maxAnswer, 10) + " bytes (Options.MaxAnswerBytes)"
	case err == nil && rep.isError:
		answered = "error " + strconv.FormatInt(rep.code, 10) + " " + strconv.Quote(rep.message)
	case err == nil && method == methodDiscover:
		answered = "supportedVersions [" + strings.Join(rep.versions, ", ") + "]"
	case err == nil:
		answered = "protocolVersion " + strconv.Quote(rep.protocolVersion)
	}
	fix := "list the facet's revisions in the server's supported versions (go-sdk: ServerOptions.SupportedProtocolVersions; mcp-go: server.WithStreamableHTTPProtocolVersions)"
	if method == methodDiscover {
		fix = "a go-sdk server serves " + statelessRevision + " and later only stateless: mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{Stateless: true}); otherwise " + fix
	}
	return fmt.Errorf("mcphttp: the server does not serve the preferred revision %s the mcp facet advertises: its %s at %s answered %s; %s", preferred, method, preferred, answered, fix)
}

// Handler is the whole wiring of a host, in one call: it compiles f,
// records every decision, takes the caller's Subject from caller (nil:
// every caller is anonymous), checks server with [Middleware.Check], and
// returns server behind the negotiation.
// Any failure is an error, so a host that cannot serve what f advertises
// does not start.
//
// f's refreshedAt, when the host wrote one, must lie in its refresh
// window (at most 90 days old, at most a day ahead, RFC 0175 §D.4) on the
// policy's clock, or the error names the fix; left empty, it is dated
// from the release list embedded in the module (see negotiate.Compile),
// and the host starts even when that list has aged past the window, with
// a warning on the error log that its discovery is non-conformant.
//
// opts, at most one, takes the host past the defaults: its Options are
// [New]'s (its own audit sink, Observe for OpenTelemetry, bounds, an error
// log), and its Policy the one f is compiled under (RequireAudit, who
// counts as authenticated, the clock). What it leaves out is the default:
// the zero policy (the reference rules), every decision recorded through
// slog.Default() at Info (events.NewSlogSink), and New's own defaults.
// The caller is given once: caller, or Options.Subject.
func Handler(f *facets.MCP, caller func(*http.Request) *negotiate.Subject, server http.Handler, opts ...HandlerOptions) (http.Handler, error) {
	var o HandlerOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	wiring := exchange.OneCall{Pkg: "mcphttp", Facets: facets.Set{MCP: f}, Protocol: facets.ProtocolMCP, Policy: o.Policy,
		Options: len(opts), Caller: caller, Subject: &o.Subject, Sink: &o.Sink}
	return exchange.Mount(wiring, server, func(n *negotiate.Negotiator) (*Middleware, error) { return New(n, o.Options) })
}

// HandlerOptions is what [Handler] takes past the defaults. The zero
// HandlerOptions is the defaults.
type HandlerOptions struct {
	// Options configures the middleware as for [New]; a nil Sink records
	// every decision through slog.Default() at Info.
	Options
	// Policy is the policy f is compiled under; the zero Policy is the
	// reference rules.
	Policy policy.Policy
}
