package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/mrtr"
	"github.com/wopneg/wopneg/policy"
)

// defaultFacets is what the host advertises: real, non-legacy versions
// only (RFC 0175 §C keeps A2A 0.3 and MCP 2025-06-18 out of a v2
// advertisement).
//
//   - MCP: 2025-11-25 and 2026-07-28, both spoken by the go-sdk v1.8.0 and
//     mcp-go v1.2.1 clients. Preferred 2026-07-28 (the stateless revision,
//     reached through server/discover), floor 2025-11-25 (the newest
//     handshake revision): the floor lies below preferred, so an
//     authenticated caller can be downgraded to 2025-11-25 and an
//     anonymous one cannot (RFC 0175 §D.1 is witnessable on MCP), and a
//     client pinned to 2025-06-18 is below the floor. mrtr.maxRounds 4, as
//     the reference host.
//   - A2A: 1.0 only, so floor = preferred = 1.0: A2A has one non-legacy
//     release today, and §D.1 becomes witnessable on A2A only with a
//     second one.
//
// Neither carries a refreshedAt: the host's facets.Refresher gives them
// the day they were last checked against upstream (see newHost).
func defaultFacets() facets.Set {
	return facets.Set{
		A2A: &facets.A2A{
			Versions:         []string{"1.0"},
			PreferredVersion: "1.0",
			MinimumVersion:   "1.0",
		},
		MCP: &facets.MCP{
			Revisions:        []string{"2025-11-25", "2026-07-28"},
			PreferredVersion: "2026-07-28",
			MinimumRevision:  "2025-11-25",
			Profiles:         []string{"mcp-2026-07-28"},
			Features:         []string{"server-discover", "mrtr", "cacheable-lists"},
			ServerMount:      &facets.ServerMount{Transports: []string{"streamable-http"}},
			MRTR:             &facets.MRTR{MaxRounds: 4},
		},
	}
}

// config is how the host is set up.
type config struct {
	// Addr is the loopback address to listen on, host:port; port 0 picks
	// a free one.
	Addr string
	// GRPCAddr, when set, is the loopback address A2A's gRPC binding is
	// served on too (mountGRPC); port 0 picks a free one.
	GRPCAddr string
	// Token is the bearer token that authenticates a caller as the demo
	// user; empty authenticates nobody.
	Token string
	// Facets are what the host advertises; it must advertise mcp. A facet
	// without refreshedAt is dated by Refresher's first check.
	Facets facets.Set
	// Refresher checks the facets against upstream when the host starts,
	// and then daily while it serves, and dates the discovery document's
	// refreshedAt (-releases gives it the host's mirror). Nil is the zero
	// Refresher: the release list embedded in wopneg and time.Now, so a
	// host built long ago is reported stale. Tests set its clock.
	Refresher *facets.Refresher
	// Policy is the negotiation policy; the zero Policy is the reference
	// behaviour.
	Policy policy.Policy
	// Stateful serves MCP with sessions: the legacy handshake only, as the
	// go-sdk's stateful handler does, instead of the stateless handler that
	// also serves 2026-07-28.
	Stateful bool
	// Keys seal MRTR requestStates; nil draws one random key.
	Keys []mrtr.Key
	// Tap, when set, wraps the go-sdk handler inside the middleware, so a
	// test sees exactly what reaches the MCP server.
	Tap func(http.Handler) http.Handler
	// Nonces is the Sealer's nonce store; nil is one of its own. Replicas
	// share one (examples/pgnonce), so that a state opens once in all.
	Nonces mrtr.NonceStore
	// OnRefuse is the Sealer's refusal hook (mrtr.SealerOptions.OnRefuse).
	OnRefuse func(error)
	// Seams mounts the conformance invoke seams (-seams).
	Seams bool
	// PG, when set, makes the host a replica sharing this PostgreSQL
	// database with the others, sealing with SharedKeys (see fleet.go).
	PG, SharedKeys string
	// AuditWait is, with PG, how long a request waits for its audit event
	// to commit (the acknowledged mode, the audit required); zero writes
	// asynchronously.
	AuditWait time.Duration
	// OTelStdout exports every negotiation to stdout through the otel
	// module (-otel-stdout): the decision on a server span for each
	// request, and the decision counter when the host stops.
	OTelStdout bool
	// Observe is the adapters' Options.Observe, and Trace wraps the mux
	// in the span each request is served in; run sets both for
	// OTelStdout, and nil is none.
	Observe func(context.Context, negotiate.Exchange)
	Trace   func(http.Handler) http.Handler
}

