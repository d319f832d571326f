package conform

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wopneg/wopneg/internal/strictjson"
)

// Bounds of the fakes: what they read of a request, and how many calls
// they keep.
const (
	maxFakeBody  = 1 << 20
	maxFakeCalls = 256
	// maxLoopRounds bounds the rounds needs_input_loop will ask for.
	maxLoopRounds = 64
	// fakeTimeout bounds how long a fake reads and writes one request.
	fakeTimeout time.Duration = 10_000_000_000 // 10 s
)

// Wire names the fakes and the runner share.
const (
	a2aLegacy     = "0.3"
	mcpLegacy     = "2025-06-18"
	cardPath      = "/.well-known/agent-card.json"
	a2aRPCPath    = "/a2a/jsonrpc"
	metaVersion   = "io.modelcontextprotocol/protocolVersion"
	metaClientCap = "io.modelcontextprotocol/clientCapabilities"
	loopTool      = "needs_input_loop"
)

// call is one request a fake received, as it received it.
type call struct {
	Method string
	Path   string
	Header http.Header
	// RPC is the JSON-RPC method of a JSON body, or "".
	RPC string
	// Params are the JSON-RPC params, nil when absent or not an object.
	Params map[string]any
	// ID is the JSON-RPC id, nil when absent.
	ID any
}

// rpcRequest is a JSON-RPC request as the fakes read it.
type rpcRequest struct {
	ID     any            `json:"id"`
	Method string         `json:"method"`
	Params map[string]any `json:"params"`
}

// fake is a loopback HTTP server that records every call it receives.
type fake struct {
	srv *http.Server
	url string
	mu  sync.Mutex
	// recv are the calls received, the first maxFakeCalls of them.
	recv []call
}

// startFake serves h, wrapped in the recorder, on a fresh loopback port.
func startFake(h func(f *fake, w http.ResponseWriter, r *http.Request, c call)) (*fake, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("conform: fake peer: %w", err)
	}
	f := &fake{url: "http://" + ln.Addr().String()}
	f.srv = &http.Server{
		ReadHeaderTimeout: fakeTimeout,
		ReadTimeout:       fakeTimeout,
		WriteTimeout:      fakeTimeout,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h(f, w, r, f.record(w, r))
		}),
	}
	go func() { _ = f.srv.Serve(ln) }()
	return f, nil
}

// record reads r's body (bounded) and keeps the call.
func (f *fake) record(w http.ResponseWriter, r *http.Request) call {
	body, _ := io.ReadAll(http.MaxBytesReader(w, r.Body, maxFakeBody))
	c := call{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone()}
	var req rpcRequest
	if strictjson.DecodeOpen(body, &req) == nil {
		c.RPC, c.Params, c.ID = req.Method, req.Params, req.ID
	}
	f.mu.Lock()
	if len(f.recv) < maxFakeCalls {
		f.recv = append(f.recv, c)
	}
	f.mu.Unlock()
	return c
}

// calls returns a copy of what f has received.
func (f *fake) calls() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.recv)
}

// close stops f. The exchange it served is over by then.
func (f *fake) close() { _ = f.srv.Close() }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func rpcResult(id, result any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "result": result}
}

func rpcError(id any, code int, msg string, data any) map[string]any {
	e := map[string]any{"code": code, "message": msg}
	if data != nil {
		e["data"] = data
	}
	return map[string]any{"jsonrpc": "2.0", "id": id, "error": e}
}

// newA2APeer starts a fake A2A peer that speaks exactly versions: its agent
// card offers them (the A2A 0.3 card when it speaks only 0.3, otherwise an
// A2A 1.0 card with one JSON-RPC interface per version), and its JSON-RPC
// endpoint serves a request only at one of them, a request with no
// A2A-Version being 0.3 (A2A §3.6.2). Anything else is -32009.
func newA2APeer(versions ...string) (*fake, error) {
	return startFake(func(f *fake, w http.ResponseWriter, r *http.Request, c call) {
		if r.Method == http.MethodGet && r.URL.Path == cardPath {
			writeJSON(w, http.StatusOK, a2aCard(f.url, versions))
			return
		}
		if r.Method != http.MethodPost || r.URL.Path != a2aRPCPath {
			http.NotFound(w, r)
			return
		}
		v := r.Header.Get("A2A-Version")
		if v == "" {
			v = a2aLegacy
		}
		id := c.ID
		if !slices.Contains(versions, v) {
			writeJSON(w, http.StatusOK, rpcError(id, -32009, "A2A-Version "+v+" is not served by this peer", []any{map[string]any{
				"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "VERSION_NOT_SUPPORTED", "domain": "a2a-protocol.org",
				"metadata": map[string]any{"supportedVersions": strings.Join(versions, ",")},
			}}))
			return
		}
		w.Header().Set("A2A-Version", v)
		switch c.RPC {
		case "SendMessage", "message/send":
			writeJSON(w, http.StatusOK, rpcResult(id, map[string]any{"task": map[string]any{
				"id": "task-conform", "contextId": "ctx-conform",
				"status": map[string]any{"state": "TASK_STATE_COMPLETED"},
			}}))
		default:
			writeJSON(w, http.StatusOK, rpcError(id, -32601, "method not found: "+c.RPC, nil))
		}
	})
}

