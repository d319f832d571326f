package a2ahttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/policy"
)

// observed is what an Options.Observe saw of one exchange.
type observed struct {
	method string
	kind   negotiate.Kind
	rule   negotiate.Rule
	code   int
}

// reading reads the request's body whole before h answers, as an A2A
// server does.
func reading(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h.ServeHTTP(w, r)
	})
}

// TestObserve: Options.Observe is called once per decided request, after
// its answer, with the JSON-RPC method the body named within what was
// read of it, the outcome as answered and the JSON-RPC code of the
// answer; never for a request nothing decided.
func TestObserve(t *testing.T) {
	failing := durable{events.SinkFunc(func(context.Context, events.Event) error { return errors.New("disk full") })}
	card := func(*http.Request, string) ([]byte, error) { return []byte(`{}`), nil }
	invalid := func(*http.Request) *negotiate.Subject { return &negotiate.Subject{SubjectID: "users/42"} }
	result := `{"jsonrpc":"2.0","id":"req-1","result":{}}`
	refusal := `{"jsonrpc":"2.0","id":"req-1","error":{"code":-32009,"message":"no"}}`
	long := `{"jsonrpc":"2.0","params":{"pad":"` + strings.Repeat("x", 4<<10) + `"},"method":"GetTask","id":1}`
	cases := []struct {
		name    string
		policy  policy.Policy
		opts    a2ahttp.Options
		server  http.Handler // nil: the fixture's, which answers "served"
		req     *http.Request
		want    []observed
		outcome string // the record's outcome, when one is written
	}{
		{name: "accepted", req: cardOrPost("/a2a", "1.2"),
			want: []observed{{"GetTask", negotiate.Accepted, negotiate.RuleAccept, 0}}, outcome: "accepted"},
		{name: "downgraded", req: post("/a2a", rpcBody("1"), "A2A-Version", "1.1", "Authorization", bearer),
			want: []observed{{"GetTask", negotiate.Downgraded, negotiate.RuleAccept, 0}}, outcome: "accepted"},
		{name: "below the floor", req: cardOrPost("/a2a", "1.0"),
			want: []observed{{"GetTask", negotiate.Refused, negotiate.RuleFloor, -32009}}, outcome: "refused"},
		{name: "on HTTP+JSON, no code and no method", opts: a2ahttp.Options{HTTPJSON: true}, req: cardOrPost("/a2a", "1.0"),
			want: []observed{{"", negotiate.Refused, negotiate.RuleFloor, 0}}, outcome: "refused"},
		{name: "the card refused", req: cardOrPost("/.well-known/agent-card.json", "1.0"),
			want: []observed{{"", negotiate.Refused, negotiate.RuleFloor, 0}}, outcome: "refused"},
		{name: "the card served", opts: a2ahttp.Options{Card: card}, req: cardOrPost("/.well-known/agent-card.json", "1.2"),
			want: []observed{{"", negotiate.Accepted, negotiate.RuleAccept, 0}}, outcome: "accepted"},
		{name: "the server refuses the version", server: answering(200, "application/json", refusal), req: cardOrPost("/a2a", "1.2"),
			want: []observed{{"GetTask", negotiate.Refused, negotiate.RuleCommon, -32009}}, outcome: "refused"},
		{name: "the server refuses on HTTP+JSON", opts: a2ahttp.Options{HTTPJSON: true},
			server: answering(400, "application/json", `{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"no","details":[{"reason":"VERSION_NOT_SUPPORTED"}]}}`),
			req:    cardOrPost("/a2a", "1.2"), want: []observed{{"", negotiate.Refused, negotiate.RuleCommon, 0}}, outcome: "refused"},
		{name: "the server serves", server: answering(200, "application/json", result), req: cardOrPost("/a2a", "1.2"),
			want: []observed{{"GetTask", negotiate.Accepted, negotiate.RuleAccept, 0}}, outcome: "accepted"},
		{name: "an answer longer than the bound", opts: a2ahttp.Options{MaxAnswerBytes: 4}, server: answering(200, "application/json", `{"jsonrpc":"2.0",`, `"result":{}}`), req: cardOrPost("/a2a", "1.2"),
			want: []observed{{"GetTask", negotiate.Refused, negotiate.RuleCommon, -32603}}, outcome: "refused"},
		{name: "an answer longer than the bound, on the card", opts: a2ahttp.Options{MaxAnswerBytes: 4}, server: answering(500, "application/json", `{"error":`, `{"code":500}}`),
			req: cardOrPost("/.well-known/agent-card.json", "1.2"), want: []observed{{"", negotiate.Refused, negotiate.RuleCommon, 0}}, outcome: "refused"},
		{name: "a method past what is kept", req: post("/a2a", long, "A2A-Version", "1.2"),
			want: []observed{{"", negotiate.Accepted, negotiate.RuleAccept, 0}}, outcome: "accepted"},
		{name: "a required audit that failed on a refusal", policy: policy.Policy{RequireAudit: true}, opts: a2ahttp.Options{Sink: failing}, req: cardOrPost("/a2a", "1.0"),
			want: []observed{{"GetTask", negotiate.Refused, negotiate.RuleAudit, -32603}}},
		{name: "a required audit that failed before serving", policy: policy.Policy{RequireAudit: true}, opts: a2ahttp.Options{Sink: failing}, req: cardOrPost("/a2a", "1.2"),
			want: []observed{{"GetTask", negotiate.Refused, negotiate.RuleAudit, -32603}}},
		{name: "a required audit that failed after the answer", policy: policy.Policy{RequireAudit: true}, opts: a2ahttp.Options{Sink: failing},
			req: cardOrPost("/.well-known/agent-card.json", "1.2"), want: []observed{{"", negotiate.Refused, negotiate.RuleAudit, 0}}},
		{name: "a required audit that failed after the server refused", policy: policy.Policy{RequireAudit: true}, opts: a2ahttp.Options{Sink: failing},
			server: answering(200, "application/json", refusal), req: cardOrPost("/a2a", "1.2"), want: []observed{{"GetTask", negotiate.Refused, negotiate.RuleAudit, -32603}}},
		{name: "a required audit that failed when the server refused", policy: policy.Policy{RequireAudit: true}, opts: a2ahttp.Options{Sink: failingAfter(1)},
			server: answering(200, "application/json", refusal), req: cardOrPost("/a2a", "1.2"), want: []observed{{"GetTask", negotiate.Refused, negotiate.RuleAudit, -32603}}},
		{name: "an invalid Subject refused before any decision", opts: a2ahttp.Options{StrictSubject: true, Subject: invalid}, req: cardOrPost("/a2a", "1.2")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []observed
			c.opts.Observe = func(ctx context.Context, x negotiate.Exchange) {
				if x.Outcome.Protocol != facets.ProtocolA2A || ctx.Value(ctxKey{}) != "the request's" {
					t.Errorf("Observe(%v, %+v): want the request's context and an A2A outcome", ctx, x)
				}
				got = append(got, observed{x.Method, x.Outcome.Kind, x.Outcome.Rule, x.Code})
			}
			f := newFixture(t, c.policy, c.opts)
			h := f.h
			if c.server != nil {
				m, err := a2ahttp.New(compile(t, wideA2A(), c.policy), func() a2ahttp.Options {
					o := c.opts
					if o.Sink == nil {
						o.Sink = f.rec
					}
					return o
				}())
				if err != nil {
					t.Fatal(err)
				}
				h = m.Wrap(reading(c.server))
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, c.req.WithContext(context.WithValue(c.req.Context(), ctxKey{}, "the request's")))
			if len(got) != len(c.want) || len(got) == 1 && got[0] != c.want[0] {
				t.Errorf("observed %+v, want %+v (answer %d %s)", got, c.want, w.Code, w.Body)
			}
			if c.outcome != "" {
				if p := f.rec.Events(); len(p) != 1 || p[0].Payload.Outcome != c.outcome {
					t.Errorf("recorded %+v, want one %s: the exchange is observed as recorded", p, c.outcome)
				}
			}
		})
	}
}

