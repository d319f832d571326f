package wopnegotel

import (
	"context"
	"net/url"
	"strconv"
	"unicode/utf8"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
)

// scope is the instrumentation scope of the tracer and the meter: the
// import path, as the OpenTelemetry Go libraries name theirs.
const scope = "github.com/wopneg/wopneg/otel"

// The negotiation's own attributes, the openwop.negotiation namespace this
// package sets the reference for (see the package documentation).
const (
	keyProtocol   = attribute.Key("openwop.negotiation.protocol")
	keyOutcome    = attribute.Key("openwop.negotiation.outcome")
	keyRequested  = attribute.Key("openwop.negotiation.requested")
	keyNegotiated = attribute.Key("openwop.negotiation.negotiated")
	keyReason     = attribute.Key("openwop.negotiation.reason")
	keyFloor      = attribute.Key("openwop.negotiation.floor")
	keyRule       = attribute.Key("openwop.negotiation.rule")
	keyPeerDigest = attribute.Key("openwop.negotiation.peer_digest")
	keyEventID    = attribute.Key("openwop.event.id")
)

// The protocols' own keys, from the OpenTelemetry semantic conventions for
// MCP and A2A (status Development), which the semconv Go packages do not
// carry.
const (
	keyMCPMethod  = attribute.Key("mcp.method.name")
	keyMCPVersion = attribute.Key("mcp.protocol.version")
	keyA2AMethod  = attribute.Key("a2a.method.name")
	keyA2AVersion = attribute.Key("a2a.protocol.version")
)

// Every string attribute this package sets is bounded, since the method
// of a request is the caller's to choose and the peer URL the host's: a
// value longer than maxAttributeBytes, or not UTF-8, is set as
// otherValue, semconv's _OTHER; so is a method the protocol's convention
// does not name. A refused request's 1 MiB method on a span would push an
// OTLP batch over a collector's limit and lose the spans beside it.
const (
	maxAttributeBytes = 255 // a DNS name (253), and any version, rule, reason or code
	otherValue        = "_OTHER"
)

// str is key's attribute of v, or of otherValue when v is past the bound.
// Every string attribute of the package is made here
// (TestAttributesAreMadeInOnePlace).
func str(key attribute.Key, v string) attribute.KeyValue {
	return key.String(bounded(v))
}

// bounded is v, or otherValue when v is longer than maxAttributeBytes or
// not UTF-8.
func bounded(v string) string {
	if len(v) > maxAttributeBytes || !utf8.ValidString(v) {
		return otherValue
	}
	return v
}

// knownMethods are the methods each protocol's convention names (the
// MCP registry of the OpenTelemetry semantic conventions, with the MCP
// 2025-11-25 tasks and the stateless server/discover; A2A 1.0 and the
// JSON-RPC names of A2A 0.3): any other is set as otherValue.
var knownMethods = map[facets.Protocol]map[string]bool{
	facets.ProtocolMCP: setOf(
		"initialize", "ping", "server/discover", "tools/list", "tools/call", "resources/list",
		"resources/templates/list", "resources/read", "resources/subscribe", "resources/unsubscribe",
		"prompts/list", "prompts/get", "completion/complete", "logging/setLevel", "sampling/createMessage",
		"roots/list", "elicitation/create", "tasks/get", "tasks/result", "tasks/list", "tasks/cancel",
		"notifications/initialized", "notifications/cancelled", "notifications/progress", "notifications/message",
		"notifications/resources/list_changed", "notifications/resources/updated",
		"notifications/prompts/list_changed", "notifications/tools/list_changed",
		"notifications/roots/list_changed", "notifications/elicitation/complete", "notifications/tasks/status",
	),
	facets.ProtocolA2A: setOf(
		"SendMessage", "SendStreamingMessage", "GetTask", "ListTasks", "CancelTask", "SubscribeToTask",
		"CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig",
		"ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig", "GetExtendedAgentCard",
		"message/send", "message/stream", "tasks/get", "tasks/list", "tasks/cancel", "tasks/resubscribe",
		"tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get",
		"tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete",
		"agent/getAuthenticatedExtendedCard",
	),
}

func setOf(vs ...string) map[string]bool {
	m := make(map[string]bool, len(vs))
	for _, v := range vs {
		m[v] = true
	}
	return m
}

// method is key's attribute of the method m of protocol: m when the
// convention names it, otherValue otherwise.
func method(key attribute.Key, protocol facets.Protocol, m string) attribute.KeyValue {
	if !knownMethods[protocol][m] {
		m = otherValue
	}
	return str(key, m)
}

// decisionsName is the decision counter; see the package documentation.
const decisionsName = "openwop.negotiation.decisions"

