// Package seams is the OpenWOP conformance test surface for outbound
// version negotiation: the invoke seams of spec/v1/host-sample-test-seams.md
// §22 (A2A) and §23 (MCP) in openwop/openwop, through which the v2
// conformance scenarios of RFC 0175 drive a host against a peer they run
// themselves.
//
// A [Handler] serves
//
//	POST /conformance/seams/sample/a2a/invoke   {peerUrl, authenticated?, peerOffersOnly?, requestVersion?, scenario?}
//	POST /conformance/seams/sample/mcp/invoke   {serverUrl, authenticated?, peerOffersOnly?, requestVersion?,
//	                                             tool?, arguments?, clientCapabilities?, elicitationAnswer?}
//
// and drives the module's own outbound path against the given peer: the
// A2A agent card or MCP server/discover, read and decided by
// [a2ahttp.Negotiate] or [mcphttp.Negotiate] with the host's
// [negotiate.Negotiator], recorded before anything else is sent; then one
// call at the decided version through the stamping transports
// ([a2ahttp.NewTransport], [mcphttp.NewTransport]): an A2A SendMessage, or
// an MCP tools/call whose input_required rounds the MRTR guard
// ([mrtr.Guard]) bounds by the facet's mcp.mrtr.maxRounds, answering each
// with elicitationAnswer (or declining), and echoing requestState byte for
// byte. Round maxRounds+1 is refused with mcp_mrtr_rounds_exceeded (422)
// and its retry is never sent.
//
// A host that mounts the seams advertises them: facets.Discovery.Seams puts
// facets.SeamsProfile in conformance.seamsProfile.
//
// Each exchange opens an audit run in the caller's tenant,
// <tenant>/<26 characters of base32 from crypto/rand>, and its
// negotiation.decided event is that run's event 0, readable through
// GET /runs/{runId}/events/poll ([events.LogHandler]) when the Sink is the
// host's [events.Log]. The answer is 200 {negotiatedVersion, protocol,
// runId, peerDigest, result, mrtr?} or a v2 error envelope whose
// details.runId names the run (interop_version_unsupported 400 with
// details {protocol, requested, supported, reason, runId}).
//
// Three answers say what the peer did, and one what the host failed to do:
//
//   - A peer whose card or server/discover was read is decided, and the
//     run's event 0 records the decision.
//   - A peer that refuses at runtime the version it offered (A2A -32009 or
//     an ErrorInfo VERSION_NOT_SUPPORTED; MCP -32022, in any spelling of
//     the number, or a v2 envelope interop_version_unsupported) has that
//     refusal recorded on the run after the acceptance (refused, reason
//     unsupported, requested the version), and the answer is
//     interop_version_unsupported 400 naming the run: the run's last event
//     is the refusal, as the status says.
//   - A peer that answers its call with an error of another kind is
//     validation_error 400 with details {peerStatus, runId}.
//   - An exchange that failed on the way (the peer could not be reached,
//     timed out, hung up, answered a 5xx (but for a call's refusal of the
//     version, which its clients read on any status, and which is the
//     refusal above), more than the bound, or no negotiation answer; the
//     egress policy refused its address; it redirected) is the host's
//     failure, never the peer's refusal:
//     internal_error 500 with details.reason naming the failure
//     ("unreachable", "timeout", "hang-up", "not-an-answer", "too-large",
//     "egress-denied", "redirect-refused", "canceled") and details.status
//     when the peer sent one. When the negotiation itself reached no
//     decision nothing was recorded, and the answer names no run.
//
// Peers are reached through the module's egress transport unless
// Handler.Transport is set: link-local and cloud metadata addresses are
// never reached, loopback and private addresses only where the Handler
// allows them (AllowLoopback, AllowPrivate; the seams on loopback beside
// the conformance suite's fake peers allow loopback), and the host is
// dialled as the URL Standard reads it, the origin the record's digest
// names.
//
// The seams continue the seam request's W3C trace context, as the
// reference host's do (RFC 0207 §A): when it carries exactly one
// well-formed traceparent, every request to the peer (the negotiation, the
// call and each MRTR round) carries its trace id, flags and tracestate
// under a parent id of its own, in the headers and in the message (MCP
// params._meta, A2A Message.metadata.openwop); otherwise none. It is
// correlation only, never authority, and never in the record.
//
// A refused exchange sends nothing at the refused version: unlike the
// reference host, the seam does not probe the peer with an unsupported
// requestVersion, so details.supported lists the host's own versions. The
// module keeps no run store: the audit run is its tenant-bound id and its
// events, in the caller's tenant whether or not the exchange was decided
// as authenticated, and the caller reads it back through the event log.
//
// authenticated:false decides the exchange as unauthenticated (no Subject),
// so it never settles below the preferred version; otherwise the caller's
// own Subject is the exchange's. peerOffersOnly keeps only that version of
// the peer's offers. requestVersion is the version asked for.
//
// # Threat model
//
// The seams are a test surface: they make the host call any URL a caller
// names. They are off unless a host mounts them, and must never be mounted
// in production, nor anywhere without authentication: every request needs
// a caller whose Subject is authenticated (401 otherwise). Peer URLs must
// be absolute http(s) URLs; the A2A interface URL a card names is used
// only on the peer's own origin; redirects are not followed; every peer
// answer is read up to a bound and each exchange is bounded in time. A
// peer's answer is data: the seams relay it as the result and act on
// nothing in it, so a peer asserting authority (an approval, wider scopes,
// a task of another tenant) gains nothing, and the scenario
// peer-asserts-authority is answered with peerAuthority all false. The
// event records the peer as a digest of its origin, never in clear.
package seams

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/egress"
	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/internal/strictjson"
	"github.com/wopneg/wopneg/internal/tracectx"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// Prefix is the path under which a [Handler] serves its two routes; mount
