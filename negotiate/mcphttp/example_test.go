package mcphttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// A host puts the middleware in front of its MCP handler. A request at the
// preferred revision reaches the handler, which reads the revision it
// serves from the context; one below the floor is refused with -32022
// before the handler sees it. Both are recorded.
func ExampleMiddleware_Wrap() {
	set := facets.Set{MCP: &facets.MCP{
		Revisions:        []string{"2025-06-18", "2025-11-25", "2026-07-28"},
		PreferredVersion: "2026-07-28",
		MinimumRevision:  "2025-11-25",
		RefreshedAt:      "2026-11-01",
	}}
	n, err := negotiate.Compile(set, policy.Policy{Now: func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		panic(err)
	}
	// In a real host: the go-sdk's mcp.NewStreamableHTTPHandler, or mcp-go's
	// server.NewStreamableHTTPServer.
	mcpServer := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rev, _ := mcphttp.Version(r.Context())
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":{"servedAt":%q}}`, rev)
	})
	// In a real host: an event store, such as events.NewJSONLines behind
	// events.NewAsync. This one prints the payload, whose event id would change
	// from run to run.
	audit := events.SinkFunc(func(_ context.Context, e events.Event) error {
		b, err := json.Marshal(e.Payload)
		fmt.Printf("recorded %s (host event: %t)\n", b, e.RunID == "")
		return err
	})
	mw, err := mcphttp.New(n, mcphttp.Options{Sink: audit})
	if err != nil {
		panic(err)
	}
	h := mw.Wrap(mcpServer)

	for _, rev := range []string{"2026-07-28", "2025-06-18"} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + rev + `"}}}`
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set("MCP-Protocol-Version", rev)
		req.Header.Set("Mcp-Method", "tools/list")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		fmt.Println(w.Code, w.Body.String())
	}
	// Output:
	// recorded {"protocol":"mcp","outcome":"accepted","version":"2026-07-28","requested":"2026-07-28","reason":"ok","floor":"2025-11-25","at":"2026-11-29T12:00:00Z"} (host event: true)
	// 200 {"jsonrpc":"2.0","id":1,"result":{"servedAt":"2026-07-28"}}
	// recorded {"protocol":"mcp","outcome":"refused","requested":"2025-06-18","reason":"below-floor","floor":"2025-11-25","at":"2026-11-29T12:00:00Z"} (host event: true)
	// 400 {"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"unsupported MCP protocol version: Mcp-Protocol-Version \"2025-06-18\" is below the minimum revision 2025-11-25; this caller can be served 2026-07-28","data":{"supported":["2026-07-28"],"requested":"2025-06-18","reason":"below-floor"}}}
}

// A host calling an MCP server asks it which revisions it serves, decides,
// and sends every later request through a Transport that carries the
// revision decided.
func ExampleNegotiate() {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"server/discover"`) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-11-25","2026-07-28"]}}`)
			return
		}
		fmt.Printf("server got %s at %s\n", body, r.Header.Get("MCP-Protocol-Version"))
	}))
	defer server.Close()

	set := facets.Set{MCP: &facets.MCP{
		Revisions: []string{"2025-11-25", "2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-11-25", RefreshedAt: "2026-11-01",
	}}
	n, err := negotiate.Compile(set, policy.Policy{})
	if err != nil {
		panic(err)
	}
	var audit negotiatetest.Recorder
	o, offers, err := mcphttp.Negotiate(context.Background(), n, server.URL+"/mcp", mcphttp.OutboundOptions{Sink: &audit, AllowLoopback: true})
	if err != nil {
		panic(err)
	}
	fmt.Println("server offers", offers, "->", o.Kind, o.Version)

	// The server is on loopback: NewTransport's nil base, the egress
	// transport of the zero policy, would refuse it.
	t, err := mcphttp.NewTransport(o, http.DefaultTransport)
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: t}
	resp, err := client.Post(server.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
	if err != nil {
		panic(err)
	}
	resp.Body.Close()

	// A request at another revision is never sent.
	req, _ := http.NewRequest(http.MethodPost, server.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`))
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	_, err = client.Do(req)
	fmt.Println(strings.TrimPrefix(err.Error(), "Post \""+server.URL+"/mcp\": "))
	// Output:
	// server offers [2025-11-25 2026-07-28] -> accepted 2026-07-28
	// server got {"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}},"jsonrpc":"2.0","id":2,"method":"tools/list"} at 2026-07-28
	// mcphttp: the Mcp-Protocol-Version header names revision "2025-06-18", not the negotiated "2026-07-28"
}

// Adoption in plain net/http: New and Wrap in front of the host's MCP
// handler (in a real host the go-sdk's
// mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
// &mcp.StreamableHTTPOptions{Stateless: true})). The zero Options but Sink
// is the reference behaviour: every caller is unauthenticated, so it is
// never served below the preferred revision. Wrap has the shape of any
// router's middleware (chi's r.Use(m.Wrap)).
func ExampleMiddleware_Wrap_serveMux() {
	n, err := negotiate.Compile(facets.Set{MCP: &facets.MCP{
		Revisions: []string{"2025-11-25", "2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-11-25",
	}}, policy.Policy{})
	if err != nil {
		panic(err)
	}
	mcpHandler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rev, _ := mcphttp.Version(r.Context())
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":{"servedAt":%q}}`, rev)
	})

	// The wiring: five lines.
	m, err := mcphttp.New(n, mcphttp.Options{Sink: &negotiatetest.Recorder{}}) // a host passes its event store
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", m.Wrap(mcpHandler))

	r := httptest.NewRequest("POST", "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`))
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", "tools/list")
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	fmt.Println(w.Code, w.Body)
	// Output:
	// 200 {"jsonrpc":"2.0","id":1,"result":{"servedAt":"2026-07-28"}}
}

