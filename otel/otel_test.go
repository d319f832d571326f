package wopnegotel_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	wopnegotel "github.com/wopneg/wopneg/otel"
	"github.com/wopneg/wopneg/policy"
)

// decisionCase is one row of testdata/decisions.json.
type decisionCase struct {
	Name          string            `json:"name"`
	Protocol      facets.Protocol   `json:"protocol"`
	Requested     string            `json:"requested"`
	Authenticated bool              `json:"authenticated"`
	CounterOffer  bool              `json:"counterOffer"`
	Attributes    map[string]string `json:"attributes"`
	Status        string            `json:"status"`
	Series        string            `json:"series"`
}

func loadDecisions(t *testing.T) []decisionCase {
	t.Helper()
	raw, err := os.ReadFile("testdata/decisions.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Comment string         `json:"comment"`
		Cases   []decisionCase `json:"cases"`
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		t.Fatal(err)
	}
	if len(file.Cases) == 0 {
		t.Fatal("testdata/decisions.json holds no case")
	}
	return file.Cases
}

// TestDecisions decides each case of testdata/decisions.json for real,
// on a server span, through the one-line fan-out beside an audit sink,
// and checks the span's exact attributes and status and the counter.
func TestDecisions(t *testing.T) {
	for _, c := range loadDecisions(t) {
		t.Run(c.Name, func(t *testing.T) {
			k := newKit(t)
			audit := &negotiatetest.Recorder{}
			sink := events.NewFanout(audit, k.tel)
			var subject *negotiate.Subject
			if c.Authenticated {
				subject = agent
			}
			ctx, span := k.tp.Tracer("host").Start(context.Background(), "POST /", trace.WithSpanKind(trace.SpanKindServer))
			o, err := host(t, policy.Policy{}).DecideAndRecord(ctx, sink, negotiate.Destination{}, subject, negotiate.Offer{
				Protocol: c.Protocol, Requested: c.Requested, PeerVersions: []string{c.Requested}, CounterOffer: c.CounterOffer,
			})
			span.End()
			if err != nil {
				t.Fatalf("DecideAndRecord: %v", err)
			}
			recorded := audit.Events()
			if len(recorded) != 1 {
				t.Fatalf("%d events recorded, want 1", len(recorded))
			}
			want := map[string]string{"openwop.event.id": recorded[0].ID}
			for key, v := range c.Attributes {
				want[key] = v
			}
			got := k.only(t)
			diffAttrs(t, attrs(t, got.Attributes), want)
			if c.Status == "Error" {
				if got.Status.Code != codes.Error || got.Status.Description != "negotiation refused: interop_version_unsupported" {
					t.Errorf("status %+v, want Error, negotiation refused: interop_version_unsupported", got.Status)
				}
				if o.Err() == nil {
					t.Errorf("the span says refused, the outcome %v", o.Kind)
				}
			} else if got.Status.Code != codes.Unset {
				t.Errorf("status %+v, want Unset", got.Status)
			}
			if s := k.series(t); len(s) != 1 || s[c.Series] != 1 {
				t.Errorf("counter %v, want {%s: 1}", s, c.Series)
			}
		})
	}
}

// validEvent is a recorded-looking outbound acceptance, as a host event.
func validEvent(t *testing.T, p events.NegotiationDecided) events.Event {
	t.Helper()
	e, err := events.NewHostEvent("", p)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

const digest = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"

// TestEmitRecordFields: each field the record sets reaches the span under
// its key, and a field it leaves empty sets nothing, on span and counter.
func TestEmitRecordFields(t *testing.T) {
	cases := []struct {
		name    string
		payload events.NegotiationDecided
		want    map[string]string
		series  string
	}{
		{"every field", events.NegotiationDecided{
			Protocol: facets.ProtocolA2A, Outcome: "accepted", Version: "1.0", Requested: "1.0",
			Reason: events.ReasonOK, Floor: "1.0", PeerDigest: digest, At: at,
		}, map[string]string{
			"openwop.negotiation.protocol": "a2a", "openwop.negotiation.outcome": "accepted",
			"openwop.negotiation.requested": "1.0", "openwop.negotiation.negotiated": "1.0",
			"openwop.negotiation.reason": "ok", "openwop.negotiation.floor": "1.0",
			"openwop.negotiation.peer_digest": digest, "a2a.protocol.version": "1.0",
		}, "a2a accepted ok"},
		{"no requested, reason or floor", events.NegotiationDecided{
			Protocol: facets.ProtocolMCP, Outcome: "accepted", Version: "2026-07-28", At: at,
		}, map[string]string{
			"openwop.negotiation.protocol": "mcp", "openwop.negotiation.outcome": "accepted",
			"openwop.negotiation.negotiated": "2026-07-28", "mcp.protocol.version": "2026-07-28",
		}, "mcp accepted"},
		{"refused with nothing else", events.NegotiationDecided{
			Protocol: facets.ProtocolA2A, Outcome: "refused", At: at,
		}, map[string]string{
			"openwop.negotiation.protocol": "a2a", "openwop.negotiation.outcome": "refused",
			"error.type": "interop_version_unsupported",
		}, "a2a refused"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := newKit(t)
			e := validEvent(t, c.payload)
			ctx, span := k.tp.Tracer("host").Start(context.Background(), "op")
			if err := k.tel.Emit(ctx, e); err != nil {
				t.Fatal(err)
			}
			span.End()
			c.want["openwop.event.id"] = e.ID
			diffAttrs(t, attrs(t, k.only(t).Attributes), c.want)
			if s := k.series(t); len(s) != 1 || s[c.series] != 1 {
				t.Errorf("counter %v, want {%s: 1}", s, c.series)
			}
		})
	}
}

