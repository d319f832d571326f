package mcphttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/internal/tracectx/tracectxtest"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

const (
	traceID     = "4bf92f3577b34da6a3ce929d0e0e4736"
	traceparent = "00-" + traceID + "-00f067aa0ba902b7-01"
)

// hookOf is a hook that hands tp and ts, whatever the context.
func hookOf(tp, ts string) negotiate.TraceContext {
	return func(context.Context) (string, string) { return tp, ts }
}

// metaTrace returns params._meta's traceparent and tracestate of each
// message of a JSON-RPC body ("" for one that has none).
func metaTrace(t *testing.T, body string) (parents, states []string) {
	t.Helper()
	var msgs []struct {
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	raw := strings.TrimSpace(body)
	if !strings.HasPrefix(raw, "[") {
		raw = "[" + raw + "]"
	}
	if err := json.Unmarshal([]byte(raw), &msgs); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	for _, m := range msgs {
		tp, _ := m.Params.Meta["traceparent"].(string)
		ts, _ := m.Params.Meta["tracestate"].(string)
		parents, states = append(parents, tp), append(states, ts)
	}
	return parents, states
}

// checkTraced fails unless every request sent carries want's traceparent
// and tracestate in its headers and, when it is a POST, in the _meta of
// each of its messages.
func checkTraced(t *testing.T, name string, sent []seen, parent, state string) {
	t.Helper()
	for _, s := range sent {
		if got := s.header.Values("Traceparent"); parent == "" && len(got) != 0 || parent != "" && (len(got) != 1 || got[0] != parent) {
			t.Errorf("%s: %s %s: traceparent header %q, want %q", name, s.method, s.body, got, parent)
		}
		if got := s.header.Values("Tracestate"); state == "" && len(got) != 0 || state != "" && (len(got) != 1 || got[0] != state) {
			t.Errorf("%s: %s %s: tracestate header %q, want %q", name, s.method, s.body, got, state)
		}
		if s.method != http.MethodPost {
			continue
		}
		parents, states := metaTrace(t, s.body)
		for i := range parents {
			if parents[i] != parent || states[i] != state {
				t.Errorf("%s: %s: _meta carries %q %q, want %q %q", name, s.body, parents[i], states[i], parent, state)
			}
		}
	}
}

// TestTraceContextOutbound: every request of a negotiation and of
// Connect's Transport carries the hook's trace context, checked, in its
// headers and in params._meta: server/discover, initialize, the
// notifications/initialized the Transport sends, the calls (each message
// of a batch) and the DELETE of Close, on a legacy session; server/discover
// and the calls at a stateless revision; the DELETE that ends the session
// Negotiate opened. A malformed traceparent puts none anywhere; a
// malformed tracestate is dropped alone. The record holds none of it.
func TestTraceContextOutbound(t *testing.T) {
	const batch = `[{"jsonrpc":"2.0","id":3,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}]`
	stateless := func() *peer {
		return newPeer(t, byMethod(map[string]func(http.ResponseWriter, *http.Request){
			"server/discover": jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-11-25","2026-07-28"]}}`),
			"tools/call":      jsonAnswer(200, `{"jsonrpc":"2.0","id":2,"result":{}}`),
			"tools/list":      jsonAnswer(200, `[{"jsonrpc":"2.0","id":3,"result":{}}]`),
		}))
	}
	for _, h := range tracectxtest.Cases {
		for _, c := range []struct {
			name    string
			peer    func() *peer
			methods string
		}{
			{"stateless", stateless, "server/discover tools/call POST"},
			{"legacy", func() *peer { return newPeer(t, legacyServer(jsonAnswer(200, `{"jsonrpc":"2.0","id":2,"result":{}}`))) },
				"server/discover initialize notifications/initialized tools/call tools/call DELETE"},
		} {
			p := c.peer()
			rec := &negotiatetest.Recorder{}
			tr, _, err := mcphttp.Connect(context.Background(), compile(t, wideFacets(), policy.Policy{}), p.URL,
				mcphttp.OutboundOptions{Sink: rec, Subject: user, AllowLoopback: true, TraceContext: h.Hook()})
			if err != nil {
				t.Fatalf("%s %s: %v", h.Name, c.name, err)
			}
			if _, _, err := postThrough(t, tr, p.URL, toolsCall, nil); err != nil {
				t.Fatal(err)
			}
			second := batch
			if c.name == "legacy" {
				second = toolsCall
			}
			if _, _, err := postThrough(t, tr, p.URL, second, nil); err != nil {
				t.Fatal(err)
			}
			if err := tr.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			sent := p.seen()
			if got := strings.Join(methods(sent), " "); got != c.methods {
				t.Fatalf("%s %s: sent %s", h.Name, c.name, got)
			}
			checkTraced(t, h.Name+" "+c.name, sent, h.WantParent, h.WantState)
			for _, e := range rec.Events() {
				if b, _ := json.Marshal(e); strings.Contains(string(b), traceID) || strings.Contains(string(b), "vendor") {
					t.Errorf("%s: the record holds the trace context: %s", h.Name, b)
				}
			}
		}
		// Negotiate ends the session it opened, and its DELETE is traced too.
		p := newPeer(t, legacyServer(jsonAnswer(200, `{}`)))
		n := compile(t, legacyFacets(), policy.Policy{})
		if _, _, err := mcphttp.Negotiate(context.Background(), n, p.URL, mcphttp.OutboundOptions{Sink: &negotiatetest.Recorder{}, AllowLoopback: true, TraceContext: h.Hook()}); err != nil {
			t.Fatal(err)
		}
		sent := p.seen()
		if got := strings.Join(methods(sent), " "); got != "server/discover initialize DELETE" {
			t.Fatalf("%s: Negotiate sent %s", h.Name, got)
		}
		checkTraced(t, h.Name+" Negotiate", sent, h.WantParent, h.WantState)
	}
}

// TestTraceContextHookContext: the hook is called with the context of the
// request it stamps: Negotiate's for the negotiation, each call's for the
// calls.
func TestTraceContextHookContext(t *testing.T) {
	type key struct{}
	var got []string
	hook := func(ctx context.Context) (string, string) {
		v, _ := ctx.Value(key{}).(string)
		got = append(got, v)
		return traceparent, ""
	}
	p := newPeer(t, legacyServer(jsonAnswer(200, `{}`)))
	ctx := context.WithValue(context.Background(), key{}, "negotiation")
	tr, _, err := mcphttp.Connect(ctx, compile(t, wideFacets(), policy.Policy{}), p.URL, mcphttp.OutboundOptions{Sink: &negotiatetest.Recorder{}, Subject: user, AllowLoopback: true, TraceContext: hook})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(context.WithValue(context.Background(), key{}, "call"), http.MethodPost, p.URL, strings.NewReader(toolsCall))
	req.Header.Set("Content-Type", "application/json")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := tr.Close(context.WithValue(context.Background(), key{}, "close")); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, " ") != "negotiation negotiation call call close" {
		t.Errorf("the hook saw the contexts %q", got)
	}
}

