package a2agrpc_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// send sends one message through a2a-go's client at 1.0, streaming or
// not, and returns the error the client surfaced.
func send(t *testing.T, h *host, streaming bool) error {
	t.Helper()
	c := h.client(t, "1.0")
	if !streaming {
		_, err := c.SendMessage(context.Background(), hello())
		return err
	}
	for _, err := range c.SendStreamingMessage(context.Background(), hello()) {
		if err != nil {
			return err
		}
	}
	return nil
}

// TestHandlerRefusesAtRuntime: a handler that refuses the version it was
// handed (a2a.ErrVersionNotSupported, as a2a-go's server writes it) is
// recorded as the refusal, for unary and streaming calls, with and
// without RequireAudit.
func TestHandlerRefusesAtRuntime(t *testing.T) {
	acc, ref := accepted("1.0", "1.0", "0.3"), refused("1.0", events.ReasonUnsupported, "0.3")
	for _, tc := range []struct {
		name      string
		audit     bool
		streaming bool
		agent     agent
		want      []events.NegotiationDecided
	}{
		{"unary", false, false, agent{err: a2a.ErrVersionNotSupported}, []events.NegotiationDecided{ref}},
		{"unary, RequireAudit", true, false, agent{err: a2a.ErrVersionNotSupported}, []events.NegotiationDecided{acc, ref}},
		{"streaming, before any event", false, true, agent{err: a2a.ErrVersionNotSupported}, []events.NegotiationDecided{ref}},
		{"streaming, RequireAudit", true, true, agent{err: a2a.ErrVersionNotSupported}, []events.NegotiationDecided{acc, ref}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startHost(t, "0.3", policy.Policy{RequireAudit: tc.audit}, tc.agent)
			if err := send(t, h, tc.streaming); !errors.Is(err, a2a.ErrVersionNotSupported) {
				t.Fatalf("the client surfaced %v, want ErrVersionNotSupported", err)
			}
			if got := h.payloads(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("recorded %+v,\nwant %+v", got, tc.want)
			}
			x := h.exchanges()
			if len(x) == 0 || x[len(x)-1].Outcome.Kind != negotiate.Refused {
				t.Errorf("observed %+v, want the refusal last", x)
			}
		})
	}
}

// TestHandlerErrorIsNoRefusal: an error other than a version refusal
// served the version.
func TestHandlerErrorIsNoRefusal(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		h := startHost(t, "0.3", policy.Policy{}, agent{err: a2a.ErrInvalidParams})
		if err := send(t, h, streaming); !errors.Is(err, a2a.ErrInvalidParams) {
			t.Fatalf("streaming %t: the client surfaced %v", streaming, err)
		}
		if got := h.payloads(); !reflect.DeepEqual(got, []events.NegotiationDecided{accepted("1.0", "1.0", "0.3")}) {
			t.Errorf("streaming %t: recorded %+v", streaming, got)
		}
	}
}

// TestStreamDecidedOnce: a SendStreamingMessage of several events is
// decided, recorded and observed once.
func TestStreamDecidedOnce(t *testing.T) {
	for _, audit := range []bool{false, true} {
		h := startHost(t, "0.3", policy.Policy{RequireAudit: audit}, agent{stream: true})
		if err := send(t, h, true); err != nil {
			t.Fatal(err)
		}
		if got := h.payloads(); !reflect.DeepEqual(got, []events.NegotiationDecided{accepted("1.0", "1.0", "0.3")}) {
			t.Errorf("audit %t: recorded %+v", audit, got)
		}
		x := h.exchanges()
		if len(x) != 1 || x[0].Method != "SendStreamingMessage" || x[0].Outcome.Version != "1.0" || x[0].Code != 0 {
			t.Errorf("audit %t: observed %+v", audit, x)
		}
		if got := h.seen.all(); !reflect.DeepEqual(got, []string{"1.0"}) {
			t.Errorf("audit %t: the agent saw %v", audit, got)
		}
	}
}

// raw sends a SendMessage with md through the 1.0 service's generated
// client, and returns the status.
func raw(t *testing.T, h *host, md metadata.MD) *status.Status {
	t.Helper()
	c := a2apb.NewA2AServiceClient(h.conn(t))
	_, err := c.SendMessage(metadata.NewOutgoingContext(context.Background(), md),
		&a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "m", Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "hi"}}}}})
	return status.Convert(err)
}