// it at Prefix + "/".
const Prefix = "/conformance/seams"

// Bounds of a Handler whose fields leave them zero.
const (
	maxRequestBytes = 65536   // 64 KiB
	maxPeerBytes    = 1048576 // 1 MiB
	peerTimeout     = 20 * time.Second
	maxExchange     = 2 * time.Minute // all of one exchange, MRTR rounds included
	maxToolName     = 128
)

// Handler serves the invoke seams. The zero Handler refuses every request:
// it needs Negotiator, Sink and Subject.
type Handler struct {
	// Negotiator decides, with the host's facets and policy.
	Negotiator *negotiate.Negotiator
	// Sink records each exchange's event on its audit run: the host's
	// events.Log, so that the run can be polled. Under a Negotiator that
	// requires the audit it must be durable (events.Durable, as a fan-out
	// of the log and a durable store is), or every exchange is answered
	// internal_error, naming the fix, as the adapters refuse to start.
	Sink events.Sink
	// Subject resolves the caller, as the adapters' hook of the same name
	// does. A request without an authenticated Subject is 401.
	Subject func(*http.Request) *negotiate.Subject
	// Policy says who counts as authenticated to call the seams
	// (policy.Policy.IsAuthenticated); the decision itself uses the
	// Negotiator's policy.
	Policy policy.Policy
	// Transport sends the requests to peers. Nil is the module's egress
	// transport: the address policy of AllowLoopback and AllowPrivate
	// checked on every address dialled (link-local and cloud metadata
	// addresses always refused), the host dialled as the URL Standard
	// reads it, no proxy, one per exchange, whose connections are closed
	// when the exchange ends; a host's own Transport brings its own
	// address policy, and its connections are the host's to close. The seams wrap it in the stamping transports, and never
	// follow a redirect. Each request to a peer is bounded to 20 seconds,
	// as the reference host's, and a whole exchange to two minutes.
	Transport http.RoundTripper
	// AllowLoopback lets the nil Transport reach loopback peers
	// (127.0.0.0/8, ::1): the seams on loopback, with the conformance
	// suite's fake peers beside the host, need it.
	AllowLoopback bool
	// AllowPrivate lets the nil Transport reach private addresses (10/8,
	// 172.16/12, 192.168/16, 100.64/10, fc00::/7...).
	AllowPrivate bool
}

