package a2ahttp_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// testNow is the fixed clock of every decision in these tests.
var testNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// wideA2A is the wider host of the interop digest's table C: 1.0, 1.1 and
// 1.2 offered, preferred 1.2, floor 1.1, so that a downgrade (1.1), a
// below-floor request (1.0) and an unsupported one (1.3) are all live.
func wideA2A() facets.Set {
	return facets.Set{A2A: &facets.A2A{
		Versions: []string{"1.0", "1.1", "1.2"}, PreferredVersion: "1.2", MinimumVersion: "1.1", RefreshedAt: "2026-11-01",
	}}
}

func clock(p policy.Policy) policy.Policy {
	if p.Now == nil {
		p.Now = func() time.Time { return testNow }
	}
	return p
}

func compile(t testing.TB, set facets.Set, p policy.Policy) *negotiate.Negotiator {
	t.Helper()
	n, err := negotiate.Compile(set, clock(p))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// bearer is the credential the tests' Subject function trusts.
const bearer = "Bearer peer-token"

func peerAgent() *negotiate.Subject {
	return &negotiate.Subject{Issuer: "https://idp.example", SubjectID: "peer-agent", Tenant: "acme", Lane: policy.LaneOIDC, Kind: policy.KindAgent}
}

// subjectOf resolves the caller as a host would: an authenticated agent
// for the trusted bearer token, nobody otherwise.
func subjectOf(r *http.Request) *negotiate.Subject {
	if r.Header.Get("Authorization") == bearer {
		return peerAgent()
	}
	return nil
}

// served records what reached the wrapped handler.
type served struct {
	calls   int
	version string
	ok      bool
	outcome negotiate.Outcome
	body    []byte
}

// handler is the wrapped A2A handler of the tests: it records what it saw
// and answers 200 "served".
func (s *served) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.calls++
		s.version, s.ok = a2ahttp.Version(r.Context())
		s.outcome, _ = a2ahttp.Outcome(r.Context())
		s.body, _ = io.ReadAll(r.Body)
		_, _ = io.WriteString(w, "served")
	})
}

// fixture is a middleware over a recording handler and sink.
type fixture struct {
	rec    *negotiatetest.Recorder
	served *served
	h      http.Handler
	log    *bytes.Buffer
}

func newFixture(t testing.TB, p policy.Policy, opts a2ahttp.Options) *fixture {
	t.Helper()
	return newFixtureOf(t, wideA2A(), p, opts)
}

// legacyA2A offers 0.3 and 1.0, prefers 1.0 and has its floor at 0.3, as a
// host that still serves 0.3 clients does.
func legacyA2A() facets.Set {
	return facets.Set{A2A: &facets.A2A{
		Versions: []string{"0.3", "1.0"}, PreferredVersion: "1.0", MinimumVersion: "0.3", RefreshedAt: "2026-11-01",
	}}
}

// newFixtureOf is newFixture for a host that advertises set.
func newFixtureOf(t testing.TB, set facets.Set, p policy.Policy, opts a2ahttp.Options) *fixture {
	t.Helper()
	f := &fixture{rec: &negotiatetest.Recorder{}, served: &served{}, log: &bytes.Buffer{}}
	if opts.Sink == nil {
		opts.Sink = f.rec
	}
	if opts.Subject == nil {
		opts.Subject = subjectOf
	}
	if opts.ErrorLog == nil {
		opts.ErrorLog = slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			},
		}))
	}
	m, err := a2ahttp.New(compile(t, set, p), opts)
	if err != nil {
		t.Fatal(err)
	}
	f.h = m.Wrap(f.served.handler())
	return f
}

// do serves r and returns the recorded response.
func (f *fixture) do(r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	return w
}

// rpcBody is a JSON-RPC request as a2a-go sends it: id last.
func rpcBody(id string) string {
	return `{"jsonrpc":"2.0","method":"GetTask","params":{"id":"task-1"},"id":` + id + `}`
}

func post(target, body string, header ...string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, target, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Add(header[i], header[i+1])
	}
	return r
}

// payload returns the payload of the only event recorded, checking the
// envelope is a durable host event.
func onlyPayload(t *testing.T, rec *negotiatetest.Recorder) events.NegotiationDecided {
	t.Helper()
	got := rec.Events()
	if len(got) != 1 {
		t.Fatalf("recorded %d events, want 1: %+v", len(got), got)
	}
	e := got[0]
	if e.RunID != "" || e.WorkspaceID != "" || !e.Time.Equal(e.Payload.At) {
		t.Errorf("envelope: run %q workspace %q time %v; want a host event at the decision's time %v",
			e.RunID, e.WorkspaceID, e.Time, e.Payload.At)
	}
	return e.Payload
}

// cardOrPost is a GET of the card when target is the card path, else a
// JSON-RPC POST with id "req-1"; either names version.
func cardOrPost(target, version string) *http.Request {
	method := http.MethodPost
	if target == "/.well-known/agent-card.json" {
		method = http.MethodGet
	}
	r := httptest.NewRequest(method, target, strings.NewReader(rpcBody(`"req-1"`)))
	r.Header.Set("A2A-Version", version)
	return r
}
