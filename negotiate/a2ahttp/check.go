package a2ahttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// checkTask is the id of the task the start-up check asks for: one no
// agent holds, so that asking for it changes nothing.
const checkTask = "wopneg-startup-check"

// Check asks server, the handler the host gives to [Middleware.Wrap],
// whether it serves the preferred version the a2a facet advertises, the
// one every caller can be served and a caller that names none gets, and
// returns an error that names the fix when the server refuses it. Call it
// when the host starts, before any client arrives: a handler that cannot
// serve the preferred version otherwise shows only as refusals on the
// record, one per client.
//
// The question is one request, in process, straight to server, at the
// preferred version (A2A-Version, and the decision in its context, as
// the middleware would hand it over): a JSON-RPC GetTask (tasks/get at
// 0.x) of a task no agent holds, or on HTTP+JSON a GET of /tasks/ and
// that id. It goes around the middleware, so nothing is decided,
// recorded or observed. Only a version refusal fails the check, read as
// the middleware reads one (-32009, or an ErrorInfo with reason
// VERSION_NOT_SUPPORTED), and an answer longer than Options.MaxAnswerBytes,
// which could hide one: a task not found, or a path the handler does not
// serve, is no answer about the version.
func (m *Middleware) Check(ctx context.Context, server http.Handler) error {
	if server == nil {
		return errors.New("a2ahttp: Check of a nil handler")
	}
	if m.rec.N == nil {
		return errUnmade
	}
	preferred := m.adv.Preferred
	o, _ := m.rec.N.Decide(nil, negotiate.InboundOffer(m.adv, "", preferred))
	ctx = exchange.WithOutcome(ctx, facets.ProtocolA2A, &o)
	method := "GetTask"
	if strings.HasPrefix(preferred, "0.") {
		method = "tasks/get"
	}
	// The requests cannot fail to be made: their methods and URLs are
	// valid, and ctx is not nil (WithOutcome made it).
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1/",
		strings.NewReader(`{"jsonrpc":"2.0","id":"`+checkTask+`","method":"`+method+`","params":{"id":"`+checkTask+`"}}`))
	if m.opts.HTTPJSON {
		method = "GET /tasks/" + checkTask
		req, _ = http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1/tasks/"+checkTask, http.NoBody)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(headerName, preferred)
	w := exchange.NewCapture(int64(m.maxAnswer))
	server.ServeHTTP(w, req)
	if w.Over {
		return fmt.Errorf("a2ahttp: the server's answer to %s at %s %s is longer than Options.MaxAnswerBytes (%d bytes), so whether it serves the preferred version could not be read", method, headerName, preferred, m.maxAnswer)
	}
	// Read as the middleware reads the server's answers, with the
	// engine's one reader.
	answer := &http.Response{StatusCode: w.Status(), Header: w.Header(), Body: io.NopCloser(bytes.NewReader(w.Body))}
	stream := exchange.IsEventStream(w.Header().Get("Content-Type"))
	v, _ := exchange.Read(answer, int64(m.maxAnswer), func(b []byte, complete bool) exchange.Verdict {
		return read(b, complete, stream).Verdict
	}, nil)
	if v != exchange.Refused {
		return nil
	}
	return fmt.Errorf("a2ahttp: the server does not serve the preferred version %s the a2a facet advertises: its %s at %s %s was refused as VersionNotSupported; serve %s there (a host that serves several versions dispatches on a2ahttp.Version), or advertise only the versions the server serves", preferred, method, headerName, preferred, preferred)
}

// Handler is the whole wiring of a host, in one call: it compiles f,
// records every decision, takes the caller's Subject from caller (nil:
// every caller is anonymous), checks server with [Middleware.Check], and
// returns server behind the negotiation, on the JSON-RPC binding unless
// Options.HTTPJSON says otherwise, with the agent card at
// /.well-known/agent-card.json served by server too (mount
// a2asrv.NewStaticAgentCardHandler there, listing f's versions).
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
func Handler(f *facets.A2A, caller func(*http.Request) *negotiate.Subject, server http.Handler, opts ...HandlerOptions) (http.Handler, error) {
	var o HandlerOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	wiring := exchange.OneCall{Pkg: "a2ahttp", Facets: facets.Set{A2A: f}, Protocol: facets.ProtocolA2A, Policy: o.Policy,
		Options: len(opts), Caller: caller, Subject: &o.Subject, Sink: &o.Sink}
	return exchange.Mount(wiring, server, func(n *negotiate.Negotiator) (*Middleware, error) { return New(n, o.Options) })
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
