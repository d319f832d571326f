package a2agrpc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/a2acard"
	"github.com/wopneg/wopneg/internal/a2aversion"
	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/internal/tracectx"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
)

// defaultMaxCardBytes bounds the agent card when
// OutboundOptions.MaxCardBytes is zero, as a2ahttp bounds it.
const defaultMaxCardBytes = 1 << 20

// binding is the protocolBinding of an agent card's gRPC interfaces.
const binding = "GRPC"

// Negotiate settles the A2A version a host speaks to the peer at peerURL
// over gRPC, as a2ahttp.Negotiate does over HTTP, with the same options,
// the same fetch (GET <peer>/.well-known/agent-card.json at the preferred
// version, through the egress policy of opts, asked again naming none
// when the peer refuses that version on its card) and the same record:
// the versions offered are those of the card's gRPC interfaces
// (supportedInterfaces[] whose protocolBinding is GRPC, and their
// protocolVersion; a 0.3 card's protocolVersion when its
// preferredTransport or one of its additionalInterfaces is GRPC). The
// outcome, offers and error are a2ahttp.Negotiate's; opts.MaxAnswerBytes
// is unused (a gRPC answer is read by gRPC).
func Negotiate(ctx context.Context, n *negotiate.Negotiator, peerURL string, opts a2ahttp.OutboundOptions) (negotiate.Outcome, []string, error) {
	adv, err := exchange.Check("a2agrpc", n, opts.Sink, facets.ProtocolA2A)
	if err != nil {
		return negotiate.Outcome{}, nil, err
	}
	if opts.MaxCardBytes < 0 {
		return negotiate.Outcome{}, nil, fmt.Errorf("a2agrpc: OutboundOptions.MaxCardBytes %d is negative", opts.MaxCardBytes)
	}
	rec := exchange.Recorder{Pkg: "a2agrpc", N: n, Sink: opts.Sink, Log: opts.ErrorLog}
	f := a2acard.Fetch{Client: egressOf(&opts).Fetcher(), Max: cmp.Or(opts.MaxCardBytes, defaultMaxCardBytes), Trace: opts.TraceContext, Binding: binding}
	offers, err := f.Offers(ctx, peerURL, adv.Preferred)
	if err != nil {
		return negotiate.Outcome{}, nil, rec.NoDecision(ctx, facets.ProtocolA2A, peerURL, err)
	}
	// RFC 0242: outbound, requested is what the host asks the peer for,
	// and absent a choice that is its preferred version.
	offer := negotiate.Offer{Protocol: facets.ProtocolA2A, Peer: peerURL, Requested: cmp.Or(opts.Requested, adv.Preferred), PeerVersions: offers}
	outcome, auditErr := rec.DecideAndRecord(ctx, opts.Destination, opts.Subject, offer)
	if outcome.Err() == nil {
		return outcome, offers, auditErr
	}
	return outcome, offers, errors.Join(outcome.Err(), auditErr)
}

// egressOf is how o reaches the peer.
func egressOf(o *a2ahttp.OutboundOptions) exchange.Egress {
	return exchange.Egress{Client: o.Client, AllowLoopback: o.AllowLoopback, AllowPrivate: o.AllowPrivate}
}

// Connect is [Negotiate] that keeps what it settled for the calls that
// follow: it returns the outcome and, when it is accepted, the dial
// options of a connection to the peer's gRPC interface (give them to
// grpc.NewClient, or to a2a-go's a2agrpc.WithGRPCTransport). Their client
// interceptors, unary and streaming, stamp every call of the A2A services
// with a2a-version at the negotiated version, and with the trace context
// of opts.TraceContext in its traceparent and tracestate metadata, and
// refuse, sending nothing, a call whose metadata names another version
// (an error wrapping a2ahttp.ErrVersionConflict). A call the peer refuses
// for its version (FAILED_PRECONDITION with the reason
// VERSION_NOT_SUPPORTED) is recorded as a refused negotiation.decided,
// reason unsupported, requested the version, with n for opts.Subject at
// opts.Destination through opts.Sink, and its status is handed back
// unchanged, for a2a-go's client to surface as a2a.ErrVersionNotSupported.
// The error is Negotiate's; a refused outcome, or none, comes with no
// options.
func Connect(ctx context.Context, n *negotiate.Negotiator, peerURL string, opts a2ahttp.OutboundOptions) ([]grpc.DialOption, negotiate.Outcome, error) {
	o, _, err := Negotiate(ctx, n, peerURL, opts)
	if o.Err() != nil {
		return nil, o, err
	}
	s := &stamp{version: o.Version, trace: opts.TraceContext,
		peer: &exchange.Peer{Recorder: exchange.Recorder{Pkg: "a2agrpc", N: n, Sink: opts.Sink, Log: opts.ErrorLog}, URL: peerURL, Subject: opts.Subject, Dest: opts.Destination}}
	return []grpc.DialOption{grpc.WithChainUnaryInterceptor(s.unary), grpc.WithChainStreamInterceptor(s.stream)}, o, err
}