// TestEmitRefuses: the events.Sink contract. An invalid event and a done
// context are refused with their error, and nothing is set or counted.
func TestEmitRefuses(t *testing.T) {
	invalid := validEvent(t, events.NegotiationDecided{Protocol: facets.ProtocolMCP, Outcome: "accepted", Version: "2026-07-28", At: at})
	invalid.Payload.Version = ""
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name  string
		ctx   context.Context
		e     events.Event
		check func(error) bool
	}{
		{"invalid event", context.Background(), invalid, func(err error) bool {
			var fe *events.FieldError
			return errors.As(err, &fe) && fe.Field == "payload.version"
		}},
		{"canceled context", canceled, validEvent(t, events.NegotiationDecided{Protocol: facets.ProtocolMCP, Outcome: "refused", At: at}),
			func(err error) bool { return errors.Is(err, context.Canceled) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := newKit(t)
			_, span := k.tp.Tracer("host").Start(context.Background(), "op")
			err := k.tel.Emit(trace.ContextWithSpan(c.ctx, span), c.e)
			span.End()
			if !c.check(err) {
				t.Fatalf("Emit = %v", err)
			}
			if got := k.only(t); len(got.Attributes) != 0 || got.Status.Code != codes.Unset {
				t.Errorf("span of a refused event: attributes %v, status %+v; want none", got.Attributes, got.Status)
			}
			if s := k.series(t); len(s) != 0 {
				t.Errorf("counter %v, want nothing counted", s)
			}
		})
	}
}

