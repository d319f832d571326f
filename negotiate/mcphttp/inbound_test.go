package mcphttp_test

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// TestStatelessTable runs the inbound reference rows (digest table B, B4
// to B7) and the other header/body rules against the example host's facet.
func TestStatelessTable(t *testing.T) {
	cases := []struct {
		name      string
		call      call
		status    int
		body      string // exact answer, compacted; "" when forwarded
		forwarded bool
		event     *events.NegotiationDecided
	}{
		{
			name:      "preferred revision, header and _meta agree",
			call:      stateless("2026-07-28", "2026-07-28"),
			status:    200,
			forwarded: true,
			event:     &events.NegotiationDecided{Protocol: "mcp", Outcome: "accepted", Version: "2026-07-28", Requested: "2026-07-28", Reason: "ok", Floor: "2025-11-25", At: now},
		},
		{
			name:   "B4: no header, no _meta",
			call:   call{body: `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`},
			status: 400,
			body:   `{"jsonrpc":"2.0","id":3,"error":{"code":-32022,"message":"unsupported MCP protocol version: Mcp-Protocol-Version (absent) is below the minimum revision 2025-11-25; this caller can be served 2026-07-28","data":{"supported":["2026-07-28"],"requested":"2025-03-26","reason":"below-floor"}}}`,
			event:  &events.NegotiationDecided{Protocol: "mcp", Outcome: "refused", Requested: "2025-03-26", Reason: "below-floor", Floor: "2025-11-25", At: now},
		},
		{
			name:   "B5: header 2026-07-28, _meta 2025-06-18",
			call:   stateless("2026-07-28", "2025-06-18"),
			status: 400,
			body:   `{"jsonrpc":"2.0","id":7,"error":{"code":-32020,"message":"header mismatch: Mcp-Protocol-Version \"2026-07-28\" does not match params._meta[\"io.modelcontextprotocol/protocolVersion\"] \"2025-06-18\""}}`,
			event:  refusedUnsupported("2026-07-28"),
		},
		{
			name:   "B6: header and _meta 2025-06-18, below the floor",
			call:   stateless("2025-06-18", "2025-06-18"),
			status: 400,
			body:   `{"jsonrpc":"2.0","id":7,"error":{"code":-32022,"message":"unsupported MCP protocol version: Mcp-Protocol-Version \"2025-06-18\" is below the minimum revision 2025-11-25; this caller can be served 2026-07-28","data":{"supported":["2026-07-28"],"requested":"2025-06-18","reason":"below-floor"}}}`,
			event:  &events.NegotiationDecided{Protocol: "mcp", Outcome: "refused", Requested: "2025-06-18", Reason: "below-floor", Floor: "2025-11-25", At: now},
		},
		{
			name:   "B7: Mcp-Method does not match method",
			call:   call{body: stateless("2026-07-28", "2026-07-28").body, headers: hdr(mcphttp.HeaderProtocolVersion, "2026-07-28", mcphttp.HeaderMethod, "tools/call")},
			status: 400,
			body:   `{"jsonrpc":"2.0","id":7,"error":{"code":-32020,"message":"header mismatch: Mcp-Method \"tools/call\" does not match method \"tools/list\""}}`,
			event:  refusedUnsupported("2026-07-28"),
		},
		{
			// Refused before any revision is weighed, so not below-floor
			// for the revision the absent header implies.
			name:   "no header, _meta 2026-07-28",
			call:   call{body: stateless("", "2026-07-28").body},
			status: 400,
			body:   `{"jsonrpc":"2.0","id":7,"error":{"code":-32020,"message":"header mismatch: Mcp-Protocol-Version (absent) does not match params._meta[\"io.modelcontextprotocol/protocolVersion\"] \"2026-07-28\""}}`,
			event:  &events.NegotiationDecided{Protocol: "mcp", Outcome: "refused", Requested: "2025-03-26", Reason: "unsupported", Floor: "2025-11-25", At: now},
		},
		{
			name:   "stateless header, no _meta",
			call:   call{body: `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}`, headers: hdr(mcphttp.HeaderProtocolVersion, "2026-07-28", mcphttp.HeaderMethod, "tools/list")},
			status: 400,
			body:   `{"jsonrpc":"2.0","id":7,"error":{"code":-32020,"message":"header mismatch: Mcp-Protocol-Version \"2026-07-28\" needs params._meta[\"io.modelcontextprotocol/protocolVersion\"] to match it"}}`,
			event:  refusedUnsupported("2026-07-28"),
		},
		{
			name:   "stateless header, no Mcp-Method",
			call:   call{body: stateless("2026-07-28", "2026-07-28").body, headers: hdr(mcphttp.HeaderProtocolVersion, "2026-07-28")},
			status: 400,
			body:   `{"jsonrpc":"2.0","id":7,"error":{"code":-32020,"message":"header mismatch: Mcp-Method is required at Mcp-Protocol-Version \"2026-07-28\""}}`,
			event:  refusedUnsupported("2026-07-28"),
		},
		{
			name:   "_meta revision not a string",
			call:   call{body: `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728}}}`, headers: hdr(mcphttp.HeaderProtocolVersion, "2026-07-28", mcphttp.HeaderMethod, "tools/list")},
			status: 400,
			body:   `{"jsonrpc":"2.0","id":7,"error":{"code":-32020,"message":"header mismatch: params._meta[\"io.modelcontextprotocol/protocolVersion\"] is not a string"}}`,
			event:  refusedUnsupported("2026-07-28"),
		},
		{
			name: "tools/call with Mcp-Name",
			call: call{
				body:    `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
				headers: hdr(mcphttp.HeaderProtocolVersion, "2026-07-28", mcphttp.HeaderMethod, "tools/call", mcphttp.HeaderName, "echo"),
			},
			status:    200,
			forwarded: true,
			event:     &events.NegotiationDecided{Protocol: "mcp", Outcome: "accepted", Version: "2026-07-28", Requested: "2026-07-28", Reason: "ok", Floor: "2025-11-25", At: now},
		},
		{
			name: "tools/call with a base64 Mcp-Name",
			call: call{
				body:    `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"grüße","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
				headers: hdr(mcphttp.HeaderProtocolVersion, "2026-07-28", mcphttp.HeaderMethod, "tools/call", mcphttp.HeaderName, "=?base64?Z3LDvMOfZQ==?="),
			},
			status:    200,
			forwarded: true,
			event:     &events.NegotiationDecided{Protocol: "mcp", Outcome: "accepted", Version: "2026-07-28", Requested: "2026-07-28", Reason: "ok", Floor: "2025-11-25", At: now},
		},
		{
			name: "tools/call with another Mcp-Name",
			call: call{
				body:    `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
				headers: hdr(mcphttp.HeaderProtocolVersion, "2026-07-28", mcphttp.HeaderMethod, "tools/call", mcphttp.HeaderName, "delete_everything"),
			},
			status: 400,
			body:   `{"jsonrpc":"2.0","id":9,"error":{"code":-32020,"message":"header mismatch: Mcp-Name \"delete_everything\" does not match the tools/call's name \"echo\""}}`,
			event:  refusedUnsupported("2026-07-28"),
		},
		{
			name: "tools/call without Mcp-Name",
			call: call{
				body:    `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
				headers: hdr(mcphttp.HeaderProtocolVersion, "2026-07-28", mcphttp.HeaderMethod, "tools/call"),
			},
			status: 400,
			body:   `{"jsonrpc":"2.0","id":9,"error":{"code":-32020,"message":"header mismatch: Mcp-Name is required for tools/call at Mcp-Protocol-Version \"2026-07-28\""}}`,
			event:  refusedUnsupported("2026-07-28"),
		},
		{
			name: "tools/call without a name, and an Mcp-Name",
			call: call{
				body:    `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
				headers: hdr(mcphttp.HeaderProtocolVersion, "2026-07-28", mcphttp.HeaderMethod, "tools/call", mcphttp.HeaderName, "=?base64?AA==?="),
			},
			status: 400,
			body:   `{"jsonrpc":"2.0","id":9,"error":{"code":-32020,"message":"header mismatch: Mcp-Name \"\\x00\" does not match the tools/call's name (absent)"}}`,
			event:  refusedUnsupported("2026-07-28"),
		},
		{
			name: "resources/read with Mcp-Name of its uri",
			call: call{
				body:    `{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"file:///a,b","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
				headers: hdr(mcphttp.HeaderProtocolVersion, "2026-07-28", mcphttp.HeaderMethod, "resources/read", mcphttp.HeaderName, "file:///a,b"),
			},
			status:    200,
			forwarded: true,
			event:     &events.NegotiationDecided{Protocol: "mcp", Outcome: "accepted", Version: "2026-07-28", Requested: "2026-07-28", Reason: "ok", Floor: "2025-11-25", At: now},
		},
		{
			name:   "an unknown revision",
			call:   stateless("2099-01-01", "2099-01-01"),
			status: 400,
			body:   `{"jsonrpc":"2.0","id":7,"error":{"code":-32022,"message":"unsupported MCP protocol version: Mcp-Protocol-Version \"2099-01-01\" is not a revision this server serves; this caller can be served 2026-07-28","data":{"supported":["2026-07-28"],"requested":"2099-01-01","reason":"unsupported"}}}`,
			event:  &events.NegotiationDecided{Protocol: "mcp", Outcome: "refused", Requested: "2099-01-01", Reason: "unsupported", Floor: "2025-11-25", At: now},
		},
		{
			name:   "a malformed revision",
			call:   stateless("latest", "latest"),
			status: 400,
			body:   `{"jsonrpc":"2.0","id":7,"error":{"code":-32022,"message":"unsupported MCP protocol version: Mcp-Protocol-Version \"latest\" is not a revision this server serves; this caller can be served 2026-07-28","data":{"supported":["2026-07-28"],"requested":"latest","reason":"unsupported"}}}`,
			event:  &events.NegotiationDecided{Protocol: "mcp", Outcome: "refused", Reason: "unsupported", Floor: "2025-11-25", At: now},
		},
		{
			name:      "a notification needs no _meta",
			call:      call{body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, headers: hdr(mcphttp.HeaderProtocolVersion, "2026-07-28", mcphttp.HeaderMethod, "notifications/cancelled")},
			status:    202,
			forwarded: true,
			event:     &events.NegotiationDecided{Protocol: "mcp", Outcome: "accepted", Version: "2026-07-28", Requested: "2026-07-28", Reason: "ok", Floor: "2025-11-25", At: now},
		},
		{
			name:   "legacy revision, unauthenticated, no session",
			call:   call{body: `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, headers: hdr(mcphttp.HeaderProtocolVersion, "2025-11-25")},
			status: 400,
			body:   `{"jsonrpc":"2.0","id":4,"error":{"code":-32022,"message":"unsupported MCP protocol version: Mcp-Protocol-Version \"2025-11-25\" is below the preferred revision 2026-07-28 and is served only to an authenticated caller; this caller can be served 2026-07-28","data":{"supported":["2026-07-28"],"requested":"2025-11-25","reason":"unauthenticated"}}}`,
			event:  &events.NegotiationDecided{Protocol: "mcp", Outcome: "refused", Requested: "2025-11-25", Reason: "unauthenticated", Floor: "2025-11-25", At: now},
		},
		{
			name:      "legacy revision, authenticated, no session",
			call:      call{body: `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, headers: hdr(mcphttp.HeaderProtocolVersion, "2025-11-25", "Authorization", "Bearer user")},
			status:    200,
			forwarded: true,
			event:     &events.NegotiationDecided{Protocol: "mcp", Outcome: "accepted", Version: "2025-11-25", Requested: "2025-11-25", Reason: "ok", Floor: "2025-11-25", At: now},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, wideFacets(), policy.Policy{}, false, nil)
			a := r.do(c.call)
			if a.status != c.status {
				t.Errorf("status %d, want %d (body %s)", a.status, c.status, a.body)
			}
			bodies, outcomes := r.server.received()
			if c.forwarded {
				if len(bodies) != 1 || string(bodies[0]) != c.call.body {
					t.Fatalf("forwarded %q, want exactly %q", bodies, c.call.body)
				}
				if outcomes[0].Version != c.event.Version || outcomes[0].Err() != nil {
					t.Errorf("outcome in context %+v, want accepted at %s", outcomes[0], c.event.Version)
				}
			} else {
				if len(bodies) != 0 {
					t.Errorf("forwarded %q, want nothing", bodies)
				}
				if got := compact(t, a.body); got != c.body {
					t.Errorf("answer\n%s\nwant\n%s", got, c.body)
				}
				if ct := a.header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q", ct)
				}
			}
			got := payloads(t, r.events)
			switch {
			case c.event == nil && len(got) != 0:
				t.Errorf("recorded %+v, want nothing", got)
			case c.event != nil && (len(got) != 1 || got[0] != *c.event):
				t.Errorf("recorded %+v, want %+v", got, *c.event)
			}
		})
	}
}

