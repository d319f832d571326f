package negotiatetest_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// kitUser is who the test hosts' authentication resolves the kit's bearer
// token to.
var kitUser = negotiate.Subject{Issuer: "https://idp.example", SubjectID: "kit-user", Tenant: "acme",
	Lane: policy.LaneOIDC, Kind: policy.KindUser}

// bearerAuth is a host's authentication: the kit's token is kitUser,
// anything else nobody.
func bearerAuth(r *http.Request) *negotiate.Subject {
	if r.Header.Get("Authorization") != "Bearer negotiatetest" {
		return nil
	}
	s := kitUser
	return &s
}

// rpcServer stands for the SDK behind the middleware: it answers every
// JSON-RPC request with an empty result.
var rpcServer = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
})

// host is a host built from the module's adapters, with one flaw or none:
// each flaw breaks one rule the wire vectors state, as a host's own code
// could around the middleware.
type host struct{ flaw string }

func (h host) build(set facets.Set, p policy.Policy, sink events.Sink) (http.Handler, error) {
	auth := bearerAuth
	switch h.flaw {
	case "no floor check":
		set.MCP.MinimumRevision = set.MCP.Revisions[0]
		set.A2A.MinimumVersion = set.A2A.Versions[0]
	case "anonymous callers authenticated":
		auth = func(*http.Request) *negotiate.Subject { s := kitUser; return &s }
	case "nothing recorded":
		sink = events.SinkFunc(func(context.Context, events.Event) error { return nil })
	case "wrong reason recorded":
		inner := sink
		sink = events.SinkFunc(func(ctx context.Context, e events.Event) error {
			if e.Payload.Reason == events.ReasonBelowFloor {
				e.Payload.Reason = events.ReasonUnsupported
			}
			return inner.Emit(ctx, e)
		})
	}
	n, err := negotiate.Compile(set, p)
	if err != nil {
		return nil, err
	}
	a, err := a2ahttp.New(n, a2ahttp.Options{Sink: sink, Subject: auth})
	if err != nil {
		return nil, err
	}
	m, err := mcphttp.New(n, mcphttp.Options{Sink: sink, Subject: auth})
	if err != nil {
		return nil, err
	}
	var server http.Handler = rpcServer
	if h.flaw == "version header overwritten" {
		server = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("A2A-Version", set.A2A.PreferredVersion)
			rpcServer.ServeHTTP(w, r)
		})
	}
	mux := http.NewServeMux()
	mux.Handle("/a2a", a.Wrap(server))
	mux.Handle("/mcp", m.Wrap(server))
	return h.front(mux), nil
}

// front is what the flawed host puts in front of the middleware.
func (h host) front(next http.Handler) http.Handler {
	switch h.flaw {
	case "no header read as preferred":
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("A2A-Version") == "" && r.Header.Get("MCP-Protocol-Version") == "" {
				r.Header.Set("A2A-Version", "1.0")
				r.Header.Set("MCP-Protocol-Version", "2026-07-28")
			}
			next.ServeHTTP(w, r)
		})
	case "wrong JSON-RPC code", "refusal on HTTP 200":
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			body, status := rec.Body.Bytes(), rec.Code
			if h.flaw == "wrong JSON-RPC code" {
				body = bytes.ReplaceAll(body, []byte("-32009"), []byte("-32600"))
				body = bytes.ReplaceAll(body, []byte("-32022"), []byte("-32602"))
			} else if status == http.StatusBadRequest {
				status = http.StatusOK
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.Header().Del("Content-Length")
			w.WriteHeader(status)
			_, _ = w.Write(body)
		})
	}
	return next
}

// TestRunWireAdapters runs the wire vectors against a host built from the
// module's own adapters.
func TestRunWireAdapters(t *testing.T) {
	negotiatetest.RunWire(t, host{}.build)
}

// recordingTB is a testing.TB that keeps what it is told to report, so
// that a test can run the kit and read its verdict. The kit calls only
// Helper and Errorf on a TB that is not a *testing.T.
type recordingTB struct {
	testing.TB
	errs []string
}