// TestEmitWithoutSpan: with no recording span in the context (none, as
// behind events.Async, or one not sampled) the decision is still counted.
func TestEmitWithoutSpan(t *testing.T) {
	k := newKit(t)
	e := validEvent(t, events.NegotiationDecided{Protocol: facets.ProtocolMCP, Outcome: "refused", Reason: events.ReasonUnsupported, At: at})
	if err := k.tel.Emit(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	if got := k.spans.GetSpans(); len(got) != 0 {
		t.Errorf("spans %v, want none", got)
	}
	if s := k.series(t); s["mcp refused unsupported"] != 1 || len(s) != 1 {
		t.Errorf("counter %v, want {mcp refused unsupported: 1}", s)
	}
}

// TestZeroTelemetry: the zero value sets span attributes, counts nothing,
// and starts client spans through the global TracerProvider.
func TestZeroTelemetry(t *testing.T) {
	k := newKit(t)
	old := otel.GetTracerProvider()
	otel.SetTracerProvider(k.tp)
	t.Cleanup(func() { otel.SetTracerProvider(old) })
	var zero wopnegotel.Telemetry
	ctx, span := zero.StartServerDiscover(context.Background(), "https://mcp.example/mcp")
	e := validEvent(t, events.NegotiationDecided{Protocol: facets.ProtocolMCP, Outcome: "refused", Reason: events.ReasonBelowFloor, At: at})
	if err := zero.Emit(ctx, e); err != nil {
		t.Fatal(err)
	}
	span.End()
	got := attrs(t, k.only(t).Attributes)
	if got["mcp.method.name"] != "server/discover" || got["openwop.negotiation.reason"] != "below-floor" {
		t.Errorf("attributes %v, want the client span's and the decision's", got)
	}
	if s := k.series(t); len(s) != 0 {
		t.Errorf("counter %v, want nothing counted", s)
	}
}

// refusingMeter makes no instrument.
type refusingMeter struct{ noop.Meter }

var errNoCounter = errors.New("no counter for you")

func (refusingMeter) Int64Counter(string, ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	return nil, errNoCounter
}

type refusingProvider struct{ noop.MeterProvider }

func (refusingProvider) Meter(string, ...metric.MeterOption) metric.Meter { return refusingMeter{} }

func TestNewFailsWithoutCounter(t *testing.T) {
	tel, err := wopnegotel.New(wopnegotel.Options{MeterProvider: refusingProvider{}})
	if !errors.Is(err, errNoCounter) || tel != nil {
		t.Fatalf("New = %v, %v; want nil and the provider's error", tel, err)
	}
}

// TestNewGlobalProviders: the zero Options uses the global providers.
func TestNewGlobalProviders(t *testing.T) {
	k := newKit(t)
	oldTP, oldMP := otel.GetTracerProvider(), otel.GetMeterProvider()
	otel.SetTracerProvider(k.tp)
	otel.SetMeterProvider(k.mp)
	t.Cleanup(func() { otel.SetTracerProvider(oldTP); otel.SetMeterProvider(oldMP) })
	tel, err := wopnegotel.New(wopnegotel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, span := tel.StartAgentCardFetch(context.Background(), "https://agent.example")
	if err := tel.Emit(ctx, validEvent(t, events.NegotiationDecided{Protocol: facets.ProtocolA2A, Outcome: "accepted", Version: "1.0", At: at})); err != nil {
		t.Fatal(err)
	}
	span.End()
	if got := k.only(t); got.Name != "GET /.well-known/agent-card.json" {
		t.Errorf("span %q, want the card fetch through the global TracerProvider", got.Name)
	}
	if s := k.series(t); s["a2a accepted"] != 1 {
		t.Errorf("counter %v, want the decision counted through the global MeterProvider", s)
	}
}

// TestObserve: what only the adapter knows, on the span in the context.
func TestObserve(t *testing.T) {
	auditFailed := func(t *testing.T) negotiate.Outcome {
		o, err := host(t, policy.Policy{RequireAudit: true}).DecideAndRecord(context.Background(),
			events.SinkFunc(func(context.Context, events.Event) error { return errors.New("disk full") }),
			negotiate.Destination{}, nil, negotiate.Offer{Protocol: facets.ProtocolMCP, Requested: "2026-07-28", PeerVersions: []string{"2026-07-28"}})
		if err == nil || o.Rule != negotiate.RuleAudit {
			t.Fatalf("the audit failure did not refuse: %v, %v", o, err)
		}
		return o
	}
	cases := []struct {
		name   string
		x      func(*testing.T) negotiate.Exchange
		want   map[string]string
		status codes.Code
		desc   string
	}{
		{"mcp acceptance", func(*testing.T) negotiate.Exchange {
			return negotiate.Exchange{Method: "tools/call", Outcome: negotiate.Outcome{Kind: negotiate.Accepted, Protocol: facets.ProtocolMCP, Version: "2026-07-28", Rule: negotiate.RuleAccept}}
		}, map[string]string{"mcp.method.name": "tools/call", "openwop.negotiation.rule": "accept"}, codes.Unset, ""},
		{"a2a downgrade", func(*testing.T) negotiate.Exchange {
			return negotiate.Exchange{Method: "SendMessage", Outcome: negotiate.Outcome{Kind: negotiate.Downgraded, Protocol: facets.ProtocolA2A, Version: "1.0", Rule: negotiate.RuleAccept}}
		}, map[string]string{"a2a.method.name": "SendMessage", "openwop.negotiation.rule": "accept"}, codes.Unset, ""},
		{"mcp refusal with its code", func(*testing.T) negotiate.Exchange {
			return negotiate.Exchange{Method: "tools/list", Code: -32022, Outcome: negotiate.Outcome{
				Kind: negotiate.Refused, Protocol: facets.ProtocolMCP, Rule: negotiate.RuleFloor,
				Error: wperrors.New(wperrors.InteropVersionUnsupported, "below the floor"),
			}}
		}, map[string]string{
			"mcp.method.name": "tools/list", "rpc.response.status_code": "-32022",
			"openwop.negotiation.rule": "floor", "error.type": "interop_version_unsupported",
		}, codes.Error, "negotiation refused: interop_version_unsupported"},
		{"refusal without an error", func(*testing.T) negotiate.Exchange {
			return negotiate.Exchange{Outcome: negotiate.Outcome{Protocol: facets.ProtocolA2A}}
		}, map[string]string{"error.type": "interop_version_unsupported"}, codes.Error, "negotiation refused: interop_version_unsupported"},
		{"a required audit that failed", func(t *testing.T) negotiate.Exchange {
			return negotiate.Exchange{Method: "tools/call", Code: -32603, Outcome: auditFailed(t)}
		}, map[string]string{
			"mcp.method.name": "tools/call", "rpc.response.status_code": "-32603",
			"openwop.negotiation.rule": "audit", "error.type": "internal_error",
		}, codes.Error, "negotiation refused: internal_error"},
		{"an agent card GET names no method", func(*testing.T) negotiate.Exchange {
			return negotiate.Exchange{Outcome: negotiate.Outcome{Kind: negotiate.Accepted, Protocol: facets.ProtocolA2A, Version: "1.0"}}
		}, map[string]string{}, codes.Unset, ""},
		{"no protocol, no method key", func(*testing.T) negotiate.Exchange {
			return negotiate.Exchange{Method: "tools/call", Outcome: negotiate.Outcome{Kind: negotiate.Accepted, Version: "1.0"}}
		}, map[string]string{}, codes.Unset, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := newKit(t)
			x := c.x(t)
			ctx, span := k.tp.Tracer("host").Start(context.Background(), "op")
			k.tel.Observe(ctx, x)
			span.End()
			got := k.only(t)
			diffAttrs(t, attrs(t, got.Attributes), c.want)
			if got.Status.Code != c.status || got.Status.Description != c.desc {
				t.Errorf("status %+v, want %v %q", got.Status, c.status, c.desc)
			}
			if s := k.series(t); len(s) != 0 {
				t.Errorf("Observe counted %v; only Emit counts", s)
			}
		})
	}
}

// TestObserveWithoutSpan: nothing to set, and nothing breaks.
func TestObserveWithoutSpan(t *testing.T) {
	k := newKit(t)
	k.tel.Observe(context.Background(), negotiate.Exchange{Method: "tools/call", Outcome: negotiate.Outcome{Protocol: facets.ProtocolMCP}})
	_, span := tracenoop.NewTracerProvider().Tracer("").Start(context.Background(), "op") // a span that does not record
	k.tel.Observe(trace.ContextWithSpan(context.Background(), span), negotiate.Exchange{Outcome: negotiate.Outcome{Protocol: facets.ProtocolMCP}})
	if got := k.spans.GetSpans(); len(got) != 0 {
		t.Errorf("spans %v, want none", got)
	}
}

// TestServerAttributes: only the host and port of the peer URL reach the
// client span, the port being the scheme's when the URL names none.
func TestServerAttributes(t *testing.T) {
	cases := []struct {
		url  string
		want map[string]string
	}{
		{"https://mcp.example/mcp?key=secret", map[string]string{"server.address": "mcp.example", "server.port": "443"}},
		{"http://user:pw@mcp.example/", map[string]string{"server.address": "mcp.example", "server.port": "80"}},
		{"http://[::1]:8080/mcp", map[string]string{"server.address": "::1", "server.port": "8080"}},
		{"https://mcp.example:65535", map[string]string{"server.address": "mcp.example", "server.port": "65535"}},
		{"https://mcp.example:65536", map[string]string{}},
		{"ws://mcp.example/", map[string]string{}},
		{"mailto:ops@mcp.example", map[string]string{}},
		{"http:///mcp", map[string]string{}},
		{"http://mcp.example:x/", map[string]string{}},
	}
	for _, c := range cases {
		t.Run(c.url, func(t *testing.T) {
			k := newKit(t)
			_, span := k.tel.StartServerDiscover(context.Background(), c.url)
			span.End()
			got := k.only(t)
			c.want["openwop.negotiation.protocol"] = "mcp"
			c.want["mcp.method.name"] = "server/discover"
			diffAttrs(t, attrs(t, got.Attributes), c.want)
			if got.Name != "server/discover" || got.SpanKind != trace.SpanKindClient {
				t.Errorf("span %q kind %v, want server/discover, client", got.Name, got.SpanKind)
			}
		})
	}
}

// TestPropagate: the W3C trace context of the span in ctx, or nothing.
func TestPropagate(t *testing.T) {
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ts, err := trace.ParseTraceState("wopneg=t61rcWkgMzE,other=1")
	if err != nil {
		t.Fatal(err)
	}
	sampled := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, TraceState: ts})
	cases := []struct {
		name            string
		ctx             context.Context
		parent, tracest string
	}{
		{"sampled, with tracestate", trace.ContextWithSpanContext(context.Background(), sampled),
			"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "wopneg=t61rcWkgMzE,other=1"},
		{"not sampled, no tracestate", trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid})),
			"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", ""},
		{"no span", context.Background(), "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			parent, state := wopnegotel.Propagate(c.ctx)
			if parent != c.parent || state != c.tracest {
				t.Errorf("Propagate = %q, %q; want %q, %q", parent, state, c.parent, c.tracest)
			}
		})
	}
}

