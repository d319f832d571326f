package a2ahttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/adapter"
	"github.com/wopneg/wopneg/negotiate"
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
	preferred := m.adv.Preferred
	o, _ := m.n.Decide(nil, negotiate.InboundOffer(m.adv, "", preferred))
	ctx = adapter.WithOutcome(ctx, facets.ProtocolA2A, &o)
	method := "GetTask"
	if strings.HasPrefix(preferred, "0.") {
		method = "tasks/get"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1/",
		strings.NewReader(`{"jsonrpc":"2.0","id":"`+checkTask+`","method":"`+method+`","params":{"id":"`+checkTask+`"}}`))
	if m.opts.HTTPJSON {
		method = "GET /tasks/" + checkTask
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1/tasks/"+checkTask, http.NoBody)
	}
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(headerName, preferred)
	w := adapter.NewCapture(int64(m.maxAnswer))
	server.ServeHTTP(w, req)
	data := w.Body
	if adapter.IsEventStream(w.Header().Get("Content-Type")) {
		var events adapter.EventScanner
		data, _ = events.Next(w.Body)
	}
	if w.Over {
		return fmt.Errorf("a2ahttp: the server's answer to %s at %s %s is longer than Options.MaxAnswerBytes (%d bytes), so whether it serves the preferred version could not be read", method, headerName, preferred, m.maxAnswer)
	}
	s := answerReader{complete: true}
	s.d.Reset(bytes.NewBuffer(data), lenient...)
	if s.response() != refused {
		return nil
	}
	return fmt.Errorf("a2ahttp: the server does not serve the preferred version %s the a2a facet advertises: its %s at %s %s was refused as VersionNotSupported; serve %s there (a host that serves several versions dispatches on a2ahttp.Version), or advertise only the versions the server serves", preferred, method, headerName, preferred, preferred)
}
