package routers

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/labstack/echo/v4"

	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
)

func newRequest(path, body string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	return r
}

// messageID matches the random id a2a-go gives a message.
var messageID = regexp.MustCompile(`"messageId":"[^"]*"`)

// show serves r through h and prints the status, the version header named
// and the body.
func show(h http.Handler, r *http.Request, header string) {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	body := messageID.ReplaceAllString(strings.TrimSpace(w.Body.String()), `"messageId":"…"`)
	fmt.Println(w.Code, w.Header().Get(header), body)
}

// The go-sdk's MCP server behind mcphttp in chi: r.Use(m.Wrap). A
// tools/call at the preferred revision is served; one below the floor is
// refused with -32022 before the server sees it.
func Example_chiMCP() {
	n, audit := compiled(), &negotiatetest.Recorder{} // the host's Negotiator and event store

	// The wiring: five lines.
	m, err := mcphttp.New(n, mcphttp.Options{Sink: audit})
	if err != nil {
		panic(err)
	}
	r := chi.NewRouter()
	r.Use(m.Wrap)
	r.Handle("/mcp", mcpServer())

	show(r, mcpRequest("/mcp", "2026-07-28"), "")
	show(r, mcpRequest("/mcp", "2025-06-18"), "")
	fmt.Println(len(audit.Events()), "events recorded")
	// Output:
	// 200  {"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"routers","version":"0.1.0"}},"content":[{"type":"text","text":"hi at 2026-07-28"}],"resultType":"complete"}}
	// 400  {"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"unsupported MCP protocol version: Mcp-Protocol-Version \"2025-06-18\" is below the minimum revision 2025-11-25; this caller can be served 2026-07-28","data":{"supported":["2026-07-28"],"requested":"2025-06-18","reason":"below-floor"}}}
	// 2 events recorded
}

// a2a-go's JSON-RPC handler behind a2ahttp in chi: r.Use(m.Wrap). A
// request at 1.0 is served at 1.0; one at 0.3, below this host's floor, is
// refused with -32009 on HTTP 200, as A2A clients expect.
func Example_chiA2A() {
	n, audit := compiled(), &negotiatetest.Recorder{}

	m, err := a2ahttp.New(n, a2ahttp.Options{Sink: audit})
	if err != nil {
		panic(err)
	}
	r := chi.NewRouter()
	r.Use(m.Wrap)
	r.Handle("/a2a", a2aServer())

	show(r, a2aRequest("/a2a", "1.0"), "A2A-Version")
	show(r, a2aRequest("/a2a", "0.3"), "A2A-Version")
	// Output:
	// 200 1.0 {"jsonrpc":"2.0","id":1,"result":{"message":{"messageId":"…","parts":[{"text":"hi at 1.0"}],"role":"ROLE_AGENT"}}}
	// 200 1.0 {"jsonrpc":"2.0","id":1,"error":{"code":-32009,"message":"A2A-Version \"0.3\" is below this interface's minimum version 1.0; this interface serves 1.0","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED","domain":"a2a-protocol.org","metadata":{"supportedVersions":"1.0"}}]}}
}

// The same two in echo, through echo.WrapMiddleware(m.Wrap).
func Example_echo() {
	n, audit := compiled(), &negotiatetest.Recorder{}

	mcpM, err := mcphttp.New(n, mcphttp.Options{Sink: audit})
	if err != nil {
		panic(err)
	}
	a2aM, err := a2ahttp.New(n, a2ahttp.Options{Sink: audit})
	if err != nil {
		panic(err)
	}
	e := echo.New()
	e.Group("/mcp", echo.WrapMiddleware(mcpM.Wrap)).Any("", echo.WrapHandler(mcpServer()))
	e.Group("/a2a", echo.WrapMiddleware(a2aM.Wrap)).Any("", echo.WrapHandler(a2aServer()))

	show(e, mcpRequest("/mcp", "2026-07-28"), "")
	show(e, a2aRequest("/a2a", "1.0"), "A2A-Version")
	// Output:
	// 200  {"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"routers","version":"0.1.0"}},"content":[{"type":"text","text":"hi at 2026-07-28"}],"resultType":"complete"}}
	// 200 1.0 {"jsonrpc":"2.0","id":1,"result":{"message":{"messageId":"…","parts":[{"text":"hi at 1.0"}],"role":"ROLE_AGENT"}}}
}