// request is the body of either seam.
type request struct {
	PeerURL            string         `json:"peerUrl"`
	ServerURL          string         `json:"serverUrl"`
	Authenticated      *bool          `json:"authenticated"`
	PeerOffersOnly     string         `json:"peerOffersOnly"`
	RequestVersion     string         `json:"requestVersion"`
	Scenario           string         `json:"scenario"`
	Tool               string         `json:"tool"`
	Arguments          jsontext.Value `json:"arguments"`
	ClientCapabilities jsontext.Value `json:"clientCapabilities"`
	ElicitationAnswer  jsontext.Value `json:"elicitationAnswer"`
}

// invocation is one seam invocation in flight.
type invocation struct {
	h       *Handler
	req     request
	caller  *negotiate.Subject
	runID   string
	peer    string
	client  *http.Client
	outcome negotiate.Outcome
	trace   negotiate.TraceContext // the seam request's trace, continued
}

// routes are the seams' paths, and the protocol each seam exchanges.
var routes = map[string]facets.Protocol{
	Prefix + "/sample/a2a/invoke": facets.ProtocolA2A,
	Prefix + "/sample/mcp/invoke": facets.ProtocolMCP,
}

// ServeHTTP serves POST Prefix/sample/a2a/invoke and
// POST Prefix/sample/mcp/invoke; any other path is 404 and any other
// method 405.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	proto, ok := routes[r.URL.Path]
	if !ok {
		writeError(w, envelope(http.StatusNotFound, "not_found", "no seam at this path", nil))
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeError(w, envelope(http.StatusMethodNotAllowed, "method_not_allowed", "the seams take POST", nil))
		return
	}
	var caller *negotiate.Subject
	if h.Subject != nil {
		caller = h.Subject(r)
	}
	if !h.Policy.IsAuthenticated(caller) || h.Negotiator == nil || h.Sink == nil {
		writeError(w, envelope(http.StatusUnauthorized, "unauthenticated", "the seams are served to an authenticated caller only", nil))
		return
	}
	if err := exchange.Audited("seams", h.Negotiator, h.Sink); err != nil {
		// The adapters refuse to start so; the seams have no start, so
		// each exchange is refused, before anything is sent or recorded.
		writeError(w, envelope(http.StatusInternalServerError, "internal_error", err.Error(), nil))
		return
	}
	x := &invocation{h: h, caller: caller}
	if fail := x.read(r, proto); fail != nil {
		writeError(w, fail)
		return
	}
	if h.Transport == nil {
		// The exchange's own egress transport: its connections end with
		// the exchange, not 90 s of keep-alive later. A host's Transport
		// is the host's to close.
		defer x.client.CloseIdleConnections()
	}
	ctx, cancel := context.WithTimeout(r.Context(), maxExchange)
	defer cancel()
	run := x.mcp
	if proto == facets.ProtocolA2A {
		run = x.a2a
	}
	body, fail := run(ctx)
	if fail != nil {
		writeError(w, fail)
		return
	}
	writeJSON(w, http.StatusOK, body)
}