// a2aCard is the card a peer speaking versions serves at base.
func a2aCard(base string, versions []string) map[string]any {
	skills := []any{map[string]any{"id": "echo", "name": "echo", "description": "returns its input", "tags": []any{"echo"}}}
	if len(versions) == 1 && versions[0] == a2aLegacy {
		return map[string]any{
			"protocolVersion": "0.3.0", "name": "wopneg-conform-peer", "description": "wopneg conform's fake A2A peer",
			"url": base + a2aRPCPath, "version": "1.0.0", "capabilities": map[string]any{},
			"skills": skills, "defaultInputModes": []any{"text/plain"}, "defaultOutputModes": []any{"text/plain"},
		}
	}
	ifaces := make([]any, 0, len(versions))
	for _, v := range versions {
		ifaces = append(ifaces, map[string]any{"url": base + a2aRPCPath, "protocolBinding": "JSONRPC", "protocolVersion": v})
	}
	return map[string]any{
		"name": "wopneg-conform-peer", "description": "wopneg conform's fake A2A peer", "version": "1.0.0",
		"supportedInterfaces": ifaces, "capabilities": map[string]any{},
		"skills": skills, "defaultInputModes": []any{"text/plain"}, "defaultOutputModes": []any{"text/plain"},
	}
}

var loopState = regexp.MustCompile(`^mrtr:needs_input_loop:([0-9]{1,3})$`)

// newMCPServer starts a fake MCP server (streamable HTTP, stateless
// revisions) that speaks exactly revisions. A request must name one in
// MCP-Protocol-Version (HTTP 400, -32022 with data.supported otherwise; a
// request naming none is refused the same way unless the server speaks the
// legacy 2025-06-18), the _meta revision must equal the header and
// Mcp-Method/Mcp-Name the body (-32020). It answers server/discover,
// tools/list, and tools/call for echo and needs_input_loop, which answers
// input_required with a requestState for arguments.rounds rounds and then
// completes.
func newMCPServer(revisions ...string) (*fake, error) {
	return startFake(func(f *fake, w http.ResponseWriter, r *http.Request, c call) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		id := c.ID
		hdr := r.Header.Get("MCP-Protocol-Version")
		supported := slices.Clone(revisions)
		if hdr == "" && !slices.Contains(revisions, mcpLegacy) || hdr != "" && !slices.Contains(revisions, hdr) {
			var requested any
			if hdr != "" {
				requested = hdr
			}
			writeJSON(w, http.StatusBadRequest, rpcError(id, -32022, "unsupported protocol version", map[string]any{"supported": supported, "requested": requested}))
			return
		}
		if mv, ok := c.Params["_meta"].(map[string]any); ok && hdr != "" {
			if v, has := mv[metaVersion]; has && v != hdr {
				writeJSON(w, http.StatusBadRequest, rpcError(id, -32020, "MCP-Protocol-Version does not match _meta", nil))
				return
			}
		}
		if m := r.Header.Get("Mcp-Method"); m != "" && m != c.RPC {
			writeJSON(w, http.StatusBadRequest, rpcError(id, -32020, "Mcp-Method does not match the method", nil))
			return
		}
		switch c.RPC {
		case "server/discover":
			writeJSON(w, http.StatusOK, rpcResult(id, map[string]any{"resultType": "complete", "supportedVersions": supported, "capabilities": map[string]any{"tools": map[string]any{}}}))
		case "tools/list":
			writeJSON(w, http.StatusOK, rpcResult(id, map[string]any{"resultType": "complete", "tools": []any{
				map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}},
				map[string]any{"name": loopTool, "inputSchema": map[string]any{"type": "object"}},
			}}))
		case "tools/call":
			status, body := mcpToolCall(id, r.Header, c.Params)
			writeJSON(w, status, body)
		default:
			writeJSON(w, http.StatusNotFound, rpcError(id, -32601, "method not found: "+c.RPC, nil))
		}
	})
}

// mcpToolCall answers one tools/call.
func mcpToolCall(id any, h http.Header, params map[string]any) (int, map[string]any) {
	name, _ := params["name"].(string)
	if n := h.Get("Mcp-Name"); n != "" && n != name {
		return http.StatusBadRequest, rpcError(id, -32020, "Mcp-Name does not match params.name", nil)
	}
	args, _ := params["arguments"].(map[string]any)
	if name == "echo" {
		text, _ := args["text"].(string)
		return http.StatusOK, rpcResult(id, map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": text}}, "isError": false})
	}
	if name != loopTool {
		return http.StatusOK, rpcError(id, -32602, "unknown tool: "+name, nil)
	}
	meta, _ := params["_meta"].(map[string]any)
	caps, _ := meta[metaClientCap].(map[string]any)
	if _, ok := caps["elicitation"]; !ok {
		return http.StatusBadRequest, rpcError(id, -32021, "needs_input_loop requires the elicitation client capability", nil)
	}
	wanted := 1
	if n, ok := args["rounds"].(float64); ok {
		wanted = int(max(1, min(n, maxLoopRounds)))
	}
	served := 0
	if st, ok := params["requestState"]; ok {
		s, _ := st.(string)
		m := loopState.FindStringSubmatch(s)
		if m == nil {
			return http.StatusOK, rpcError(id, -32602, "requestState is not the value this server issued", nil)
		}
		served, _ = strconv.Atoi(m[1])
	}
	if served >= wanted {
		return http.StatusOK, rpcResult(id, map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": "looped " + strconv.Itoa(served)}}, "isError": false})
	}
	return http.StatusOK, rpcResult(id, map[string]any{
		"resultType": "input_required",
		"inputRequests": map[string]any{"who": map[string]any{"method": "elicitation/create", "params": map[string]any{
			"mode": "form", "message": fmt.Sprintf("round %d of %d", served+1, wanted),
			"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}},
		}}},
		"requestState": fmt.Sprintf("mrtr:needs_input_loop:%d", served+1),
	})
}

var errTooLarge = errors.New("larger than the runner reads")

// readCapped reads at most limit bytes of r, and fails when there are more.
func readCapped(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("response %w (%d bytes)", errTooLarge, limit)
	}
	return bytes.Clone(data), nil
}
