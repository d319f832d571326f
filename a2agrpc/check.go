package a2agrpc

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// checkKey is the metadata key of the start-up check's call, whose value
// is the Interceptor's own secret: a caller that does not hold it is
// negotiated like any other.
const checkKey = "wopneg-startup-check"

// checkTask is the id of the task the start-up check asks for: one no
// agent holds, so that asking for it changes nothing.
const checkTask = "wopneg-startup-check"

// checkToken returns a fresh secret for the start-up check's call.
func checkToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

// checking reports whether md is the start-up check's call.
func (i *Interceptor) checking(md metadata.MD) bool {
	v := md[checkKey]
	return len(v) == 1 && subtle.ConstantTimeCompare([]byte(v[0]), []byte(i.check)) == 1
}

// Check asks the server behind cc, a connection to the grpc.Server that i
// is an interceptor of, whether it serves the preferred version the a2a
// facet advertises, the one every caller can be served, and returns an
// error that names the fix when it refuses it. Call it when the host
// starts, before any client arrives (NewServer does).
//
// First, it refuses a refreshedAt more than a day after the policy's
// clock, naming the fix. The question is one GetTask, of a task no agent
// holds, at the preferred version (a2a-version, and the decision in the
// handler's context as the interceptor hands it over): A2A 1.0's service
// for a preferred 1.x, 0.3's for a 0.x. It carries i's own secret, so
// that i lets it through undecided: nothing is decided, recorded or
// observed. Only a version refusal (FAILED_PRECONDITION with the reason
// VERSION_NOT_SUPPORTED) fails the check: a task not found, or a service
// the server does not serve, is no answer about the version.
func (i *Interceptor) Check(ctx context.Context, cc grpc.ClientConnInterface) error {
	if cc == nil {
		return errors.New("a2agrpc: Check of a nil connection")
	}
	preferred := i.adv.Preferred
	method := "/" + services[0] + "/GetTask"
	req := protowire.AppendString(protowire.AppendTag(nil, 2, protowire.BytesType), checkTask) // GetTaskRequest.id
	if strings.HasPrefix(preferred, "0.") {
		method = "/" + services[1] + "/GetTask"
		req = protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "tasks/"+checkTask) // 0.3's name
	}
	in := &emptypb.Empty{}
	in.ProtoReflect().SetUnknown(req)
	ctx = metadata.NewOutgoingContext(ctx, metadata.Pairs(metadataKey, preferred, checkKey, i.check))
	err := cc.Invoke(ctx, method, in, &emptypb.Empty{})
	if !refuses(err) {
		return nil
	}
	return fmt.Errorf("a2agrpc: the server does not serve the preferred version %s the a2a facet advertises: its GetTask at a2a-version %s was refused as VERSION_NOT_SUPPORTED; serve %s there (a host that serves several versions dispatches on a2agrpc.Version), or advertise only the versions the server serves", preferred, preferred, preferred)
}

// NewServer is the whole wiring of a host, in one call: it compiles f,
// records every decision, takes the caller's Subject from caller (nil:
// every caller is anonymous), makes a grpc.Server with the Interceptor in
// front of its handlers, has register register the A2A service on it
// (a2a-go's a2agrpc.NewHandler(h).RegisterWith), checks it with
// [Interceptor.Check] over an in-process connection, and returns it ready
// to Serve. Any failure is an error, so that a host that cannot serve what
// f advertises does not start.
//
// opts, at most one, takes the host past the defaults, as a2ahttp.Handler's
// HandlerOptions do: every decision is recorded through slog.Default() at
// Info unless Options.Sink says otherwise, and f is compiled under the zero
// policy unless Policy says otherwise. The caller is given once: caller,
// or Options.Subject.
func NewServer(f *facets.A2A, caller func(context.Context, metadata.MD) *negotiate.Subject, register func(*grpc.Server), opts ...ServerOptions) (*grpc.Server, error) {
	if len(opts) > 1 {
		return nil, fmt.Errorf("a2agrpc: NewServer takes at most one ServerOptions, got %d", len(opts))
	}
	var o ServerOptions
	if len(opts) == 1 {
		o = opts[0]
	}
	if caller != nil && o.Subject != nil {
		return nil, errors.New("a2agrpc: the caller is given twice, as NewServer's caller and as Options.Subject; give one")
	}
	if o.Subject == nil {
		o.Subject = caller
	}
	if o.Sink == nil {
		o.Sink = exchange.DefaultSink()
	}
	if register == nil {
		return nil, errors.New("a2agrpc: NewServer of a nil register function")
	}
	n, err := exchange.Defaults("a2agrpc", facets.Set{A2A: f}, facets.ProtocolA2A, o.Policy)
	if err != nil {
		return nil, err
	}
	i, err := New(n, o.Options)
	if err != nil {
		return nil, err
	}
	s := grpc.NewServer(append(o.GRPC, i.ServerOptions()...)...)
	register(s)
	if err := checkInProcess(i, s); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// checkInProcess runs i's start-up check against s over an in-process
// listener, which it closes after.
func checkInProcess(i *Interceptor, s *grpc.Server) error {
	lis := bufconn.Listen(64 << 10)
	go func() { _ = s.Serve(lis) }()
	defer lis.Close()
	cc, err := grpc.NewClient("passthrough:///wopneg-startup-check",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer cc.Close()
	return i.Check(context.Background(), cc)
}

// ServerOptions is what [NewServer] takes past the defaults. The zero
// ServerOptions is the defaults.
type ServerOptions struct {
	// Options configures the Interceptor as for [New]; a nil Sink records
	// every decision through slog.Default() at Info.
	Options
	// Policy is the policy f is compiled under; the zero Policy is the
	// reference rules.
	Policy policy.Policy
	// GRPC are the grpc.Server's own options (credentials, limits, a stats
	// handler for OpenTelemetry); interceptors among them run before the
	// Interceptor.
	GRPC []grpc.ServerOption
}