// TestInitialize runs the legacy handshake against both facets.
func TestInitialize(t *testing.T) {
	cases := []struct {
		name      string
		facets    facets.Set
		byteExact bool
		rev       string
		auth      string
		status    int
		answer    string // exact answer when refused
		forwarded string // the body the server got, when forwarded
		event     *events.NegotiationDecided
		outcome   negotiate.Kind
		counter   bool
	}{
		{
			name: "below the floor", facets: wideFacets(), rev: "2025-06-18", auth: "Bearer user",
			status: 200,
			answer: `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unsupported protocol version: initialize's params.protocolVersion \"2025-06-18\" is below the minimum revision 2025-11-25; this caller can be served 2025-11-25, 2026-07-28","data":{"supported":["2025-11-25","2026-07-28"],"requested":"2025-06-18","reason":"below-floor"}}}`,
			event:  &events.NegotiationDecided{Protocol: "mcp", Outcome: "refused", Requested: "2025-06-18", Reason: "below-floor", Floor: "2025-11-25", At: now},
		},
		{
			name: "a lower revision, authenticated: downgraded", facets: wideFacets(), rev: "2025-11-25", auth: "Bearer user",
			status: 200, forwarded: initialize("2025-11-25"), outcome: negotiate.Downgraded,
			event: &events.NegotiationDecided{Protocol: "mcp", Outcome: "accepted", Version: "2025-11-25", Requested: "2025-11-25", Reason: "ok", Floor: "2025-11-25", At: now},
		},
		{
			name: "a lower revision, unauthenticated: no counter-offer to a stateless preferred", facets: wideFacets(), rev: "2025-11-25",
			status: 200,
			answer: `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unsupported protocol version: initialize's params.protocolVersion \"2025-11-25\" is below the preferred revision 2026-07-28 and is served only to an authenticated caller; this caller can be served 2026-07-28","data":{"supported":["2026-07-28"],"requested":"2025-11-25","reason":"unauthenticated"}}}`,
			event:  &events.NegotiationDecided{Protocol: "mcp", Outcome: "refused", Requested: "2025-11-25", Reason: "unauthenticated", Floor: "2025-11-25", At: now},
		},
		{
			name: "a stateless revision cannot be negotiated at initialize", facets: wideFacets(), rev: "2026-07-28", auth: "Bearer user",
			status: 200,
			answer: `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unsupported protocol version: initialize cannot negotiate \"2026-07-28\"; use server/discover","data":{"supported":["2025-11-25","2026-07-28"],"requested":"2026-07-28","reason":"unsupported"}}}`,
			event:  refusedUnsupported("2026-07-28"),
		},
		{
			name: "the preferred handshake revision", facets: legacyFacets(), rev: "2025-11-25",
			status: 200, forwarded: initialize("2025-11-25"), outcome: negotiate.Accepted,
			event: &events.NegotiationDecided{Protocol: "mcp", Outcome: "accepted", Version: "2025-11-25", Requested: "2025-11-25", Reason: "ok", Floor: "2025-06-18", At: now},
		},
		{
			name: "unauthenticated below preferred: counter-offered, the body rewritten", facets: legacyFacets(), rev: "2025-06-18",
			status: 200, forwarded: initialize("2025-11-25"), outcome: negotiate.Accepted, counter: true,
			event: &events.NegotiationDecided{Protocol: "mcp", Outcome: "accepted", Version: "2025-11-25", Requested: "2025-06-18", Reason: "ok", Floor: "2025-06-18", At: now},
		},
		{
			name: "unknown revision: counter-offered", facets: legacyFacets(), rev: "2025-12-31", auth: "Bearer user",
			status: 200, forwarded: initialize("2025-11-25"), outcome: negotiate.Accepted, counter: true,
			event: &events.NegotiationDecided{Protocol: "mcp", Outcome: "accepted", Version: "2025-11-25", Requested: "2025-12-31", Reason: "ok", Floor: "2025-06-18", At: now},
		},
		{
			name: "byte-exact: no rewrite, so no counter-offer", facets: legacyFacets(), byteExact: true, rev: "2025-06-18",
			status: 200,
			answer: `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unsupported protocol version: initialize's params.protocolVersion \"2025-06-18\" is below the preferred revision 2025-11-25 and is served only to an authenticated caller; this caller can be served 2025-11-25","data":{"supported":["2025-11-25"],"requested":"2025-06-18","reason":"unauthenticated"}}}`,
			event:  &events.NegotiationDecided{Protocol: "mcp", Outcome: "refused", Requested: "2025-06-18", Reason: "unauthenticated", Floor: "2025-06-18", At: now},
		},
		{
			name: "authenticated below preferred: downgraded, not rewritten", facets: legacyFacets(), rev: "2025-06-18", auth: "Bearer user",
			status: 200, forwarded: initialize("2025-06-18"), outcome: negotiate.Downgraded,
			event: &events.NegotiationDecided{Protocol: "mcp", Outcome: "accepted", Version: "2025-06-18", Requested: "2025-06-18", Reason: "ok", Floor: "2025-06-18", At: now},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, c.facets, policy.Policy{}, true, func(o *mcphttp.Options) { o.ByteExact = c.byteExact })
			a := r.do(call{body: initialize(c.rev), headers: hdr("Authorization", c.auth)})
			if a.status != c.status {
				t.Errorf("status %d, want %d", a.status, c.status)
			}
			bodies, outcomes := r.server.received()
			if c.forwarded != "" {
				if len(bodies) != 1 || string(bodies[0]) != c.forwarded {
					t.Fatalf("forwarded %q, want %q", bodies, c.forwarded)
				}
				if o := outcomes[0]; o.Kind != c.outcome || o.Version != c.event.Version || o.CounterOffered != c.counter {
					t.Errorf("outcome %+v, want %s at %s, counter-offered %t", o, c.outcome, c.event.Version, c.counter)
				}
				want := `{"id":1,"jsonrpc":"2.0","result":{"protocolVersion":"` + c.event.Version + `"}}`
				if got := compact(t, a.body); got != want {
					t.Errorf("server answered %s, want %s", got, want)
				}
				if mcphttp.Sessions(r.h) != 1 {
					t.Errorf("%d sessions remembered, want 1", mcphttp.Sessions(r.h))
				}
			} else {
				if len(bodies) != 0 {
					t.Errorf("forwarded %q, want nothing", bodies)
				}
				if got := compact(t, a.body); got != c.answer {
					t.Errorf("answer\n%s\nwant\n%s", got, c.answer)
				}
			}
			got := payloads(t, r.events)
			switch {
			case c.event == nil && len(got) != 0:
				t.Errorf("recorded %+v, want nothing", got)
			case c.event != nil && (len(got) != 1 || got[0] != *c.event):
				t.Errorf("recorded %+v, want %+v", got, *c.event)
			}
		})
	}
}

