package mcphttp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// Check asks server, the handler the host gives to [Middleware.Wrap],
// whether it serves the preferred revision the mcp facet advertises, the
// one every caller can be served and an anonymous one is told to use, and
// returns an error that names what the server answered and the fix when
// it does not. Call it when the host starts, before any client arrives: a
// server that cannot serve the preferred revision otherwise shows only as
// refusals on the record, one per client.
//
// The question is one request, in process, straight to server: a
// server/discover at the preferred revision when that is 2026-07-28 or
// later (the answer must list it), an initialize of it otherwise (the
// answer must name it; a session the server opens for it is ended with a
// DELETE). It carries the decision in its context, as the middleware
// would hand it over, but goes around the middleware, so nothing is
// decided, recorded or observed. The answer is read up to
// Options.MaxAnswerBytes.
//
// The known case is the go-sdk's streamable handler as it is by default,
// stateful, which answers server/discover with the handshake revisions
// only, behind a facet that prefers 2026-07-28: mount it with
// mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{Stateless: true}).
func (m *Middleware) Check(ctx context.Context, server http.Handler) error {
	if server == nil {
		return fmt.Errorf("mcphttp: Check of a nil handler")
	}
	preferred := m.adv.Preferred
	o, _ := m.n.Decide(nil, negotiate.InboundOffer(m.adv, "", preferred))
	ctx = exchange.WithOutcome(ctx, facets.ProtocolMCP, &o)
	method := methodDiscover
	if !isStateless(preferred) {
		method = methodInitialize
	}
	// ctx is not nil (WithOutcome would have panicked) and the URL is
	// fixed: the request is made.
	req, _ := askRevision(ctx, "http://127.0.0.1/", method, preferred, nil, map[string]any{"name": "wopneg-check", "version": "1"})
	w := exchange.NewCapture(m.maxAnswer)
	server.ServeHTTP(w, req)
	if id := w.Header().Get(headerSessionID); id != "" {
		end, _ := http.NewRequestWithContext(ctx, http.MethodDelete, "http://127.0.0.1/", http.NoBody)
		end.Header.Set(headerSessionID, id)
		end.Header.Set(headerProtocolVersion, preferred)
		server.ServeHTTP(exchange.NewCapture(0), end)
	}
	// Read as the middleware reads the server's answers, with the
	// engine's one reader.
	data, err := readAnswerBody(&http.Response{StatusCode: w.Status(), Header: w.Header(), Body: io.NopCloser(bytes.NewReader(w.Body))})
	var rep reply
	if err == nil {
		rep, err = readReply(data)
	}
	if err == nil && confirms(rep, method, preferred) {
		return nil
	}
	answered := "HTTP " + strconv.Itoa(w.Status()) + " with no JSON-RPC response"
	switch {
	case w.Over:
		answered = "more than " + strconv.FormatInt(m.maxAnswer, 10) + " bytes (Options.MaxAnswerBytes)"
	case err == nil && rep.isError:
		answered = "error " + strconv.FormatInt(rep.code, 10) + " " + strconv.Quote(rep.message)
	case err == nil && method == methodDiscover:
		answered = "supportedVersions [" + strings.Join(rep.versions, ", ") + "]"
	case err == nil:
		answered = "protocolVersion " + strconv.Quote(rep.protocolVersion)
	}
	fix := "list the facet's revisions in the server's supported versions (go-sdk: ServerOptions.SupportedProtocolVersions; mcp-go: server.WithStreamableHTTPProtocolVersions)"
	if method == methodDiscover {
		fix = "a go-sdk server serves " + statelessRevision + " and later only stateless: mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{Stateless: true}); otherwise " + fix
	}
	return fmt.Errorf("mcphttp: the server does not serve the preferred revision %s the mcp facet advertises: its %s at %s answered %s; %s", preferred, method, preferred, answered, fix)
}

// Handler is the whole wiring of a host, in one call: it compiles f,
// records every decision, takes the caller's Subject from caller (nil:
// every caller is anonymous), checks server with [Middleware.Check], and
// returns server behind the negotiation.
// Any failure is an error, so a host that cannot serve what f advertises
// does not start.
//
// f's refreshedAt, when the host wrote one, must lie in its refresh
// window (at most 90 days old, at most a day ahead, RFC 0175 §D.4) on the
// policy's clock, or the error names the fix; left empty, it is dated
// from the release list embedded in the module (see negotiate.Compile),
// and the host starts even when that list has aged past the window, with
// a warning on the error log that its discovery is non-conformant.
//
// opts, at most one, takes the host past the defaults: its Options are
// [New]'s (its own audit sink, Observe for OpenTelemetry, bounds, an error
// log), and its Policy the one f is compiled under (RequireAudit, who
// counts as authenticated, the clock). What it leaves out is the default:
// the zero policy (the reference rules), every decision recorded through
// slog.Default() at Info (events.NewSlogSink), and New's own defaults.
// The caller is given once: caller, or Options.Subject.
func Handler(f *facets.MCP, caller func(*http.Request) *negotiate.Subject, server http.Handler, opts ...HandlerOptions) (http.Handler, error) {
	var o HandlerOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	var err error
	if o.Subject, err = exchange.Caller("mcphttp", len(opts), caller, o.Subject); err != nil {
		return nil, err
	}
	if o.Sink == nil {
		o.Sink = exchange.DefaultSink()
	}
	n, err := exchange.Defaults("mcphttp", facets.Set{MCP: f}, facets.ProtocolMCP, o.Policy)
	if err != nil {
		return nil, err
	}
	m, err := New(n, o.Options)
	if err != nil {
		return nil, err
	}
	if err := m.Check(context.Background(), server); err != nil {
		return nil, err
	}
	return m.Wrap(server), nil
}

// HandlerOptions is what [Handler] takes past the defaults. The zero
// HandlerOptions is the defaults.
type HandlerOptions struct {
	// Options configures the middleware as for [New]; a nil Sink records
	// every decision through slog.Default() at Info.
	Options
	// Policy is the policy f is compiled under; the zero Policy is the
	// reference rules.
	Policy policy.Policy
}
