package a2agrpc

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/a2aversion"
	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/internal/rpcerr"
	"github.com/wopneg/wopneg/negotiate"
)

// metadataKey is the A2A-Version service parameter as gRPC metadata
// carries it: lower-cased, as a2a-go writes and reads it.
const metadataKey = "a2a-version"

// services are the A2A services whose calls are negotiated: A2A 1.0's and
// 0.3's. Calls of any other service (health, reflection) pass untouched.
var services = []string{"lf.a2a.v1.A2AService", "a2a.v1.A2AService"}

// Options configure an [Interceptor]. Only Sink is required; the zero
// value of every other field is the reference behaviour.
type Options struct {
	// Subject returns the caller's Subject, as the host resolved it from
	// the call's context (its peer, a client certificate) and incoming
	// metadata (a token). Nil, or a nil result, is no Subject: such a
	// caller is unauthenticated and never served below the preferred
	// version. A Subject that breaks the v2 Subject schema is the host's
	// fault: it is logged to ErrorLog as "wopneg: invalid Subject: " and
	// every violation, and the call is decided as unauthenticated, or
	// refused under StrictSubject.
	Subject func(ctx context.Context, md metadata.MD) *negotiate.Subject
	// StrictSubject refuses, before any negotiation and so with no event,
	// a call whose Subject is invalid, with codes.Internal naming the
	// violation.
	StrictSubject bool
	// Sink records the negotiation.decided event of every call, as a
	// durable host event. Required.
	Sink events.Sink
	// ErrorLog receives what the interceptor cannot answer to the caller:
	// an event that was not recorded while the policy does not require
	// it, an invalid Subject. Nil means slog.Default().
	ErrorLog *slog.Logger
	// Observe, when set, is called once for every call the interceptor
	// decides, with the call's context, once its answer is settled: the
	// gRPC method's name ("SendMessage"), and the outcome as answered
	// (the refusal the record says when the handler refused the version,
	// the audit's when a required record failed). Code is 0: a gRPC
	// answer carries no JSON-RPC code, and its status is the gRPC
	// instrumentation's to report. It runs on the call's path and must
	// not block; wopnegotel's Telemetry.Observe puts the exchange on the
	// call's span (rpc.system.name grpc, when the server is instrumented: otelgrpc's stats handler).
	Observe func(context.Context, negotiate.Exchange)
}

// Interceptor negotiates the A2A version of every call of the A2A gRPC
// services (A2A 1.0's lf.a2a.v1.A2AService, 0.3's a2a.v1.A2AService)
// before the handler sees it; other services' calls pass untouched. It is
// safe for concurrent use.
type Interceptor struct {
	n     *negotiate.Negotiator
	adv   facets.Advertised
	opts  Options
	log   *slog.Logger
	rec   *exchange.Recorder
	check string // the metadata value of the start-up check's call
}

// New returns an Interceptor that decides with n, which must advertise
// a2a.
func New(n *negotiate.Negotiator, opts Options) (*Interceptor, error) {
	adv, err := exchange.Starts("a2agrpc", n, opts.Sink, facets.ProtocolA2A, opts.ErrorLog)
	if err != nil {
		return nil, err
	}
	log := cmp.Or(opts.ErrorLog, slog.Default())
	return &Interceptor{n: n, adv: adv, opts: opts, log: log, check: checkToken(),
		rec: &exchange.Recorder{Pkg: "a2agrpc", N: n, Sink: opts.Sink, Log: log}}, nil
}

// ServerOptions are the options that put i in front of a grpc.Server's
// unary and streaming handlers, after any interceptors given before them.
func (i *Interceptor) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(i.Unary), grpc.ChainStreamInterceptor(i.Stream)}
}

// Unary is the grpc.UnaryServerInterceptor of i.
func (i *Interceptor) Unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	c, err := i.decide(ctx, info.FullMethod)
	if c == nil {
		if err != nil {
			return nil, err
		}
		return handler(ctx, req)
	}
	resp, herr := handler(c.ctx, req)
	if err := c.settle(herr); err != nil {
		return nil, err
	}
	if !refuses(herr) {
		_ = grpc.SetHeader(ctx, metadata.Pairs(metadataKey, c.outcome.Version))
	}
	return resp, herr
}