// TestRewriteTouchesOnlyTheRevision checks the counter-offer's rewrite
// against a body with escapes, whitespace and members around the revision.
func TestRewriteTouchesOnlyTheRevision(t *testing.T) {
	r := newRig(t, legacyFacets(), policy.Policy{}, false, nil)
	in := "{ \"jsonrpc\" : \"2.0\",\n\t\"id\":\"a\\\"b\", \"method\":\"initialize\", \"params\" : {\"clientInfo\":{\"name\":\"\\u00e9\"}, \"protocolVersion\" : \"2025-06-18\" , \"capabilities\":{\"x\":[1,2,{\"protocolVersion\":\"0\"}]}} }"
	want := "{ \"jsonrpc\" : \"2.0\",\n\t\"id\":\"a\\\"b\", \"method\":\"initialize\", \"params\" : {\"clientInfo\":{\"name\":\"\\u00e9\"}, \"protocolVersion\" : \"2025-11-25\" , \"capabilities\":{\"x\":[1,2,{\"protocolVersion\":\"0\"}]}} }"
	r.do(call{body: in})
	bodies, _ := r.server.received()
	if len(bodies) != 1 || string(bodies[0]) != want {
		t.Fatalf("forwarded\n%q\nwant\n%q", bodies, want)
	}
}