// Env is what the host gives every protocol it serves, so that all of them
// negotiate with the same facets and policy, resolve callers the same way,
// and record to the same log.
type Env struct {
	// Negotiator decides with the host's facets and policy.
	Negotiator *negotiate.Negotiator
	// Sink records every negotiation.decided.
	Sink events.Sink
	// Subject resolves a request's caller; nil when it is anonymous.
	Subject func(*http.Request) *negotiate.Subject
	// Observe is the adapters' Options.Observe (config.Observe).
	Observe func(context.Context, negotiate.Exchange)
	// BaseURL is the host's origin, http://127.0.0.1:port.
	BaseURL string
	// Refresher keeps the facets' refreshedAt (config.Refresher, never nil).
	Refresher *facets.Refresher
	// Background hands the host work that runs while it serves, such as
	// the discovery document's refresh checks: Serve runs it until it
	// stops, and returns what it failed with other than the cancellation.
	Background func(run func(context.Context) error)
}

// Mount registers a handler beside MCP on the host's mux. It is the seam
// for the host's other protocols: the A2A endpoint (a2a-go behind
// negotiate/a2ahttp) is a Mount added to [mounts].
type Mount func(mux *http.ServeMux, env Env) error

// demoUser is the caller a request carrying the host's bearer token is.
var demoUser = negotiate.Subject{
	Issuer: "urn:wopneg-example-host:demo", SubjectID: "demo-user", Tenant: "demo",
	Lane: policy.LaneAPIKey, Kind: policy.KindUser,
}

// hostIdentity is the host's own workload identity, on whose behalf it
// calls MCP servers.
var hostIdentity = negotiate.Subject{
	Issuer: "urn:wopneg-example-host:host", SubjectID: "host", Tenant: "demo",
	Lane: policy.LaneWorkload, Kind: policy.KindWorkload,
}

// host is the running example host.
type host struct {
	cfg      config
	env      Env
	mux      *http.ServeMux
	mcp      http.Handler
	sealer   *mrtr.Sealer
	listener net.Listener
	srv      *http.Server
	// background is what the mounts handed Env.Background.
	background []func(context.Context) error
	// toolCalls counts the tools/call requests that reached needs_input_loop.
	toolCalls atomic.Int64
}