// Options configures [New]. The zero Options uses the global providers.
type Options struct {
	// TracerProvider makes the tracer of the outbound client spans; nil
	// means otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// MeterProvider makes the decision counter; nil means
	// otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
}

// Telemetry puts wopneg's negotiations into OpenTelemetry: as an
// [events.Sink] it sets the decision of each negotiation.decided event on
// the span of the context it is emitted with, and counts it; [Telemetry.Observe]
// adds what only an adapter knows; [Telemetry.StartServerDiscover] and
// [Telemetry.StartAgentCardFetch] start the client span of an outbound
// negotiation. It is safe for concurrent use.
//
// Make one with [New]. The zero Telemetry is safe and counts nothing: it
// sets span attributes, and starts its client spans through the global
// TracerProvider.
type Telemetry struct {
	tracer    trace.Tracer
	decisions metric.Int64Counter
}

// New returns a Telemetry whose tracer and decision counter come from
// opts' providers. It fails only when the MeterProvider refuses to make
// the counter.
func New(opts Options) (*Telemetry, error) {
	tp, mp := opts.TracerProvider, opts.MeterProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	decisions, err := mp.Meter(scope).Int64Counter(decisionsName,
		metric.WithDescription("Version negotiations decided, by protocol, outcome and reason."),
		metric.WithUnit("{decision}"))
	if err != nil {
		return nil, err
	}
	return &Telemetry{tracer: tp.Tracer(scope), decisions: decisions}, nil
}

// Emit sets the decision e records on the span in ctx and adds one to the
// decision counter. It keeps the contract of [events.Sink]: an event that
// fails [events.Event.Validate] is refused with its error, as is a context
// already done, and then nothing is set or counted; otherwise it returns
// nil, so that a fan-out beside an audit sink never turns a decision into
// an audit failure.
//
// The span gets the openwop.negotiation attributes of the package
// documentation; on an acceptance, mcp.protocol.version or
// a2a.protocol.version; on a refusal, error.type interop_version_unsupported
// (the one code a decision refuses with) and the status Error. A span that
// is not recording (no span in ctx, or one not sampled) is left alone; the
// decision is counted either way.
func (t *Telemetry) Emit(ctx context.Context, e events.Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := e.Validate(); err != nil {
		return err
	}
	p := &e.Payload
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(decisionAttributes(e)...)
		if p.Outcome == "refused" {
			refuse(span, wperrors.InteropVersionUnsupported)
		}
	}
	if t.decisions != nil {
		attrs := []attribute.KeyValue{str(keyProtocol, string(p.Protocol)), str(keyOutcome, p.Outcome)}
		if p.Reason != "" {
			attrs = append(attrs, str(keyReason, p.Reason))
		}
		t.decisions.Add(ctx, 1, metric.WithAttributes(attrs...))
	}
	return nil
}

// decisionAttributes are the span attributes of the decision e records:
// each field of the record that is set, under the namespace, and the
// version the protocol's convention names.
func decisionAttributes(e events.Event) []attribute.KeyValue {
	p := &e.Payload
	attrs := make([]attribute.KeyValue, 0, 9)
	attrs = append(attrs, str(keyEventID, e.ID), str(keyProtocol, string(p.Protocol)), str(keyOutcome, p.Outcome))
	for _, f := range [...]struct {
		key   attribute.Key
		value string
	}{
		{keyRequested, p.Requested}, {keyNegotiated, p.Version}, {keyReason, p.Reason},
		{keyFloor, p.Floor}, {keyPeerDigest, p.PeerDigest},
	} {
		if f.value != "" {
			attrs = append(attrs, str(f.key, f.value))
		}
	}
	if p.Version != "" {
		attrs = append(attrs, str(conventionKeys[p.Protocol].version, p.Version))
	}
	return attrs
}

// conventionKeys are, for each protocol, the keys its convention gives
// the method of a request and the version an exchange used.
var conventionKeys = map[facets.Protocol]struct{ method, version attribute.Key }{
	facets.ProtocolMCP: {keyMCPMethod, keyMCPVersion},
	facets.ProtocolA2A: {keyA2AMethod, keyA2AVersion},
}

// refuse marks span as a refused negotiation: error.type is the
// registered code answered, and the status is Error.
func refuse(span trace.Span, code wperrors.Code) {
	span.SetAttributes(str(semconv.ErrorTypeKey, string(code)))
	span.SetStatus(codes.Error, "negotiation refused: "+bounded(string(code)))
}