// TestSessions checks that a session's revision is pinned, that a session
// forgotten or used by another caller is decided afresh, and that DELETE
// forgets it.
func TestSessions(t *testing.T) {
	r := newRig(t, legacyFacets(), policy.Policy{}, true, func(o *mcphttp.Options) { o.MaxSessions = 2 })
	// Counter-offered: the client asked 2025-06-18 unauthenticated, and
	// the session serves 2025-11-25.
	a := r.do(call{body: initialize("2025-06-18")})
	if sid := a.header.Get(mcphttp.HeaderSessionID); sid != "session-a" {
		t.Fatalf("session %q", sid)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	onA := func(rev string, more ...string) call {
		return call{body: list, headers: hdr(append([]string{mcphttp.HeaderSessionID, "session-a", mcphttp.HeaderProtocolVersion, rev}, more...)...)}
	}

	if a := r.do(onA("2025-11-25")); a.status != 200 {
		t.Fatalf("on the session's revision: %d %s", a.status, a.body)
	}
	if n := len(r.events.Events()); n != 1 {
		t.Fatalf("%d events after a request on a known session, want only initialize's", n)
	}
	_, outcomes := r.server.received()
	if o := outcomes[1]; o.Version != "2025-11-25" || !o.CounterOffered {
		t.Errorf("the session request's outcome %+v, want the initialize's counter-offer", o)
	}

	a = r.do(onA("2025-06-18"))
	want := `{"jsonrpc":"2.0","id":2,"error":{"code":-32022,"message":"Mcp-Protocol-Version \"2025-06-18\" is not the revision \"2025-11-25\" this session negotiated","data":{"supported":["2025-11-25"],"requested":"2025-06-18","reason":"unsupported"}}}`
	if a.status != 400 || compact(t, a.body) != want {
		t.Errorf("another revision on the session: %d %s, want 400 %s", a.status, a.body, want)
	}
	a = r.do(call{body: list, headers: hdr(mcphttp.HeaderSessionID, "session-a")})
	if a.status != 400 || !strings.Contains(a.body, `"requested":"2025-03-26"`) || !strings.Contains(a.body, `(absent)`) {
		t.Errorf("no header on the session: %d %s", a.status, a.body)
	}
	// The wire and the record give one reason: the revision the absent
	// header implies is below the floor.
	if p := payloads(t, r.events); !strings.Contains(a.body, `"reason":"below-floor"`) || p[len(p)-1].Reason != events.ReasonBelowFloor {
		t.Errorf("no header on the session: answered %s, recorded %+v; want below-floor on both", a.body, p[len(p)-1])
	}

	// Another caller presenting the session is decided on its own: at the
	// preferred revision it is accepted, and recorded.
	if a := r.do(onA("2025-11-25", "Authorization", "Bearer other")); a.status != 200 {
		t.Errorf("another caller: %d %s", a.status, a.body)
	}
	if n := len(r.events.Events()); n != 4 {
		t.Errorf("%d events, want initialize's, the two refusals' and another caller's", n)
	}

	// Two more sessions evict session-a (the bound is 2); its requests are
	// then refused, at its own revision or any other, and the client must
	// initialize again.
	r.do(call{body: initialize("2025-11-25")})
	r.do(call{body: initialize("2025-11-25")})
	if got := mcphttp.Sessions(r.h); got != 2 {
		t.Errorf("%d sessions, want the bound 2", got)
	}
	before := len(r.events.Events())
	for _, rev := range []string{"2025-06-18", "2025-11-25"} {
		want := `{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"the session is not known here (it ended, or its negotiated revision was forgotten); initialize a new session"}}`
		if a := r.do(onA(rev)); a.status != 404 || compact(t, a.body) != want {
			t.Errorf("forgotten session at %s: %d %s, want 404 %s", rev, a.status, a.body, want)
		}
	}
	if got := payloads(t, r.events)[before:]; len(got) != 2 || got[0].Requested != "2025-06-18" || got[1].Requested != "2025-11-25" || got[1].Outcome != "refused" {
		t.Errorf("recorded %+v, want both refusals", got)
	}

	// DELETE ends session-c, and the middleware forgets it.
	if a := r.do(call{method: http.MethodDelete, headers: hdr(mcphttp.HeaderSessionID, "session-c", mcphttp.HeaderProtocolVersion, "2025-11-25")}); a.status != http.StatusNoContent {
		t.Errorf("DELETE: %d %s", a.status, a.body)
	}
	if got := mcphttp.Sessions(r.h); got != 1 {
		t.Errorf("%d sessions after DELETE, want 1", got)
	}
	// GET on session-b carries the session's revision.
	if a := r.do(call{method: http.MethodGet, headers: hdr(mcphttp.HeaderSessionID, "session-b", mcphttp.HeaderProtocolVersion, "2025-11-25")}); a.status != http.StatusNoContent {
		t.Errorf("GET: %d %s", a.status, a.body)
	}
}

// TestBodies covers what is not a single well-formed message.
func TestBodies(t *testing.T) {
	version := hdr(mcphttp.HeaderProtocolVersion, "2026-07-28", mcphttp.HeaderMethod, "tools/list")
	cases := []struct {
		name   string
		body   string
		header map[string]string
		status int
		answer string
		// recorded is the revision the recorded refusal names; "" when the
		// request names none, and nothing is recorded.
		recorded string
	}{
		{"not JSON", `{"jsonrpc":"2.0",`, version, 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"the request body is not JSON"}}`, ""},
		// The body is read in one pass: an initialize read whole before the
		// body breaks is still no message a server would read.
		{"an initialize, then bytes that are not JSON", initialize("2025-11-25") + `}`, nil, 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"the request body is not JSON"}}`, ""},
		{"a repeated key in tool arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"arguments":{"a":1,"a":2}}}`, version, 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"params.arguments: the key \"a\" appears twice"}}`, ""},
		{"invalid UTF-8 in tool arguments", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"arguments\":{\"a\":\"\xff\"}}}", version, 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"params.arguments.a: invalid UTF-8 in string"}}`, ""},
		{"nested 65 deep in tool arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"arguments":` + strings.Repeat("[", 63) + strings.Repeat("]", 63) + `}}`, version, 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"params.arguments` + strings.Repeat("[0]", 62) + `: nested deeper than 64 levels"}}`, ""},
		{"a batch nested 65 deep", `[` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `]`, version, 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"a batch member is not a JSON-RPC message object"}}`, ""},
		{"empty", ``, version, 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"the request body is not JSON"}}`, ""},
		{"a JSON string", `"tools/list"`, version, 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the body is not a JSON-RPC message object or batch"}}`, ""},
		{"an empty batch", ` [ ] `, version, 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the batch is empty"}}`, ""},
		{"a batch of numbers", `[1,2]`, version, 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"a batch member is not a JSON-RPC message object"}}`, ""},
		{"method twice", `{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"initialize"}`, version, 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the key \"method\" appears twice"}}`, ""},
		{"method in capitals", `{"jsonrpc":"2.0","id":1,"method":"tools/list","Method":"initialize"}`, version, 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the key \"Method\" is not spelled method but a server may read it as method"}}`, ""},
		{"params with a long s", `{"jsonrpc":"2.0","id":1,"method":"tools/list","paramſ":{}}`, version, 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the key \"paramſ\" is not spelled params but a server may read it as params"}}`, ""},
		{"method escaped", `{"jsonrpc":"2.0","id":1,"\u006dethod":"tools/list","method":"initialize"}`, version, 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the key \"method\" appears twice"}}`, ""},
		{"_meta revision twice", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/protocolVersion":"2025-06-18"}}}`, version, 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"params._meta: the key \"io.modelcontextprotocol/protocolVersion\" appears twice"}}`, ""},
		{"method not a string", `{"jsonrpc":"2.0","id":1,"method":7}`, version, 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"method is not a string"}}`, ""},
		{"initialize in a batch", `[` + initialize("2025-11-25") + `]`, nil, 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"initialize must not be batched"}}`, "2025-11-25"},
		{"initialize without protocolVersion", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, nil, 200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"initialize needs params.protocolVersion, a string","data":{"supported":["2026-07-28"],"requested":null}}}`, ""},
		{"initialize with a numeric protocolVersion", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":20251125}}`, nil, 200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"initialize needs params.protocolVersion, a string","data":{"supported":["2026-07-28"],"requested":null}}}`, ""},
		{"initialize with another _meta revision", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, nil, 400, `{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"header mismatch: initialize's params._meta[\"io.modelcontextprotocol/protocolVersion\"] does not match its params.protocolVersion \"2025-11-25\""}}`, "2025-11-25"},
		{"initialize with another Mcp-Method", initialize("2025-11-25"), hdr(mcphttp.HeaderMethod, "tools/list"), 400, `{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"header mismatch: Mcp-Method \"tools/list\" does not match method \"initialize\""}}`, "2025-11-25"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, wideFacets(), policy.Policy{}, false, nil)
			a := r.do(call{body: c.body, headers: c.header})
			if a.status != c.status || compact(t, a.body) != c.answer {
				t.Errorf("answer %d %s\nwant %d %s", a.status, a.body, c.status, c.answer)
			}
			if bodies, _ := r.server.received(); len(bodies) != 0 {
				t.Errorf("forwarded %q", bodies)
			}
			got := payloads(t, r.events)
			switch {
			case c.recorded == "" && len(got) != 0:
				t.Errorf("recorded %+v for a request that names no revision", got)
			case c.recorded != "" && (len(got) != 1 || got[0].Requested != c.recorded || got[0].Outcome != "refused"):
				t.Errorf("recorded %+v, want the refusal of %s", got, c.recorded)
			}
		})
	}
}