// stamp is the client side of a negotiated peer: the version its calls
// carry, and how its refusal is recorded.
type stamp struct {
	version string
	trace   negotiate.TraceContext
	peer    *exchange.Peer
}

func (s *stamp) unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if !isA2A(method) {
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	ctx, err := s.stamped(ctx)
	if err != nil {
		return err
	}
	err = invoker(ctx, method, req, reply, cc, opts...)
	if refuses(err) {
		s.refused(ctx, err)
	}
	return err
}

func (s *stamp) stream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	if !isA2A(method) {
		return streamer(ctx, desc, cc, method, opts...)
	}
	ctx, err := s.stamped(ctx)
	if err != nil {
		return nil, err
	}
	// The peer answers a stream, its refusal included, only once it has
	// the request, which the caller sends after this returns: a refusal
	// comes through RecvMsg.
	cs, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		return nil, err
	}
	return &clientWatch{ClientStream: cs, s: s, ctx: ctx}, nil
}

// clientWatch is a call's stream as its caller reads it: the peer's
// refusal, which ends it, is recorded once.
type clientWatch struct {
	grpc.ClientStream
	s        *stamp
	ctx      context.Context
	recorded bool
}

func (w *clientWatch) RecvMsg(m any) error {
	err := w.ClientStream.RecvMsg(m)
	if !w.recorded && refuses(err) {
		w.recorded = true
		w.s.refused(w.ctx, err)
	}
	return err
}

// isA2A reports whether fullMethod is a method of an A2A service.
func isA2A(fullMethod string) bool {
	svc, _, _ := strings.Cut(strings.TrimPrefix(fullMethod, "/"), "/")
	return slices.Contains(services, svc)
}

// stamped returns ctx with the call's outgoing metadata stamped: the
// negotiated version, and the trace context when the caller set none; or
// an error wrapping a2ahttp.ErrVersionConflict when the caller named
// another version.
func (s *stamp) stamped(ctx context.Context) (context.Context, error) {
	md, _ := metadata.FromOutgoingContext(ctx)
	var sent []string
	for k, vs := range md {
		if strings.EqualFold(k, metadataKey) {
			sent = append(sent, vs...)
		}
	}
	for _, v := range sent {
		for elem := range strings.SplitSeq(v, ",") {
			if e := strings.Trim(elem, " \t"); e != "" && e != s.version {
				slices.Sort(sent)
				return nil, fmt.Errorf("a2agrpc: the call names %s %s, but %s was negotiated with this peer; nothing was sent: %w",
					a2aversion.Name, a2aversion.QuoteList(sent), s.version, a2ahttp.ErrVersionConflict)
			}
		}
	}
	md = md.Copy()
	for k := range md {
		if strings.EqualFold(k, metadataKey) {
			delete(md, k)
		}
	}
	md[metadataKey] = []string{s.version}
	if tc := tracectx.From(ctx, s.trace); tc.Parent != "" && len(md[tracectx.Parent]) == 0 && len(md[tracectx.State]) == 0 {
		md[tracectx.Parent] = []string{tc.Parent}
		if tc.State != "" {
			md[tracectx.State] = []string{tc.State}
		}
	}
	return metadata.NewOutgoingContext(ctx, md), nil
}

// refused records the peer's refusal err, at runtime, of the version the
// calls are stamped with, by what its ErrorInfo lists in
// supportedVersions (see exchange.RefusalOffer). A record that fails is
// logged by the engine while the audit is not required; the caller's
// answer is the peer's refusal either way.
func (s *stamp) refused(ctx context.Context, err error) {
	listed := a2aversion.Listed(refusalInfo(err).GetMetadata()["supportedVersions"])
	_, _ = s.peer.Refused(ctx, facets.ProtocolA2A, s.version, listed)
}