// Observe sets on the span in ctx what the record leaves out of the
// exchange x: it has the shape of mcphttp's and a2ahttp's Options.Observe,
// which a host sets to it:
// mcp.method.name or a2a.method.name, rpc.response.status_code when the
// answer carried a JSON-RPC error, openwop.negotiation.rule, and for a
// refusal the error.type of the code answered and the status Error. That
// code is internal_error when a required audit failed, which the record,
// never written, cannot say. Observe counts nothing: [Telemetry.Emit] does.
// A span that is not recording is left alone.
func (t *Telemetry) Observe(ctx context.Context, x negotiate.Exchange) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	o := &x.Outcome
	attrs := make([]attribute.KeyValue, 0, 3)
	if keys, ok := conventionKeys[o.Protocol]; ok && x.Method != "" {
		attrs = append(attrs, method(keys.method, o.Protocol, x.Method))
	}
	if x.Code != 0 {
		attrs = append(attrs, str(semconv.RPCResponseStatusCodeKey, strconv.Itoa(x.Code)))
	}
	if o.Rule != "" {
		attrs = append(attrs, str(keyRule, string(o.Rule)))
	}
	span.SetAttributes(attrs...)
	if o.Kind == negotiate.Refused {
		code := wperrors.InteropVersionUnsupported
		if o.Error != nil {
			code = o.Error.Code
		}
		refuse(span, code)
	}
}

// The names of the outbound client spans: the MCP method, as the MCP
// convention names a span with no low-cardinality target, and the request
// of the card, as the HTTP convention names a client span.
const (
	spanDiscover  = "server/discover"
	spanAgentCard = "GET /.well-known/agent-card.json"
)

// StartServerDiscover starts the client span of an outbound MCP
// negotiation with the server at serverURL, named server/discover as the
// MCP convention names it, with mcp.method.name, server.address and
// server.port. Pass the context it returns to mcphttp.Negotiate, with t in
// the sink, so that the decision lands on this span; end the span when
// Negotiate returns.
//
// Only the host and port of serverURL go on the span, never the URL: its
// path or user information may be a secret.
func (t *Telemetry) StartServerDiscover(ctx context.Context, serverURL string) (context.Context, trace.Span) {
	return t.startOutbound(ctx, spanDiscover, serverURL, str(keyProtocol, string(facets.ProtocolMCP)), str(keyMCPMethod, spanDiscover))
}

// StartAgentCardFetch starts the client span of an outbound A2A
// negotiation with the peer at peerURL: the fetch of its agent card, which
// is no A2A method, so the span is named and described as the HTTP
// convention does a GET of the card's well-known path, with
// http.request.method, server.address and server.port. Use it as
// [Telemetry.StartServerDiscover], with a2ahttp.Negotiate.
func (t *Telemetry) StartAgentCardFetch(ctx context.Context, peerURL string) (context.Context, trace.Span) {
	return t.startOutbound(ctx, spanAgentCard, peerURL, str(keyProtocol, string(facets.ProtocolA2A)), semconv.HTTPRequestMethodGet)
}

func (t *Telemetry) startOutbound(ctx context.Context, name, peerURL string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	tracer := t.tracer
	if tracer == nil {
		tracer = otel.GetTracerProvider().Tracer(scope)
	}
	return tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(append(attrs, serverAttributes(peerURL)...)...))
}

// serverAttributes are server.address and server.port of an http(s) URL,
// the port being the scheme's when the URL names none; none for a URL
// without an http(s) host, which the negotiation refuses anyway.
func serverAttributes(rawURL string) []attribute.KeyValue {
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" {
		return nil
	}
	port := u.Port()
	if port == "" {
		switch u.Scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		default:
			return nil
		}
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil // digits, but no TCP port
	}
	// Hostname drops the brackets of an IPv6 literal, as server.address
	// wants it.
	return []attribute.KeyValue{str(semconv.ServerAddressKey, u.Hostname()), semconv.ServerPort(int(n))}
}

// w3c is the W3C Trace Context propagator: traceparent and tracestate.
var w3c propagation.TraceContext

// Propagate returns the W3C trace context of the span in ctx, as the
// traceparent and tracestate values an outbound call carries in its
// headers and in the message (MCP params._meta, A2A
// Message.metadata.openwop; RFC 0207). Both are empty when ctx holds no
// valid span context, and tracestate is empty when the span has none. It
// is a negotiate.TraceContext: a host sets TraceContext: Propagate in
// mcphttp.OutboundOptions and a2ahttp.OutboundOptions. It needs no
// Telemetry.
func Propagate(ctx context.Context) (traceparent, tracestate string) {
	carrier := propagation.MapCarrier{}
	w3c.Inject(ctx, carrier)
	return carrier["traceparent"], carrier["tracestate"]
}
