package a2agrpc_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/policy"
)

// TestA2AGoClient drives a2a-go's own gRPC server behind the Interceptor
// with a2a-go's own gRPC client: what it is served, what it is refused
// with, and what is recorded.
func TestA2AGoClient(t *testing.T) {
	for _, tc := range []struct {
		name    string
		floor   string
		version string
		auth    bool
		refused bool // a2a-go's client surfaces a2a.ErrVersionNotSupported
		want    events.NegotiationDecided
	}{
		{"1.0, anonymous", "0.3", "1.0", false, false, accepted("1.0", "1.0", "0.3")},
		{"0.3, authenticated", "0.3", "0.3", true, false, accepted("0.3", "0.3", "0.3")},
		{"unauthenticated downgrade", "0.3", "0.3", false, true, refused("0.3", events.ReasonUnauthenticated, "0.3")},
		{"below the floor", "1.0", "0.3", true, true, refused("0.3", events.ReasonBelowFloor, "1.0")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startHost(t, tc.floor, policy.Policy{}, agent{})
			ctx := context.Background()
			if tc.auth {
				ctx = authed(ctx)
			}
			_, err := h.client(t, tc.version).SendMessage(ctx, hello())
			if tc.refused != errors.Is(err, a2a.ErrVersionNotSupported) || !tc.refused && err != nil {
				t.Fatalf("SendMessage: %v", err)
			}
			if got := h.payloads(); !reflect.DeepEqual(got, []events.NegotiationDecided{tc.want}) {
				t.Errorf("recorded %+v, want %+v", got, tc.want)
			}
			var want []string
			if !tc.refused {
				want = []string{tc.version}
			}
			if got := h.seen.all(); !reflect.DeepEqual(got, want) {
				t.Errorf("the agent saw %v, want %v", got, want)
			}
		})
	}
}

// TestServedVersionInHeader: the header metadata carries the version
// served, and on a refusal the preferred one.
func TestServedVersionInHeader(t *testing.T) {
	h := startHost(t, "0.3", policy.Policy{}, agent{})
	c := a2apb.NewA2AServiceClient(h.conn(t))
	for _, tc := range []struct {
		sent, auth, want string
		refused          bool
	}{
		{"1.0", "", "1.0", false},
		{"0.3", token, "0.3", false},
		{"0.3", "", "1.0", true},
	} {
		md := metadata.Pairs("a2a-version", tc.sent)
		if tc.auth != "" {
			md.Set("authorization", tc.auth)
		}
		var header metadata.MD
		_, err := c.SendMessage(metadata.NewOutgoingContext(context.Background(), md), &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "m", Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "hi"}}}}}, grpc.Header(&header))
		if (err != nil) != tc.refused {
			t.Fatalf("%s: %v", tc.sent, err)
		}
		if got := header.Get("a2a-version"); !reflect.DeepEqual(got, []string{tc.want}) {
			t.Errorf("%s: a2a-version header %v, want %s", tc.sent, got, tc.want)
		}
	}
}

// TestNoVersionHeaderOnTheHandlersRefusal: an answer in which the handler
// refused the version carries no a2a-version; a stream's served answer
// carries the version served.
func TestNoVersionHeaderOnTheHandlersRefusal(t *testing.T) {
	msg := &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "m", Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "hi"}}}}}
	ctx := metadata.AppendToOutgoingContext(context.Background(), "a2a-version", "1.0")
	for _, tc := range []struct {
		agent agent
		want  []string
	}{
		{agent{err: a2a.ErrVersionNotSupported}, nil},
		{agent{stream: true}, []string{"1.0"}},
		{agent{err: a2a.ErrInvalidParams}, []string{"1.0"}},
	} {
		h := startHost(t, "0.3", policy.Policy{}, tc.agent)
		c := a2apb.NewA2AServiceClient(h.conn(t))
		var header metadata.MD
		_, _ = c.SendMessage(ctx, msg, grpc.Header(&header))
		if got := header.Get("a2a-version"); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%+v, unary: a2a-version %v, want %v", tc.agent, got, tc.want)
		}
		s, err := c.SendStreamingMessage(ctx, msg)
		if err != nil {
			t.Fatal(err)
		}
		for err == nil {
			_, err = s.Recv()
		}
		streamed, _ := s.Header()
		if got := streamed.Get("a2a-version"); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%+v, streaming: a2a-version %v, want %v", tc.agent, got, tc.want)
		}
	}
}
