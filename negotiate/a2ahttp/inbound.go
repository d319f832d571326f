package a2ahttp

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/a2aversion"
	"github.com/wopneg/wopneg/internal/egress"
	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/internal/rpcerr"
	"github.com/wopneg/wopneg/negotiate"

	"github.com/go-json-experiment/json/jsontext"
)

// defaultCardPath is where A2A serves an agent card, for every version.
const defaultCardPath = "/.well-known/agent-card.json"

// defaultMaxBodyBytes bounds how much of a refused JSON-RPC request is read
// to find its id. An id after a larger body is answered as null.
const defaultMaxBodyBytes = 1 << 20

// Options configure a [Middleware]. Only Sink is required; the zero value
// of every other field is the reference behaviour.
type Options struct {
	// HTTPJSON says the wrapped handler serves the HTTP+JSON (REST)
	// binding: a refusal is HTTP 400 with a google.rpc.Status body, and the
	// version may also come as the ?A2A-Version= query parameter. False,
	// the zero value, is the JSON-RPC 2.0 binding, A2A 1.0's primary one: a
	// refusal is HTTP 200 with a JSON-RPC error.
	HTTPJSON bool

	// Subject returns the caller's Subject, as the host resolved it (from a
	// token, a client certificate, a session). Nil, or a nil result, means
	// no Subject: such a caller is unauthenticated and is never served
	// below the preferred version. A Subject that breaks the v2 Subject
	// schema is a fault of the host, not of the caller: it is logged to
	// ErrorLog as "wopneg: invalid Subject: " and every violation, and the
	// request is decided as unauthenticated, or refused under
	// StrictSubject.
	Subject func(*http.Request) *negotiate.Subject

	// StrictSubject refuses, before any negotiation and so with no event,
	// a request whose Subject is invalid, as an internal error naming the
	// violation: JSON-RPC -32603 on HTTP 200, or HTTP 500 with a
	// google.rpc.Status INTERNAL body. Without it such a request is
	// decided as unauthenticated, so that a mistake in the host's Subject
	// function never gains a caller anything but is never silent either.
	StrictSubject bool

	// Sink records the negotiation.decided event of every request, as a
	// durable host event. Required: a negotiation with nowhere to be
	// recorded is a configuration error, not a default.
	Sink events.Sink

	// Card, when set, serves the agent card: it is called with the decided
	// version (the preferred one when the request names none) and returns
	// the card's JSON. When nil, card requests reach the wrapped handler
	// like any other, with the decided version in their context.
	Card func(r *http.Request, version string) ([]byte, error)

	// CardPath is the path of the agent card; empty means
	// /.well-known/agent-card.json, where A2A serves it for every version.
	// GET and HEAD requests for it are card requests; their refusals are
	// always google.rpc.Status bodies, since they carry no JSON-RPC id.
	CardPath string

	// OmitErrorData leaves data out of the -32009 and -32603 JSON-RPC
	// errors, for clients that predate the A2A 1.0 error details and fail
	// on data they cannot read. Current clients (a2a-go v2, @a2a-js/sdk
	// 1.x) recognise VersionNotSupported by the code alone either way, but
	// learn the supported versions only from the data. It has no effect on
	// HTTP+JSON, whose clients classify an error by its details.
	OmitErrorData bool

	// MaxBodyBytes bounds how much of a refused JSON-RPC request body is
	// read to find its id; zero means 1 MiB. A body declared
	// larger is not read at all, and a declared length never sizes a
	// buffer. An accepted request's body is never read.
	MaxBodyBytes int64

	// MaxAnswerBytes bounds how much of the wrapped handler's answer is
	// held while the middleware reads whether it refused the version (see
	// "The record follows the server" in the package doc); zero means 64
	// KiB. An answer that has not shown it within the bound is replaced by
	// an internal error and recorded refused: an acceptance the middleware
	// did not see is never recorded.
	MaxAnswerBytes int64

	// ErrorLog receives what the middleware cannot answer to the caller: a
	// negotiation.decided event that was not recorded while the policy does
	// not require it, a Card function that failed, an invalid Subject. Nil
	// means slog.Default().
	ErrorLog *slog.Logger

	// Observe, when set, is called once for every request the middleware
	// decides, with the request's context, once its answer is settled:
	// the JSON-RPC method of the request, the outcome as answered (the
	// refusal the record says when the wrapped handler refused the
	// version, the audit's when a required record failed) and the
	// JSON-RPC code of the answer: -32009 for a version refusal and
	// -32603 for an internal error on the JSON-RPC binding, 0 for an
	// answer that carried none and on HTTP+JSON and the card, which have
	// no JSON-RPC codes. The method is read from the first 4 KiB of the
	// body, as the wrapped handler (or, for a refusal, the middleware)
	// read them, never more than they read: it is empty when a request
	// names none within them, and on HTTP+JSON. A request refused under
	// StrictSubject is decided by nothing, and not observed. It runs on
	// the request's path and must not block; wopnegotel's
	// Telemetry.Observe puts the exchange on the request's span.
	Observe func(context.Context, negotiate.Exchange)
}

