package exchange_test

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/negotiate/seams"
	"github.com/wopneg/wopneg/policy"
)

// The guarantees of an exchange are the engine's, so one table runs each of
// them against every place an exchange happens: each row a guarantee, each
// place a column. A row names the places it does not apply to, and why.

// refusals are each protocol's refusal of the version on the wire.
var refusals = map[facets.Protocol]string{
	facets.ProtocolMCP: `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"unsupported","data":{"supported":["2025-11-25"],"requested":"2026-07-28"}}}`,
	facets.ProtocolA2A: `{"jsonrpc":"2.0","id":1,"error":{"code":-32009,"message":"version not supported"}}`,
}

// besideResult are each protocol's refusal beside a result, which a client
// that takes the error of a response holding both reads (a2a-go's does).
var besideResult = map[facets.Protocol]string{
	facets.ProtocolMCP: `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":-32022,"message":"unsupported"}}`,
	facets.ProtocolA2A: `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":-32009,"message":"version not supported"}}`,
}

// successes are each protocol's answers that serve the version.
var successes = map[facets.Protocol]string{
	facets.ProtocolMCP: `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
	facets.ProtocolA2A: `{"jsonrpc":"2.0","id":1,"result":{}}`,
}

// belowFloor are each protocol's refusal of the version listing only
// versions below the floor of placesNegotiator.
var belowFloor = map[facets.Protocol]string{
	facets.ProtocolMCP: `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"unsupported","data":{"supported":["2024-11-05"],"requested":"2026-07-28"}}}`,
	facets.ProtocolA2A: `{"jsonrpc":"2.0","id":1,"error":{"code":-32009,"message":"version not supported","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED","domain":"a2a-protocol.org","metadata":{"supportedVersions":"0.2"}}]}}`,
}

// answer is how a server or peer writes its answer in a row.
type answer func(w http.ResponseWriter, proto facets.Protocol)

func plain(w http.ResponseWriter, proto facets.Protocol) { asIs(w, refusals[proto]) }

// asIs answers body as JSON, as it is.
func asIs(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, body)
}

// coded answers body compressed by zw, under the Content-Encoding coding.
func coded(w http.ResponseWriter, body, coding string, zw func(io.Writer) io.WriteCloser) {
	var b bytes.Buffer
	z := zw(&b)
	_, _ = io.WriteString(z, body)
	_ = z.Close()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Encoding", coding)
	_, _ = w.Write(b.Bytes())
}

// stream answers text, an event stream.
func stream(w http.ResponseWriter, text string) {
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, text)
}

// codings are the ways an answer reaches its reader that every client of
// the protocols reads alike: each content is read through each of them as
// it is read plain.
var codings = []struct {
	name  string
	write func(w http.ResponseWriter, body string)
}{
	{"plain", asIs},
	{"gzip-coded", func(w http.ResponseWriter, body string) {
		coded(w, body, "gzip", func(b io.Writer) io.WriteCloser { return gzip.NewWriter(b) })
	}},
	{"deflate-coded", func(w http.ResponseWriter, body string) {
		coded(w, body, "deflate", func(b io.Writer) io.WriteCloser { return zlib.NewWriter(b) })
	}},
	{"after a byte-order mark", func(w http.ResponseWriter, body string) { asIs(w, "\xEF\xBB\xBF"+body) }},
	{"gzip-coded after a byte-order mark, the coding named in capitals", func(w http.ResponseWriter, body string) {
		coded(w, "\xEF\xBB\xBF"+body, "GZIP", func(b io.Writer) io.WriteCloser { return gzip.NewWriter(b) })
	}},
	{"without a Content-Type", func(w http.ResponseWriter, body string) {
		w.Header()["Content-Type"] = nil
		_, _ = io.WriteString(w, body)
	}},
	{"as text/plain on HTTP 400", func(w http.ResponseWriter, body string) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, body)
	}},
	{"in a batch split after '['", func(w http.ResponseWriter, body string) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "[")
		w.(http.Flusher).Flush()
		_, _ = io.WriteString(w, body+"]")
	}},
	{"as an event stream", func(w http.ResponseWriter, body string) { stream(w, "event: message\ndata: "+body+"\n\n") }},
	{"as an event stream after an event that is no message", func(w http.ResponseWriter, body string) {
		stream(w, "data: {\"note\":1}\n\ndata: "+body+"\n\n")
	}},
	// The event-stream readers of both SDKs' clients (go-sdk v1.8.0's
	// scanEvents, a2a-go v2.4.0's ParseDataStream) take the event the
	// answer's end cuts off, its last line unterminated, as a whole one.
	{"as an event stream whose end closes its last event", func(w http.ResponseWriter, body string) { stream(w, "event: message\ndata: "+body) }},
	// The MCP clients take a call's response from the first message event
	// (no event type, or message) answering its id, and nothing else.
	{"as an event stream after a response to another request", func(w http.ResponseWriter, body string) {
		stream(w, "data: {\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}\n\ndata: "+body+"\n\n")
	}},
	{"as an event stream after an event of another type holding the response", func(w http.ResponseWriter, body string) {
		stream(w, "event: other\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\ndata: "+body+"\n\n")
	}},
	{"as an event stream in pieces, after a notification", func(w http.ResponseWriter, body string) {
		stream(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\ndata: "+body[:len(body)/2])
		w.(http.Flusher).Flush()
		_, _ = io.WriteString(w, body[len(body)/2:]+"\n\n")
	}},
}

// codingSkips are the places whose clients read a coding otherwise than
// the guarantee's rows say.
var codingSkips = map[string]map[string]string{
	"as an event stream after a response to another request": {"A2A inbound": a2aStream, "A2A Connect": a2aStream, "A2A seam": a2aStream},
}

// a2aStream is why a stream's first response settles an A2A exchange.
const a2aStream = "a2a-go's stream reader (parseSSEStream) takes every event's data as the call's next answer, whatever its id: the first response is the one it serves"

// contents are what an answer says, each with what it must leave on the
// record at a place, inbound or outbound.
var contents = []struct {
	name   string
	bodies map[facets.Protocol]string
	// refused is the reason the answer is recorded refused for, inbound
	// and outbound; "" when it serves the version.
	inbound, outbound string
}{
	{"a refusal", refusals, events.ReasonUnsupported, events.ReasonUnsupported},
	// The server behind the middleware is the host's own: what it lists
	// is no offer of a peer's.
	{"a refusal listing only versions below the floor", belowFloor, events.ReasonUnsupported, events.ReasonBelowFloor},
	{"a refusal in another spelling", otherSpelling, events.ReasonUnsupported, events.ReasonUnsupported},
	{"a refusal beside a result", besideResult, events.ReasonUnsupported, events.ReasonUnsupported},
	{"a refusal listing only versions below the floor, cut short at its end", cutAtEnd(belowFloor), events.ReasonUnsupported, events.ReasonBelowFloor},
	{"a success", successes, "", ""},
}

// otherSpelling are each protocol's refusal as a lenient client reads it
// too: MCP's code in another spelling of the number, A2A's by the reason
// of its ErrorInfo alone, members named in another case.
var otherSpelling = map[facets.Protocol]string{
	facets.ProtocolMCP: `{"jsonrpc":"2.0","id":1,"ERROR":{"Code":-3.2022e4,"message":"unsupported"}}`,
	facets.ProtocolA2A: `{"jsonrpc":"2.0","id":1,"Error":{"code":-32600,"message":"no","DATA":[{"Reason":"VERSION_NOT_SUPPORTED"}]}}`,
}

// cutAtEnd is bodies, each without its last byte: no JSON a strict reader
// takes, and a refusal a client that reads as it goes reads all the same.
func cutAtEnd(bodies map[facets.Protocol]string) map[facets.Protocol]string {
	cut := map[facets.Protocol]string{}
	for p, b := range bodies {
		cut[p] = b[:len(b)-1]
	}
	return cut
}

// succeed serves the version.
func succeed(w http.ResponseWriter, proto facets.Protocol) { asIs(w, successes[proto]) }

// cutShort starts the refusal and hangs up before its end.
func cutShort(w http.ResponseWriter, proto facets.Protocol) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", "1000")
	_, _ = io.WriteString(w, refusals[proto][:20])
}

// resultThenRefusal answers an event stream whose first response serves
// the version and whose next refuses it, in pieces.
func resultThenRefusal(w http.ResponseWriter, proto facets.Protocol) {
	stream(w, "data: "+successes[proto]+"\n\n")
	w.(http.Flusher).Flush()
	refusal := "data: " + refusals[proto] + "\n\n"
	_, _ = io.WriteString(w, refusal[:20])
	w.(http.Flusher).Flush()
	_, _ = io.WriteString(w, refusal[20:])
}

// mcpCallEnds is why a stream's first response settles an MCP call.
const mcpCallEnds = "an MCP client ends its call at the response to it (go-sdk's processStream): what the stream carries after it answers nothing of the call"

// trial is one exchange at one place, as a row sets it up.
type trial struct {
	policy policy.Policy
	answer answer
	// hangUp: the client hangs up while the host resolves its Subject.
	hangUp bool
	// callerEnds: the caller's context ends as soon as the answer arrives.
	callerEnds bool
	// redirect: the peer redirects the stamped call to another origin,
	// and the host's own http.Client follows it.
	redirect bool
	// storeDown: the sink fails every record.
	storeDown bool
}

// result is what a trial left: the outcomes recorded, in order, how many
// calls reached the other origin, and whether the caller's call failed.
type result struct {
	recorded  []string
	reasons   []string // the reasons of the refusals recorded, in order
	elsewhere int64
	// failed: the caller got no answer the server or peer served: an error
	// from the Transport, an inbound answer other than the handler's, a
	// seam's 5xx.
	failed bool
}

// place runs a trial at one place an exchange happens.
type place struct {
	name     string
	proto    facets.Protocol
	outbound bool // a Connect Transport's, whose answers are a peer's
	// settled: the acceptance is on the record before the exchange, made
	// when Connect or a legacy session's initialize settled the version.
	settled bool
	run     func(t *testing.T, tr trial) result
}

func placesNegotiator(t *testing.T, p policy.Policy) *negotiate.Negotiator {
	t.Helper()
	n, err := negotiate.Compile(facets.Set{
		MCP: &facets.MCP{Revisions: []string{"2025-11-25", "2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-11-25"},
		A2A: &facets.A2A{Versions: []string{"0.3", "1.0"}, PreferredVersion: "1.0", MinimumVersion: "0.3"},
	}, p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// outcomes returns the outcomes rec holds, in order, and the reasons of
// its refusals.
func outcomes(rec *negotiatetest.Recorder) (out, reasons []string) {
	for _, e := range rec.Events() {
		out = append(out, e.Payload.Outcome)
		if e.Payload.Outcome == "refused" {
			reasons = append(reasons, e.Payload.Reason)
		}
	}
	return out, reasons
}

// inbound is the place of a wrapped server: wrap puts the middleware of
// n and rec around next.
func inbound(name string, proto facets.Protocol, wrap func(n *negotiate.Negotiator, rec *negotiatetest.Recorder, subject func(*http.Request) *negotiate.Subject, next http.Handler) (http.Handler, error), request func() *http.Request) place {
	return place{name, proto, false, false, func(t *testing.T, tr trial) result {
		rec := &negotiatetest.Recorder{}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		subject := func(*http.Request) *negotiate.Subject {
			if tr.hangUp {
				cancel() // the client is gone before the decision is recorded
			}
			return placesSubject
		}
		var served tee
		h, err := wrap(placesNegotiator(t, tr.policy), rec, subject, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			served.ResponseWriter = w
			tr.answer(&served, proto)
		}))
		if err != nil {
			t.Fatal(err)
		}
		if tr.storeDown {
			rec.Fail(errStoreDown)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, request().WithContext(ctx))
		recorded, reasons := outcomes(rec)
		return result{recorded: recorded, reasons: reasons, failed: w.Body.String() != served.wrote.String()}
	}}
}

// outbound is the place of a Connect Transport: connect negotiates with
// the peer at url and returns its Transport.
func outbound(name string, proto facets.Protocol, offer func(w http.ResponseWriter, r *http.Request) bool, connect func(n *negotiate.Negotiator, rec *negotiatetest.Recorder, url string, client *http.Client) (http.RoundTripper, error)) place {
	return place{name, proto, true, true, func(t *testing.T, tr trial) result {
		p := startPeer(t, tr, proto, offer)
		rec := &negotiatetest.Recorder{}
		if tr.storeDown {
			rec.Fail(errStoreDown)
		}
		rt, err := connect(placesNegotiator(t, tr.policy), rec, p.url, &http.Client{Transport: p.base})
		if err != nil && tr.storeDown {
			return result{failed: true} // no Transport to serve a call
		}
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequestWithContext(p.ctx, http.MethodPost, p.url+"/rpc", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := (&http.Client{Transport: rt}).Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body) // as a2a-go reads a stream, to its end
			resp.Body.Close()
		}
		recorded, reasons := outcomes(rec)
		return result{recorded: recorded, reasons: reasons, elsewhere: p.elsewhere.Load(), failed: err != nil}
	}}
}

// seam is the place of a conformance seam: the seams of a host whose
// caller asks, with ask naming the peer at url, for an exchange with the
// peer, whose offer answers the negotiation's requests.
func seam(name string, proto facets.Protocol, ask func(url string) map[string]any, offer func(w http.ResponseWriter, r *http.Request) bool) place {
	return place{name, proto, true, true, func(t *testing.T, tr trial) result {
		p := startPeer(t, tr, proto, offer)
		rec := &negotiatetest.Recorder{}
		if tr.storeDown {
			rec.Fail(errStoreDown)
		}
		h := &seams.Handler{Negotiator: placesNegotiator(t, tr.policy), Sink: rec, Transport: p.base,
			Subject: func(*http.Request) *negotiate.Subject {
				if tr.hangUp {
					p.cancel() // the caller is gone before anything is decided
				}
				return placesSubject
			}}
		body, _ := json.Marshal(ask(p.url))
		req := httptest.NewRequestWithContext(p.ctx, http.MethodPost, seams.Prefix+"/sample/"+string(proto)+"/invoke", bytes.NewReader(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		recorded, reasons := outcomes(rec)
		// A seam fails the call as the host's when it is 5xx; a 4xx says the
		// peer's answer was no call the seam can complete (a batch, a 400).
		return result{recorded: recorded, reasons: reasons, elsewhere: p.elsewhere.Load(), failed: w.Code >= http.StatusInternalServerError}
	}}
}

// peerOf is the peer of an outbound trial: its offer answers the
// negotiation's requests and the trial's answer its calls, or, with
// tr.redirect, a redirect to another origin, whose calls elsewhere
// counts. base is the host's own transport to it, which ends the caller's
// context ctx as the trial says.
type peerOf struct {
	url       string
	elsewhere *atomic.Int64
	ctx       context.Context
	cancel    context.CancelFunc
	base      *endsCaller
}

func startPeer(t *testing.T, tr trial, proto facets.Protocol, offer func(w http.ResponseWriter, r *http.Request) bool) peerOf {
	p := peerOf{elsewhere: new(atomic.Int64)}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		p.elsewhere.Add(1)
		tr.answer(w, proto)
	}))
	t.Cleanup(other.Close)
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case offer(w, r):
		case tr.redirect:
			http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
		default:
			tr.answer(w, proto)
		}
	}))
	t.Cleanup(peer.Close)
	p.url = peer.URL
	p.ctx, p.cancel = context.WithCancel(context.Background())
	t.Cleanup(p.cancel)
	p.base = &endsCaller{RoundTripper: http.DefaultTransport, cancel: p.cancel, armed: tr.callerEnds}
	return p
}

// tee is the wrapped server's ResponseWriter, keeping what it wrote.
type tee struct {
	http.ResponseWriter
	wrote bytes.Buffer
}

func (t *tee) Write(p []byte) (int, error) {
	t.wrote.Write(p)
	return t.ResponseWriter.Write(p)
}

func (t *tee) Flush() { t.ResponseWriter.(http.Flusher).Flush() }

// errStoreDown is the failure of a sink whose store is down.
var errStoreDown = errors.New("the event store is down")

// placesSubject is the authenticated caller of the places that resolve
// one.
var placesSubject = &negotiate.Subject{Issuer: "https://idp.example", SubjectID: "u1", Kind: "user", Tenant: "acme", Lane: "oidc"}

// endsCaller ends the caller's context as soon as the head of the answer
// to its call has come, when armed: a call, not a request of the
// negotiation (a card's GET, a server/discover).
type endsCaller struct {
	http.RoundTripper
	cancel context.CancelFunc
	armed  bool
}

func (e *endsCaller) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := e.RoundTripper.RoundTrip(r)
	if e.armed && r.Method == http.MethodPost && r.Header.Get("Mcp-Method") != "server/discover" {
		e.cancel()
	}
	return resp, err
}

func places() []place {
	mcpPost := func() *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("MCP-Protocol-Version", "2026-07-28")
		r.Header.Set("Mcp-Method", "tools/list")
		return r
	}
	onSession := func() *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("MCP-Protocol-Version", "2025-11-25")
		r.Header.Set("Mcp-Session-Id", "s")
		return r
	}
	a2aPost := func() *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/a2a", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("A2A-Version", "1.0")
		return r
	}
	return []place{
		inbound("MCP inbound", facets.ProtocolMCP, func(n *negotiate.Negotiator, rec *negotiatetest.Recorder, subject func(*http.Request) *negotiate.Subject, next http.Handler) (http.Handler, error) {
			m, err := mcphttp.New(n, mcphttp.Options{Sink: rec, Subject: subject})
			if err != nil {
				return nil, err
			}
			return m.Wrap(next), nil
		}, mcpPost),
		session(inbound(mcpOnSession, facets.ProtocolMCP, func(n *negotiate.Negotiator, rec *negotiatetest.Recorder, subject func(*http.Request) *negotiate.Subject, next http.Handler) (http.Handler, error) {
			m, err := mcphttp.New(n, mcphttp.Options{Sink: rec, Subject: subject})
			if err != nil {
				return nil, err
			}
			h := m.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Mcp-Session-Id", "s")
				if r.Header.Get("Mcp-Session-Id") != "" {
					next.ServeHTTP(w, r)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`)
			}))
			initialize := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`))
			initialize.Header.Set("Content-Type", "application/json")
			h.ServeHTTP(httptest.NewRecorder(), initialize)
			return h, nil
		}, onSession)),
		inbound("A2A inbound", facets.ProtocolA2A, func(n *negotiate.Negotiator, rec *negotiatetest.Recorder, subject func(*http.Request) *negotiate.Subject, next http.Handler) (http.Handler, error) {
			m, err := a2ahttp.New(n, a2ahttp.Options{Sink: rec, Subject: subject})
			if err != nil {
				return nil, err
			}
			return m.Wrap(next), nil
		}, a2aPost),
		outbound("MCP Connect", facets.ProtocolMCP, discovered, func(n *negotiate.Negotiator, rec *negotiatetest.Recorder, url string, client *http.Client) (http.RoundTripper, error) {
			tr, _, err := mcphttp.Connect(context.Background(), n, url, mcphttp.OutboundOptions{Sink: rec, Client: client})
			return tr, err
		}),
		outbound("A2A Connect", facets.ProtocolA2A, carded, func(n *negotiate.Negotiator, rec *negotiatetest.Recorder, url string, client *http.Client) (http.RoundTripper, error) {
			tr, _, err := a2ahttp.Connect(context.Background(), n, url, a2ahttp.OutboundOptions{Sink: rec, Client: client})
			return tr, err
		}),
		seam("MCP seam", facets.ProtocolMCP, func(url string) map[string]any { return map[string]any{"serverUrl": url, "tool": "echo"} }, discovered),
		seam("A2A seam", facets.ProtocolA2A, func(url string) map[string]any { return map[string]any{"peerUrl": url} }, carded),
	}
}

// mcpOnSession is the place of a request on a legacy MCP session, which
// an initialize opened before the exchange: served at the revision the
// session settled, under the acceptance recorded then.
const mcpOnSession = "MCP inbound, on a legacy session"

// session is p, a place whose exchange runs under an acceptance recorded
// before it.
func session(p place) place {
	p.settled = true
	return p
}

// discovered answers an MCP server/discover with the revision the places
// ask for.
func discovered(w http.ResponseWriter, r *http.Request) bool {
	if b, _ := io.ReadAll(r.Body); !strings.Contains(string(b), `"server/discover"`) {
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"]}}`)
	return true
}