// newHost builds the host and starts listening on cfg.Addr, which must be
// a loopback address. It does not serve until Serve.
func newHost(cfg config, sink events.Sink, extra ...Mount) (*host, error) {
	if err := loopbackOnly(cfg.Addr); err != nil {
		return nil, err
	}
	if cfg.Facets.MCP == nil {
		return nil, errors.New("host: the facets do not advertise mcp")
	}
	if cfg.Refresher == nil {
		cfg.Refresher = new(facets.Refresher)
	}
	var err error
	if cfg.Facets, err = checked(cfg.Refresher, cfg.Facets); err != nil {
		return nil, err
	}
	n, err := negotiate.Compile(cfg.Facets, cfg.Policy)
	if err != nil {
		return nil, err
	}
	// A host that advertises no mcp.mrtr has no bound to hold its rounds
	// to, so it runs none: needs_input_loop then refuses.
	var sealer *mrtr.Sealer
	if cfg.Facets.MCP.MRTR != nil {
		keys := cfg.Keys
		if keys == nil {
			secret := make([]byte, 32)
			_, _ = rand.Read(secret)
			keys = []mrtr.Key{{ID: "boot", Secret: secret}}
		}
		if sealer, err = mrtr.NewSealer(mrtr.SealerOptions{Keys: keys, MaxRounds: cfg.Facets.MCP.MRTR.MaxRounds,
			Nonces: cfg.Nonces, OnRefuse: cfg.OnRefuse}); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	h := &host{cfg: cfg, mux: http.NewServeMux(), sealer: sealer, listener: ln}
	h.env = Env{Negotiator: n, Sink: sink, Subject: h.subject, Observe: cfg.Observe, BaseURL: "http://" + ln.Addr().String(), Refresher: cfg.Refresher,
		Background: func(run func(context.Context) error) { h.background = append(h.background, run) }}

	mw, err := mcphttp.New(n, mcphttp.Options{Sink: sink, Subject: h.subject, Observe: cfg.Observe})
	if err != nil {
		ln.Close()
		return nil, err
	}
	inner := h.mcpHandler()
	if cfg.Tap != nil {
		inner = cfg.Tap(inner)
	}
	h.mcp = mw.Wrap(inner)
	h.mux.Handle("/mcp", h.mcp)
	for _, m := range extra {
		if err := m(h.mux, h.env); err != nil {
			ln.Close()
			return nil, fmt.Errorf("host: mounting: %w", err)
		}
	}
	var served http.Handler = h.mux
	if cfg.Trace != nil {
		served = cfg.Trace(served)
	}
	h.srv = &http.Server{Handler: served, ReadHeaderTimeout: 10 * time.Second}
	return h, nil
}

// checked returns s as r's check against upstream dates it. A host that
// cannot date its facets does not start: an error names what failed.
func checked(r *facets.Refresher, s facets.Set) (facets.Set, error) {
	rep, err := r.Check(context.Background(), s)
	if err != nil {
		return facets.Set{}, fmt.Errorf("host: checking the facets against upstream: %w", err)
	}
	if !rep.Passed() {
		errs := make([]error, len(rep.Findings))
		for i := range rep.Findings {
			errs[i] = &rep.Findings[i]
		}
		return facets.Set{}, fmt.Errorf("host: the facets' check against upstream failed: %w", errors.Join(errs...))
	}
	return rep.Set, nil
}

// loopbackOnly refuses to listen anywhere but loopback: the example host
// authenticates with a demo token and is not meant to be reachable.
func loopbackOnly(addr string) error {
	hostname, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("host: listen address %q: %w", addr, err)
	}
	if hostname == "localhost" {
		return nil
	}
	if ip := net.ParseIP(hostname); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("host: listen address %q is not loopback; this example serves 127.0.0.1 only", addr)
	}
	return nil
}

// URL returns the MCP endpoint.
func (h *host) URL() string { return h.env.BaseURL + "/mcp" }

// shutdownGrace is how long Serve waits for requests in flight once ctx is
// done, before it closes the connections left.
const shutdownGrace = 2 * time.Second

