package exchange_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

func a2aOnly(t *testing.T) *negotiate.Negotiator {
	t.Helper()
	n, err := negotiate.Compile(facets.Set{A2A: &facets.A2A{
		Versions: []string{"1.0", "1.1"}, PreferredVersion: "1.1", MinimumVersion: "1.0", RefreshedAt: "2026-11-01",
	}}, policy.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCheck(t *testing.T) {
	n, sink := a2aOnly(t), &negotiatetest.Recorder{}
	for _, c := range []struct {
		name string
		n    *negotiate.Negotiator
		sink events.Sink
		p    facets.Protocol
		want string
		is   error
	}{
		{"nil Negotiator", nil, sink, facets.ProtocolA2A, "x: the Negotiator is nil", nil},
		{"not advertised", n, sink, facets.ProtocolMCP, "x: the Negotiator does not advertise mcp", nil},
		{"nil sink", n, nil, facets.ProtocolA2A, "x: the Sink is nil; every negotiation must be recorded: " + events.ErrClosed.Error(), events.ErrClosed},
	} {
		adv, err := exchange.Check("x", c.n, c.sink, c.p)
		if err == nil || err.Error() != c.want || (c.is != nil && !errors.Is(err, c.is)) || adv.Preferred != "" {
			t.Errorf("%s: %+v, %v; want %q", c.name, adv, err, c.want)
		}
	}
	adv, err := exchange.Check("x", n, sink, facets.ProtocolA2A)
	if err != nil || adv.Preferred != "1.1" || adv.Floor != "1.0" {
		t.Errorf("usable: %+v, %v", adv, err)
	}
}

// Each protocol's outcome is read back by that protocol alone, a protocol
// neither adapter speaks included.
func TestOutcomeIsPerProtocol(t *testing.T) {
	protocols := []facets.Protocol{facets.ProtocolMCP, facets.ProtocolA2A, "grpc"}
	for _, p := range protocols {
		o := negotiate.Outcome{Kind: negotiate.Accepted, Protocol: p, Version: "1.1"}
		ctx := exchange.WithOutcome(context.Background(), p, &o)
		for _, q := range protocols {
			got, ok := exchange.Outcome(ctx, q)
			if want := p == q; ok != want || want && got != o || !want && got != (negotiate.Outcome{}) {
				t.Errorf("%s's outcome read as %s: %+v, %v", p, q, got, ok)
			}
		}
		if _, ok := exchange.Outcome(context.Background(), p); ok {
			t.Errorf("an empty context holds a %s outcome", p)
		}
	}
}

func TestSendable(t *testing.T) {
	for _, c := range []struct {
		name string
		o    negotiate.Outcome
		want string
	}{
		{"refused", negotiate.Outcome{Kind: negotiate.Refused, Protocol: facets.ProtocolA2A}, "x: no transport for a refused negotiation: interop_version_unsupported: negotiation refused"},
		{"another protocol", negotiate.Outcome{Kind: negotiate.Accepted, Protocol: facets.ProtocolMCP, Version: "2026-07-28"}, `x: no transport for a "mcp" negotiation`},
		{"no version", negotiate.Outcome{Kind: negotiate.Accepted, Protocol: facets.ProtocolA2A}, `x: no transport for the outcome: a2a version "": want "major.minor"`},
		{"downgraded", negotiate.Outcome{Kind: negotiate.Downgraded, Protocol: facets.ProtocolA2A, Version: "1.0"}, ""},
		{"accepted", negotiate.Outcome{Kind: negotiate.Accepted, Protocol: facets.ProtocolA2A, Version: "1.1"}, ""},
	} {
		err := exchange.Sendable("x", c.o, facets.ProtocolA2A)
		if got := fmt.Sprint(err); (c.want == "" && err != nil) || (c.want != "" && got != c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	refused := negotiate.Outcome{Kind: negotiate.Refused, Protocol: facets.ProtocolA2A}
	if err := exchange.Sendable("x", refused, facets.ProtocolA2A); !errors.Is(err, wperrors.InteropVersionUnsupported) {
		t.Errorf("a refusal's error %v does not wrap the refusal", err)
	}
}

// An adapter checks its configuration once, carries the accepted outcome to
// the wrapped handler in the request's context, and makes a transport only
// for an outcome a request may be sent at.
func Example() {
	n, err := negotiate.Compile(facets.Set{A2A: &facets.A2A{
		Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0", RefreshedAt: "2026-11-01",
	}}, policy.Policy{})
	if err != nil {
		panic(err)
	}
	adv, err := exchange.Check("a2ahttp", n, &negotiatetest.Recorder{}, facets.ProtocolA2A)
	fmt.Println(adv.Preferred, err)
	_, err = exchange.Check("mcphttp", n, &negotiatetest.Recorder{}, facets.ProtocolMCP)
	fmt.Println(err)

	o := negotiate.Outcome{Kind: negotiate.Accepted, Protocol: facets.ProtocolA2A, Version: "1.0"}
	ctx := exchange.WithOutcome(context.Background(), facets.ProtocolA2A, &o)
	got, ok := exchange.Outcome(ctx, facets.ProtocolA2A)
	fmt.Println(got.Version, ok, exchange.Sendable("a2ahttp", got, facets.ProtocolA2A))
	// Output:
	// 1.0 <nil>
	// mcphttp: the Negotiator does not advertise mcp
	// 1.0 true <nil>
}

// TestOffer holds the middleware's Offer to negotiate.InboundOffer for
// every request, offered or not, and to costing no allocation for an
// offered version, which is why it exists.
func TestOffer(t *testing.T) {
	adv := facets.Advertised{Protocol: facets.ProtocolMCP, Versions: []string{"2025-11-25", "2026-07-28"}, Preferred: "2026-07-28"}
	for _, requested := range []string{"2025-11-25", "2026-07-28", "", "2025-06-18", "not a revision"} {
		got, want := exchange.Offer(adv, requested), negotiate.InboundOffer(adv, "", requested)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("Offer(%q) = %+v, want %+v", requested, got, want)
		}
		if len(got.PeerVersions) != 1 || cap(got.PeerVersions) != 1 {
			t.Errorf("Offer(%q).PeerVersions = %q (cap %d): one version, that an append cannot write past", requested, got.PeerVersions, cap(got.PeerVersions))
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = exchange.Offer(adv, "2025-11-25") }); n != 0 {
		t.Errorf("Offer of an offered version allocates %v times, want 0", n)
	}
}

// TestARequiredAuditNeedsADurableSink: a host that requires the audit
// starts only with a sink that says it is durable, at every place a host
// starts with a sink, and the refusal names the fix; without RequireAudit
// any sink will do. Outbound, nothing is sent to the peer.
func TestARequiredAuditNeedsADurableSink(t *testing.T) {
	var lines bytes.Buffer
	file, err := os.Create(filepath.Join(t.TempDir(), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	durableStore := &negotiatetest.Recorder{}
	queued := events.NewAsync(durableStore, events.AsyncOptions{})
	defer queued.Close()
	acknowledged := events.NewAsync(durableStore, events.AsyncOptions{Acknowledge: time.Second})
	defer acknowledged.Close()
	sinks := []struct {
		name    string
		sink    events.Sink
		durable bool
	}{
		{"JSON lines to a writer", events.NewJSONLines(&lines), false},
		{"JSON lines to a synced file", events.NewJSONLinesFile(file), true},
		{"slog", events.NewSlogSink(slog.DiscardHandler, slog.LevelInfo), false},
		{"a SinkFunc", events.SinkFunc(func(context.Context, events.Event) error { return nil }), false},
		{"a sink that says it is not durable", says(false), false},
		{"a sink that says it is durable", says(true), true},
		{"the kit's Recorder", durableStore, true},
		{"Async queueing over a durable store", queued, false},
		{"Async acknowledged over a durable store", acknowledged, true},
		{"a fan-out with one durable sink", events.NewFanout(events.NewJSONLines(&lines), durableStore), true},
		{"a fan-out with none", events.NewFanout(events.NewJSONLines(&lines), says(false)), false},
	}
	var peerCalls atomic.Int64
	peer := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { peerCalls.Add(1) }))
	defer peer.Close()
	mcpFacet := &facets.MCP{Revisions: []string{"2025-11-25"}, PreferredVersion: "2025-11-25", MinimumRevision: "2025-11-25", RefreshedAt: "2026-11-01"}
	a2aFacet := &facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0", RefreshedAt: "2026-11-01"}
	clock := func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }
	starts := map[string]func(pol policy.Policy, sink events.Sink) error{
		"mcphttp.New": func(pol policy.Policy, sink events.Sink) error {
			_, err := mcphttp.New(placesNegotiator(t, pol), mcphttp.Options{Sink: sink})
			return err
		},
		"a2ahttp.New": func(pol policy.Policy, sink events.Sink) error {
			_, err := a2ahttp.New(placesNegotiator(t, pol), a2ahttp.Options{Sink: sink})
			return err
		},
		"mcphttp.Handler": func(pol policy.Policy, sink events.Sink) error {
			pol.Now = clock
			_, err := mcphttp.Handler(mcpFacet, nil, nil, mcphttp.HandlerOptions{Options: mcphttp.Options{Sink: sink}, Policy: pol})
			return err
		},
		"a2ahttp.Handler": func(pol policy.Policy, sink events.Sink) error {
			pol.Now = clock
			_, err := a2ahttp.Handler(a2aFacet, nil, nil, a2ahttp.HandlerOptions{Options: a2ahttp.Options{Sink: sink}, Policy: pol})
			return err
		},
		"mcphttp.Connect": func(pol policy.Policy, sink events.Sink) error {
			_, _, err := mcphttp.Connect(context.Background(), placesNegotiator(t, pol), peer.URL, mcphttp.OutboundOptions{Sink: sink, Client: peer.Client()})
			return err
		},
		"a2ahttp.Connect": func(pol policy.Policy, sink events.Sink) error {
			_, _, err := a2ahttp.Connect(context.Background(), placesNegotiator(t, pol), peer.URL, a2ahttp.OutboundOptions{Sink: sink, Client: peer.Client()})
			return err
		},
	}
	for place, start := range starts {
		for _, s := range sinks {
			before := peerCalls.Load()
			err := start(policy.Policy{RequireAudit: true}, s.sink)
			refused := err != nil && strings.Contains(err.Error(), "the policy requires the audit (RequireAudit) but the Sink is not durable") &&
				strings.Contains(err.Error(), "record into a durable sink")
			if refused == s.durable {
				t.Errorf("%s, audit required, %s: %v", place, s.name, err)
			}
			if refused && peerCalls.Load() != before {
				t.Errorf("%s, audit required, %s: refused, yet the peer was called", place, s.name)
			}
			if err := start(policy.Policy{}, s.sink); err != nil && strings.Contains(err.Error(), "durable") {
				t.Errorf("%s, audit not required, %s: %v", place, s.name, err)
			}
		}
	}
}

// says is a sink that records nothing and says whether it is durable.
type says bool

func (says) Emit(context.Context, events.Event) error { return nil }
func (s says) Durable() bool                          { return bool(s) }

// TestSubject: a valid Subject is the caller, none is none, and an invalid
// one is logged with its violations and read as none, or, strict, refused
// with them.
func TestSubject(t *testing.T) {
	valid := &negotiate.Subject{Issuer: "https://idp.example", SubjectID: "peer-agent", Tenant: "acme", Lane: policy.LaneOIDC, Kind: policy.KindAgent}
	invalid := &negotiate.Subject{Issuer: "https://idp.example", SubjectID: "users/42", Tenant: "acme", Lane: policy.LaneOIDC, Kind: policy.KindAgent}
	for _, c := range []struct {
		name      string
		given     *negotiate.Subject
		strict    bool
		want      *negotiate.Subject
		violation bool
		line      string // what the log holds; "" for nothing
	}{
		{name: "none", given: nil},
		{name: "valid", given: valid, want: valid},
		{name: "valid, strict", given: valid, strict: true, want: valid},
		{name: "invalid", given: invalid, line: "level=ERROR msg=\"wopneg: invalid Subject: subject.subjectId: \\\"users/42\\\" contains whitespace or '/'\""},
		{name: "invalid, strict", given: invalid, strict: true, violation: true, line: "refused=true"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log bytes.Buffer
			got, violation := exchange.Subject(t.Context(), c.given, c.strict, slog.New(slog.NewTextHandler(&log, nil)))
			if got != c.want || (violation != "") != c.violation || c.violation && violation != `subject.subjectId: "users/42" contains whitespace or '/'` {
				t.Errorf("Subject = %v, %q", got, violation)
			}
			if c.line == "" && log.Len() != 0 || !strings.Contains(log.String(), c.line) {
				t.Errorf("logged %q; want %q", log.String(), c.line)
			}
			if c.line != "" && !strings.Contains(log.String(), "refused="+strconv.FormatBool(c.strict)) {
				t.Errorf("logged %q; want refused=%v", log.String(), c.strict)
			}
		})
	}
}

// TestHeaderValues: a header is read under every spelling of its key,
// the canonical one first and the others in the order of their keys,
// without writing into the header's own values.
func TestHeaderValues(t *testing.T) {
	own := make([]string, 1, 4) // room an append could write into
	own[0] = "a"
	// "Mcp-Protocol-Verſion" folds to the name under Unicode case
	// folding, with a longer key: still a spelling of it.
	h := http.Header{"Mcp-Protocol-Version": own, "mcp-protocol-version": {"c"}, "MCP-Protocol-Version": {"b"}, "Mcp-Protocol-Ver\u017fion": {"d"}, "Mcp-Method": {"x"}}
	if got := exchange.HeaderValues(h, "Mcp-Protocol-Version"); !slices.Equal(got, []string{"a", "b", "d", "c"}) {
		t.Errorf("every spelling: %q", got)
	}
	if own[:2][1] != "" {
		t.Errorf("the header's own array was written: %q", own[:2])
	}
	if got := exchange.HeaderValues(h, "Mcp-Method"); len(got) != 1 || &got[0] != &h["Mcp-Method"][0] {
		t.Errorf("one spelling: %q, not the header's own values", got)
	}
	if got := exchange.HeaderValues(h, "Mcp-Session-Id"); got != nil {
		t.Errorf("none: %q", got)
	}
}

// TestSetHeader: a header is set under its canonical key alone, every
// other spelling gone, in a header made for it when there was none.
func TestSetHeader(t *testing.T) {
	h := http.Header{"Mcp-Protocol-Version": {"a"}, "mcp-protocol-version": {"c"}, "Mcp-Method": {"x"}}
	got := exchange.SetHeader(h, "Mcp-Protocol-Version", "v")
	if want := (http.Header{"Mcp-Protocol-Version": {"v"}, "Mcp-Method": {"x"}}); !reflect.DeepEqual(got, want) || !reflect.DeepEqual(h, want) {
		t.Errorf("set %v, in place %v; want %v", got, h, want)
	}
	if got := exchange.SetHeader(nil, "Mcp-Protocol-Version", "v"); !reflect.DeepEqual(got, http.Header{"Mcp-Protocol-Version": {"v"}}) {
		t.Errorf("no header: %v", got)
	}
}

// Leading: members inserted first into an object keep it valid JSON,
// whatever white space stands before its closing brace or first key.
func TestLeading(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"a":{}}`, `{"a":{"t":1}}`},
		{"{\"a\":{ \t\r\n}}", "{\"a\":{\"t\":1 \t\r\n}}"},
		{`{"a":{"b":2}}`, `{"a":{"t":1,"b":2}}`},
		{"{\"a\":{\n \"b\":2}}", "{\"a\":{\"t\":1,\n \"b\":2}}"},
	} {
		open := strings.Index(c.body[1:], "{") + 1
		got := c.body[:open+1] + exchange.Leading([]byte(c.body), open, `"t":1`) + c.body[open+1:]
		if got != c.want || !jsontext.Value(got).IsValid() {
			t.Errorf("%q: %q, want %q", c.body, got, c.want)
		}
	}
}

// TestRefusing: what a zero Middleware wraps is never reached, and every
// request is answered 500 with JSON-RPC's internal error, naming the fix
// Unmade names.
func TestRefusing(t *testing.T) {
	err := exchange.Unmade("pkg", "Middleware", "New")
	if want := "pkg: a zero Middleware decides nothing and sends nothing; make it with New"; err.Error() != want {
		t.Errorf("Unmade: %v, want %s", err, want)
	}
	w := httptest.NewRecorder()
	exchange.Refusing(err).ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"x"}`)))
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"` + err.Error() + `"}}`
	if w.Code != http.StatusInternalServerError || w.Body.String() != want || w.Header().Get("Content-Type") != "application/json" {
		t.Errorf("answered %d %s %s, want 500 %s", w.Code, w.Header(), w.Body, want)
	}
}