// Propagate is the core adapters' TraceContext hook, one line for a host.
var (
	_ negotiate.TraceContext = wopnegotel.Propagate
	_                        = mcphttp.OutboundOptions{TraceContext: wopnegotel.Propagate}
	_                        = a2ahttp.OutboundOptions{TraceContext: wopnegotel.Propagate}
)

// peerServer answers with body and keeps the traceparent of each request.
type peerServer struct {
	*httptest.Server
	mu      sync.Mutex
	parents []string
}

func newPeerServer(t *testing.T, body string) *peerServer {
	p := &peerServer{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		p.mu.Lock()
		p.parents = append(p.parents, r.Header.Get("traceparent"))
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *peerServer) traceparents() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.parents...)
}

// TestOutbound negotiates for real with an MCP server and an A2A agent on
// loopback, inside the client span this package starts, and checks the
// span's exact attributes and the trace context the peer received.
func TestOutbound(t *testing.T) {
	cases := []struct {
		name  string
		body  string
		start func(*wopnegotel.Telemetry, context.Context, string) (context.Context, trace.Span)
		run   func(context.Context, *negotiate.Negotiator, string, events.Sink, *http.Client) error
		span  string
		want  map[string]string
		// refused: Negotiate's error is the refusal, and the span says so.
		refused bool
	}{
		{"mcp server/discover", `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-11-25","2026-07-28"]}}`,
			(*wopnegotel.Telemetry).StartServerDiscover,
			func(ctx context.Context, n *negotiate.Negotiator, url string, sink events.Sink, c *http.Client) error {
				_, _, err := mcphttp.Negotiate(ctx, n, url, mcphttp.OutboundOptions{Sink: sink, Client: c, Subject: agent, TraceContext: wopnegotel.Propagate})
				return err
			}, "server/discover", map[string]string{
				"mcp.method.name": "server/discover", "mcp.protocol.version": "2026-07-28",
				"openwop.negotiation.protocol": "mcp", "openwop.negotiation.outcome": "accepted",
				"openwop.negotiation.requested": "2026-07-28", "openwop.negotiation.negotiated": "2026-07-28",
				"openwop.negotiation.reason": "ok", "openwop.negotiation.floor": "2025-11-25",
			}, false},
		{"a2a agent card", `{"name":"peer","supportedInterfaces":[{"url":"http://peer/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`,
			(*wopnegotel.Telemetry).StartAgentCardFetch,
			func(ctx context.Context, n *negotiate.Negotiator, url string, sink events.Sink, c *http.Client) error {
				_, _, err := a2ahttp.Negotiate(ctx, n, url, a2ahttp.OutboundOptions{Sink: sink, Client: c, Subject: agent, TraceContext: wopnegotel.Propagate})
				return err
			}, "GET /.well-known/agent-card.json", map[string]string{
				"http.request.method": "GET", "a2a.protocol.version": "1.0",
				"openwop.negotiation.protocol": "a2a", "openwop.negotiation.outcome": "accepted",
				"openwop.negotiation.requested": "1.0", "openwop.negotiation.negotiated": "1.0",
				"openwop.negotiation.reason": "ok", "openwop.negotiation.floor": "1.0",
			}, false},
		{"mcp server below the floor", `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-03-26","2025-06-18"]}}`,
			(*wopnegotel.Telemetry).StartServerDiscover,
			func(ctx context.Context, n *negotiate.Negotiator, url string, sink events.Sink, c *http.Client) error {
				_, _, err := mcphttp.Negotiate(ctx, n, url, mcphttp.OutboundOptions{Sink: sink, Client: c, Subject: agent, TraceContext: wopnegotel.Propagate})
				return err
			}, "server/discover", map[string]string{
				"mcp.method.name":              "server/discover",
				"openwop.negotiation.protocol": "mcp", "openwop.negotiation.outcome": "refused",
				"openwop.negotiation.requested": "2026-07-28",
				"openwop.negotiation.reason":    "below-floor", "openwop.negotiation.floor": "2025-11-25",
				"error.type": "interop_version_unsupported",
			}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := newKit(t)
			peer := newPeerServer(t, c.body)
			audit := &negotiatetest.Recorder{}
			ctx, span := c.start(k.tel, context.Background(), peer.URL)
			err := c.run(ctx, host(t, policy.Policy{}), peer.URL, events.NewFanout(audit, k.tel), &http.Client{})
			span.End()
			if c.refused != errors.Is(err, wperrors.InteropVersionUnsupported) || !c.refused && err != nil {
				t.Fatalf("Negotiate: %v; want refused %t", err, c.refused)
			}
			recorded := audit.Events()
			if len(recorded) != 1 {
				t.Fatalf("%d events recorded, want 1", len(recorded))
			}
			got := k.only(t)
			t.Logf("exported span %q kind %v status %v parent %v attributes %v", got.Name, got.SpanKind, got.Status.Code, got.Parent.IsValid(), attrs(t, got.Attributes))
			if got.Name != c.span || got.SpanKind != trace.SpanKindClient {
				t.Errorf("span %q kind %v, want %q, client", got.Name, got.SpanKind, c.span)
			}
			peerDigest, err := events.PeerDigest(peer.URL)
			if err != nil {
				t.Fatal(err)
			}
			host, port, _ := strings.Cut(strings.TrimPrefix(peer.URL, "http://"), ":")
			c.want["server.address"], c.want["server.port"] = host, port
			c.want["openwop.negotiation.peer_digest"] = peerDigest
			c.want["openwop.event.id"] = recorded[0].ID
			diffAttrs(t, attrs(t, got.Attributes), c.want)
			if wantStatus := map[bool]codes.Code{false: codes.Unset, true: codes.Error}[c.refused]; got.Status.Code != wantStatus {
				t.Errorf("status %+v, want %v", got.Status, wantStatus)
			}
			sc := got.SpanContext
			wantParent := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"
			if p := peer.traceparents(); len(p) != 1 || p[0] != wantParent {
				t.Errorf("the peer got traceparent %q, want %q, the client span's", p, wantParent)
			}
		})
	}
}