// failingAfter is an audit sink that records n events, and fails after.
func failingAfter(n int) events.Sink {
	return durable{events.SinkFunc(func(context.Context, events.Event) error {
		if n--; n < 0 {
			return errors.New("disk full")
		}
		return nil
	})}
}

// durable is a sink that says it is durable, as a host that requires the
// audit must record into (a failing store is still a durable one).
type durable struct{ events.Sink }

func (durable) Durable() bool { return true }

// ctxKey marks the context a request is served with.
type ctxKey struct{}

// TestObserveKeepsTheBody: the body the wrapped handler reads is the
// request's, byte for byte, when Observe keeps a prefix of it, and it is
// the request's own reader when Observe is not set.
func TestObserveKeepsTheBody(t *testing.T) {
	body := `{"jsonrpc":"2.0","params":{"pad":"` + strings.Repeat("y", 5<<10) + `"},"method":"SendMessage","id":1}`
	for _, observe := range []bool{false, true} {
		var opts a2ahttp.Options
		if observe {
			opts.Observe = func(context.Context, negotiate.Exchange) {}
		}
		f := newFixture(t, policy.Policy{}, opts)
		req := post("/a2a", body, "A2A-Version", "1.2")
		original := req.Body
		var seen io.ReadCloser
		m, err := a2ahttp.New(compile(t, wideA2A(), policy.Policy{}), a2ahttp.Options{Sink: f.rec, Observe: opts.Observe})
		if err != nil {
			t.Fatal(err)
		}
		var read []byte
		m.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen = r.Body
			read, _ = io.ReadAll(r.Body)
		})).ServeHTTP(httptest.NewRecorder(), req)
		if string(read) != body {
			t.Errorf("observe %t: the handler read %d bytes, want the %d of the body", observe, len(read), len(body))
		}
		if (seen == original) == observe {
			t.Errorf("observe %t: the handler's body is the request's own: %t", observe, seen == original)
		}
	}
}