// Stream is the grpc.StreamServerInterceptor of i. A streaming call is
// decided once, when it opens, and recorded once: when its first message
// leaves (the version served) or when it ends without one (as its status
// says); a refusal after messages were sent is recorded as the refusal it
// is.
func (i *Interceptor) Stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	c, err := i.decide(ss.Context(), info.FullMethod)
	if c == nil {
		if err != nil {
			return err
		}
		return handler(srv, ss)
	}
	w := &watched{ServerStream: ss, c: c}
	herr := handler(srv, w)
	// A stream whose first message left was settled served, and recorded
	// then unless it was before the handler ran; what is left to record
	// is its end: the one verdict of a stream that sent nothing, or a
	// refusal after messages, which is what the caller is left with.
	if !w.settled || refuses(herr) {
		if err := c.settle(herr); err != nil {
			return err
		}
	}
	if !w.settled && !refuses(herr) {
		_ = ss.SetHeader(metadata.Pairs(metadataKey, c.outcome.Version))
	}
	return herr
}

// watched is the stream a streaming handler answers through: its first
// message settles the call as served, before it leaves.
type watched struct {
	grpc.ServerStream
	c       *call
	settled bool
}

// Context carries the accepted outcome.
func (w *watched) Context() context.Context { return w.c.ctx }

// SendMsg settles the call as served before its first message leaves,
// with the a2a-version header. The record it may write is the
// acceptance's first, which happens only while the audit is not required
// (under RequireAudit it was written before the handler ran), so it never
// fails the message.
func (w *watched) SendMsg(m any) error {
	if !w.settled {
		w.settled = true
		_ = w.c.settle(nil)
		_ = w.ServerStream.SetHeader(metadata.Pairs(metadataKey, w.c.outcome.Version))
	}
	return w.ServerStream.SendMsg(m)
}

// call is one decided, accepted call, until its answer is settled.
type call struct {
	i        *Interceptor
	ctx      context.Context // the call's, carrying the outcome
	method   string
	subject  *negotiate.Subject
	outcome  negotiate.Outcome
	payload  events.NegotiationDecided
	recorded bool // the acceptance was recorded before the handler ran
	checked  bool // the start-up check's call: nothing is recorded
}