// TestInboundMiddleware: behind the MCP middleware the record is emitted
// with the request's context, so the decision lands on the host's server
// span.
func TestInboundMiddleware(t *testing.T) {
	k := newKit(t)
	audit := &negotiatetest.Recorder{}
	mw, err := mcphttp.New(host(t, policy.Policy{}), mcphttp.Options{Sink: events.NewFanout(audit, k.tel)})
	if err != nil {
		t.Fatal(err)
	}
	served := mw.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		t.Error("a refused request reached the MCP server")
	}))
	traced := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, span := k.tp.Tracer("host").Start(r.Context(), "POST /mcp", trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		served.ServeHTTP(w, r.WithContext(ctx))
	})
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	rec := httptest.NewRecorder()
	traced.ServeHTTP(rec, req)
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("HTTP %d %s, want the 400 of a refusal", rec.Code, rec.Body)
	}
	recorded := audit.Events()
	if len(recorded) != 1 {
		t.Fatalf("%d events recorded, want 1", len(recorded))
	}
	got := k.only(t)
	diffAttrs(t, attrs(t, got.Attributes), map[string]string{
		"openwop.event.id":             recorded[0].ID,
		"openwop.negotiation.protocol": "mcp", "openwop.negotiation.outcome": "refused",
		"openwop.negotiation.requested": "2025-06-18", "openwop.negotiation.reason": "below-floor",
		"openwop.negotiation.floor": "2025-11-25", "error.type": "interop_version_unsupported",
	})
	if got.Status.Code != codes.Error {
		t.Errorf("status %+v, want Error", got.Status)
	}
	if s := k.series(t); s["mcp refused below-floor"] != 1 || len(s) != 1 {
		t.Errorf("counter %v, want {mcp refused below-floor: 1}", s)
	}
}