// A host checks its MCP server when it starts: this one answers
// server/discover as the go-sdk's default, stateful handler does, with the
// handshake revisions only, so it cannot serve the preferred 2026-07-28,
// and the check says so, with the fix, before any client arrives.
func ExampleMiddleware_Check() {
	n, err := negotiate.Compile(facets.Set{MCP: &facets.MCP{
		Revisions: []string{"2025-11-25", "2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-11-25",
	}}, policy.Policy{})
	if err != nil {
		panic(err)
	}
	m, err := mcphttp.New(n, mcphttp.Options{Sink: &negotiatetest.Recorder{}})
	if err != nil {
		panic(err)
	}
	stateful := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-11-25"]}}`)
	})
	if err := m.Check(context.Background(), stateful); err != nil {
		fmt.Println(strings.ReplaceAll(err.Error(), "; ", ";\n"))
	}
	// Output:
	// mcphttp: the server does not serve the preferred revision 2026-07-28 the mcp facet advertises: its server/discover at 2026-07-28 answered supportedVersions [2025-11-25];
	// a go-sdk server serves 2026-07-28 and later only stateless: mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{Stateless: true});
	// otherwise list the facet's revisions in the server's supported versions (go-sdk: ServerOptions.SupportedProtocolVersions;
	// mcp-go: server.WithStreamableHTTPProtocolVersions)
}

// A server that predates server/discover (the TypeScript MCP SDK 1.32.2's
// answers it 400 "No valid session ID provided") is negotiated through
// initialize, for an authenticated host: Connect's Transport then carries
// the session, and Close ends it.
func ExampleConnect() {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.Method == http.MethodDelete:
			fmt.Println("server: session", r.Header.Get("Mcp-Session-Id"), "ended")
		case strings.Contains(string(body), `"initialize"`):
			w.Header().Set("Mcp-Session-Id", "s-1")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"legacy","version":"1"}}}`)
		case r.Header.Get("Mcp-Session-Id") == "":
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`)
		default:
			fmt.Printf("server: %s on session %s at %s\n", body, r.Header.Get("Mcp-Session-Id"), r.Header.Get("MCP-Protocol-Version"))
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	defer server.Close()

	n, err := negotiate.Compile(facets.Set{MCP: &facets.MCP{
		Revisions: []string{"2025-11-25", "2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-11-25", RefreshedAt: "2026-11-01",
	}}, policy.Policy{})
	if err != nil {
		panic(err)
	}
	host := &negotiate.Subject{Issuer: "https://idp.example", SubjectID: "host", Tenant: "acme", Lane: policy.LaneWorkload, Kind: policy.KindAgent}
	var audit negotiatetest.Recorder
	t, o, err := mcphttp.Connect(context.Background(), n, server.URL, mcphttp.OutboundOptions{Sink: &audit, Subject: host, AllowLoopback: true})
	if err != nil {
		panic(err)
	}
	fmt.Println("host:", o.Kind, o.Version)

	client := &http.Client{Transport: t}
	resp, err := client.Post(server.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}`))
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	if err := t.Close(context.Background()); err != nil {
		panic(err)
	}
	ev := audit.Events()[0].Payload
	fmt.Println("recorded:", ev.Outcome, ev.Version, "requested", ev.Requested)
	// Output:
	// host: downgraded 2025-11-25
	// server: {"jsonrpc":"2.0","method":"notifications/initialized"} on session s-1 at 2025-11-25
	// server: {"jsonrpc":"2.0","method":"notifications/cancelled","params":{}} on session s-1 at 2025-11-25
	// server: session s-1 ended
	// recorded: accepted 2025-11-25 requested 2026-07-28
}