// decide decides the call of fullMethod whose context ctx is. It returns
// the call when it was accepted and goes on to the handler; no call and
// the status to answer when it was refused; neither for a call that is not
// negotiated (another service's).
func (i *Interceptor) decide(ctx context.Context, fullMethod string) (*call, error) {
	svc, method, _ := strings.Cut(strings.TrimPrefix(fullMethod, "/"), "/")
	if !slices.Contains(services, svc) {
		return nil, nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	if i.checking(md) {
		// The start-up check's call: decided as the handler would be
		// handed the preferred version, and neither recorded nor observed.
		c := &call{i: i, checked: true}
		c.outcome, _ = i.n.Decide(nil, negotiate.InboundOffer(i.adv, "", i.adv.Preferred))
		c.ctx = exchange.WithOutcome(ctx, facets.ProtocolA2A, &c.outcome)
		return c, nil
	}
	subject, invalid := i.subject(ctx, md)
	if invalid != "" {
		_ = grpc.SetHeader(ctx, metadata.Pairs(metadataKey, i.adv.Preferred))
		return nil, internal("the caller's Subject is invalid: " + invalid)
	}
	req := readVersion(md).Call()
	// Every call may act (a SendMessage runs the agent).
	var o negotiate.Outcome
	var payload events.NegotiationDecided
	recorded := i.rec.Decided(ctx, negotiate.Destination{}, subject, exchange.Offer(i.adv, req.Raw()), false, true, &o, &payload)
	if o.Err() != nil {
		_ = grpc.SetHeader(ctx, metadata.Pairs(metadataKey, i.adv.Preferred))
		i.observe(ctx, method, &o)
		if o.Rule == negotiate.RuleAudit {
			return nil, internal(auditMessage)
		}
		servable, _ := o.Error.Details["supported"].([]string)
		return nil, refusal(a2aversion.Message(&req, i.adv, &o, servable), servable)
	}
	c := &call{i: i, method: method, subject: subject, outcome: o, payload: payload, recorded: recorded}
	c.ctx = exchange.WithOutcome(ctx, facets.ProtocolA2A, &c.outcome)
	return c, nil
}

// settle records the decision as the handler's answer showed it, herr
// being its error, by the engine's rule (exchange.Recorder.Settled): a
// version refusal as the refusal, in an event of its own, any other answer
// as served when it was not recorded yet. It returns the audit's refusal,
// which replaces the answer, when a required record failed.
func (c *call) settle(herr error) error {
	if c.checked {
		return nil
	}
	v := exchange.Served
	if refuses(herr) {
		v = exchange.Refused
	}
	o := c.i.rec.Settled(c.ctx, negotiate.Destination{}, c.subject, &c.outcome, &c.payload, v, c.recorded)
	c.recorded = true
	c.i.observe(c.ctx, c.method, &o)
	if o.Rule == negotiate.RuleAudit {
		return internal(auditMessage)
	}
	return nil
}

// observe hands the exchange to Options.Observe, when set.
func (i *Interceptor) observe(ctx context.Context, method string, o *negotiate.Outcome) {
	if i.opts.Observe != nil {
		i.opts.Observe(ctx, negotiate.Exchange{Method: method, Outcome: *o})
	}
}

// subject resolves the caller's Subject ([exchange.Subject]).
func (i *Interceptor) subject(ctx context.Context, md metadata.MD) (s *negotiate.Subject, invalid string) {
	if i.opts.Subject != nil {
		s = i.opts.Subject(ctx, md)
	}
	return exchange.Subject(ctx, s, i.opts.StrictSubject, i.log)
}

// readVersion reads the A2A-Version of a call from its metadata: every
// value of a2a-version, and of the same key in another case, which gRPC
// never delivers but a hand-built metadata.MD can hold. How the values
// are read is A2A's rule for every binding (package a2aversion): one
// value is the version or malformed, several are refused. The read is
// linear in the values' size and keeps at most a2aversion.MaxListed of
// them; gRPC bounds the metadata as a whole (the server's
// MaxHeaderListSize).
func readVersion(md metadata.MD) a2aversion.Requested {
	all := md[metadataKey]
	var keys []string
	for k := range md {
		if k != metadataKey && strings.EqualFold(k, metadataKey) {
			keys = append(keys, k)
		}
	}
	if keys != nil {
		slices.Sort(keys) // a refusal's message does not depend on map order
		all = slices.Clone(all)
		for _, k := range keys {
			all = append(all, md[k]...)
		}
	}
	return a2aversion.Read(all)
}

// auditMessage is the message of a refusal for an event that could not
// be recorded.
const auditMessage = "the A2A version negotiation could not be recorded; retry"

// reasonInternal is the ErrorInfo reason of an internal error, as a2a-go
// writes it.
const reasonInternal = "INTERNAL_ERROR"

// refusal is the status of a version refusal as a2a-go's gRPC server
// writes one (its internal/grpcutil) and its client reads it as
// a2a.ErrVersionNotSupported: FAILED_PRECONDITION with a google.rpc
// ErrorInfo whose reason is VERSION_NOT_SUPPORTED, in the A2A domain, and
// the versions this caller could be served in its supportedVersions, as
// the other bindings carry them.
func refusal(msg string, servable []string) error {
	return withInfo(codes.FailedPrecondition, msg, &errdetails.ErrorInfo{
		Reason: rpcerr.A2AReasonVersionNotSupported, Domain: rpcerr.A2AErrorDomain,
		Metadata: map[string]string{"supportedVersions": strings.Join(servable, ",")}})
}

// internal is the status of a call the host cannot serve for a fault of
// its own, as a2a-go writes an internal error.
func internal(msg string) error {
	return withInfo(codes.Internal, msg, &errdetails.ErrorInfo{Reason: reasonInternal, Domain: rpcerr.A2AErrorDomain})
}

func withInfo(code codes.Code, msg string, info *errdetails.ErrorInfo) error {
	st, err := status.New(code, msg).WithDetails(info)
	if err != nil {
		panic("a2agrpc: an ErrorInfo does not marshal: " + err.Error()) // unreachable: a registered message
	}
	return st.Err()
}

// refuses reports whether err is a version refusal as a2a-go's client
// reads one (and surfaces as a2a.ErrVersionNotSupported): a status
// FAILED_PRECONDITION carrying an ErrorInfo with reason
// VERSION_NOT_SUPPORTED, whatever its domain.
func refuses(err error) bool { return refusalInfo(err) != nil }

// refusalInfo is the ErrorInfo by which err refuses the version (see
// refuses), nil when err is no version refusal.
func refusalInfo(err error) *errdetails.ErrorInfo {
	if err == nil {
		return nil
	}
	s, ok := status.FromError(err)
	if !ok || s.Code() != codes.FailedPrecondition {
		return nil
	}
	for _, d := range s.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetReason() == rpcerr.A2AReasonVersionNotSupported {
			return info
		}
	}
	return nil
}

// Version returns the A2A version the interceptor decided for the call
// whose context ctx is, and false when ctx did not come through an
// [Interceptor]. The handler serves that version, and only that one.
func Version(ctx context.Context) (string, bool) {
	o, ok := exchange.Outcome(ctx, facets.ProtocolA2A)
	return o.Version, ok
}