// TestBatch decides a batch once, from its header, and forwards it whole;
// batches exist at 2025-03-26 only, and hold at most MaxBatchMembers
// messages.
func TestBatch(t *testing.T) {
	batchFacets := legacyFacets()
	batchFacets.MCP.MinimumRevision = "2025-03-26"
	r := newRig(t, batchFacets, policy.Policy{}, false, func(o *mcphttp.Options) { o.MaxBatchMembers = 3 })
	body := `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":5,"result":{}}]`
	a := r.do(call{body: body, headers: hdr(mcphttp.HeaderProtocolVersion, "2025-03-26", "Authorization", "Bearer user")})
	if a.status != 202 && a.status != 200 {
		t.Fatalf("status %d %s", a.status, a.body)
	}
	if bodies, _ := r.server.received(); len(bodies) != 1 || string(bodies[0]) != body {
		t.Errorf("forwarded %q", bodies)
	}
	if got := payloads(t, r.events); len(got) != 1 || got[0].Version != "2025-03-26" {
		t.Errorf("recorded %+v", got)
	}
	cases := []struct {
		name, body, header string
		answer             string
		recorded           string // the refusal recorded; "" for none
	}{
		{
			"members that declare different revisions",
			`[{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-03-26"}}},{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-06-18"}}}]`,
			"2025-03-26",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32020,"message":"header mismatch: Mcp-Protocol-Version \"2025-03-26\" does not match params._meta[\"io.modelcontextprotocol/protocolVersion\"] \"2025-06-18\""}}`,
			"2025-03-26",
		},
		{
			"a batch at a later revision", body, "2025-06-18",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"a JSON-RPC batch is not allowed at Mcp-Protocol-Version \"2025-06-18\"; MCP has batches only at 2025-03-26"}}`,
			"2025-06-18",
		},
		{
			// One member is a batch still, and refused before it is read.
			"a batch of one at a later revision", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, "2025-06-18",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"a JSON-RPC batch is not allowed at Mcp-Protocol-Version \"2025-06-18\"; MCP has batches only at 2025-03-26"}}`,
			"2025-06-18",
		},
		{
			"more members than the bound", `[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"},{"jsonrpc":"2.0","method":"c"},{"jsonrpc":"2.0","method":"d"}]`, "",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the batch has more than 3 members"}}`,
			"",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, batchFacets, policy.Policy{}, false, func(o *mcphttp.Options) { o.MaxBatchMembers = 3 })
			a := r.do(call{body: c.body, headers: hdr(mcphttp.HeaderProtocolVersion, c.header, "Authorization", "Bearer user")})
			if a.status != 400 || compact(t, a.body) != c.answer {
				t.Errorf("%d %s\nwant 400 %s", a.status, a.body, c.answer)
			}
			got := payloads(t, r.events)
			if c.recorded == "" && len(got) != 0 || c.recorded != "" && (len(got) != 1 || got[0].Requested != c.recorded) {
				t.Errorf("recorded %+v, want %q", got, c.recorded)
			}
		})
	}
}

// TestHeaders refuses ambiguous headers before anything else.
func TestHeaders(t *testing.T) {
	r := newRig(t, wideFacets(), policy.Policy{}, false, nil)
	cases := []struct {
		name   string
		header http.Header
		want   string
	}{
		{"two revisions", http.Header{"Mcp-Protocol-Version": {"2026-07-28", "2025-06-18"}}, `more than one Mcp-Protocol-Version header`},
		{"a list of revisions", http.Header{"Mcp-Protocol-Version": {"2026-07-28, 2025-06-18"}}, `Mcp-Protocol-Version holds a list; one value is allowed`},
		{"two methods", http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"a", "b"}}, `more than one Mcp-Method header`},
		{"two sessions", http.Header{"Mcp-Session-Id": {"a", "b"}}, `more than one Mcp-Session-Id header`},
		{"a session id with a space", http.Header{"Mcp-Session-Id": {"a b"}}, `Mcp-Session-Id holds a character outside visible ASCII`},
		{"a bad base64 name", http.Header{"Mcp-Name": {"=?base64?***?="}}, `Mcp-Name has a malformed base64 value`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(stateless("2026-07-28", "2026-07-28").body))
			req.Header = c.header
			w := httptest.NewRecorder()
			r.h.ServeHTTP(w, req)
			want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32020,"message":"header mismatch: ` + c.want + `"}}`
			if w.Code != 400 || compact(t, w.Body.String()) != want {
				t.Errorf("%d %s, want 400 %s", w.Code, w.Body, want)
			}
		})
	}
	if bodies, _ := r.server.received(); len(bodies) != 0 {
		t.Errorf("forwarded %q", bodies)
	}
}

