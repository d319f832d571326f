package a2ae2e

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// testNow is the host's fixed clock, so that events compare exactly.
var testNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// hostFacets offers 0.3 and 1.0, prefers 1.0, and has its floor below the
// preferred version, so that §D.1 (no unauthenticated downgrade) is live.
func hostFacets() facets.Set {
	return facets.Set{A2A: &facets.A2A{
		Versions: []string{"0.3", "1.0"}, PreferredVersion: "1.0", MinimumVersion: "0.3", RefreshedAt: "2026-11-01",
	}}
}

// token is the credential the host trusts; a caller presenting it is an
// authenticated agent, any other caller has no Subject.
const token = "Bearer e2e-token"

func subjectOf(r *http.Request) *negotiate.Subject {
	if r.Header.Get("Authorization") != token {
		return nil
	}
	return &negotiate.Subject{Issuer: "https://idp.e2e.example", SubjectID: "peer-agent", Tenant: "acme", Lane: policy.LaneOIDC, Kind: policy.KindAgent}
}

// greeter is the agent behind every handler: it answers "served at V",
// where V is the version of the a2a-go handler it sits behind.
type greeter struct{ version string }

func (g greeter) Execute(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("served at "+g.version)), nil)
	}
}

func (greeter) Cancel(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(func(a2a.Event, error) bool) {}
}

// agentCard is the host's card: JSON-RPC at 1.0 and 0.3 on one URL (the
// middleware's decision picks the handler), HTTP+JSON at 1.0.
func agentCard(base string) *a2a.AgentCard {
	return &a2a.AgentCard{
		Name:        "wopneg e2e host",
		Description: "a2a-go handlers behind wopneg's a2ahttp middleware",
		Version:     "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{
			{URL: base + "/a2a", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "1.0"},
			{URL: base + "/a2a", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "0.3"},
			{URL: base + "/rest", ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: "1.0"},
		},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills:             []a2a.AgentSkill{{ID: "greet", Name: "greet", Description: "says which version served it", Tags: []string{"e2e"}}},
	}
}

// cardJSON is the card of version: a2a-go's 0.3 compatibility producer for
// 0.3 (the union of the 0.3 and 1.0 shapes), the 1.0 card otherwise.
func cardJSON(r *http.Request, version string) ([]byte, error) {
	card := agentCard("http://" + r.Host)
	if version == "0.3" {
		return a2av0.NewStaticAgentCardProducer(card).(a2asrv.AgentCardJSONProducer).CardJSON(r.Context())
	}
	return json.Marshal(card)
}

// exchange is one request as the wire carried it, seen in front of the
// middleware.
type exchange struct {
	Method, Path string
	// Sent are the A2A-Version lines of the request, as received.
	Sent []string
	// Served is the A2A-Version of the response.
	Served []string
	Status int
}

// wire records every exchange.
type wire struct {
	mu        sync.Mutex
	exchanges []exchange
}

func (w *wire) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		sent := slices.Clone(r.Header.Values(a2ahttp.HeaderName))
		sw := &statusWriter{ResponseWriter: rw, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		w.mu.Lock()
		w.exchanges = append(w.exchanges, exchange{r.Method, r.URL.Path, sent, slices.Clone(rw.Header().Values(a2ahttp.HeaderName)), sw.status})
		w.mu.Unlock()
	})
}

func (w *wire) seen() []exchange {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.exchanges)
}

// statusWriter remembers the status written, and still flushes, as
// a2a-go's streaming handlers need.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// host is an A2A host on loopback: a2a-go's handlers behind the middleware,
// a wire recorder in front of it, and the event store.
type host struct {
	srv    *httptest.Server
	events *negotiatetest.Recorder
	wire   *wire
}

func newHost(t *testing.T, configure func(*a2ahttp.Options)) *host {
	t.Helper()
	return newHostWith(t, policy.Policy{}, configure)
}

// newHostWith is newHost under policy p (its clock is replaced by testNow).
func newHostWith(t *testing.T, p policy.Policy, configure func(*a2ahttp.Options)) *host {
	t.Helper()
	p.Now = func() time.Time { return testNow }
	n, err := negotiate.Compile(hostFacets(), p)
	if err != nil {
		t.Fatal(err)
	}
	h := &host{events: &negotiatetest.Recorder{}, wire: &wire{}}
	opts := a2ahttp.Options{Sink: h.events, Subject: subjectOf, Card: cardJSON}
	if configure != nil {
		configure(&opts)
	}
	jsonrpc, err := a2ahttp.New(n, opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Binding = a2ahttp.HTTPJSON
	rest, err := a2ahttp.New(n, opts)
	if err != nil {
		t.Fatal(err)
	}

	v10 := a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(greeter{"1.0"}))
	v03 := a2av0.NewJSONRPCHandler(a2asrv.NewHandler(greeter{"0.3"}))
	// One URL serves both versions: the middleware decided which one this
	// request gets, and the host routes on that decision, never on the
	// header itself.
	byVersion := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v, _ := a2ahttp.Version(r.Context()); v == "0.3" {
			v03.ServeHTTP(w, r)
			return
		}
		v10.ServeHTTP(w, r)
	})

	mux := http.NewServeMux()
	mux.Handle("/a2a", jsonrpc.Wrap(byVersion))
	mux.Handle(a2ahttp.DefaultCardPath, jsonrpc.Wrap(http.NotFoundHandler())) // Options.Card answers
	mux.Handle("/rest/", rest.Wrap(http.StripPrefix("/rest", a2asrv.NewRESTHandler(a2asrv.NewHandler(greeter{"1.0"})))))
	h.srv = httptest.NewServer(h.wire.wrap(mux))
	t.Cleanup(h.srv.Close)
	return h
}

// client returns an HTTP client to the host; with auth, it presents the
// token on every request.
func (h *host) client(auth bool) *http.Client {
	c := *h.srv.Client()
	if auth {
		c.Transport = authTransport{base: c.Transport}
	}
	return &c
}

type authTransport struct{ base http.RoundTripper }

func (a authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", token)
	return a.base.RoundTrip(r)
}

// payloads returns the payloads of the events recorded, checking that each
// is a durable host event.
func (h *host) payloads(t *testing.T) []events.NegotiationDecided {
	t.Helper()
	var ps []events.NegotiationDecided
	for _, e := range h.events.Events() {
		if e.RunID != "" {
			t.Errorf("event %+v is not a host event", e)
		}
		ps = append(ps, e.Payload)
	}
	return ps
}

func accepted(version, requested string) events.NegotiationDecided {
	return events.NegotiationDecided{Protocol: facets.ProtocolA2A, Outcome: "accepted", Version: version, Requested: requested, Reason: events.ReasonOK, Floor: "0.3", At: testNow}
}

func refused(requested string, reason string) events.NegotiationDecided {
	return events.NegotiationDecided{Protocol: facets.ProtocolA2A, Outcome: "refused", Requested: requested, Reason: reason, Floor: "0.3", At: testNow}
}
