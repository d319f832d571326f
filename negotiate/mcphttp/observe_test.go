package mcphttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// observed is what an Options.Observe saw of one exchange.
type observed struct {
	method string
	kind   negotiate.Kind
	rule   negotiate.Rule
	code   int
}

// answering is an MCP server that answers every request with body.
func answering(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	})
}

// answeringStream answers with body as the one event of a stream.
func answeringStream(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: message\ndata: "+body+"\n\n")
	})
}

// ctxKey marks the context a request is served with.
type ctxKey struct{}

// TestObserve: Options.Observe is called once per decided request, after
// its answer, with the method, the outcome as answered and the JSON-RPC
// code of the answer; never for a request nothing decided.
func TestObserve(t *testing.T) {
	refusal := `{"jsonrpc":"2.0","id":7,"error":{"code":-32022,"message":"unsupported","data":{"supported":["2025-11-25"],"requested":"2026-07-28"}}}`
	failing := &negotiatetest.Recorder{}
	failing.Fail(errors.New("disk full"))
	cases := []struct {
		name    string
		policy  policy.Policy
		sink    events.Sink
		server  http.Handler // nil: the fake server
		maxAns  int64
		call    call
		want    []observed
		outcome string // the record's outcome, when one is written
	}{
		{name: "accepted", call: stateless("2026-07-28", "2026-07-28"),
			want: []observed{{"tools/list", negotiate.Accepted, negotiate.RuleAccept, 0}}, outcome: "accepted"},
		{name: "refused below the floor", call: stateless("2025-06-18", "2025-06-18"),
			want: []observed{{"tools/list", negotiate.Refused, negotiate.RuleFloor, -32022}}, outcome: "refused"},
		{name: "headers and body disagree", call: stateless("2026-07-28", "2025-11-25"),
			want: []observed{{"tools/list", negotiate.Refused, negotiate.RuleInput, -32020}}, outcome: "refused"},
		{name: "legacy initialize of an anonymous caller", call: call{body: initialize("2025-11-25")},
			want: []observed{{"initialize", negotiate.Refused, negotiate.RuleAuthenticated, -32602}}, outcome: "refused"},
		{name: "legacy initialize downgraded", call: call{body: initialize("2025-11-25"), headers: hdr("Authorization", "Bearer user")},
			want: []observed{{"initialize", negotiate.Downgraded, negotiate.RuleAccept, 0}}, outcome: "accepted"},
		{name: "initialize naming no revision", call: call{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`}},
		{name: "discover the server does not confirm", call: discover("2026-07-28"),
			want: []observed{{"server/discover", negotiate.Refused, negotiate.RuleCommon, 0}}, outcome: "refused"},
		{name: "discover answered with an error", server: answering(`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no"}}`), call: discover("2026-07-28"),
			want: []observed{{"server/discover", negotiate.Refused, negotiate.RuleCommon, -32601}}, outcome: "refused"},
		{name: "discover confirmed", server: answering(`{"jsonrpc":"2.0","id":3,"result":{"supportedVersions":["2026-07-28"]}}`), call: discover("2026-07-28"),
			want: []observed{{"server/discover", negotiate.Accepted, negotiate.RuleAccept, 0}}, outcome: "accepted"},
		{name: "the server refuses the revision", server: answering(refusal), call: stateless("2026-07-28", "2026-07-28"),
			want: []observed{{"tools/list", negotiate.Refused, negotiate.RuleCommon, -32022}}, outcome: "refused"},
		{name: "the server refuses the revision in a stream", server: answeringStream(refusal), call: stateless("2026-07-28", "2026-07-28"),
			want: []observed{{"tools/list", negotiate.Refused, negotiate.RuleCommon, -32022}}, outcome: "refused"},
		{name: "an answer longer than the bound", maxAns: 8, call: stateless("2026-07-28", "2026-07-28"),
			want: []observed{{"tools/list", negotiate.Refused, negotiate.RuleCommon, -32603}}, outcome: "refused"},
		{name: "a required audit that failed before serving", policy: policy.Policy{RequireAudit: true}, sink: failing, call: stateless("2026-07-28", "2026-07-28"),
			want: []observed{{"tools/list", negotiate.Refused, negotiate.RuleAudit, -32603}}},
		{name: "a required audit that failed after discover", policy: policy.Policy{RequireAudit: true}, sink: failing,
			server: answering(`{"jsonrpc":"2.0","id":3,"result":{"supportedVersions":["2026-07-28"]}}`), call: discover("2026-07-28"),
			want: []observed{{"server/discover", negotiate.Refused, negotiate.RuleAudit, -32603}}},
		{name: "a required audit that failed on a refusal", policy: policy.Policy{RequireAudit: true}, sink: failing, call: stateless("2025-06-18", "2025-06-18"),
			want: []observed{{"tools/list", negotiate.Refused, negotiate.RuleAudit, -32603}}},
		{name: "a required audit that failed on a mismatch", policy: policy.Policy{RequireAudit: true}, sink: failing, call: stateless("2026-07-28", "2025-11-25"),
			want: []observed{{"tools/list", negotiate.Refused, negotiate.RuleAudit, -32603}}},
		// Recorded before serving, and the server's refusal after it, in a
		// second event: the exchange is observed as the server answered.
		{name: "recorded before serving", policy: policy.Policy{RequireAudit: true}, server: answering(refusal), call: stateless("2026-07-28", "2026-07-28"),
			want: []observed{{"tools/list", negotiate.Refused, negotiate.RuleCommon, -32022}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []observed
			opts := mcphttp.Options{Sink: &negotiatetest.Recorder{}, Subject: subjectOf, MaxAnswerBytes: c.maxAns}
			r := &rig{events: opts.Sink.(*negotiatetest.Recorder)}
			if c.sink != nil {
				opts.Sink = c.sink
			}
			opts.Observe = func(ctx context.Context, x negotiate.Exchange) {
				if x.Outcome.Protocol != facets.ProtocolMCP || ctx.Value(ctxKey{}) != "the request's" {
					t.Errorf("Observe(%v, %+v): want the request's context and an MCP outcome", ctx, x)
				}
				got = append(got, observed{x.Method, x.Outcome.Kind, x.Outcome.Rule, x.Code})
			}
			m, err := mcphttp.New(compile(t, wideFacets(), c.policy), opts)
			if err != nil {
				t.Fatal(err)
			}
			server := c.server
			if server == nil {
				server = &fakeServer{revisions: wideFacets().MCP.Revisions}
			}
			wrapped := m.Wrap(server)
			r.h = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				wrapped.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), ctxKey{}, "the request's")))
			})
			a := r.do(c.call)
			if len(got) != len(c.want) || len(got) == 1 && got[0] != c.want[0] {
				t.Errorf("observed %+v, want %+v (answer %d %s)", got, c.want, a.status, a.body)
			}
			if c.outcome != "" {
				if p := payloads(t, r.events); len(p) != 1 || p[0].Outcome != c.outcome {
					t.Errorf("recorded %+v, want one %s: the exchange is observed as recorded", p, c.outcome)
				}
			}
		})
	}
}

// TestObserveSession: a request on a legacy session the middleware
// remembers is served at the session's revision without a new decision,
// and so without an observation.
func TestObserveSession(t *testing.T) {
	var got []observed
	r := newRig(t, legacyFacets(), policy.Policy{}, true, func(o *mcphttp.Options) {
		o.Observe = func(_ context.Context, x negotiate.Exchange) {
			got = append(got, observed{x.Method, x.Outcome.Kind, x.Outcome.Rule, x.Code})
		}
	})
	if a := r.do(call{body: initialize("2025-11-25")}); a.status != http.StatusOK {
		t.Fatalf("initialize: %d %s", a.status, a.body)
	}
	a := r.do(call{body: `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`, headers: hdr(mcphttp.HeaderProtocolVersion, "2025-11-25", mcphttp.HeaderSessionID, "session-a")})
	if a.status != http.StatusOK {
		t.Fatalf("tools/list on the session: %d %s", a.status, a.body)
	}
	want := []observed{{"initialize", negotiate.Accepted, negotiate.RuleAccept, 0}}
	if len(got) != 1 || got[0] != want[0] {
		t.Errorf("observed %+v, want %+v", got, want)
	}
}
