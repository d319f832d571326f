package a2agrpc_test

import (
	"context"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	legacypb "github.com/a2aproject/a2a-go/a2apb"
	a2agrpcv0 "github.com/a2aproject/a2a-go/v2/a2agrpc/v0"
	a2agrpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/wopneg/wopneg/a2agrpc"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// refusingGetTask is an A2A 1.0 service whose GetTask refuses every
// version, and records the version it was handed.
type refusingGetTask struct {
	a2apb.UnimplementedA2AServiceServer
	err  error
	seen chan string
}

func (r refusingGetTask) GetTask(ctx context.Context, _ *a2apb.GetTaskRequest) (*a2apb.Task, error) {
	v, _ := a2agrpc.Version(ctx)
	r.seen <- v
	return nil, r.err
}

// legacyGetTask is the same of A2A 0.3's service.
type legacyGetTask struct {
	legacypb.UnimplementedA2AServiceServer
	err error
}

func (l legacyGetTask) GetTask(context.Context, *legacypb.GetTaskRequest) (*legacypb.Task, error) {
	return nil, l.err
}

func quiet() a2agrpc.ServerOptions {
	return a2agrpc.ServerOptions{Options: a2agrpc.Options{Sink: &negotiatetest.Recorder{}}, Policy: policy.Policy{Now: func() time.Time { return testNow }}}
}

// TestNewServer: the one-call host checks its server in process, serves
// a2a-go's handlers behind the Interceptor, and does not start when the
// server refuses the preferred version.
func TestNewServer(t *testing.T) {
	f := hostFacets("0.3").A2A
	// The caller may be given as NewServer's argument or as the options'
	// Subject: either way it is the one the Interceptor asks, so that its
	// authenticated peer is served the 0.3 below the preferred 1.0.
	for _, given := range []string{"argument", "options"} {
		rec := &negotiatetest.Recorder{}
		opts, caller := quiet(), subjectOf
		opts.Sink = rec
		if given == "options" {
			opts.Subject, caller = subjectOf, nil
		}
		s, err := a2agrpc.NewServer(f, caller, func(s *grpc.Server) {
			rh := a2asrv.NewHandler(agent{})
			a2agrpcv1.NewHandler(rh).RegisterWith(s)
			a2agrpcv0.NewHandler(rh).RegisterWith(s)
		}, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Stop()
		if n := len(rec.Events()); n != 0 {
			t.Errorf("the start-up check recorded %d events", n)
		}
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = s.Serve(lis) }()
		h := &host{addr: lis.Addr().String(), rec: rec}
		if _, err := h.client(t, "1.0").SendMessage(context.Background(), hello()); err != nil {
			t.Fatal(err)
		}
		if _, err := h.client(t, "0.3").SendMessage(authed(context.Background()), hello()); err != nil {
			t.Fatalf("caller given as the %s: the authenticated peer was refused 0.3: %v", given, err)
		}
		if got := h.payloads(); len(got) != 2 || got[0].Version != "1.0" || got[1].Version != "0.3" {
			t.Errorf("caller given as the %s: recorded %+v", given, got)
		}
	}

	for _, tc := range []struct {
		name      string
		preferred string
		register  func(*grpc.Server)
	}{
		{"1.0", "1.0", func(s *grpc.Server) {
			a2apb.RegisterA2AServiceServer(s, refusingGetTask{err: versionRefusal(t), seen: make(chan string, 1)})
		}},
		{"0.3", "0.3", func(s *grpc.Server) { legacypb.RegisterA2AServiceServer(s, legacyGetTask{err: versionRefusal(t)}) }},
	} {
		f := &facets.A2A{Versions: []string{"0.3", "1.0"}, PreferredVersion: tc.preferred, MinimumVersion: "0.3"}
		_, err := a2agrpc.NewServer(f, nil, tc.register, quiet())
		if err == nil || !strings.Contains(err.Error(), "does not serve the preferred version "+tc.preferred) {
			t.Errorf("%s: a refusing server started: %v", tc.name, err)
		}
		// Any other answer is no answer about the version.
		ok := func(s *grpc.Server) {
			legacypb.RegisterA2AServiceServer(s, legacyGetTask{err: status.Error(codes.NotFound, "no task")})
		}
		if _, err := a2agrpc.NewServer(f, nil, ok, quiet()); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// TestNewServerArguments: what NewServer refuses to start with.
func TestNewServerArguments(t *testing.T) {
	f := hostFacets("0.3").A2A
	register := func(*grpc.Server) {}
	withSubject := quiet()
	withSubject.Subject = subjectOf
	for name, err := range map[string]error{
		"two options":    second(a2agrpc.NewServer(f, nil, register, quiet(), quiet())),
		"caller twice":   second(a2agrpc.NewServer(f, subjectOf, register, withSubject)),
		"no register":    second(a2agrpc.NewServer(f, nil, nil, quiet())),
		"no facet":       second(a2agrpc.NewServer(nil, nil, register, quiet())),
		"a facet ahead":  second(a2agrpc.NewServer(&facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0", RefreshedAt: "2027-01-01"}, nil, register, quiet())),
		"a nil Sink":     second(a2agrpc.New(compileFacets(t), a2agrpc.Options{})),
		"nil Negotiator": second(a2agrpc.New(nil, a2agrpc.Options{Sink: &negotiatetest.Recorder{}})),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	withSubject.Sink = nil
	if _, err := a2agrpc.NewServer(f, nil, register, withSubject); err != nil {
		t.Errorf("the default sink: %v", err)
	}
}

func second[T any](_ T, err error) error { return err }

func compileFacets(t *testing.T) *negotiate.Negotiator {
	t.Helper()
	n, err := negotiate.Compile(hostFacets("0.3"), policy.Policy{Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCheck: the check hands the handler the preferred version and
// records nothing; its secret is the Interceptor's own, so that a caller
// who sends the key is negotiated like any other.
func TestCheck(t *testing.T) {
	seen := make(chan string, 2)
	h := start(t, "0.3", policy.Policy{}, func(s *grpc.Server) {
		a2apb.RegisterA2AServiceServer(s, refusingGetTask{err: status.Error(codes.NotFound, "no task"), seen: seen})
	})
	cc := h.conn(t)
	if err := h.i.Check(context.Background(), cc); err != nil {
		t.Fatal(err)
	}
	if v := <-seen; v != "1.0" {
		t.Errorf("the handler was handed %q", v)
	}
	if n := len(h.rec.Events()); n != 0 || len(h.exchanges()) != 0 {
		t.Errorf("the check was recorded or observed")
	}
	ctx := metadata.NewOutgoingContext(context.Background(), metadata.Pairs("wopneg-startup-check", "guess", "a2a-version", "1.0"))
	_, _ = a2apb.NewA2AServiceClient(cc).GetTask(ctx, &a2apb.GetTaskRequest{Id: "x"})
	<-seen
	if got := h.payloads(); !reflect.DeepEqual(got, []events.NegotiationDecided{accepted("1.0", "1.0", "0.3")}) {
		t.Errorf("a guessed secret: recorded %+v", got)
	}
	if err := h.i.Check(context.Background(), nil); err == nil {
		t.Errorf("Check of nil: no error")
	}
}

// TestNewRefusesADateOutOfItsWindow: a refreshedAt more than a day ahead
// or older than its window is refused where the host starts, with the
// fix, as the HTTP bindings refuse it.
func TestNewRefusesADateOutOfItsWindow(t *testing.T) {
	for _, date := range []string{"2026-12-01", "2025-01-01"} {
		set := hostFacets("0.3")
		set.A2A.RefreshedAt = date
		n, err := negotiate.Compile(set, policy.Policy{Now: func() time.Time { return testNow }})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a2agrpc.New(n, a2agrpc.Options{Sink: &negotiatetest.Recorder{}}); err == nil || !strings.Contains(err.Error(), "refreshedAt") {
			t.Errorf("refreshedAt %s: New = %v", date, err)
		}
	}
}
