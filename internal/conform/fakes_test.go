package conform

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func rpcCall(method string, params map[string]any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
}

func errCode(m map[string]any) float64 {
	c, _ := obj(m, "error")["code"].(float64)
	return c
}

func TestA2APeer(t *testing.T) {
	ctx := context.Background()
	legacy, err := newA2APeer("0.3")
	if err != nil {
		t.Fatal(err)
	}
	defer legacy.close()
	_, card, _ := peerPost(ctx, legacy.url+cardPath, http.Header{}, nil)
	if card["protocolVersion"] != "0.3.0" || card["supportedInterfaces"] != nil {
		t.Fatalf("a 0.3-only peer serves the 0.3 card, got %v", card)
	}
	p, err := newA2APeer("1.0", "1.1")
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	_, card, _ = peerPost(ctx, p.url+cardPath, http.Header{}, nil)
	if ifs, _ := card["supportedInterfaces"].([]any); len(ifs) != 2 {
		t.Fatalf("card %v", card)
	}
	send := rpcCall("SendMessage", map[string]any{})
	for _, tc := range []struct {
		version string
		code    float64
	}{{"1.1", 0}, {"1.0", 0}, {"", -32009}, {"0.3", -32009}, {"2.0", -32009}} {
		h := http.Header{"Content-Type": {"application/json"}}
		if tc.version != "" {
			h.Set("A2A-Version", tc.version)
		}
		status, res, err := peerPost(ctx, p.url+a2aRPCPath, h, send)
		if err != nil || status != http.StatusOK || errCode(res) != tc.code || res["id"] != float64(7) {
			t.Errorf("A2A-Version %q: %d %v %v", tc.version, status, res, err)
		}
		if tc.code == 0 && obj(res, "result") == nil {
			t.Errorf("A2A-Version %q: no result", tc.version)
		}
	}
	_, res, _ := peerPost(ctx, p.url+a2aRPCPath, http.Header{"A2A-Version": {"1.0"}}, rpcCall("GetTask", nil))
	if errCode(res) != -32601 {
		t.Errorf("GetTask: %v", res)
	}
	if status, _, _ := peerPost(ctx, p.url+"/elsewhere", http.Header{}, nil); status != http.StatusNotFound {
		t.Errorf("unknown path: %d", status)
	}
	calls := p.calls()
	if len(calls) != 8 || calls[1].RPC != "SendMessage" || calls[1].Header.Get("A2A-Version") != "1.1" || calls[1].ID != float64(7) {
		t.Fatalf("recorded %d calls: %+v", len(calls), calls)
	}
}