// through serves req through handler inside a server span of k, as
// otelhttp.NewHandler would, and returns the answer.
func through(k *kit, handler http.Handler, req *http.Request) *httptest.ResponseRecorder {
	ctx, span := k.tp.Tracer("host").Start(req.Context(), req.Method+" "+req.URL.Path, trace.WithSpanKind(trace.SpanKindServer))
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, req.WithContext(ctx))
	span.End()
	return rec
}

// jsonServer answers every request with body, as JSON.
func jsonServer(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	})
}

// observeCase is one request through a middleware with Observe set: the
// span's exact attributes but the event id, and its status.
type observeCase struct {
	name    string
	sink    func(*wopnegotel.Telemetry) events.Sink // nil: the audit recorder and the Telemetry
	require bool                                    // policy.RequireAudit
	server  string                                  // the wrapped server's answer
	req     func() *http.Request
	want    map[string]string
	status  string // the status description; "" for Unset
}

func (c observeCase) run(t *testing.T, wrap func(*negotiate.Negotiator, events.Sink, func(context.Context, negotiate.Exchange)) http.Handler) {
	t.Helper()
	k := newKit(t)
	audit := &negotiatetest.Recorder{}
	sink := events.Sink(events.NewFanout(audit, k.tel))
	if c.sink != nil {
		sink = c.sink(k.tel)
	}
	observed := 0
	observe := func(ctx context.Context, x negotiate.Exchange) {
		observed++
		k.tel.Observe(ctx, x)
	}
	through(k, wrap(host(t, policy.Policy{RequireAudit: c.require}), sink, observe), c.req())
	if observed != 1 {
		t.Errorf("Observe called %d times, want once", observed)
	}
	got := k.only(t)
	want := maps.Clone(c.want)
	if recorded := audit.Events(); len(recorded) == 1 {
		want["openwop.event.id"] = recorded[0].ID
	}
	t.Logf("exported span %q status %v %q attributes %v", got.Name, got.Status.Code, got.Status.Description, attrs(t, got.Attributes))
	diffAttrs(t, attrs(t, got.Attributes), want)
	wantCode := codes.Unset
	if c.status != "" {
		wantCode = codes.Error
	}
	if got.Status.Code != wantCode || got.Status.Description != c.status {
		t.Errorf("status %v %q, want %v %q", got.Status.Code, got.Status.Description, wantCode, c.status)
	}
}