func (*recordingTB) Helper() {}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// failed returns the names of the vectors the kit failed.
func (r *recordingTB) failed() []string {
	var names []string
	for _, e := range r.errs {
		name, _, _ := strings.Cut(e, " ")
		names = append(names, name)
	}
	return names
}

// TestRunWireCatchesFlaws runs the kit against a host with each flaw and
// checks that the vectors of the rule it breaks fail: a kit that passes a
// broken host checks nothing.
func TestRunWireCatchesFlaws(t *testing.T) {
	for flaw, mustFail := range map[string][]string{
		"no floor check":                  {"mcp/below-floor-refused", "mcp/no-header-below-floor"},
		"anonymous callers authenticated": {"a2a/unauthenticated-downgrade-refused", "a2a/no-header-anonymous-refused", "mcp/unauthenticated-downgrade-refused", "mcp/no-header-anonymous-refused"},
		"nothing recorded":                {"a2a/preferred-accepted", "a2a/below-floor-refused", "mcp/preferred-accepted", "mcp/batch-at-2025-06-18-refused"},
		"wrong reason recorded":           {"a2a/below-floor-refused", "mcp/below-floor-refused", "mcp/no-header-below-floor"},
		"version header overwritten":      {"a2a/authenticated-downgrade", "a2a/no-header-authenticated-is-0.3"},
		"no header read as preferred":     {"a2a/no-header-authenticated-is-0.3", "a2a/no-header-anonymous-refused", "mcp/no-header-below-floor", "mcp/no-header-authenticated-is-2025-03-26"},
		"wrong JSON-RPC code":             {"a2a/unauthenticated-downgrade-refused", "mcp/below-floor-refused", "mcp/unsupported-refused"},
		"refusal on HTTP 200":             {"mcp/unauthenticated-downgrade-refused", "mcp/header-body-mismatch", "mcp/batch-at-2025-06-18-refused"},
	} {
		t.Run(flaw, func(t *testing.T) {
			tb := &recordingTB{}
			negotiatetest.RunWire(tb, host{flaw: flaw}.build)
			failed := tb.failed()
			for _, name := range mustFail {
				if !slices.Contains(failed, name) {
					t.Errorf("the kit passed %s on a host with %q; it failed %q", name, flaw, failed)
				}
			}
		})
	}
}

// TestRunWireReports checks what the kit reports through a TB that is not
// a *testing.T: nothing for a correct host, and a failure per vector, with
// the vector's name and the build error, for a host that cannot be built.
func TestRunWireReports(t *testing.T) {
	tb := &recordingTB{}
	negotiatetest.RunWire(tb, host{}.build)
	if len(tb.errs) != 0 {
		t.Errorf("a correct host failed: %q", tb.errs)
	}
	tb = &recordingTB{}
	negotiatetest.RunWire(tb, func(facets.Set, policy.Policy, events.Sink) (http.Handler, error) {
		return nil, io.ErrUnexpectedEOF
	})
	if len(tb.errs) < 20 {
		t.Fatalf("%d failures for a host that cannot be built, want one per vector", len(tb.errs))
	}
	for _, e := range tb.errs {
		if !strings.Contains(e, "build: unexpected EOF") {
			t.Errorf("failure %q does not carry the build error", e)
		}
	}
	tb = &recordingTB{}
	negotiatetest.RunWire(tb, func(facets.Set, policy.Policy, events.Sink) (http.Handler, error) { return nil, nil })
	if len(tb.errs) < 20 || !strings.Contains(tb.errs[0], "nil handler") {
		t.Errorf("a nil handler reported %q", tb.errs)
	}
}

// BenchmarkRunWire runs all the wire vectors against the adapters' host,
// a handler built per vector: what RunWire costs a host's test suite.
func BenchmarkRunWire(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		negotiatetest.RunWire(b, host{}.build)
	}
}
