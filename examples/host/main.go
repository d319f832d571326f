// Command host is a runnable OpenWOP host that serves MCP (the go-sdk's
// streamable handler) and A2A (an a2a-go v2 agent at /a2a, with its card
// at /.well-known/agent-card.json) behind wopneg's negotiation, on
// loopback, and prints
// every negotiation.decided it records as one JSON line on stdout.
//
//	cd examples && go run ./host              # serve on 127.0.0.1:8080 until Ctrl-C
//	cd examples && go run ./host -selftest    # serve, negotiate with itself once, exit
//	cd examples && go run ./host -pg "$WOPNEG_PG_URL" -keys k1:SECRET   # one replica of several
//	cd examples && go run ./host -releases /srv/mirror/releases.json    # dated by the host's own mirror
//	cd examples && go run ./host -otel-stdout -selftest  # every negotiation as OpenTelemetry spans and metrics on stdout
//	cd examples && go run ./host -grpc-port 9090         # A2A over gRPC too (negotiate via a2agrpc), on a second port
//
// The discovery document's refreshedAt is the day the facets were last
// checked against upstream, by a facets.Refresher at start and daily:
// against the release list embedded in wopneg, which vouches for no day
// after it was taken (so a host built from an old wopneg is warned, then
// reported stale), or, with -releases, against the host's own mirror of
// upstream's list. A host whose facets fail the check does not start.
//
// With -pg, the host is one replica of several behind a load balancer: it
// records to PostgreSQL in batches (examples/pgbatch) instead of stdout,
// shares the nonces of opened requestStates (examples/pgnonce), seals with
// the -keys every replica is given, and serves Prometheus metrics at
// /metrics. Its discovery document says negotiation.decided is delivered
// durably, and it keeps that promise: it requires the audit
// (policy.Policy.RequireAudit) and answers a request only once the
// transaction holding its decision's event committed, the requests that
// come meanwhile sharing one transaction (group commit), waiting at most
// -audit-wait (1 s) before answering internal_error instead. A database
// that is down is written to again, with a backoff, until it is back.
// -audit-wait 0 writes asynchronously instead, and does not require the
// audit: faster, but a crash of the host loses the events queued, and an
// outage longer than the buffer (65,536 events, 64 MiB) the drops, so its
// discovery document lists negotiation.decided as ephemeral, as a host
// without -pg does (RFC 0242 asks for durable: only -pg keeps it). On
// SIGTERM (or Ctrl-C) it stops accepting, lets the requests in flight
// finish, writes every audit event it accepted (trying a database that is
// down for 10 s more), and exits 0, or 1 when an audit write failed.
//
// It advertises MCP 2025-11-25 and 2026-07-28, preferred 2026-07-28, floor
// 2025-11-25, so that the floor lies below preferred and §D.1 of RFC 0175
// is live: a caller that presents the bearer token (-token, "demo" by
// default) is authenticated and may be downgraded to 2025-11-25; an
// anonymous one may not; nobody gets 2025-06-18. A2A is 1.0 only.
//
// Every caller reads its own tenant's events: GET /runs/{runId}/events/poll
// and the GET /host/events stream (events.LogHandler, over an in-memory
// events.Log). With -seams the host also mounts the conformance invoke
// seams (negotiate/seams) at /conformance/seams/ and advertises them in
// discovery: a test surface, which makes the host call any URL its
// authenticated caller names, so never mount it in production.
//
// Human-readable lines go to stderr, so that stdout holds only events (and,
// with -otel-stdout, the exported spans and metrics, as JSON lines too).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
)

// mounts are the handlers the host serves beside MCP: A2A (a2a-go behind
// negotiate/a2ahttp, see a2a.go) at /a2a and the agent card path.
var mounts = []Mount{mountA2A}

func main() {
	cfg, selftest, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		os.Exit(2) // the flag package has said why
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, selftest, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "host:", err)
		os.Exit(1)
	}
}

