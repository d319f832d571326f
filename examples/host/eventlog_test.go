package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate/seams"
)

// surfaces is a host with the mounts run gives it, and its event log.
type surfaces struct {
	h   *host
	log events.Log
}

func startSurfaces(t *testing.T, withSeams bool) *surfaces {
	t.Helper()
	return startSurfacesWith(t, config{Seams: withSeams})
}

// startSurfacesWith is startSurfaces with cfg's Seams and Refresher.
func startSurfacesWith(t *testing.T, cfg config) *surfaces {
	t.Helper()
	cfg.Addr, cfg.Token, cfg.Facets = "127.0.0.1:0", testToken, defaultFacets()
	log := events.NewMemoryLog(0, 0)
	// As run composes it: numbered JSON lines beside the log.
	sink := events.NewFanout(events.NewJSONLines(io.Discard), log)
	h, err := newHost(cfg, sink, hostMounts(cfg, log)...)
	if err != nil {
		t.Fatal(err)
	}
	serve(t, h)
	return &surfaces{h: h, log: log}
}

func (s *surfaces) do(t *testing.T, method, path, token string, body any, header http.Header) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, s.h.env.BaseURL+path, rd)
	for k, v := range header {
		req.Header[k] = v
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// TestSeamsOffByDefault: without -seams there is no seam, and with it a
// caller without the token gets nothing.
func TestSeamsOffByDefault(t *testing.T) {
	off := startSurfaces(t, false)
	for _, p := range []string{"a2a", "mcp"} {
		if status, _ := off.do(t, "POST", seams.Prefix+"/sample/"+p+"/invoke", testToken, map[string]any{"serverUrl": off.h.URL()}, nil); status != http.StatusNotFound {
			t.Errorf("%s seam without -seams: %d", p, status)
		}
	}
	on := startSurfaces(t, true)
	if status, body := on.do(t, "POST", seams.Prefix+"/sample/mcp/invoke", "", map[string]any{"serverUrl": on.h.URL()}, nil); status != http.StatusUnauthorized {
		t.Errorf("an anonymous caller reached the seam: %d %v", status, body)
	}
}

// TestSeamsAgainstItself drives the seams at the host's own A2A and MCP
// endpoints, and reads each audit run back as the caller; another caller
// reads nothing.
func TestSeamsAgainstItself(t *testing.T) {
	s := startSurfaces(t, true)
	for _, tc := range []struct {
		proto, key, target, version string
	}{
		{"mcp", "serverUrl", s.h.URL(), "2026-07-28"},
		{"a2a", "peerUrl", s.h.env.BaseURL, "1.0"},
	} {
		t.Run(tc.proto, func(t *testing.T) {
			status, body := s.do(t, "POST", seams.Prefix+"/sample/"+tc.proto+"/invoke", testToken, map[string]any{tc.key: tc.target}, nil)
			if status != http.StatusOK || body["negotiatedVersion"] != tc.version || body["protocol"] != tc.proto {
				t.Fatalf("%d %v", status, body)
			}
			runID, _ := body["runId"].(string)
			if !strings.HasPrefix(runID, "demo/") {
				t.Fatalf("runId %q", runID)
			}
			status, poll := s.do(t, "GET", "/runs/"+runID+"/events/poll", testToken, nil, nil)
			evs, _ := poll["events"].([]any)
			if status != http.StatusOK || len(evs) != 1 {
				t.Fatalf("poll: %d %v", status, poll)
			}
			p := evs[0].(map[string]any)["payload"].(map[string]any)
			if p["outcome"] != "accepted" || p["version"] != tc.version {
				t.Errorf("event %v", p)
			}
			if status, _ := s.do(t, "GET", "/runs/"+runID+"/events/poll", "", nil, nil); status != http.StatusUnauthorized {
				t.Errorf("an anonymous caller polled the run: %d", status)
			}
		})
	}
	// The A2A facet's floor is its preferred version: an unauthenticated
	// exchange and an authenticated one decide the same.
	status, body := s.do(t, "POST", seams.Prefix+"/sample/a2a/invoke", testToken, map[string]any{"peerUrl": s.h.env.BaseURL, "authenticated": false}, nil)
	if status != http.StatusOK || body["negotiatedVersion"] != "1.0" {
		t.Errorf("%d %v", status, body)
	}
}

// TestHostEventsByTenant: an authenticated inbound MCP exchange reaches the
// caller's /host/events stream; an anonymous one reaches no stream.
func TestHostEventsByTenant(t *testing.T) {
	s := startSurfaces(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.h.env.BaseURL+"/host/events", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/host/events: %d", resp.StatusCode)
	}
	list := func(token, version string) {
		body := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": map[string]any{"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion": version, "io.modelcontextprotocol/clientCapabilities": map[string]any{}}}}
		s.do(t, "POST", "/mcp", token, body, http.Header{"Mcp-Protocol-Version": {version}, "Mcp-Method": {"tools/list"},
			"Accept": {"application/json, text/event-stream"}, "Content-Type": {"application/json"}})
	}
	list("", "2026-07-28")        // anonymous: recorded for no tenant
	list(testToken, "2025-11-25") // the demo user: recorded for demo
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var env struct {
			Payload map[string]any `json:"payload"`
		}
		if err := json.Unmarshal([]byte(data), &env); err != nil {
			t.Fatal(err)
		}
		if env.Payload["requested"] != "2025-11-25" || env.Payload["outcome"] != "accepted" {
			t.Fatalf("the first frame is %v, want the demo user's 2025-11-25 exchange", env.Payload)
		}
		return
	}
	t.Fatalf("the stream ended: %v", sc.Err())
}

// TestDiscovery: the host advertises its real versions, its inbound
// surfaces, negotiation.decided as an ephemeral host event (without -pg
// its events go to stdout and memory, which a crash loses; see
// TestDiscoveryDurableOnlyWithAnAcknowledgedDatabase), and the seams
// profile only with -seams.
func TestDiscovery(t *testing.T) {
	for _, withSeams := range []bool{false, true} {
		s := startSurfaces(t, withSeams)
		status, doc := s.do(t, "GET", "/.well-known/openwop", "", nil, nil)
		if status != http.StatusOK {
			t.Fatalf("%d %v", status, doc)
		}
		raw, _ := json.Marshal(doc)
		d, err := facets.ParseDiscovery(raw)
		if err != nil {
			t.Fatalf("the served document does not parse: %v\n%s", err, raw)
		}
		if d.Seams != withSeams {
			t.Errorf("seams %v advertised as %v", withSeams, d.Seams)
		}
		if d.A2A == nil || strings.Join(d.A2A.Versions, ",") != "1.0" || d.A2A.MinimumVersion != "1.0" || d.A2A.AgentCardURL == "" {
			t.Errorf("a2a %+v", d.A2A)
		}
		if d.MCP == nil || strings.Join(d.MCP.Revisions, ",") != "2025-11-25,2026-07-28" || d.MCP.MinimumRevision != "2025-11-25" ||
			d.MCP.PreferredVersion != "2026-07-28" || len(d.MCP.ServerURLs) != 1 {
			t.Errorf("mcp %+v", d.MCP)
		}
		if !slices.Equal(d.HostEvents, []facets.HostEvent{{Type: "negotiation.decided", Delivery: "ephemeral"}}) {
			t.Errorf("hostEvents %v, want negotiation.decided as ephemeral alone: %s", d.HostEvents, raw)
		}
	}
}