// Middleware negotiates the A2A version of every request before the
// wrapped handler sees it. It is safe for concurrent use. Create one with
// [New]: the zero Middleware has nothing to decide with, so what it wraps
// is never reached, and every request is answered HTTP 500.
type Middleware struct {
	adv       facets.Advertised
	opts      Options
	cardPath  string
	maxBody   int64
	maxAnswer int
	// rec decides with the Negotiator, records, and logs to
	// Options.ErrorLog (slog.Default() when nil).
	rec exchange.Recorder
}

// New returns a Middleware that decides with n, which must advertise a2a.
//
// The refreshedAt of the facet, when the host wrote one, must lie in its
// refresh window (at most 90 days old, at most a day ahead, RFC 0175 §D.4)
// on the clock of n's policy, or the error names the fix. One that
// negotiate.Compile gave from the release list embedded in the module (the
// host left it empty) never stops a host: when that list has aged past the
// window, New warns on opts.ErrorLog that the discovery is non-conformant.
func New(n *negotiate.Negotiator, opts Options) (*Middleware, error) {
	adv, err := exchange.Starts("a2ahttp", n, opts.Sink, facets.ProtocolA2A, opts.ErrorLog)
	if err != nil {
		return nil, err
	}
	m := &Middleware{adv: adv, opts: opts, cardPath: cmp.Or(opts.CardPath, defaultCardPath),
		maxBody: cmp.Or(opts.MaxBodyBytes, defaultMaxBodyBytes),
		rec:     exchange.Recorder{Pkg: "a2ahttp", N: n, Sink: opts.Sink, Log: cmp.Or(opts.ErrorLog, slog.Default())}}
	if !strings.HasPrefix(m.cardPath, "/") {
		return nil, fmt.Errorf("a2ahttp: Options.CardPath %q does not start with /", opts.CardPath)
	}
	if opts.MaxBodyBytes < 0 {
		return nil, fmt.Errorf("a2ahttp: Options.MaxBodyBytes %d is negative", opts.MaxBodyBytes)
	}
	if opts.MaxAnswerBytes < 0 {
		return nil, fmt.Errorf("a2ahttp: Options.MaxAnswerBytes %d is negative", opts.MaxAnswerBytes)
	}
	m.maxAnswer = int(min(cmp.Or(opts.MaxAnswerBytes, defaultMaxAnswerBytes), 1<<40))
	return m, nil
}

// Wrap returns next behind the negotiation. Its method value m.Wrap is a
// func(http.Handler) http.Handler, the shape routers chain.
func (m *Middleware) Wrap(next http.Handler) http.Handler {
	if next == nil {
		panic("a2ahttp: Wrap(nil)")
	}
	if m.rec.N == nil {
		return exchange.Refusing(errUnmade) // the zero Middleware
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { m.serve(w, r, next) })
}

// errUnmade is what a zero Middleware answers and Check returns.
var errUnmade = exchange.Unmade("a2ahttp", "Middleware", "New")

