package mcpe2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/examples/internal/npmtest"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// now is the clock of every decision.
var now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// host is the host's negotiator: MCP 2025-11-25 and 2026-07-28, preferred
// 2026-07-28, floor 2025-11-25.
func host(t *testing.T) *negotiate.Negotiator {
	t.Helper()
	n, err := negotiate.Compile(facets.Set{MCP: &facets.MCP{
		Revisions: []string{"2025-11-25", "2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-11-25", RefreshedAt: "2026-11-01",
	}}, policy.Policy{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// agent is the host's authenticated outbound identity.
var agent = &negotiate.Subject{Issuer: "https://idp.example", SubjectID: "host-agent", Tenant: "acme", Lane: policy.LaneWorkload, Kind: policy.KindAgent}

// exchange is one request the server got, as the recording proxy saw it.
// e2eTraceparent is the trace context every outbound request carries.
const e2eTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

type exchange struct {
	method, rpc, version, session, body string
}

// recording is a reverse proxy in front of a server that keeps every
// request it forwards.
type recording struct {
	*httptest.Server
	mu   sync.Mutex
	seen []exchange
}

func record(t *testing.T, target string) *recording {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	proxy.FlushInterval = -1 // event streams pass as they come
	r := &recording{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(b))
		var msg struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(b, &msg)
		r.mu.Lock()
		r.seen = append(r.seen, exchange{req.Method, msg.Method, req.Header.Get("Mcp-Protocol-Version"), req.Header.Get("Mcp-Session-Id"), string(b)})
		r.mu.Unlock()
		proxy.ServeHTTP(w, req)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recording) exchanges() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]exchange(nil), r.seen...)
}

// wire is what the server got, one "METHOD rpc@version" per request, with
// "+session" when it carried one.
func (r *recording) wire() string {
	var out []string
	for _, e := range r.exchanges() {
		s := e.method
		if e.rpc != "" {
			s += " " + e.rpc
		}
		if e.version != "" {
			s += "@" + e.version
		}
		if e.session != "" {
			s += "+session"
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

// echoText is the text echo answers.
const echoText = "hello from the host"

// goSDKServer is the go-sdk's streamable handler serving the host's
// revisions, with echo: stateless, or with sessions (its default).
func goSDKServer(stateless bool) http.Handler {
	server := mcp.NewServer(&mcp.Implementation{Name: "go-sdk", Version: "1.8.0"}, &mcp.ServerOptions{
		SupportedProtocolVersions: []string{"2025-11-25", "2026-07-28"},
	})
	server.AddTool(&mcp.Tool{
		Name:        "echo",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Text string }
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: stateless})
}

// mcpGoServer is mcp-go's streamable server, both eras on one endpoint,
// restricted to the host's revisions, with echo.
func mcpGoServer() http.Handler {
	s := mcpgoserver.NewMCPServer("mcp-go", "1.2.1")
	s.AddTool(mcpgo.NewTool("echo", mcpgo.WithString("text")), func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return mcpgo.NewToolResultText(req.GetString("text", "")), nil
	})
	return mcpgoserver.NewStreamableHTTPServer(s, mcpgoserver.WithStreamableHTTPProtocolVersions("2025-11-25", "2026-07-28"))
}

// serve returns the URL of h on loopback.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s.URL + "/mcp"
}

// tsServer runs testdata/tsserver/server.mjs, the TypeScript MCP SDK
// 1.32.2 server, and returns its URL. Without node or npm the test is
// skipped, saying so, except in CI (CI set), where it fails.
func tsServer(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("testdata", "tsserver")
	node := npmtest.Node(t, dir, filepath.Join("@modelcontextprotocol", "sdk"))
	cmd := exec.Command(node, "server.mjs")
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	var started struct{ URL string }
	if err != nil || json.Unmarshal([]byte(line), &started) != nil || started.URL == "" {
		t.Fatalf("server.mjs printed %q: %v", line, err)
	}
	return started.URL
}

// callEcho sends a tools/call of echo through tr, as a host's own code
// would (at 2026-07-28 with the client capabilities in _meta, which the
// revision requires and the Transport does not invent), and returns the
// text of the result.
func callEcho(t *testing.T, tr *mcphttp.Transport, serverURL string) string {
	t.Helper()
	meta := ""
	if tr.Version() == "2026-07-28" {
		meta = `,"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}`
	}
	body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + echoText + `"}` + meta + `}}`
	req, _ := http.NewRequest(http.MethodPost, serverURL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "echo")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("tools/call: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	data := raw
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		data = nil
		for _, line := range strings.Split(string(raw), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(d, `"id":2`) {
				data = []byte(d)
			}
		}
	}
	var rep struct {
		Result *struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(data, &rep); err != nil || rep.Result == nil || len(rep.Result.Content) != 1 {
		t.Fatalf("tools/call answered HTTP %d %s", resp.StatusCode, raw)
	}
	return rep.Result.Content[0].Text
}

// TestOutbound connects the host to each real server, with an
// authenticated identity and without one: what is decided, what is
// recorded, what went over the wire, and that a tools/call through the
// Transport works at the revision decided.
func TestOutbound(t *testing.T) {
	type want struct {
		version string // "" when refused
		reason  string
		wire    string // what the server got, Close included
	}
	const stateless = "POST server/discover@2026-07-28, POST tools/call@2026-07-28"
	servers := []struct {
		name      string
		url       func(t *testing.T) string
		auth      want
		anonymous want
	}{
		{"TypeScript SDK 1.32.2", tsServer,
			want{"2025-11-25", "ok", "POST server/discover@2026-07-28, POST initialize, POST notifications/initialized@2025-11-25+session, POST tools/call@2025-11-25+session, DELETE@2025-11-25+session"},
			want{"", "unauthenticated", "POST server/discover@2026-07-28"}},
		{"go-sdk 1.8.0 stateful", func(t *testing.T) string { return serve(t, goSDKServer(false)) },
			want{"2025-11-25", "ok", "POST server/discover@2026-07-28, POST initialize, POST notifications/initialized@2025-11-25+session, POST tools/call@2025-11-25+session, DELETE@2025-11-25+session"},
			want{"", "unauthenticated", "POST server/discover@2026-07-28"}},
		{"go-sdk 1.8.0 stateless", func(t *testing.T) string { return serve(t, goSDKServer(true)) },
			want{"2026-07-28", "ok", stateless}, want{"2026-07-28", "ok", stateless}},
		{"mcp-go 1.2.1", func(t *testing.T) string { return serve(t, mcpGoServer()) },
			want{"2026-07-28", "ok", stateless}, want{"2026-07-28", "ok", stateless}},
	}
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			target := s.url(t)
			for _, subject := range []*negotiate.Subject{agent, nil} {
				w := s.auth
				name := "authenticated"
				if subject == nil {
					w, name = s.anonymous, "anonymous"
				}
				t.Run(name, func(t *testing.T) {
					rec := record(t, target)
					serverURL := rec.URL + "/mcp"
					sink := &negotiatetest.Recorder{}
					ctx := context.Background()
					// Every request carries a trace context in _meta and
					// the headers (RFC 0207): no server refuses it.
					tr, o, err := mcphttp.Connect(ctx, host(t), serverURL, mcphttp.OutboundOptions{Sink: sink, Subject: subject, AllowLoopback: true,
						TraceContext: func(context.Context) (string, string) { return e2eTraceparent, "wopneg=e2e" }})
					digest, _ := events.PeerDigest(serverURL)
					wantEvent := events.NegotiationDecided{Protocol: "mcp", Outcome: "accepted", Version: w.version, Requested: "2026-07-28", Reason: w.reason, Floor: "2025-11-25", PeerDigest: digest, At: now}
					if w.version == "" {
						wantEvent.Outcome = "refused"
						if tr != nil || err == nil || o.Reason != w.reason {
							t.Fatalf("outcome %+v, error %v, want refused %s", o, err, w.reason)
						}
					} else {
						if err != nil || o.Version != w.version {
							t.Fatalf("outcome %+v, error %v, want %s", o, err, w.version)
						}
						if got := callEcho(t, tr, serverURL); got != echoText {
							t.Errorf("echo answered %q", got)
						}
						if err := tr.Close(ctx); err != nil {
							t.Errorf("Close: %v", err)
						}
					}
					var got []events.NegotiationDecided
					for _, e := range sink.Events() {
						got = append(got, e.Payload)
					}
					if len(got) != 1 || got[0] != wantEvent {
						t.Errorf("recorded %+v\nwant %+v", got, wantEvent)
					}
					wire := rec.wire()
					if wire != w.wire {
						t.Errorf("the server got %s\nwant %s", wire, w.wire)
					}
					// initialize asks for the handshake revision, never a
					// 2026 one, never one below the floor.
					for _, e := range rec.exchanges() {
						if e.rpc == "initialize" && !strings.Contains(e.body, `"protocolVersion":"2025-11-25"`) {
							t.Errorf("initialize sent %s", e.body)
						}
						if e.method == http.MethodPost && !strings.Contains(e.body, `"traceparent":"`+e2eTraceparent+`","tracestate":"wopneg=e2e"`) {
							t.Errorf("%s sent without its trace context: %s", e.rpc, e.body)
						}
					}
				})
			}
		})
	}
}