// parseFlags reads the command line (without the program name) into the
// host's config, and whether to run the self-test. A self-test without
// -port listens on a free port, so that it never collides with one in use.
func parseFlags(args []string, stderr io.Writer) (cfg config, selftest bool, err error) {
	fs := flag.NewFlagSet("host", flag.ContinueOnError)
	fs.SetOutput(stderr)
	port := fs.Int("port", 8080, "the port to listen on, on 127.0.0.1 (0 picks a free one)")
	fs.StringVar(&cfg.Token, "token", "demo", "the bearer token that authenticates a caller as the demo user; empty authenticates nobody")
	fs.BoolVar(&selftest, "selftest", false, "serve, negotiate with this host once as an MCP client, print the result and exit")
	fs.BoolVar(&cfg.Seams, "seams", false, "mount the conformance invoke seams at /conformance/seams/ (a test surface: never in production)")
	fs.StringVar(&cfg.PG, "pg", "", "the PostgreSQL URL the replicas share (audit log, nonces); empty runs alone and prints events")
	fs.StringVar(&cfg.SharedKeys, "keys", "", "with -pg, the sealing keys every replica is given: ID:SECRET, the first seals")
	fs.DurationVar(&cfg.AuditWait, "audit-wait", time.Second, "with -pg, how long a request waits for its audit event to commit before it is answered internal_error (the audit is required); 0 writes asynchronously, and does not require the audit")
	fs.BoolVar(&cfg.OTelStdout, "otel-stdout", false, "export every negotiation through OpenTelemetry to stdout: a span per request with the openwop.negotiation attributes, and the decision counter when the host stops")
	grpcPort := fs.Int("grpc-port", -1, "also serve A2A over gRPC on 127.0.0.1 at this port (0 picks a free one); -1 serves none")
	releases := fs.String("releases", "", "the host's mirror of the upstream A2A/MCP release list, a JSON file read at start and daily (see the README); empty checks against the list embedded in wopneg, which goes stale 90 days after it was taken")
	if err := fs.Parse(args); err != nil {
		return config{}, false, err
	}
	// The Refresher's warnings (a window closing, a version upstream
	// superseded or no longer lists, a check that failed) go to stderr;
	// a check that passed is no news.
	cfg.Refresher = &facets.Refresher{Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if *releases != "" {
		cfg.Refresher.Upstream = mirrorFile(*releases)
	}
	portSet := false
	fs.Visit(func(f *flag.Flag) { portSet = portSet || f.Name == "port" })
	if selftest && !portSet {
		*port = 0
	}
	cfg.Addr, cfg.Facets = net.JoinHostPort("127.0.0.1", strconv.Itoa(*port)), defaultFacets()
	if *grpcPort >= 0 {
		cfg.GRPCAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(*grpcPort))
	}
	return cfg, selftest, nil
}

// mirrorFile is a Refresher.Upstream that opens the mirror at path.
func mirrorFile(path string) func(context.Context) (io.ReadCloser, error) {
	return func(context.Context) (io.ReadCloser, error) { return os.Open(path) }
}

// run serves until ctx is done or, with selftest, until the self-test is
// over. Events go to stdout as JSON lines; everything else to stderr.
func run(ctx context.Context, cfg config, selftest bool, stdout, stderr io.Writer) (err error) {
	// Every event goes to stdout (or, with -pg, to PostgreSQL) and to the
	// event log the host serves its callers.
	log := events.NewMemoryLog(0, 0)
	if cfg.OTelStdout {
		stdout = &lockedWriter{w: stdout} // before anything writes to it
	}
	// The JSON lines number run events (the audit runs of the seams) as
	// they write them; the log numbers its own.
	var sink events.Sink = events.NewJSONLines(stdout)
	var tel events.Sink // the otel module's sink, with -otel-stdout
	if cfg.OTelStdout {
		// Assigned, not declared: the deferred join must reach run's err.
		var t *telemetry
		if t, err = newTelemetry(stdout); err != nil {
			return err
		}
		// Deferred first, so that it runs last: after the requests in
		// flight have ended their spans.
		defer func() { err = errors.Join(err, t.shutdown(context.WithoutCancel(ctx))) }()
		tel, cfg.Observe, cfg.Trace = t, t.Observe, t.serve
	}
	extra := hostMounts(cfg, log)
	if cfg.GRPCAddr != "" {
		lis, err := net.Listen("tcp", cfg.GRPCAddr)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "host: serving A2A over gRPC on %s\n", lis.Addr())
		extra = append(extra, mountGRPC(lis))
	}
	if cfg.PG != "" {
		// Assigned, not declared: the deferred join must reach run's err,
		// so that a failed audit write makes the host exit 1.
		var f *fleet
		if f, err = openFleet(ctx, cfg.PG, cfg.SharedKeys, &cfg, slog.New(slog.NewTextHandler(stderr, nil))); err != nil {
			return err
		}
		// Deferred so that it runs after Serve has drained the requests
		// in flight: their events are accepted by then, and are written.
		defer func() {
			err = errors.Join(err, f.Close())
			s := f.audit.Stats()
			fmt.Fprintf(stderr, "host: audit flushed: %d recorded, %d failed, %d dropped\n", s.Recorded, s.Failed, s.Dropped)
		}()
		sink = f.sink
		// A host that promises durable delivery answers nothing it has
		// no durable record of.
		cfg.Policy.RequireAudit = f.audit.Durable()
		extra = append(extra, f.mount)
	}
	sinks := []events.Sink{sink, log}
	if tel != nil {
		// Beside the audit, never behind an asynchronous sink: it reads
		// the span from the context the decision is recorded with.
		sinks = append(sinks, tel)
	}
	h, err := newHost(cfg, events.NewFanout(sinks...), extra...)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "host: serving MCP on %s (bearer token %q authenticates the demo user)\n", h.URL(), cfg.Token)
	if !selftest {
		err := h.Serve(ctx)
		fmt.Fprintln(stderr, "host: stopped")
		return err
	}
	serveCtx, stopServing := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- h.Serve(serveCtx) }()
	testErr := runSelftest(ctx, h, sink, stderr)
	stopServing()
	return errors.Join(testErr, <-served)
}
