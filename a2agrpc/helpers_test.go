package a2agrpc_test

import (
	"context"
	"errors"
	"iter"
	"log/slog"
	"net"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	a2agrpcv0 "github.com/a2aproject/a2a-go/v2/a2agrpc/v0"
	a2agrpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/wopneg/wopneg/a2agrpc"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// testNow is the hosts' fixed clock, so that events compare exactly.
var testNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// hostFacets offers 0.3 and 1.0, prefers 1.0, and has its floor at floor,
// so that the unauthenticated downgrade (0.3 with floor 0.3) and the
// below-floor request (0.3 with floor 1.0) are both live.
func hostFacets(floor string) facets.Set {
	return facets.Set{A2A: &facets.A2A{Versions: []string{"0.3", "1.0"}, PreferredVersion: "1.0", MinimumVersion: floor, RefreshedAt: "2026-11-01"}}
}

// token is the credential the hosts trust.
const token = "Bearer grpc-token"

func peerAgent() *negotiate.Subject {
	return &negotiate.Subject{Issuer: "https://idp.example", SubjectID: "peer-agent", Tenant: "acme", Lane: policy.LaneOIDC, Kind: policy.KindAgent}
}

// subjectOf resolves the caller as a host would: an authenticated agent
// for the trusted token in the authorization metadata, nobody otherwise.
func subjectOf(_ context.Context, md metadata.MD) *negotiate.Subject {
	if v := md.Get("authorization"); len(v) == 1 && v[0] == token {
		return peerAgent()
	}
	return nil
}

// agent answers "hello", or fails with err, in one event or, with stream,
// after a first working event.
type agent struct {
	err    error
	stream bool
	seen   *seen
	// before, when set, runs before the agent fails with err.
	before func()
}

// seen is what the agent saw of the version, call by call.
type seen struct {
	mu       sync.Mutex
	versions []string
}

func (s *seen) add(v string) {
	s.mu.Lock()
	s.versions = append(s.versions, v)
	s.mu.Unlock()
}

func (s *seen) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.versions)
}

func (a agent) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if a.seen != nil {
			v, _ := a2agrpc.Version(ctx)
			a.seen.add(v)
		}
		if a.stream {
			if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
				return
			}
		}
		if a.err != nil {
			if a.before != nil {
				a.before()
			}
			yield(nil, a.err)
			return
		}
		if a.stream {
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
			return
		}
		yield(a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("hello")), nil)
	}
}

func (agent) Cancel(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(func(a2a.Event, error) bool) {}
}

// host is a2a-go's gRPC server on loopback behind the Interceptor:
// its A2A 1.0 service and its 0.3 one, both on one grpc.Server.
type host struct {
	addr     string
	rec      *negotiatetest.Recorder
	i        *a2agrpc.Interceptor
	seen     *seen
	mu       sync.Mutex
	observed []negotiate.Exchange
}

// startHost serves a on loopback behind an Interceptor of the facets with
// floor, under p.
func startHost(t *testing.T, floor string, p policy.Policy, a agent, with ...func(*a2agrpc.Options)) *host {
	t.Helper()
	s := &seen{}
	a.seen = s
	h := start(t, floor, p, func(srv *grpc.Server) {
		rh := a2asrv.NewHandler(a)
		a2agrpcv1.NewHandler(rh).RegisterWith(srv)
		a2agrpcv0.NewHandler(rh).RegisterWith(srv)
	}, with...)
	h.seen = s
	return h
}

// start serves what register registers, and a health service, on
// loopback behind an Interceptor of the facets with floor, under p.
func start(t *testing.T, floor string, p policy.Policy, register func(*grpc.Server), with ...func(*a2agrpc.Options)) *host {
	t.Helper()
	if p.Now == nil {
		p.Now = func() time.Time { return testNow }
	}
	n, err := negotiate.Compile(hostFacets(floor), p)
	if err != nil {
		t.Fatal(err)
	}
	h := &host{rec: &negotiatetest.Recorder{}}
	opts := a2agrpc.Options{Sink: h.rec, Subject: subjectOf, Observe: func(_ context.Context, x negotiate.Exchange) {
		h.mu.Lock()
		h.observed = append(h.observed, x)
		h.mu.Unlock()
	}}
	for _, f := range with {
		f(&opts)
	}
	h.i, err = a2agrpc.New(n, opts)
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(h.i.ServerOptions()...)
	healthpb.RegisterHealthServer(s, health.NewServer())
	register(s)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	h.addr = lis.Addr().String()
	return h
}

func (h *host) exchanges() []negotiate.Exchange {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.observed)
}

// payloads are the negotiation.decided payloads recorded, in order.
func (h *host) payloads() []events.NegotiationDecided {
	var out []events.NegotiationDecided
	for _, e := range h.rec.Events() {
		out = append(out, e.Payload)
	}
	return out
}

// conn dials h.
func (h *host) conn(t *testing.T) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient(h.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// client is a2a-go's own gRPC client of h, speaking version.
func (h *host) client(t *testing.T, version string) *a2aclient.Client {
	t.Helper()
	c, err := a2aclient.NewFromEndpoints(context.Background(),
		[]*a2a.AgentInterface{{URL: h.addr, ProtocolBinding: a2a.TransportProtocolGRPC, ProtocolVersion: a2a.ProtocolVersion(version)}},
		a2agrpcv1.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())),
		a2agrpcv0.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

// authed is ctx with the trusted token in the call's service parameters.
func authed(ctx context.Context) context.Context {
	return a2aclient.AttachServiceParams(ctx, a2aclient.ServiceParams{"Authorization": {token}})
}

func hello() *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))}
}

func accepted(version, requested string, floor string) events.NegotiationDecided {
	return events.NegotiationDecided{Protocol: facets.ProtocolA2A, Outcome: "accepted", Version: version, Requested: requested, Reason: events.ReasonOK, Floor: floor, At: testNow}
}

func refused(requested, reason, floor string) events.NegotiationDecided {
	return events.NegotiationDecided{Protocol: facets.ProtocolA2A, Outcome: "refused", Requested: requested, Reason: reason, Floor: floor, At: testNow}
}

var errDown = errors.New("the audit store is down")

// errorInfo is the ErrorInfo detail of st, nil when it has none.
func errorInfo(st *status.Status) *errdetails.ErrorInfo {
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info
		}
	}
	return nil
}

// TestMain quiets a2a-go's log lines and the module's own, which the
// tests read through their sinks and statuses.
func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler))
	os.Exit(m.Run())
}
