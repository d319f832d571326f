package main

import (
	"errors"
	"net"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	a2agrpcv0 "github.com/a2aproject/a2a-go/v2/a2agrpc/v0"
	a2agrpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
)

// TestGRPC runs a2a-go's own gRPC client against the host's second port:
// served at 1.0 by the same agent, the decision in the same record as
// the JSON-RPC mount's; an anonymous 0.3 client is refused with
// a2a.ErrVersionNotSupported (a downgrade is for an authenticated caller),
// and one presenting the bearer token is served at 0.3.
func TestGRPC(t *testing.T) {
	rec := &negotiatetest.Recorder{}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	set := defaultFacets()
	set.A2A = &facets.A2A{Versions: []string{"0.3", "1.0"}, PreferredVersion: "1.0", MinimumVersion: "0.3"}
	h, err := newHost(config{Addr: "127.0.0.1:0", Token: "t", Facets: set}, rec, append(mounts, mountGRPC(lis))...)
	if err != nil {
		t.Fatal(err)
	}
	serve(t, h)
	ctx := t.Context()
	send := func(version string, token bool) (string, error) {
		t.Helper()
		c, err := a2aclient.NewFromEndpoints(ctx,
			[]*a2a.AgentInterface{{URL: lis.Addr().String(), ProtocolBinding: a2a.TransportProtocolGRPC, ProtocolVersion: a2a.ProtocolVersion(version)}},
			a2agrpcv1.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())),
			a2agrpcv0.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Destroy()
		callCtx := ctx
		if token {
			callCtx = a2aclient.AttachServiceParams(ctx, a2aclient.ServiceParams{"Authorization": {"Bearer t"}})
		}
		res, err := c.SendMessage(callCtx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello"))})
		if err != nil {
			return "", err
		}
		m, _ := res.(*a2a.Message)
		if m == nil || len(m.Parts) != 1 {
			t.Fatalf("SendMessage returned %#v", res)
		}
		return m.Parts[0].Text(), nil
	}
	if got, err := send("1.0", false); err != nil || got != "hello (served at A2A 1.0)" {
		t.Errorf("1.0: %q, %v", got, err)
	}
	if _, err := send("0.3", false); !errors.Is(err, a2a.ErrVersionNotSupported) {
		t.Errorf("anonymous 0.3: %v", err)
	}
	if got, err := send("0.3", true); err != nil || got != "hello (served at A2A 0.3)" {
		t.Errorf("authenticated 0.3: %q, %v", got, err)
	}
	var got []string
	for _, e := range rec.Events() {
		if e.Payload.Protocol == facets.ProtocolA2A {
			got = append(got, e.Payload.Outcome+" "+e.Payload.Requested+" "+e.Payload.Reason)
		}
	}
	want := []string{"accepted 1.0 " + events.ReasonOK, "refused 0.3 " + events.ReasonUnauthenticated, "accepted 0.3 " + events.ReasonOK}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("recorded %q, want %q", got, want)
	}
}
