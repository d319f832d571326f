package a2agrpc_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	a2agrpcv0 "github.com/a2aproject/a2a-go/v2/a2agrpc/v0"
	a2agrpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/wopneg/wopneg/a2agrpc"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// An a2a-go agent served over gRPC behind the negotiation: a client at
// A2A 1.0 is served, and a 0.3 client, anonymous, is refused with the
// status a2a-go's client reads as a2a.ErrVersionNotSupported.
func ExampleNewServer() {
	facet := &facets.A2A{Versions: []string{"0.3", "1.0"}, PreferredVersion: "1.0", MinimumVersion: "0.3"}
	rec := &negotiatetest.Recorder{}
	register := func(s *grpc.Server) {
		h := a2asrv.NewHandler(agent{})
		a2agrpcv1.NewHandler(h).RegisterWith(s) // A2A 1.0's service
		a2agrpcv0.NewHandler(h).RegisterWith(s) // 0.3's
	}
	s, err := a2agrpc.NewServer(facet, nil, register,
		a2agrpc.ServerOptions{Options: a2agrpc.Options{Sink: rec}, Policy: policy.Policy{Now: func() time.Time { return testNow }}})
	if err != nil {
		panic(err)
	}
	defer s.Stop()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go func() { _ = s.Serve(lis) }()

	for _, version := range []string{"1.0", "0.3"} {
		c, err := a2aclient.NewFromEndpoints(context.Background(),
			[]*a2a.AgentInterface{{URL: lis.Addr().String(), ProtocolBinding: a2a.TransportProtocolGRPC, ProtocolVersion: a2a.ProtocolVersion(version)}},
			a2agrpcv1.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())),
			a2agrpcv0.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())))
		if err != nil {
			panic(err)
		}
		_, err = c.SendMessage(context.Background(), hello())
		fmt.Println(version, err == nil)
		_ = c.Destroy()
	}
	for _, e := range rec.Events() {
		fmt.Println(e.Payload.Outcome, e.Payload.Requested, e.Payload.Reason)
	}
	// Output:
	// 1.0 true
	// 0.3 false
	// accepted 1.0 ok
	// refused 0.3 unauthenticated
}