// failingAudit is an audit sink that records nothing: a durable store
// that is down, as a host that requires the audit records into.
func failingAudit(*wopnegotel.Telemetry) events.Sink {
	r := &negotiatetest.Recorder{}
	r.Fail(errors.New("disk full"))
	return r
}

// mcpRequest is a POST of body to an MCP endpoint; revision and method,
// when set, go in the 2026-07-28 headers.
func mcpRequest(revision, method, name, body string) func() *http.Request {
	return func() *http.Request {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if revision != "" {
			req.Header.Set("MCP-Protocol-Version", revision)
		}
		if method != "" {
			req.Header.Set("Mcp-Method", method)
		}
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
		return req
	}
}

const refusedStatus = "negotiation refused: interop_version_unsupported"

// TestObserveThroughMCPMiddleware: mcphttp.Options.Observe set to
// Telemetry.Observe, beside the Telemetry in the sink, puts the whole
// exchange on the host's server span: an acceptance, a refusal by the
// decision, the wrapped server's refusal (which the record follows), a
// legacy initialize refused, and a required audit that failed.
func TestObserveThroughMCPMiddleware(t *testing.T) {
	const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	accepted := map[string]string{
		"mcp.method.name": "tools/call", "mcp.protocol.version": "2026-07-28",
		"openwop.negotiation.protocol": "mcp", "openwop.negotiation.outcome": "accepted",
		"openwop.negotiation.requested": "2026-07-28", "openwop.negotiation.negotiated": "2026-07-28",
		"openwop.negotiation.reason": "ok", "openwop.negotiation.floor": "2025-11-25",
		"openwop.negotiation.rule": "accept",
	}
	cases := []observeCase{
		{name: "accepted", server: `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
			req: mcpRequest("2026-07-28", "tools/call", "echo", call), want: accepted},
		{name: "below the floor", req: mcpRequest("2025-06-18", "", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`),
			want: map[string]string{
				"mcp.method.name": "tools/list", "rpc.response.status_code": "-32022",
				"openwop.negotiation.protocol": "mcp", "openwop.negotiation.outcome": "refused",
				"openwop.negotiation.requested": "2025-06-18", "openwop.negotiation.reason": "below-floor",
				"openwop.negotiation.floor": "2025-11-25", "openwop.negotiation.rule": "floor",
				"error.type": "interop_version_unsupported",
			}, status: refusedStatus},
		{name: "the server refuses the revision", server: `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"unsupported"}}`,
			req: mcpRequest("2026-07-28", "tools/call", "echo", call),
			want: map[string]string{
				"mcp.method.name": "tools/call", "rpc.response.status_code": "-32022",
				"openwop.negotiation.protocol": "mcp", "openwop.negotiation.outcome": "refused",
				"openwop.negotiation.requested": "2026-07-28", "openwop.negotiation.reason": "unsupported",
				"openwop.negotiation.floor": "2025-11-25", "openwop.negotiation.rule": "common",
				"error.type": "interop_version_unsupported",
			}, status: refusedStatus},
		// Refused before any revision is weighed: rule input, never the
		// "common" of a negotiation that found no shared revision.
		{name: "headers and body disagree", req: mcpRequest("2025-06-18", "", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`),
			want: map[string]string{
				"mcp.method.name": "tools/list", "rpc.response.status_code": "-32020",
				"openwop.negotiation.protocol": "mcp", "openwop.negotiation.outcome": "refused",
				"openwop.negotiation.requested": "2025-06-18", "openwop.negotiation.reason": "unsupported",
				"openwop.negotiation.floor": "2025-11-25", "openwop.negotiation.rule": "input",
				"error.type": "interop_version_unsupported",
			}, status: refusedStatus},
		{name: "legacy initialize of an anonymous caller", req: mcpRequest("", "", "",
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`),
			want: map[string]string{
				"mcp.method.name": "initialize", "rpc.response.status_code": "-32602",
				"openwop.negotiation.protocol": "mcp", "openwop.negotiation.outcome": "refused",
				"openwop.negotiation.requested": "2025-11-25", "openwop.negotiation.reason": "unauthenticated",
				"openwop.negotiation.floor": "2025-11-25", "openwop.negotiation.rule": "authenticated",
				"error.type": "interop_version_unsupported",
			}, status: refusedStatus},
		{name: "a required audit that failed", sink: failingAudit, require: true, server: `{"jsonrpc":"2.0","id":1,"result":{}}`,
			req: mcpRequest("2026-07-28", "tools/call", "echo", call),
			want: map[string]string{
				"mcp.method.name": "tools/call", "rpc.response.status_code": "-32603",
				"openwop.negotiation.rule": "audit", "error.type": "internal_error",
			}, status: "negotiation refused: internal_error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.run(t, func(n *negotiate.Negotiator, sink events.Sink, observe func(context.Context, negotiate.Exchange)) http.Handler {
				mw, err := mcphttp.New(n, mcphttp.Options{Sink: sink, Observe: observe})
				if err != nil {
					t.Fatal(err)
				}
				return mw.Wrap(jsonServer(c.server))
			})
		})
	}
}