// Serve serves until ctx is done, then shuts down: requests in flight get
// shutdownGrace to finish, and connections still open after it are
// closed. Some are expected to be: the go-sdk's stateful handler can keep
// an event stream open after its session has ended. The background work
// runs as long, and Serve returns once it has stopped.
func (h *host) Serve(ctx context.Context) (err error) {
	bg, stopBackground := context.WithCancel(ctx)
	bgErrs := make(chan error, len(h.background))
	for _, run := range h.background {
		go func() { bgErrs <- run(bg) }()
	}
	defer func() {
		stopBackground()
		for range h.background {
			if e := <-bgErrs; !errors.Is(e, context.Canceled) {
				err = errors.Join(err, e)
			}
		}
	}()
	errc := make(chan error, 1)
	go func() { errc <- h.srv.Serve(h.listener) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := h.srv.Shutdown(shutdown); err != nil {
		if !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		if err := h.srv.Close(); err != nil {
			return err
		}
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// subject resolves the caller of a request: the demo user with the host's
// bearer token, nobody otherwise.
func (h *host) subject(r *http.Request) *negotiate.Subject { return h.subjectOf(r.Header) }

func (h *host) subjectOf(header http.Header) *negotiate.Subject {
	if h.cfg.Token == "" || header.Get("Authorization") != "Bearer "+h.cfg.Token {
		return nil
	}
	s := demoUser
	return &s
}

// mcpHandler is the go-sdk streamable handler with the host's tools, the
// server restricted to the facet's revisions so that server/discover lists
// exactly what the host advertises.
func (h *host) mcpHandler() http.Handler {
	server := mcp.NewServer(&mcp.Implementation{Name: "wopneg-example-host", Version: "0.1.0"}, &mcp.ServerOptions{
		SupportedProtocolVersions: h.cfg.Facets.MCP.Revisions,
	})
	server.AddTool(&mcp.Tool{
		Name:        "echo",
		Description: "Echoes text, and the MCP revision the request was served at.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	}, h.echo)
	server.AddTool(&mcp.Tool{
		Name:        "needs_input_loop",
		Description: "Asks for input the given number of rounds (MRTR), then completes.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"rounds":{"type":"integer","minimum":0}},"required":["rounds"]}`),
	}, h.needsInputLoop)
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{
		Stateless: !h.cfg.Stateful,
	})
}

func (h *host) echo(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
		return nil, err
	}
	rev, ok := mcphttp.Version(ctx)
	if !ok {
		rev = "(not negotiated)"
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text + " (served at MCP " + rev + ")"}}}, nil
}

// needsInputLoop answers input_required until it has asked rounds times.
// Its requestState is sealed by the host's mrtr.Sealer, bound to the
// caller, the request and the interrupt, and single-use; the Sealer will
// not seal a round past the facet's maxRounds, so the tool answers
// mcp_mrtr_rounds_exceeded instead of ever asking a fifth time.
func (h *host) needsInputLoop(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	h.toolCalls.Add(1)
	if h.sealer == nil {
		return toolError(errors.New("this host advertises no mcp.mrtr, so it asks for no input")), nil
	}
	var in struct {
		Rounds int `json:"rounds"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
		return nil, err
	}
	binding, err := h.binding(req)
	if err != nil {
		return nil, err
	}
	var prev *mrtr.Claims
	if req.Params.RequestState != "" {
		opened, err := h.sealer.Open(ctx, req.Params.RequestState, binding)
		if err != nil {
			return toolError(err), nil
		}
		if _, ok := req.Params.InputResponses["confirm"]; !ok {
			return toolError(errors.New("the retry does not answer the input request \"confirm\"")), nil
		}
		prev = &opened
	}
	if prev != nil && prev.Round >= in.Rounds {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("completed after %d rounds", prev.Round)}}}, nil
	}
	if in.Rounds == 0 {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "completed after 0 rounds"}}}, nil
	}
	round := 1
	if prev != nil {
		round = prev.Round + 1
	}
	// Past maxRounds the Sealer answers mcp_mrtr_rounds_exceeded.
	state, err := h.sealer.Seal(binding, round)
	if err != nil {
		return toolError(err), nil
	}
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{
			Message:         fmt.Sprintf("Confirm round %d of %d", round, in.Rounds),
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`),
		}},
		RequestState: state,
	}, nil
}

// binding is what a needs_input_loop requestState is bound to: the caller
// (or the anonymous surface), its tenant, the request, and the interrupt
// the input answers. The example host has no runs, so the run is named
// after the request.
func (h *host) binding(req *mcp.CallToolRequest) (mrtr.Binding, error) {
	digest, err := mrtr.Digest(req.Params.Name, req.Params.Arguments)
	if err != nil {
		return mrtr.Binding{}, err
	}
	principal, tenant := "urn:wopneg-example-host:anon-surface|anonymous", "anon:demo"
	var header http.Header
	if req.Extra != nil {
		header = req.Extra.Header
	}
	if s := h.subjectOf(header); s != nil {
		principal, tenant = s.Issuer+"|"+s.SubjectID, s.Tenant
	}
	return mrtr.Binding{Principal: principal, Tenant: tenant, RunID: "demo/needs-input-" + digest[:16], InterruptID: "confirm", RequestDigest: digest}, nil
}

func toolError(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
}