// TestHeaderless: a call that names no version asks for 0.3 (A2A
// §3.6.2): served at 0.3 to an authenticated caller, refused as a
// downgrade to an anonymous one.
func TestHeaderless(t *testing.T) {
	h := startHost(t, "0.3", policy.Policy{}, agent{})
	if st := raw(t, h, metadata.Pairs("authorization", token)); st.Code() != codes.OK {
		t.Fatalf("authenticated: %v", st)
	}
	st := raw(t, h, metadata.MD{})
	if st.Code() != codes.FailedPrecondition || !strings.Contains(st.Message(), "(none, which A2A reads as 0.3)") {
		t.Errorf("anonymous: %v", st)
	}
	want := []events.NegotiationDecided{accepted("0.3", "0.3", "0.3"), refused("0.3", events.ReasonUnauthenticated, "0.3")}
	if got := h.payloads(); !reflect.DeepEqual(got, want) {
		t.Errorf("recorded %+v", got)
	}
	if got := h.seen.all(); !reflect.DeepEqual(got, []string{"0.3"}) {
		t.Errorf("the agent saw %v", got)
	}
}

// TestRefusalStatus: the refusal is a2a-go's: FAILED_PRECONDITION, an
// ErrorInfo VERSION_NOT_SUPPORTED in the A2A domain listing what this
// caller may have, and a message naming what was wrong.
func TestRefusalStatus(t *testing.T) {
	h := startHost(t, "0.3", policy.Policy{}, agent{})
	for _, tc := range []struct {
		md        metadata.MD
		message   string
		supported string
	}{
		{metadata.Pairs("a2a-version", "1.0", "a2a-version", "1.0"), `A2A-Version carries 2 values ("1.0", "1.0"), not one; send exactly one version; this interface serves 1.0`, "1.0"},
		{metadata.Pairs("a2a-version", "1.0,0.3"), `A2A-Version carries 2 values ("1.0", "0.3"), not one`, "1.0"},
		{metadata.Pairs("a2a-version", "v1"), `A2A-Version "v1" is not a version`, "1.0"},
		{metadata.Pairs("a2a-version", "0.3"), `is below the preferred version 1.0 and is served only to an authenticated caller`, "1.0"},
		{metadata.Pairs("a2a-version", "2.0", "authorization", token), `A2A-Version "2.0" is not served; this interface serves 0.3, 1.0`, "0.3,1.0"},
	} {
		st := raw(t, h, tc.md)
		if st.Code() != codes.FailedPrecondition || !strings.Contains(st.Message(), tc.message) {
			t.Errorf("%v: %v", tc.md, st)
			continue
		}
		info := errorInfo(st)
		if info == nil || info.Reason != "VERSION_NOT_SUPPORTED" || info.Domain != "a2a-protocol.org" || info.Metadata["supportedVersions"] != tc.supported {
			t.Errorf("%v: ErrorInfo %v", tc.md, info)
		}
	}
	if len(h.seen.all()) != 0 {
		t.Errorf("a refused call reached the agent")
	}
	if got := len(h.rec.Events()); got != 5 {
		t.Errorf("%d events, want one per refusal", got)
	}
}

// TestAuditFailure: under RequireAudit, a decision that cannot be
// recorded is refused as an internal error before the agent runs;
// without it, the call is served.
func TestAuditFailure(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		h := startHost(t, "0.3", policy.Policy{RequireAudit: true}, agent{})
		h.rec.Fail(errDown)
		if err := send(t, h, streaming); !errors.Is(err, a2a.ErrInternalError) {
			t.Errorf("streaming %t: the client surfaced %v, want ErrInternalError", streaming, err)
		}
		if len(h.seen.all()) != 0 {
			t.Errorf("streaming %t: the agent ran unrecorded", streaming)
		}
		x := h.exchanges()
		if len(x) != 1 || x[0].Outcome.Rule != negotiate.RuleAudit {
			t.Errorf("streaming %t: observed %+v", streaming, x)
		}

		h = startHost(t, "0.3", policy.Policy{}, agent{})
		h.rec.Fail(errDown)
		if err := send(t, h, streaming); err != nil {
			t.Errorf("streaming %t, audit not required: %v", streaming, err)
		}
	}
}

// TestOtherServices: a call of another service than A2A's passes
// untouched: nothing decided, nothing recorded.
func TestOtherServices(t *testing.T) {
	h := startHost(t, "0.3", policy.Policy{}, agent{})
	resp, err := healthpb.NewHealthClient(h.conn(t)).Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil || resp.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health: %v, %v", resp, err)
	}
	if n := len(h.rec.Events()); n != 0 {
		t.Errorf("%d events for a health check", n)
	}
}