// carded answers a GET with an A2A card offering the version the places
// ask for, at the peer itself.
func carded(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	_, _ = io.WriteString(w, `{"name":"peer","supportedInterfaces":[{"url":"http://`+r.Host+`/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`)
	return true
}

// seamNotBegun is why a seam whose caller hangs up while its Subject
// resolves records nothing: its exchange with the peer has not begun, and
// the decision needs the peer's offer, so none is reached; the exchange is
// not begun for a caller who is gone.
const seamNotBegun = "the decision needs the peer's offer, not yet asked for: no decision is reached"

// TestEveryPlaceKeepsEveryGuarantee is the table: every guarantee of the
// engine, at every place an exchange happens. Its first rows are what an
// answer says (contents), each written in every coding its clients read
// alike, with the audit required and without: the record is the same
// whatever the coding, a refusal recorded for the reason of the place
// (inbound, the server's own; outbound, by what the peer lists) and,
// under RequireAudit or after Connect's acceptance, in a second event.
func TestEveryPlaceKeepsEveryGuarantee(t *testing.T) {
	type row struct {
		guarantee string
		trial     trial
		holds     func(p place, r result) bool
		// skip names the places the guarantee does not concern.
		skip map[string]string
	}
	var rows []row
	for _, audit := range []bool{false, true} {
		for _, c := range contents {
			for _, coding := range codings {
				write := coding.write
				rows = append(rows, row{fmt.Sprintf("%s, %s, audit required %t, is recorded as a plain one", c.name, coding.name, audit),
					trial{policy: policy.Policy{RequireAudit: audit}, answer: func(w http.ResponseWriter, proto facets.Protocol) { write(w, c.bodies[proto]) }},
					func(p place, r result) bool {
						reason := c.inbound
						if p.outbound {
							reason = c.outbound
						}
						switch {
						case reason == "":
							return slices.Equal(r.recorded, []string{"accepted"}) && !r.failed
						case audit || p.settled:
							return slices.Equal(r.recorded, []string{"accepted", "refused"}) && slices.Equal(r.reasons, []string{reason})
						}
						return slices.Equal(r.recorded, []string{"refused"}) && slices.Equal(r.reasons, []string{reason})
					}, codingSkips[coding.name]})
			}
		}
	}
	refusedAfterAccepted := func(_ place, r result) bool {
		return len(r.recorded) == 2 && r.recorded[0] == "accepted" && r.recorded[1] == "refused"
	}
	endsRefused := func(_ place, r result) bool {
		return len(r.recorded) > 0 && r.recorded[len(r.recorded)-1] == "refused" && r.elsewhere == 0
	}
	for _, audit := range []bool{false, true} {
		rows = append(rows, row{fmt.Sprintf("a refusal after the first result of a stream, audit required %t, is recorded in a second event", audit),
			trial{policy: policy.Policy{RequireAudit: audit}, answer: resultThenRefusal}, refusedAfterAccepted,
			map[string]string{"MCP inbound": mcpCallEnds, mcpOnSession: mcpCallEnds, "MCP Connect": mcpCallEnds, "MCP seam": mcpCallEnds,
				"A2A seam": "the seam takes the stream's first response as its call's reply and reads no further: nothing after it reaches the host"}})
	}
	for _, audit := range []bool{false, true} {
		rows = append(rows, row{fmt.Sprintf("a refusal on HTTP 501, which an MCP client reads, audit required %t, is recorded", audit),
			trial{policy: policy.Policy{RequireAudit: audit}, answer: func(w http.ResponseWriter, proto facets.Protocol) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusNotImplemented)
				_, _ = io.WriteString(w, refusals[proto])
			}},
			func(p place, r result) bool {
				if audit || p.settled {
					return slices.Equal(r.recorded, []string{"accepted", "refused"})
				}
				return slices.Equal(r.recorded, []string{"refused"})
			}, nil})
	}
	rows = append(rows, []row{
		{"under RequireAudit an exchange whose record cannot be written is not served", trial{policy: policy.Policy{RequireAudit: true}, answer: succeed, storeDown: true},
			func(_ place, r result) bool { return r.failed },
			map[string]string{mcpOnSession: "the session's acceptance was recorded at its initialize, before the store went down: nothing of the request is left to record"}},
		{"a client that hangs up during Subject resolution leaves its record", trial{answer: plain, hangUp: true}, endsRefused,
			map[string]string{"MCP Connect": "the caller resolves no Subject per call", "A2A Connect": "the caller resolves no Subject per call",
				"MCP seam": seamNotBegun, "A2A seam": seamNotBegun}},
		{"a caller whose context ends after the answer leaves the refusal's record", trial{answer: plain, callerEnds: true}, refusedAfterAccepted,
			map[string]string{"MCP inbound": "outbound only", mcpOnSession: "outbound only", "A2A inbound": "outbound only"}},
		{"a redirect to another origin through the host's own Client sends nothing there", trial{answer: plain, redirect: true},
			func(_ place, r result) bool {
				return r.elsewhere == 0 && len(r.recorded) == 1 && r.recorded[0] == "accepted"
			},
			map[string]string{"MCP inbound": "outbound only", mcpOnSession: "outbound only", "A2A inbound": "outbound only"}},
		{"an answer cut short before it showed anything fails the call, recorded as nothing more", trial{answer: cutShort},
			func(_ place, r result) bool { return r.failed && len(r.recorded) == 1 && r.recorded[0] == "accepted" },
			map[string]string{"MCP inbound": "outbound only: a server's answer reaches the middleware whole", mcpOnSession: "outbound only: a server's answer reaches the middleware whole", "A2A inbound": "outbound only: a server's answer reaches the middleware whole"}},
	}...)
	for _, row := range rows {
		for _, p := range places() {
			t.Run(row.guarantee+"/"+p.name, func(t *testing.T) {
				if why, ok := row.skip[p.name]; ok {
					t.Skip(why)
				}
				if r := p.run(t, row.trial); !row.holds(p, r) {
					t.Errorf("recorded %v (refusals %v), %d calls to the other origin", r.recorded, r.reasons, r.elsewhere)
				}
			})
		}
	}
}