func TestMCPServer(t *testing.T) {
	ctx := context.Background()
	s, err := newMCPServer("2025-11-25", "2026-07-28")
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	meta := func(v string) map[string]any { return map[string]any{metaVersion: v} }
	for _, tc := range []struct {
		name   string
		header http.Header
		body   map[string]any
		status int
		code   float64
		check  func(map[string]any) bool
	}{
		{"discover", mcpHeaders("2026-07-28", "server/discover", ""), rpcCall("server/discover", nil), 200, 0,
			func(m map[string]any) bool { return len(strs(obj(m, "result"), "supportedVersions")) == 2 }},
		{"no header", http.Header{}, rpcCall("server/discover", nil), 400, -32022,
			func(m map[string]any) bool { return obj(obj(m, "error"), "data")["requested"] == nil }},
		{"unsupported", mcpHeaders("2025-06-18", "server/discover", ""), rpcCall("server/discover", nil), 400, -32022,
			func(m map[string]any) bool { return obj(obj(m, "error"), "data")["requested"] == "2025-06-18" }},
		{"meta mismatch", mcpHeaders("2026-07-28", "tools/list", ""), rpcCall("tools/list", map[string]any{"_meta": meta("2025-11-25")}), 400, -32020, nil},
		{"method mismatch", mcpHeaders("2026-07-28", "tools/call", ""), rpcCall("tools/list", nil), 400, -32020, nil},
		{"tools/list", mcpHeaders("2026-07-28", "tools/list", ""), rpcCall("tools/list", nil), 200, 0,
			func(m map[string]any) bool { tl, _ := obj(m, "result")["tools"].([]any); return len(tl) == 2 }},
		{"name mismatch", mcpHeaders("2026-07-28", "tools/call", "other"), rpcCall("tools/call", map[string]any{"name": "echo"}), 400, -32020, nil},
		{"echo", mcpHeaders("2026-07-28", "tools/call", "echo"), rpcCall("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}), 200, 0,
			func(m map[string]any) bool { return strings.Contains(string(mustJSON(m)), `"text":"hi"`) }},
		{"unknown tool", mcpHeaders("2026-07-28", "tools/call", ""), rpcCall("tools/call", map[string]any{"name": "nope"}), 200, -32602, nil},
		{"loop without elicitation", mcpHeaders("2026-07-28", "tools/call", ""), rpcCall("tools/call", map[string]any{"name": loopTool}), 400, -32021, nil},
		{"loop round 1", mcpHeaders("2026-07-28", "tools/call", ""), loopParams(nil, 2), 200, 0,
			func(m map[string]any) bool {
				return obj(m, "result")["requestState"] == "mrtr:needs_input_loop:1" && strings.Contains(string(mustJSON(m)), `"message":"round 1 of 2"`)
			}},
		{"loop rounds below 1", mcpHeaders("2026-07-28", "tools/call", ""), loopParams("mrtr:needs_input_loop:1", 0), 200, 0,
			func(m map[string]any) bool { return obj(m, "result")["resultType"] == "complete" }},
		{"loop rounds capped", mcpHeaders("2026-07-28", "tools/call", ""), loopParams("mrtr:needs_input_loop:64", 1000), 200, 0,
			func(m map[string]any) bool { return obj(m, "result")["resultType"] == "complete" }},
		{"loop round 2", mcpHeaders("2026-07-28", "tools/call", ""), loopParams("mrtr:needs_input_loop:1", 2), 200, 0,
			func(m map[string]any) bool { return obj(m, "result")["requestState"] == "mrtr:needs_input_loop:2" }},
		{"loop done", mcpHeaders("2026-07-28", "tools/call", ""), loopParams("mrtr:needs_input_loop:2", 2), 200, 0,
			func(m map[string]any) bool { return obj(m, "result")["resultType"] == "complete" }},
		{"loop forged state", mcpHeaders("2026-07-28", "tools/call", ""), loopParams("forged", 2), 200, -32602, nil},
		{"loop bad state type", mcpHeaders("2026-07-28", "tools/call", ""), loopParams(7, 2), 200, -32602, nil},
		{"unknown method", mcpHeaders("2026-07-28", "", ""), rpcCall("ping", nil), 404, -32601, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, res, err := peerPost(ctx, s.url, tc.header, tc.body)
			if err != nil || status != tc.status || errCode(res) != tc.code || tc.check != nil && !tc.check(res) {
				t.Fatalf("%d %v %v", status, res, err)
			}
		})
	}
	if status, _, _ := peerPost(ctx, s.url, http.Header{}, nil); status != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", status)
	}
	legacy, err := newMCPServer("2025-06-18")
	if err != nil {
		t.Fatal(err)
	}
	defer legacy.close()
	if status, res, _ := peerPost(ctx, legacy.url, http.Header{}, rpcCall("server/discover", nil)); status != 200 || len(strs(obj(res, "result"), "supportedVersions")) != 1 {
		t.Errorf("a legacy server serves a request without a header: %d %v", status, res)
	}
}

func loopParams(state any, rounds float64) map[string]any {
	p := map[string]any{"name": loopTool, "arguments": map[string]any{"rounds": rounds},
		"_meta": map[string]any{metaVersion: "2026-07-28", metaClientCap: map[string]any{"elicitation": map[string]any{}}}}
	if state != nil {
		p["requestState"] = state
	}
	return rpcCall("tools/call", p)
}

func TestFakeKeepsBoundedCalls(t *testing.T) {
	s, err := newMCPServer("2026-07-28")
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	for range maxFakeCalls + 3 {
		_, _, _ = peerPost(context.Background(), s.url, http.Header{}, rpcCall("x", nil))
	}
	if n := len(s.calls()); n != maxFakeCalls {
		t.Fatalf("kept %d calls", n)
	}
}

func mustJSON(v any) []byte {
	data, _ := json.Marshal(v)
	return data
}