// a2aRequest is a JSON-RPC POST of body at A2A-Version version.
func a2aRequest(version, body string) func() *http.Request {
	return func() *http.Request {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/a2a", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", version)
		return req
	}
}

// TestObserveThroughA2AMiddleware is TestObserveThroughMCPMiddleware for
// a2ahttp.Options.Observe.
func TestObserveThroughA2AMiddleware(t *testing.T) {
	const send = `{"jsonrpc":"2.0","id":"7","method":"SendMessage","params":{"message":{"role":"ROLE_USER","parts":[{"text":"hi"}],"messageId":"m1"}}}`
	cases := []observeCase{
		{name: "accepted", server: `{"jsonrpc":"2.0","id":"7","result":{}}`, req: a2aRequest("1.0", send),
			want: map[string]string{
				"a2a.method.name": "SendMessage", "a2a.protocol.version": "1.0",
				"openwop.negotiation.protocol": "a2a", "openwop.negotiation.outcome": "accepted",
				"openwop.negotiation.requested": "1.0", "openwop.negotiation.negotiated": "1.0",
				"openwop.negotiation.reason": "ok", "openwop.negotiation.floor": "1.0",
				"openwop.negotiation.rule": "accept",
			}},
		{name: "below the floor", req: a2aRequest("0.3", send),
			want: map[string]string{
				"a2a.method.name": "SendMessage", "rpc.response.status_code": "-32009",
				"openwop.negotiation.protocol": "a2a", "openwop.negotiation.outcome": "refused",
				"openwop.negotiation.requested": "0.3", "openwop.negotiation.reason": "below-floor",
				"openwop.negotiation.floor": "1.0", "openwop.negotiation.rule": "floor",
				"error.type": "interop_version_unsupported",
			}, status: refusedStatus},
		{name: "the server refuses the version", server: `{"jsonrpc":"2.0","id":"7","error":{"code":-32009,"message":"no"}}`, req: a2aRequest("1.0", send),
			want: map[string]string{
				"a2a.method.name": "SendMessage", "rpc.response.status_code": "-32009",
				"openwop.negotiation.protocol": "a2a", "openwop.negotiation.outcome": "refused",
				"openwop.negotiation.requested": "1.0", "openwop.negotiation.reason": "unsupported",
				"openwop.negotiation.floor": "1.0", "openwop.negotiation.rule": "common",
				"error.type": "interop_version_unsupported",
			}, status: refusedStatus},
		{name: "a required audit that failed", sink: failingAudit, require: true, server: `{"jsonrpc":"2.0","id":"7","result":{}}`, req: a2aRequest("1.0", send),
			want: map[string]string{
				"a2a.method.name": "SendMessage", "rpc.response.status_code": "-32603",
				"openwop.negotiation.rule": "audit", "error.type": "internal_error",
			}, status: "negotiation refused: internal_error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.run(t, func(n *negotiate.Negotiator, sink events.Sink, observe func(context.Context, negotiate.Exchange)) http.Handler {
				mw, err := a2ahttp.New(n, a2ahttp.Options{Sink: sink, Observe: observe})
				if err != nil {
					t.Fatal(err)
				}
				return mw.Wrap(jsonServer(c.server))
			})
		})
	}
}
