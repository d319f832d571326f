package main

import (
	"context"
	"fmt"
	"net"
	"net/http"

	a2agrpcv0 "github.com/a2aproject/a2a-go/v2/a2agrpc/v0"
	a2agrpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/wopneg/wopneg/a2agrpc"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
)

// mountGRPC serves the host's A2A agent over A2A's gRPC binding too, on
// lis, a listener of its own, behind a2agrpc: the same Negotiator, sink,
// callers (the bearer token in the authorization metadata) and Observe as
// the JSON-RPC mount, A2A 1.0's and 0.3's services on one grpc.Server.
// Once it serves, the Interceptor's start-up check asks it whether it
// serves the preferred version; the host stops when it does not.
func mountGRPC(lis net.Listener) Mount {
	return func(_ *http.ServeMux, env Env) error {
		if _, ok := env.Negotiator.Facets().Lookup(facets.ProtocolA2A); !ok {
			return lis.Close() // the host advertises no A2A, and serves none
		}
		i, err := a2agrpc.New(env.Negotiator, a2agrpc.Options{Sink: env.Sink, Observe: env.Observe, Subject: grpcCaller(env.Subject)})
		if err != nil {
			return err
		}
		s := grpc.NewServer(i.ServerOptions()...)
		rh := a2asrv.NewHandler(echoAgent{})
		a2agrpcv1.NewHandler(rh).RegisterWith(s)
		a2agrpcv0.NewHandler(rh).RegisterWith(s)
		env.Background(func(ctx context.Context) error {
			served := make(chan error, 1)
			go func() { served <- s.Serve(lis) }()
			if err := checkGRPC(ctx, i, lis.Addr().String()); err != nil {
				s.Stop()
				<-served
				return err
			}
			<-ctx.Done()
			s.GracefulStop()
			return <-served
		})
		return nil
	}
}

// checkGRPC runs i's start-up check against the server at addr.
func checkGRPC(ctx context.Context, i *a2agrpc.Interceptor, addr string) error {
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("host: the gRPC start-up check: %w", err)
	}
	defer cc.Close()
	return i.Check(ctx, cc)
}

// grpcCaller resolves a gRPC call's caller as subject resolves an HTTP
// request's: from its authorization metadata.
func grpcCaller(subject func(*http.Request) *negotiate.Subject) func(context.Context, metadata.MD) *negotiate.Subject {
	return func(ctx context.Context, md metadata.MD) *negotiate.Subject {
		r := (&http.Request{Header: http.Header{}}).WithContext(ctx)
		for _, v := range md.Get("authorization") {
			r.Header.Add("Authorization", v)
		}
		return subject(r)
	}
}