// TestTraceContextKeepsTheCallers: a carrier the caller filled stays as
// the caller wrote it, and the hook's context goes only in those it left
// empty: a traceparent or tracestate header (any spelling) keeps the
// headers the caller's; a _meta holding either key keeps that message's
// _meta the caller's, while its siblings in a batch are stamped. A params
// or _meta that is no object gets none, and the call is still sent.
func TestTraceContextKeepsTheCallers(t *testing.T) {
	const mine = "00-11111111111111111111111111111111-2222222222222222-00"
	for _, c := range []struct {
		name        string
		stateless   bool
		header      http.Header
		body        string
		wantHeader  string
		wantParents []string
		wantStates  []string
	}{
		{"the caller's header", true, http.Header{"Traceparent": {mine}}, toolsCall, mine, []string{traceparent}, []string{"v=1"}},
		{"the caller's header, lowercase", true, http.Header{"traceparent": {mine}}, toolsCall, mine, []string{traceparent}, []string{"v=1"}},
		{"the caller's tracestate header alone", true, http.Header{"Tracestate": {"mine=1"}}, toolsCall, "", []string{traceparent}, []string{"v=1"}},
		{"the caller's _meta traceparent", true, nil,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"traceparent":"` + mine + `"}}}`, traceparent, []string{mine}, []string{""}},
		{"the caller's _meta tracestate alone", false, nil,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"tracestate":"mine=1"}}}`, traceparent, []string{""}, []string{"mine=1"}},
		{"the caller's _meta, an escaped key", false, nil,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"trace\u0070arent":"` + mine + `"}}}`, traceparent, []string{mine}, []string{""}},
		{"a batch: one message the caller's", true, nil,
			`[{"jsonrpc":"2.0","id":2,"method":"a","params":{"_meta":{"traceparent":"` + mine + `","x":1}}},{"jsonrpc":"2.0","id":3,"method":"b","params":{"_meta":{"x":1}}},{"jsonrpc":"2.0","method":"c","params":{}},{"jsonrpc":"2.0","id":4,"result":{}}]`,
			traceparent, []string{mine, traceparent, traceparent, ""}, []string{"", "v=1", "v=1", ""}},
		{"params an array, legacy", false, nil, `{"jsonrpc":"2.0","id":2,"method":"x","params":[1]}`, traceparent, nil, nil},
		{"_meta null, legacy", false, nil, `{"jsonrpc":"2.0","id":2,"method":"x","params":{"_meta":null}}`, traceparent, []string{""}, []string{""}},
		{"a notification without params, legacy", false, nil, `{"jsonrpc":"2.0","method":"notifications/cancelled"}`, traceparent, []string{traceparent}, []string{"v=1"}},
	} {
		p := newPeer(t, legacyServer(jsonAnswer(200, `{"jsonrpc":"2.0","id":2,"result":{}}`)))
		rev := "2025-11-25"
		if c.stateless {
			rev = "2026-07-28"
			p = newPeer(t, func(w http.ResponseWriter, _ *http.Request) {
				jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"]}}`)(w, nil)
			})
		}
		tr, _, err := mcphttp.Connect(context.Background(), compile(t, wideFacets(), policy.Policy{}), p.URL,
			mcphttp.OutboundOptions{Sink: &negotiatetest.Recorder{}, Subject: user, AllowLoopback: true, TraceContext: hookOf(traceparent, "v=1")})
		if err != nil || tr.Version() != rev {
			t.Fatalf("%s: Connect: %v", c.name, err)
		}
		before := len(p.seen())
		if _, _, err := postThrough(t, tr, p.URL, c.body, c.header); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		s := p.seen()[before:]
		last := s[len(s)-1]
		if got := last.header.Get("Traceparent"); got != c.wantHeader {
			t.Errorf("%s: traceparent header %q, want %q", c.name, got, c.wantHeader)
		}
		if c.header != nil && c.header.Get("Tracestate") != "" && last.header.Get("Tracestate") != "mine=1" {
			t.Errorf("%s: tracestate header %q", c.name, last.header.Get("Tracestate"))
		}
		if c.wantParents == nil {
			if last.body != c.body {
				t.Errorf("%s: the body changed: %s", c.name, last.body)
			}
			continue
		}
		parents, states := metaTrace(t, last.body)
		if strings.Join(parents, " ") != strings.Join(c.wantParents, " ") || strings.Join(states, " ") != strings.Join(c.wantStates, " ") {
			t.Errorf("%s: sent %s: _meta traceparents %q tracestates %q", c.name, last.body, parents, states)
		}
	}
}
