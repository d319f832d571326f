package a2ae2e

import (
	"context"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	a2agrpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/wopneg/wopneg/a2agrpc"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// TestGRPCOutboundToA2AJSServer: a2agrpc.Connect negotiates with
// @a2a-js/sdk 1.3.0's own gRPC server from the GRPC interface of its card,
// and a2a-go's gRPC client, dialled with Connect's options, is served at
// the version decided, which every call carries in its a2a-version
// metadata (the JS server checks it against its card).
func TestGRPCOutboundToA2AJSServer(t *testing.T) {
	peer, _ := jsPeer(t, "grpc")
	n, err := negotiate.Compile(hostFacets(), policy.Policy{Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	rec := &negotiatetest.Recorder{}
	ctx := context.Background()
	dial, o, err := a2agrpc.Connect(ctx, n, peer, a2ahttp.OutboundOptions{Sink: rec, AllowLoopback: true})
	if err != nil || o.Version != "1.0" {
		t.Fatalf("Connect: %+v, %v", o, err)
	}
	card, err := agentcard.NewResolver(http.DefaultClient).Resolve(ctx, peer)
	if err != nil {
		t.Fatal(err)
	}
	c, err := a2aclient.NewFromCard(ctx, card, a2agrpcv1.WithGRPCTransport(append(dial, grpc.WithTransportCredentials(insecure.NewCredentials()))...))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Destroy()
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello"))})
	if err != nil {
		t.Fatal(err)
	}
	msg, ok := res.(*a2a.Message)
	if !ok || len(msg.Parts) != 1 || msg.Parts[0].Text() != "served at 1.0" {
		t.Errorf("the peer answered %#v", res)
	}
	// The JS server does check the version: a call at 0.3, which its card
	// does not offer, is refused as a2a-go's gRPC server refuses one.
	cc, err := grpc.NewClient(card.SupportedInterfaces[0].URL, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	_, err = a2apb.NewA2AServiceClient(cc).SendMessage(metadata.AppendToOutgoingContext(ctx, "a2a-version", "0.3"),
		&a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "m", Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "hi"}}}}})
	st := status.Convert(err)
	refusal := false
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.Reason == "VERSION_NOT_SUPPORTED" {
			refusal = true
		}
	}
	if st.Code() != codes.FailedPrecondition || !refusal {
		t.Errorf("a call at 0.3: %v %v", st, st.Details())
	}

	digest, _ := events.PeerDigest(peer)
	want := []events.NegotiationDecided{{Protocol: facets.ProtocolA2A, Outcome: "accepted", Version: "1.0", Requested: "1.0", Reason: events.ReasonOK, Floor: "0.3", PeerDigest: digest, At: testNow}}
	var got []events.NegotiationDecided
	for _, e := range rec.Events() {
		got = append(got, e.Payload)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("recorded %+v, want %+v", got, want)
	}
}