// afterEvent is an A2A service whose stream sends one event, then ends
// with err.
type afterEvent struct {
	a2apb.UnimplementedA2AServiceServer
	err error
}

func (a afterEvent) SendStreamingMessage(_ *a2apb.SendMessageRequest, s grpc.ServerStreamingServer[a2apb.StreamResponse]) error {
	if err := s.Send(&a2apb.StreamResponse{Payload: &a2apb.StreamResponse_Message{Message: &a2apb.Message{MessageId: "m", Role: a2apb.Role_ROLE_AGENT}}}); err != nil {
		return err
	}
	return a.err
}

// versionRefusal is the status a2a-go's server writes for
// a2a.ErrVersionNotSupported.
func versionRefusal(t *testing.T) error {
	st, err := status.New(codes.FailedPrecondition, "not this version").WithDetails(&errdetails.ErrorInfo{Reason: "VERSION_NOT_SUPPORTED", Domain: "a2a-protocol.org"})
	if err != nil {
		t.Fatal(err)
	}
	return st.Err()
}

// TestStreamAfterAnEvent: a stream that served an event is recorded
// accepted as the event leaves, once; a version refusal after it is
// recorded too, as what the caller is left with, and any other error is
// not.
func TestStreamAfterAnEvent(t *testing.T) {
	acc, ref := accepted("1.0", "1.0", "0.3"), refused("1.0", events.ReasonUnsupported, "0.3")
	for _, tc := range []struct {
		name string
		err  error
		want []events.NegotiationDecided
	}{
		{"refused", versionRefusal(t), []events.NegotiationDecided{acc, ref}},
		{"another error", status.Error(codes.FailedPrecondition, "a precondition"), []events.NegotiationDecided{acc}},
		{"no error", nil, []events.NegotiationDecided{acc}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, "0.3", policy.Policy{}, func(s *grpc.Server) { a2apb.RegisterA2AServiceServer(s, afterEvent{err: tc.err}) })
			var last error
			events := 0
			for ev, err := range h.client(t, "1.0").SendStreamingMessage(context.Background(), hello()) {
				if ev != nil {
					events++
				}
				last = err
			}
			if events != 1 || (tc.err == nil) != (last == nil) {
				t.Fatalf("%d events, then %v", events, last)
			}
			if got := h.payloads(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("recorded %+v,\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestAuditFailsOnTheRefusal: under RequireAudit, a handler's refusal
// that cannot be recorded is replaced by the audit's internal error.
func TestAuditFailsOnTheRefusal(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		var h *host
		h = startHost(t, "0.3", policy.Policy{RequireAudit: true}, agent{err: a2a.ErrVersionNotSupported, before: func() { h.rec.Fail(errDown) }})
		if err := send(t, h, streaming); !errors.Is(err, a2a.ErrInternalError) {
			t.Errorf("streaming %t: the client surfaced %v, want ErrInternalError", streaming, err)
		}
		if got := h.payloads(); !reflect.DeepEqual(got, []events.NegotiationDecided{accepted("1.0", "1.0", "0.3")}) {
			t.Errorf("streaming %t: recorded %+v", streaming, got)
		}
		x := h.exchanges()
		if len(x) != 1 || x[0].Outcome.Rule != negotiate.RuleAudit {
			t.Errorf("streaming %t: observed %+v", streaming, x)
		}
	}
}

// TestStreamRefusedWhenItOpens: a streaming call the interceptor refuses
// never reaches the handler; a stream of another service passes.
func TestStreamRefusedWhenItOpens(t *testing.T) {
	h := startHost(t, "0.3", policy.Policy{}, agent{stream: true})
	for _, err := range h.client(t, "0.3").SendStreamingMessage(context.Background(), hello()) {
		if !errors.Is(err, a2a.ErrVersionNotSupported) {
			t.Errorf("the client surfaced %v", err)
		}
	}
	if got := h.payloads(); !reflect.DeepEqual(got, []events.NegotiationDecided{refused("0.3", events.ReasonUnauthenticated, "0.3")}) || len(h.seen.all()) != 0 {
		t.Errorf("recorded %+v, the agent saw %v", got, h.seen.all())
	}
	w, err := healthpb.NewHealthClient(h.conn(t)).Watch(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := w.Recv(); err != nil || resp.Status != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health Watch: %v, %v", resp, err)
	}
	if n := len(h.rec.Events()); n != 1 {
		t.Errorf("%d events", n)
	}
}
