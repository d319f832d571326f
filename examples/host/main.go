// Command host is a runnable OpenWOP host that serves MCP (the go-sdk's
// streamable handler) and A2A (an a2a-go v2 agent at /a2a, with its card
// at /.well-known/agent-card.json) behind wopneg's negotiation, on
// loopback, and prints
// every negotiation.decided it records as one JSON line on stdout.
//
//	cd examples && go run ./host              # serve on 127.0.0.1:8080 until Ctrl-C
//	cd examples && go run ./host -selftest    # serve, negotiate with itself once, exit
//
// It advertises MCP 2025-06-18, 2025-11-25 and 2026-07-28, preferred
// 2026-07-28, floor 2025-11-25, so that the floor lies below preferred and
// §D.1 of RFC 0175 is live: a caller that presents the bearer token
// (-token, "demo" by default) is authenticated and may be downgraded to
// 2025-11-25; an anonymous one may not; nobody gets 2025-06-18.
//
// Human-readable lines go to stderr, so that stdout holds only events.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/wopneg/wopneg/events"
)

// mounts are the handlers the host serves beside MCP: A2A (a2a-go behind
// negotiate/a2ahttp, see a2a.go) at /a2a and the agent card path.
var mounts = []Mount{mountA2A}

func main() {
	port := flag.Int("port", 8080, "the port to listen on, on 127.0.0.1 (0 picks a free one)")
	token := flag.String("token", "demo", "the bearer token that authenticates a caller as the demo user; empty authenticates nobody")
	selftest := flag.Bool("selftest", false, "serve, negotiate with this host once as an MCP client, print the result and exit")
	flag.Parse()
	if *selftest && !portSet() {
		*port = 0 // a self-test needs no fixed port, and must not collide with one in use
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := config{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(*port)), Token: *token, Facets: defaultFacets()}
	if err := run(ctx, cfg, *selftest, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "host:", err)
		os.Exit(1)
	}
}

func portSet() bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "port" })
	return set
}

// run serves until ctx is done or, with selftest, until the self-test is
// over. Events go to stdout as JSON lines; everything else to stderr.
func run(ctx context.Context, cfg config, selftest bool, stdout, stderr io.Writer) error {
	sink := events.NewJSONLines(stdout)
	h, err := newHost(cfg, sink, mounts...)
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