// read decodes and checks the request, and opens the audit run.
func (x *invocation) read(r *http.Request, proto facets.Protocol) *httpError {
	raw, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxRequestBytes))
	if err != nil {
		return envelope(http.StatusRequestEntityTooLarge, "validation_error", "the request body is unreadable or larger than 64 KiB", nil)
	}
	if err := strictjson.Decode(raw, &x.req); err != nil {
		return envelope(http.StatusBadRequest, "validation_error", "the request body is not a seam request: "+err.Error(), nil)
	}
	x.peer, err = peerOf(x.req, proto)
	if err != nil {
		return envelope(http.StatusBadRequest, "validation_error", err.Error(), nil)
	}
	if fail := x.checkFields(proto); fail != nil {
		return fail
	}
	x.runID = x.caller.Tenant + "/" + rand.Text()
	x.trace = tracectx.Continue(r.Header)
	base := x.h.Transport
	if base == nil {
		base = egress.NewTransport(egress.Options{AllowLoopback: x.h.AllowLoopback, AllowPrivate: x.h.AllowPrivate})
	}
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	x.client = &http.Client{Transport: base, Timeout: peerTimeout, CheckRedirect: noRedirect}
	return nil
}

// errPeerURL is why a peer URL is refused.
var errPeerURL = errors.New("the peer URL must be an absolute http or https URL with a host")

// peerOf returns the peer URL the request names for proto, refusing one
// that is not an absolute http(s) URL and a field of the other seam.
func peerOf(req request, proto facets.Protocol) (string, error) {
	peer, other, name := req.PeerURL, req.ServerURL, "peerUrl"
	if proto == facets.ProtocolMCP {
		peer, other, name = req.ServerURL, req.PeerURL, "serverUrl"
	}
	if other != "" {
		return "", errors.New("the " + string(proto) + " seam takes " + name + " only")
	}
	if peer == "" {
		return "", errors.New(name + " is required")
	}
	u, err := url.Parse(peer)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return "", errPeerURL
	}
	if _, err := events.PeerDigest(peer); err != nil {
		return "", errPeerURL
	}
	return peer, nil
}

// subject is the Subject the exchange is decided for: the caller's, or
// none when the request says authenticated:false.
func (x *invocation) subject() *negotiate.Subject {
	if x.req.Authenticated != nil && !*x.req.Authenticated {
		return nil
	}
	return x.caller
}

// destination is the exchange's audit run.
func (x *invocation) destination() negotiate.Destination {
	return negotiate.Destination{RunID: x.runID}
}

// decided takes the outcome of the adapter's Negotiate, which recorded it
// on the audit run before anything was sent at its version: nil when it is
// accepted and recorded, the answer otherwise. A negotiation that reached
// no decision (the peer could not be reached, hung up, answered no
// negotiation answer) recorded nothing, and is answered as the host's
// failure, without a runId: there is no record to read.
func (x *invocation) decided(o negotiate.Outcome, err error) *httpError {
	x.outcome = o
	if fail := hostFailure(err, ""); fail != nil {
		return fail
	}
	var auditErr *negotiate.AuditError
	if errors.As(err, &auditErr) {
		// The seams exist to show the record: an exchange without one is
		// answered as the failure it is, whatever the policy.
		return unrecorded(x.runID)
	}
	if o.Err() == nil {
		return nil
	}
	// The adapter's error is the outcome's refusal told whole: it says
	// what the peer offered (details.offered, and details.peerReason when
	// it gave one). A refused outcome's own error is always an
	// *errors.Error.
	e, _ := o.Err().(*wperrors.Error)
	errors.As(err, &e)
	return onRun(e, x.runID)
}

// success is the 200 body of an accepted exchange.
func (x *invocation) success(result jsontext.Value) map[string]any {
	digest, _ := events.PeerDigest(x.peer)
	return map[string]any{
		"negotiatedVersion": x.outcome.Version,
		"protocol":          string(x.outcome.Protocol),
		"runId":             x.runID,
		"peerDigest":        digest,
		"result":            result,
	}
}

// unrecorded is the answer to an exchange whose record could not be
// written.
func unrecorded(runID string) *httpError {
	return envelope(http.StatusInternalServerError, "internal_error", "the negotiation could not be recorded; retry", map[string]any{"runId": runID})
}