func (m *Middleware) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	card := r.URL.Path == m.cardPath && (r.Method == http.MethodGet || r.Method == http.MethodHead)
	if card {
		// The card depends on the version asked for: a cache must not
		// hand one version's card to another version's client.
		w.Header().Add("Vary", headerName)
	}
	body := m.watchBody(r, card)
	subject, invalid := m.subject(r)
	if invalid != "" {
		w.Header()[canonicalHeader] = []string{m.adv.Preferred}
		m.refuseInternal(w, r, card, "the caller's Subject is invalid: "+invalid)
		return
	}
	req := readVersion(r.Header, r.URL.RawQuery, m.opts.HTTPJSON)
	if !card {
		// A2A §3.6.2: "Agents MUST interpret empty value as 0.3
		// version." Only the card keeps the v2 rule (the preferred one).
		req = req.Call()
	}

	ctx := r.Context()
	// A card from Options.Card is the middleware's own answer; every
	// request but the card's may act (a SendMessage runs the agent).
	cardServed := card && m.opts.Card != nil
	var outcome negotiate.Outcome
	var payload events.NegotiationDecided
	recorded := m.rec.Decided(ctx, negotiate.Destination{}, subject, exchange.Offer(m.adv, req.Raw()), cardServed, !card, &outcome, &payload)

	if outcome.Err() != nil {
		w.Header()[canonicalHeader] = []string{m.adv.Preferred}
		if outcome.Rule == negotiate.RuleAudit {
			m.refuseInternal(w, r, card, auditMessage)
			m.observe(r, body, &outcome, m.rpcCode(card, -32603))
			return
		}
		m.refuseVersion(w, r, card, &req, &outcome)
		m.observe(r, body, &outcome, m.rpcCode(card, rpcerr.RPCA2AVersionNotSupported))
		return
	}

	if cardServed {
		// Indexing with the canonical key skips canonicalizing headerName
		// on every request.
		w.Header()[canonicalHeader] = []string{outcome.Version}
		m.serveCard(w, r, outcome.Version)
		m.observe(r, body, &outcome, 0)
		return
	}
	a := watch(w, m, r)
	a.subject, a.payload, a.outcome = subject, payload, outcome
	a.card, a.recorded, a.body = card, recorded, body
	next.ServeHTTP(a, r.WithContext(exchange.WithOutcome(ctx, facets.ProtocolA2A, &outcome)))
	a.Finish()
	a.release()
}

// maxMethodPrefix bounds how much of a request body is kept, as it is
// read, to find its JSON-RPC method for Options.Observe.
const maxMethodPrefix = 4 << 10

// bodyPrefix is a request body that keeps the first bytes read from it.
type bodyPrefix struct {
	io.ReadCloser
	kept []byte
}

func (b *bodyPrefix) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if room := maxMethodPrefix - len(b.kept); room > 0 {
		b.kept = append(b.kept, p[:min(n, room)]...)
	}
	return n, err
}

// watchBody returns r's body, made to keep what is read of it, when
// Options.Observe wants the method of a JSON-RPC request (no card
// request, which has none); nil otherwise.
func (m *Middleware) watchBody(r *http.Request, card bool) *bodyPrefix {
	if m.opts.Observe == nil || card || m.opts.HTTPJSON || r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	b := &bodyPrefix{ReadCloser: r.Body}
	r.Body = b
	return b
}

// observe hands the exchange of r to Options.Observe, when set: the
// method is what body read shows of it.
func (m *Middleware) observe(r *http.Request, body *bodyPrefix, o *negotiate.Outcome, code int) {
	if m.opts.Observe == nil {
		return
	}
	x := negotiate.Exchange{Outcome: *o, Code: code}
	if body != nil {
		x.Method = sniffMethod(body.kept)
	}
	m.opts.Observe(r.Context(), x)
}

// rpcCode is code on the JSON-RPC binding, and 0 where the answer is a
// google.rpc.Status (HTTP+JSON, the card), which has no JSON-RPC code.
func (m *Middleware) rpcCode(card bool, code int) int {
	if card || m.opts.HTTPJSON {
		return 0
	}
	return code
}

// subject resolves the caller's Subject ([exchange.Subject]).
func (m *Middleware) subject(r *http.Request) (s *negotiate.Subject, invalid string) {
	if m.opts.Subject != nil {
		s = m.opts.Subject(r)
	}
	return exchange.Subject(r.Context(), s, m.opts.StrictSubject, m.rec.Log)
}

