package a2agrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	a2agrpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/wopneg/wopneg/a2agrpc"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// serveCard serves card at the well-known path on loopback, and returns
// the peer's URL.
func serveCard(t *testing.T, card *a2a.AgentCard) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// grpcCard is the card of an agent whose gRPC interface is at addr, at
// each of versions, with a JSON-RPC interface at 1.0 beside it when
// jsonrpc is set.
func grpcCard(addr string, jsonrpc bool, versions ...string) *a2a.AgentCard {
	card := &a2a.AgentCard{Name: "peer", Description: "a gRPC peer", Version: "1.0.0", Capabilities: a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"}}
	if jsonrpc {
		card.SupportedInterfaces = append(card.SupportedInterfaces, &a2a.AgentInterface{URL: "http://" + addr, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "1.0"})
	}
	for _, v := range versions {
		card.SupportedInterfaces = append(card.SupportedInterfaces, &a2a.AgentInterface{URL: addr, ProtocolBinding: a2a.TransportProtocolGRPC, ProtocolVersion: a2a.ProtocolVersion(v)})
	}
	return card
}

// outbound is the calling host: its negotiator and its record.
type outbound struct {
	n   *negotiate.Negotiator
	rec *negotiatetest.Recorder
}

func newOutbound(t *testing.T) *outbound {
	t.Helper()
	n, err := negotiate.Compile(hostFacets("0.3"), policy.Policy{Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	return &outbound{n: n, rec: &negotiatetest.Recorder{}}
}

func (o *outbound) options(subject *negotiate.Subject) a2ahttp.OutboundOptions {
	return a2ahttp.OutboundOptions{Sink: o.rec, Subject: subject, AllowLoopback: true}
}

func (o *outbound) payloads() []events.NegotiationDecided {
	var out []events.NegotiationDecided
	for _, e := range o.rec.Events() {
		out = append(out, e.Payload)
	}
	return out
}

// withDigest is p with the peer's digest, as an outbound record carries it.
func withDigest(t *testing.T, p events.NegotiationDecided, peer string) events.NegotiationDecided {
	t.Helper()
	d, err := events.PeerDigest(peer)
	if err != nil {
		t.Fatal(err)
	}
	p.PeerDigest = d
	return p
}

// TestConnectA2AGo: Connect negotiates from the card's gRPC interface,
// and a2a-go's own client, dialled with its options, calls a2a-go's gRPC
// server (behind the Interceptor) at that version, unary and streaming.
func TestConnectA2AGo(t *testing.T) {
	h := startHost(t, "0.3", policy.Policy{}, agent{})
	peer := serveCard(t, grpcCard(h.addr, false, "1.0"))
	out := newOutbound(t)
	dial, o, err := a2agrpc.Connect(context.Background(), out.n, peer, out.options(nil))
	if err != nil || o.Version != "1.0" {
		t.Fatalf("Connect: %+v, %v", o, err)
	}
	c, err := a2aclient.NewFromCard(context.Background(), grpcCard(h.addr, false, "1.0"),
		a2agrpcv1.WithGRPCTransport(append(dial, grpc.WithTransportCredentials(insecure.NewCredentials()))...))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Destroy()
	if _, err := c.SendMessage(context.Background(), hello()); err != nil {
		t.Fatal(err)
	}
	for _, err := range c.SendStreamingMessage(context.Background(), hello()) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got, want := out.payloads(), []events.NegotiationDecided{withDigest(t, accepted("1.0", "1.0", "0.3"), peer)}; !reflect.DeepEqual(got, want) {
		t.Errorf("the caller recorded %+v, want %+v", got, want)
	}
	if got := h.seen.all(); !reflect.DeepEqual(got, []string{"1.0", "1.0"}) {
		t.Errorf("the agent saw %v", got)
	}
}

// TestNegotiateReadsTheGRPCInterfaces: the versions offered are those of
// the card's gRPC interfaces, not its JSON-RPC one.
func TestNegotiateReadsTheGRPCInterfaces(t *testing.T) {
	peer := serveCard(t, grpcCard("127.0.0.1:1", true, "0.3"))
	out := newOutbound(t)
	o, offers, err := a2agrpc.Negotiate(context.Background(), out.n, peer, out.options(peerAgent()))
	if err != nil || o.Version != "0.3" || !reflect.DeepEqual(offers, []string{"0.3"}) {
		t.Errorf("Negotiate = %+v, %v, %v", o, offers, err)
	}
	// Anonymous, the downgrade to the gRPC interface's 0.3 is refused.
	o, _, err = a2agrpc.Negotiate(context.Background(), out.n, peer, out.options(nil))
	if err == nil || o.Kind != negotiate.Refused {
		t.Errorf("anonymous: %+v, %v", o, err)
	}
	if _, _, err := a2agrpc.Connect(context.Background(), out.n, peer, out.options(nil)); err == nil {
		t.Errorf("Connect of a refused negotiation gave no error")
	}
}

// TestPeerRefusesAtRuntime: a call the peer refuses for its version is
// recorded as the refusal, after the card's acceptance, and a2a-go's
// client still surfaces ErrVersionNotSupported.
func TestPeerRefusesAtRuntime(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		h := startHost(t, "0.3", policy.Policy{}, agent{err: a2a.ErrVersionNotSupported})
		peer := serveCard(t, grpcCard(h.addr, false, "1.0"))
		out := newOutbound(t)
		dial, _, err := a2agrpc.Connect(context.Background(), out.n, peer, out.options(nil))
		if err != nil {
			t.Fatal(err)
		}
		c, err := a2aclient.NewFromCard(context.Background(), grpcCard(h.addr, false, "1.0"),
			a2agrpcv1.WithGRPCTransport(append(dial, grpc.WithTransportCredentials(insecure.NewCredentials()))...))
		if err != nil {
			t.Fatal(err)
		}
		if streaming {
			for _, e := range c.SendStreamingMessage(context.Background(), hello()) {
				err = e
			}
		} else {
			_, err = c.SendMessage(context.Background(), hello())
		}
		c.Destroy()
		if !errors.Is(err, a2a.ErrVersionNotSupported) {
			t.Errorf("streaming %t: the client surfaced %v", streaming, err)
		}
		want := []events.NegotiationDecided{withDigest(t, accepted("1.0", "1.0", "0.3"), peer), withDigest(t, refused("1.0", events.ReasonUnsupported, "0.3"), peer)}
		if got := out.payloads(); !reflect.DeepEqual(got, want) {
			t.Errorf("streaming %t: the caller recorded %+v,\nwant %+v", streaming, got, want)
		}
	}
}

// listingRefusal is a peer's A2A service whose every call is refused for
// its version, with an ErrorInfo that lists what the peer serves.
type listingRefusal struct {
	a2apb.UnimplementedA2AServiceServer
	supported string
}

func (l listingRefusal) SendMessage(context.Context, *a2apb.SendMessageRequest) (*a2apb.SendMessageResponse, error) {
	st, err := status.New(codes.FailedPrecondition, "not this version").WithDetails(&errdetails.ErrorInfo{
		Reason: "VERSION_NOT_SUPPORTED", Domain: "a2a-protocol.org", Metadata: map[string]string{"supportedVersions": l.supported}})
	if err != nil {
		return nil, err
	}
	return nil, st.Err()
}

// TestPeerRefusalListing: a peer's runtime refusal is recorded by what its
// ErrorInfo lists, as every Transport records one: below-floor when every
// version it lists is below the floor, unsupported otherwise.
func TestPeerRefusalListing(t *testing.T) {
	for _, tc := range []struct{ supported, reason string }{
		{"0.2", events.ReasonBelowFloor},
		{" 0.1 , 0.2 ", events.ReasonBelowFloor},
		{"0.2,1.0", events.ReasonUnsupported},
		{"", events.ReasonUnsupported},
	} {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s := grpc.NewServer()
		a2apb.RegisterA2AServiceServer(s, listingRefusal{supported: tc.supported})
		go func() { _ = s.Serve(lis) }()
		peer := serveCard(t, grpcCard(lis.Addr().String(), false, "1.0"))
		out := newOutbound(t)
		dial, _, err := a2agrpc.Connect(context.Background(), out.n, peer, out.options(nil))
		if err != nil {
			t.Fatal(err)
		}
		cc, err := grpc.NewClient(lis.Addr().String(), append(dial, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
		if err != nil {
			t.Fatal(err)
		}
		_, err = a2apb.NewA2AServiceClient(cc).SendMessage(context.Background(), &a2apb.SendMessageRequest{})
		cc.Close()
		s.Stop()
		if status.Code(err) != codes.FailedPrecondition {
			t.Errorf("%q: the caller got %v", tc.supported, err)
		}
		want := []events.NegotiationDecided{withDigest(t, accepted("1.0", "1.0", "0.3"), peer), withDigest(t, refused("1.0", tc.reason, "0.3"), peer)}
		if got := out.payloads(); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: the caller recorded %+v,\nwant %+v", tc.supported, got, want)
		}
	}
}

// TestStampedCalls: every call of the A2A services carries the negotiated
// version and the host's trace context; one that names another version is
// refused unsent; other services' calls go as they are.
func TestStampedCalls(t *testing.T) {
	var mu sync.Mutex
	var got []metadata.MD
	h := startHost(t, "0.3", policy.Policy{}, agent{}, func(o *a2agrpc.Options) {
		o.Subject = func(_ context.Context, md metadata.MD) *negotiate.Subject {
			mu.Lock()
			got = append(got, md)
			mu.Unlock()
			return nil
		}
	})
	peer := serveCard(t, grpcCard(h.addr, false, "1.0"))
	out := newOutbound(t)
	opts := out.options(nil)
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	opts.TraceContext = func(context.Context) (string, string) { return parent, "vendor=x" }
	dial, _, err := a2agrpc.Connect(context.Background(), out.n, peer, opts)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := grpc.NewClient(h.addr, append(dial, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	c := a2apb.NewA2AServiceClient(cc)
	msg := &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "m", Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "hi"}}}}}
	for _, sent := range []metadata.MD{nil, metadata.Pairs("a2a-version", "1.0"), {"A2A-Version": {"1.0"}}} {
		ctx := context.Background()
		if sent != nil {
			ctx = metadata.NewOutgoingContext(ctx, sent)
		}
		if _, err := c.SendMessage(ctx, msg); err != nil {
			t.Errorf("%v: %v", sent, err)
		}
	}
	for _, sent := range []metadata.MD{metadata.Pairs("a2a-version", "0.3"), metadata.Pairs("a2a-version", "1.0, 0.3"), {"A2A-VERSION": {"2.0"}}} {
		_, err := c.SendMessage(metadata.NewOutgoingContext(context.Background(), sent), msg)
		if !errors.Is(err, a2ahttp.ErrVersionConflict) {
			t.Errorf("%v: %v, want ErrVersionConflict", sent, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 {
		t.Fatalf("%d calls reached the server, want 3", len(got))
	}
	for _, md := range got {
		if !reflect.DeepEqual(md.Get("a2a-version"), []string{"1.0"}) || !reflect.DeepEqual(md.Get("traceparent"), []string{parent}) || !reflect.DeepEqual(md.Get("tracestate"), []string{"vendor=x"}) {
			t.Errorf("the server got %v", md)
		}
	}
}

// TestNoCard: a peer that serves no card is no decision: nothing recorded.
func TestNoCard(t *testing.T) {
	out := newOutbound(t)
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	for _, peer := range []string{srv.URL, "grpc://127.0.0.1:1"} {
		if _, _, err := a2agrpc.Negotiate(context.Background(), out.n, peer, out.options(nil)); err == nil {
			t.Errorf("%s: no error", peer)
		}
	}
	if n := len(out.rec.Events()); n != 0 {
		t.Errorf("%d events for no card", n)
	}
	if _, _, err := a2agrpc.Negotiate(context.Background(), out.n, srv.URL, a2ahttp.OutboundOptions{Sink: out.rec, MaxCardBytes: -1}); err == nil {
		t.Errorf("a negative bound: no error")
	}
	if _, _, err := a2agrpc.Negotiate(context.Background(), nil, srv.URL, out.options(nil)); err == nil {
		t.Errorf("a nil Negotiator: no error")
	}
}

// TestCardRefusedAtThePreferredVersion: a peer that refuses the preferred
// version on its card (as a2ahttp answers one it does not serve) is asked
// again naming none, as a2ahttp.Negotiate asks it, and that card decides.
func TestCardRefusedAtThePreferredVersion(t *testing.T) {
	card, err := json.Marshal(grpcCard("127.0.0.1:1", false, "1.0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("A2A-Version") != "" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"no","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED","domain":"a2a-protocol.org"}]}}`))
			return
		}
		_, _ = w.Write(card)
	}))
	defer srv.Close()
	out := newOutbound(t)
	o, offers, err := a2agrpc.Negotiate(context.Background(), out.n, srv.URL, out.options(nil))
	if err != nil || o.Version != "1.0" || !reflect.DeepEqual(offers, []string{"1.0"}) {
		t.Errorf("Negotiate = %+v, %v, %v", o, offers, err)
	}
}