// noLine reports a negotiation that reached no decision and logged
// nothing: the line is the operator's only trace of it.
func noLine(err error, lines *bytes.Buffer) bool {
	return strings.Contains(err.Error(), "reached no decision") && lines.Len() == 0
}

// TestNoLineOrErrorNamesThePeersPath: a peer's URL path and query, where
// hosted servers put their keys, appear in no log line and no error of any
// outbound place, whatever failed: the peer could not be reached, answered
// 5xx, redirected to another origin, answered too much or garbage.
func TestNoLineOrErrorNamesThePeersPath(t *testing.T) {
	const secret = "sk-secret-4242"
	failures := map[string]http.HandlerFunc{
		"5xx": func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) },
		"redirect": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://127.0.0.2:9/"+secret+"?api_key="+secret, http.StatusTemporaryRedirect)
		},
		"too large": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"pad":"`+strings.Repeat("x", 8<<20)+`"}`)
		},
		"garbage": func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "<html>"+secret) },
	}
	negotiators := map[string]func(n *negotiate.Negotiator, url string, log *slog.Logger) error{
		"MCP": func(n *negotiate.Negotiator, url string, log *slog.Logger) error {
			_, _, err := mcphttp.Connect(context.Background(), n, url, mcphttp.OutboundOptions{Sink: &negotiatetest.Recorder{}, AllowLoopback: true, ErrorLog: log})
			return err
		},
		"A2A": func(n *negotiate.Negotiator, url string, log *slog.Logger) error {
			_, _, err := a2ahttp.Connect(context.Background(), n, url, a2ahttp.OutboundOptions{Sink: &negotiatetest.Recorder{}, AllowLoopback: true, ErrorLog: log})
			return err
		},
	}
	for name, failure := range failures {
		srv := httptest.NewServer(failure)
		for proto, connect := range negotiators {
			var lines bytes.Buffer
			err := connect(placesNegotiator(t, policy.Policy{}), srv.URL+"/mcp/"+secret+"/sse?api_key="+secret, slog.New(slog.NewTextHandler(&lines, nil)))
			if err == nil || strings.Contains(err.Error(), secret) || strings.Contains(lines.String(), secret) || noLine(err, &lines) {
				t.Errorf("%s, %s: error %v\nlog %s", proto, name, err, lines.String())
			}
		}
		srv.Close()
	}
	// A peer that cannot be reached at all.
	for proto, connect := range negotiators {
		var lines bytes.Buffer
		err := connect(placesNegotiator(t, policy.Policy{}), "http://127.0.0.1:9/mcp/"+secret+"?api_key="+secret, slog.New(slog.NewTextHandler(&lines, nil)))
		if err == nil || strings.Contains(err.Error(), secret) || strings.Contains(lines.String(), secret) || noLine(err, &lines) {
			t.Errorf("%s, unreachable: error %v\nlog %s", proto, err, lines.String())
		}
	}
}

// TestNoLineOrErrorCarriesThePeersText: of what a peer writes in its
// answer, no error and no log line of an outbound place carries its free
// text (an error's message, a code that is no number): only the versions
// and the reason of the record's vocabulary are kept (PeerRefusal), and
// of a key an error names at most its first 64 bytes, so that a peer
// cannot fill a host's log, whichever place reads it.
func TestNoLineOrErrorCarriesThePeersText(t *testing.T) {
	const said = "the-peer-wrote-this"
	text := said + strings.Repeat("z", 64<<10)
	key := strings.Repeat("k", 64) + text // past what an error shows of a key
	negotiateMCP := func(subject *negotiate.Subject) func(n *negotiate.Negotiator, url string, log *slog.Logger) error {
		return func(n *negotiate.Negotiator, url string, log *slog.Logger) error {
			_, _, err := mcphttp.Negotiate(context.Background(), n, url, mcphttp.OutboundOptions{Sink: &negotiatetest.Recorder{}, Subject: subject, AllowLoopback: true, ErrorLog: log})
			return err
		}
	}
	negotiateA2A := func(n *negotiate.Negotiator, url string, log *slog.Logger) error {
		_, _, err := a2ahttp.Negotiate(context.Background(), n, url, a2ahttp.OutboundOptions{Sink: &negotiatetest.Recorder{}, AllowLoopback: true, ErrorLog: log})
		return err
	}
	reply := func(w http.ResponseWriter, status int, body string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
	// initialized is a server without server/discover, whose initialize
	// answers body: an authenticated host falls back to it.
	initialized := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Mcp-Method") == "server/discover" {
				reply(w, http.StatusOK, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`)
				return
			}
			reply(w, http.StatusOK, body)
		}
	}
	for name, c := range map[string]struct {
		answer  http.HandlerFunc
		connect func(n *negotiate.Negotiator, url string, log *slog.Logger) error
	}{
		"MCP, a discover answered with a long message, then refused": {
			func(w http.ResponseWriter, _ *http.Request) {
				reply(w, http.StatusOK, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"`+text+`"}}`)
			},
			negotiateMCP(nil),
		},
		"MCP, an initialize answered with a long code, no decision": {
			initialized(`{"jsonrpc":"2.0","id":1,"error":{"code":"` + text + `","message":"x"}}`),
			negotiateMCP(placesSubject),
		},
		"MCP, a discover answer that repeats a long key, then refused": {
			func(w http.ResponseWriter, _ *http.Request) {
				reply(w, http.StatusOK, `{"jsonrpc":"2.0","id":1,"result":{"`+key+`":1,"`+key+`":2}}`)
			},
			negotiateMCP(nil),
		},
		"MCP, an initialize answer that repeats a long key, no decision": {
			initialized(`{"jsonrpc":"2.0","id":1,"result":{"` + key + `":1,"` + key + `":2}}`),
			negotiateMCP(placesSubject),
		},
		"A2A, a card that repeats a long key": {
			func(w http.ResponseWriter, _ *http.Request) {
				reply(w, http.StatusOK, `{"supportedInterfaces":[],"`+key+`":1,"`+key+`":2}`)
			},
			negotiateA2A,
		},
		"A2A, a card answered with a long error": {
			func(w http.ResponseWriter, _ *http.Request) {
				reply(w, http.StatusNotFound, `{"error":{"code":404,"message":"`+text+`"}}`)
			},
			negotiateA2A,
		},
	} {
		srv := httptest.NewServer(c.answer)
		var lines bytes.Buffer
		err := c.connect(placesNegotiator(t, policy.Policy{}), srv.URL, slog.New(slog.NewTextHandler(&lines, nil)))
		if err == nil || strings.Contains(err.Error(), said) || strings.Contains(lines.String(), said) {
			t.Errorf("%s: error %.300v\nlog %.300s", name, err, lines.String())
		}
		srv.Close()
	}
}