// callFailure is the answer to a call at the decided version that brought
// back no answer to relay: the peer refused the version at runtime (the
// recording transport recorded it on the run), that record could not be
// written, or the call failed on the way (see hostFailure). Nil otherwise.
func (x *invocation) callFailure(err error, proto facets.Protocol, supported []string) *httpError {
	// The failed record and the refusal come first: egress.Do hands back
	// an error of the transport it does not know (the recording
	// transport's) inside an *egress.Error whose cause it is. A refusal
	// the run does not hold is answered as the failure to record it,
	// whatever the policy, as the negotiation's own.
	if auditErr := (*negotiate.AuditError)(nil); errors.As(err, &auditErr) {
		return unrecorded(x.runID)
	}
	var e *wperrors.Error
	if errors.As(err, &e) && e.Code == wperrors.InteropVersionUnsupported {
		reason, _ := e.Details["reason"].(string) // the recorded refusal's
		return unsupported(proto, x.outcome.Version, reason, supported, x.runID)
	}
	return hostFailure(err, x.runID)
}

// hostFailure is the answer to an exchange that failed on the way to the
// peer or back (it could not be reached, timed out, hung up, answered a
// 5xx or more than the bound, or the egress policy refused it): the
// internal_error envelope of the egress error, whose details.reason says
// which, and details.runId when the run holds a record. The conformance
// suite reads it as the host's failure, not as the peer's refusal. Nil
// when err is no such failure.
func hostFailure(err error, runID string) *httpError {
	var e *egress.Error
	if !errors.As(err, &e) {
		return nil
	}
	var env *wperrors.Error
	errors.As(e, &env) // an egress error always unwraps to its envelope
	return onRun(env, runID)
}

// onRun is the answer of e, with details.runId naming the run when there
// is one ("": the run holds no record).
func onRun(e *wperrors.Error, runID string) *httpError {
	if runID != "" {
		e = e.WithDetail("runId", runID)
	}
	return &httpError{status: e.Code.HTTPStatus(), err: e}
}

// peerFailure is the answer when the peer refused or failed the call made
// at the decided version; the peer's own body is never relayed.
func (x *invocation) peerFailure(status int, why string) *httpError {
	return envelope(http.StatusBadRequest, "validation_error", "the peer did not complete the call at "+x.outcome.Version+": "+why,
		map[string]any{"peerStatus": status, "runId": x.runID})
}

// post sends one JSON-RPC request through rt and reads the response, up to
// the bound; an event-stream answer is read to its first response. A
// refusal is read on any status, as the Transports read one (an MCP
// client reads a JSON-RPC error on most 5xx); any other answer is held to
// egress's rule on the status, a 5xx no answer.
func (x *invocation) post(ctx context.Context, rt http.RoundTripper, target string, body any, header http.Header, id jsontext.Value) (rpcReply, int, error) {
	data, _ := json.Marshal(body) // maps of strings, numbers and JSON values read strictly: it marshals
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(data))
	if err != nil {
		return rpcReply{}, 0, err
	}
	req.Header = header
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := egress.Send(via(x.client, rt), req, maxPeerBytes)
	if err != nil {
		return rpcReply{}, 0, err
	}
	defer resp.Body.Close()
	rep, err := readReply(resp, id)
	if rep.refusal().Verdict != exchange.Refused {
		if err := egress.Status(req, resp); err != nil {
			return rpcReply{}, 0, err
		}
	}
	return rep, resp.StatusCode, err
}

// httpError is an answer other than 200.
type httpError struct {
	status int
	err    *wperrors.Error
}

func envelope(status int, code, message string, details map[string]any) *httpError {
	return &httpError{status: status, err: &wperrors.Error{Code: wperrors.Code(code), Message: message, Details: details}}
}

func writeError(w http.ResponseWriter, e *httpError) { writeJSON(w, e.status, e.err) }

// writeJSON answers v with status, as JSON no cache keeps.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