// TestBodyBound answers 413 for a body over the bound, whether its length
// was declared or not, and forwards nothing.
func TestBodyBound(t *testing.T) {
	r := newRig(t, wideFacets(), policy.Policy{}, false, func(o *mcphttp.Options) { o.MaxBodyBytes = 64 })
	big := stateless("2026-07-28", "2026-07-28")
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the request body exceeds 64 bytes"}}`
	for _, declared := range []bool{true, false} {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(big.body))
		if !declared {
			req.ContentLength = -1
			req.Body = readerOnly{strings.NewReader(big.body)}
		}
		for k, v := range big.headers {
			req.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		r.h.ServeHTTP(w, req)
		if w.Code != http.StatusRequestEntityTooLarge || compact(t, w.Body.String()) != want {
			t.Errorf("declared %t: %d %s", declared, w.Code, w.Body)
		}
	}
	// Exactly at the bound is read.
	exact := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + strings.Repeat(" ", 64-len(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if a := r.do(call{body: exact, headers: hdr(mcphttp.HeaderProtocolVersion, "2026-07-28", mcphttp.HeaderMethod, "ping")}); a.status != 400 || !strings.Contains(a.body, "-32020") {
		// ping at a stateless revision without _meta is a mismatch, which
		// shows the body was read and checked.
		t.Errorf("64 bytes: %d %s", a.status, a.body)
	}
	if bodies, _ := r.server.received(); len(bodies) != 0 {
		t.Errorf("forwarded %q", bodies)
	}
	if got := payloads(t, r.events); len(got) != 1 || got[0].Requested != "2026-07-28" {
		t.Errorf("recorded %+v, want only the 64-byte body's mismatch", got)
	}

	// A body that fails while being read is refused too.
	req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	req.Body = readerOnly{iotest.ErrReader(errors.New("connection reset"))}
	req.ContentLength = -1
	w := httptest.NewRecorder()
	r.h.ServeHTTP(w, req)
	if want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the request body could not be read"}}`; w.Code != 400 || compact(t, w.Body.String()) != want {
		t.Errorf("failed read: %d %s", w.Code, w.Body)
	}
}

type readerOnly struct {
	r interface{ Read([]byte) (int, error) }
}

func (r readerOnly) Read(p []byte) (int, error) { return r.r.Read(p) }
func (readerOnly) Close() error                 { return nil }

// TestAudit fails closed when the policy requires the record and the sink
// fails, and otherwise serves and logs the failure.
func TestAudit(t *testing.T) {
	down := errors.New("event store down")
	t.Run("required", func(t *testing.T) {
		r := newRig(t, wideFacets(), policy.Policy{RequireAudit: true}, false, nil)
		r.events.Fail(down)
		a := r.do(stateless("2026-07-28", "2026-07-28"))
		want := `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"the negotiation could not be recorded; retry"}}`
		if a.status != 500 || compact(t, a.body) != want {
			t.Errorf("%d %s", a.status, a.body)
		}
		a = r.do(call{body: initialize("2025-11-25"), headers: hdr("Authorization", "Bearer user")})
		want = `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"the negotiation could not be recorded; retry"}}`
		if a.status != 500 || compact(t, a.body) != want {
			t.Errorf("initialize: %d %s", a.status, a.body)
		}
		// A request that may act is recorded before it is served, so the
		// server never saw the stateless call; initialize, which cannot
		// act, is recorded when the server has answered (served.go): the
		// server ran, and its answer never left.
		if bodies, _ := r.server.received(); len(bodies) != 1 || !strings.Contains(string(bodies[0]), `"initialize"`) {
			t.Errorf("forwarded %q", bodies)
		}
	})
	t.Run("required, whatever a header says", func(t *testing.T) {
		// What may act is what the body is, not what Mcp-Method says: a
		// response (a client's answer to the server's elicitation, which
		// resumes the tool that asked) and the DELETE that ends a session
		// are recorded before the server sees them, with the header
		// naming server/discover or not.
		for _, discover := range []bool{false, true} {
			r := newRig(t, legacyFacets(), policy.Policy{RequireAudit: true}, false, nil)
			r.events.Fail(down)
			calls := []call{
				{body: `{"jsonrpc":"2.0","id":7,"result":{"action":"accept","content":{}}}`, headers: hdr(mcphttp.HeaderProtocolVersion, "2025-11-25")},
				{method: http.MethodDelete, headers: hdr(mcphttp.HeaderProtocolVersion, "2025-11-25", mcphttp.HeaderSessionID, "s")},
			}
			for _, c := range calls {
				if discover {
					c.headers[mcphttp.HeaderMethod] = "server/discover"
				}
				if a := r.do(c); a.status != 500 {
					t.Errorf("%s, Mcp-Method server/discover %t: %d %s", cmp.Or(c.method, "POST"), discover, a.status, a.body)
				}
			}
			if bodies, _ := r.server.received(); len(bodies) != 0 {
				t.Errorf("Mcp-Method server/discover %t: forwarded %q", discover, bodies)
			}
		}
	})
	t.Run("required and written", func(t *testing.T) {
		// A request that may act is recorded, accepted, before the server
		// sees it, and then served.
		r := newRig(t, wideFacets(), policy.Policy{RequireAudit: true}, false, nil)
		if a := r.do(stateless("2026-07-28", "2026-07-28")); a.status != 200 || !strings.Contains(a.body, `"result"`) {
			t.Errorf("%d %s", a.status, a.body)
		}
		if ev := payloads(t, r.events); len(ev) != 1 || ev[0].Outcome != "accepted" || ev[0].Version != "2026-07-28" {
			t.Errorf("recorded %+v", ev)
		}
		if bodies, _ := r.server.received(); len(bodies) != 1 {
			t.Errorf("forwarded %q", bodies)
		}
	})
	t.Run("not required", func(t *testing.T) {
		var log bytes.Buffer
		r := newRig(t, wideFacets(), policy.Policy{}, false, func(o *mcphttp.Options) {
			o.ErrorLog = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{ReplaceAttr: dropTime}))
		})
		r.events.Fail(down)
		if a := r.do(stateless("2026-07-28", "2026-07-28")); a.status != 200 {
			t.Errorf("%d %s", a.status, a.body)
		}
		want := `level=ERROR msg="mcphttp: negotiation.decided was not recorded" protocol=mcp requested=2026-07-28 decided=accepted version=2026-07-28 error="negotiate: negotiation.decided was not recorded: event store down"` + "\n"
		if log.String() != want {
			t.Errorf("log %q, want %q", log.String(), want)
		}
	})
}