// serveCard answers a card request from Options.Card.
func (m *Middleware) serveCard(w http.ResponseWriter, r *http.Request, version string) {
	body, err := m.opts.Card(r, version)
	if err != nil {
		m.rec.Log.ErrorContext(r.Context(), "a2ahttp: the agent card could not be produced", slog.String("version", version), slog.Any("error", err))
		writeStatus(w, http.StatusInternalServerError, statusInternal, "the agent card could not be produced", errorInfo(reasonInternal))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// refuseVersion answers a request whose version was refused.
// What it lists as served is what this caller could be served: the
// decision's details.supported, never below the floor, and never below
// preferred for a caller who could not have it.
func (m *Middleware) refuseVersion(w http.ResponseWriter, r *http.Request, card bool, req *a2aversion.Requested, o *negotiate.Outcome) {
	servable, _ := o.Error.Details["supported"].([]string)
	msg := a2aversion.Message(req, m.adv, o, servable)
	if card || m.opts.HTTPJSON {
		info := errorInfo(rpcerr.A2AReasonVersionNotSupported)
		info.Metadata = map[string]string{"supportedVersions": strings.Join(servable, ",")}
		writeStatus(w, http.StatusBadRequest, statusFailedPrecondition, msg, info)
		return
	}
	e := rpcerr.A2AVersionNotSupported(req.Raw(), servable)
	e.Message = msg
	if m.opts.OmitErrorData {
		e = e.WithoutData()
	}
	exchange.WriteError(w, http.StatusOK, m.requestID(r), e)
}

// auditMessage is the message of a refusal for an event that could not
// be recorded.
const auditMessage = "the A2A version negotiation could not be recorded; retry"

// refuseInternal answers, as an internal error, a request the host cannot
// serve for a fault of its own: a negotiation that could not be recorded
// under a policy that requires it (the host answers nothing authoritative
// about an exchange it has no record of, and the caller may retry), or an
// invalid Subject under StrictSubject.
func (m *Middleware) refuseInternal(w http.ResponseWriter, r *http.Request, card bool, msg string) {
	var id jsontext.Value
	if !card && !m.opts.HTTPJSON {
		id = m.requestID(r)
	}
	m.answerInternal(w, card, msg, id)
}

// answerInternal answers an internal error; id is the JSON-RPC id, on that
// binding (nil is written null: an id that could not be read).
func (m *Middleware) answerInternal(w http.ResponseWriter, card bool, msg string, id jsontext.Value) {
	if card || m.opts.HTTPJSON {
		writeStatus(w, http.StatusInternalServerError, statusInternal, msg, errorInfo(reasonInternal))
		return
	}
	e := rpcerr.RPCError{Code: -32603, Message: msg} // JSON-RPC 2.0 Internal error
	if !m.opts.OmitErrorData {
		e.Data = []rpcerr.ErrorInfo{errorInfo(reasonInternal)}
	}
	exchange.WriteError(w, http.StatusOK, id, e)
}

// errorInfo is the A2A 1.0 google.rpc.ErrorInfo detail of a refusal.
func errorInfo(reason string) rpcerr.ErrorInfo {
	return rpcerr.ErrorInfo{Type: rpcerr.A2AErrorInfoType, Reason: reason, Domain: rpcerr.A2AErrorDomain}
}

// requestID reads the JSON-RPC id of a refused request, within the bound.
// Nothing is forwarded after a refusal, so the body is consumed here. A
// body declared larger than the bound is not read at all: its id would be
// null either way. The declared length never sizes a buffer; the body is
// read into one that grows as bytes arrive.
func (m *Middleware) requestID(r *http.Request) jsontext.Value {
	if r.ContentLength > m.maxBody || r.Body == nil {
		return nullID
	}
	body, err := egress.ReadBody(r.Body, m.maxBody)
	if err != nil {
		return nullID
	}
	return sniffID(body)
}

// Version returns the A2A version the middleware decided for the request
// whose context ctx is, and false when ctx did not come through a
// [Middleware]. The wrapped handler serves that version, and only that one:
// the response already says so in its A2A-Version header.
func Version(ctx context.Context) (string, bool) {
	o, ok := exchange.Outcome(ctx, facets.ProtocolA2A)
	return o.Version, ok
}

// Outcome returns the whole accepted [negotiate.Outcome] of the request
// whose context ctx is (a downgrade shows as Kind Downgraded), and false
// when ctx did not come through a [Middleware].
func Outcome(ctx context.Context) (negotiate.Outcome, bool) {
	return exchange.Outcome(ctx, facets.ProtocolA2A)
}