func dropTime(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// TestDestination records where the host says.
func TestDestination(t *testing.T) {
	r := newRig(t, wideFacets(), policy.Policy{}, false, func(o *mcphttp.Options) {
		o.Destination = func(*http.Request) negotiate.Destination {
			return negotiate.Destination{RunID: "acme/audit-0123456789abcdef"}
		}
	})
	r.do(stateless("2026-07-28", "2026-07-28"))
	ev := r.events.Events()
	if len(ev) != 1 || ev[0].RunID != "acme/audit-0123456789abcdef" {
		t.Errorf("events %+v", ev)
	}
}

func TestMethods(t *testing.T) {
	r := newRig(t, wideFacets(), policy.Policy{}, false, nil)
	if a := r.do(call{method: http.MethodOptions}); a.status != http.StatusNoContent {
		t.Errorf("OPTIONS: %d", a.status)
	}
	a := r.do(call{method: http.MethodPut, body: "{}"})
	if want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"method PUT is not allowed on an MCP endpoint"}}`; a.status != 405 || compact(t, a.body) != want || a.header.Get("Allow") != "GET, POST, DELETE, OPTIONS" {
		t.Errorf("PUT: %d %s %v", a.status, a.body, a.header)
	}
	// A GET without a header reads as 2025-03-26, below the floor.
	if a := r.do(call{method: http.MethodGet}); a.status != 400 || !strings.Contains(a.body, `"requested":"2025-03-26"`) {
		t.Errorf("GET: %d %s", a.status, a.body)
	}
	if _, ok := mcphttp.Outcome(context.Background()); ok {
		t.Error("Outcome outside the middleware reported an outcome")
	}
	if _, ok := mcphttp.Version(context.Background()); ok {
		t.Error("Version outside the middleware reported a revision")
	}
}

func TestOptions(t *testing.T) {
	n := compile(t, wideFacets(), policy.Policy{})
	a2aOnly := compile(t, facets.Set{A2A: &facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0", RefreshedAt: "2026-11-01"}}, policy.Policy{})
	sink := &negotiatetest.Recorder{}
	cases := []struct {
		name string
		n    *negotiate.Negotiator
		opts mcphttp.Options
		want string
	}{
		{"nil negotiator", nil, mcphttp.Options{Sink: sink}, "mcphttp: the Negotiator is nil"},
		{"nil sink", n, mcphttp.Options{}, "mcphttp: the Sink is nil; every negotiation must be recorded: " + events.ErrClosed.Error()},
		{"negative body bound", n, mcphttp.Options{Sink: sink, MaxBodyBytes: -1}, "mcphttp: Options.MaxBodyBytes is -1; want 0 (the default) or more"},
		{"negative session bound", n, mcphttp.Options{Sink: sink, MaxSessions: -1}, "mcphttp: Options.MaxSessions is -1; want 0 (the default) or more"},
		{"negative batch bound", n, mcphttp.Options{Sink: sink, MaxBatchMembers: -1}, "mcphttp: Options.MaxBatchMembers is -1; want 0 (the default) or more"},
		{"no mcp facet", a2aOnly, mcphttp.Options{Sink: sink}, "mcphttp: the Negotiator does not advertise mcp"},
	}
	for _, c := range cases {
		if _, err := mcphttp.New(c.n, c.opts); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	m, err := mcphttp.New(n, mcphttp.Options{Sink: sink})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if r := recover(); r != "mcphttp: Wrap of a nil handler" {
			t.Errorf("Wrap(nil) recovered %v", r)
		}
	}()
	m.Wrap(nil)
}

// TestSessionsOutliveWrap: the Middleware keeps the sessions' pins, so a
// router that wraps the handler anew for every request (echo's
// WrapMiddleware does) still serves a session at its pin.
func TestSessionsOutliveWrap(t *testing.T) {
	m, err := mcphttp.New(compile(t, legacyFacets(), policy.Policy{}), mcphttp.Options{Sink: &negotiatetest.Recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	server := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Mcp-Session-Id", "s-1")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`))
	})
	m.Wrap(server).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(initialize("2025-11-25"))))
	h := m.Wrap(server)
	if got := mcphttp.Sessions(h); got != 1 {
		t.Fatalf("a handler wrapped afterwards sees %d sessions, want 1", got)
	}
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
	req.Header = http.Header{"Mcp-Session-Id": {"s-1"}, "Mcp-Protocol-Version": {"2025-11-25"}}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		t.Errorf("the session's next request through another Wrap: %d %s", w.Code, w.Body)
	}
}
