package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/events"
)

// TestMain lets TestInterrupt run the command itself: with
// WOPNEG_HOST_MAIN set, the test binary is the host.
func TestMain(m *testing.M) {
	if os.Getenv("WOPNEG_HOST_MAIN") == "1" {
		os.Args = append([]string{"host"}, strings.Fields(os.Getenv("WOPNEG_HOST_ARGS"))...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestSelftest runs the command's -selftest path: serve, negotiate with
// itself, call echo, stop.
func TestSelftest(t *testing.T) {
	var stdout, stderr bytes.Buffer
	cfg := config{Addr: "127.0.0.1:0", Token: "demo", Facets: defaultFacets()}
	if err := run(context.Background(), cfg, true, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	want := []string{
		"selftest: server/discover offered [2026-07-28 2025-11-25]; outbound negotiation accepted at \"2026-07-28\"",
		"selftest: session at 2026-07-28; echo answered \"hello (served at MCP 2026-07-28)\"",
	}
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "host: serving MCP on http://127.0.0.1:") || !slices.Equal(lines[1:], want) {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	// stdout holds one event per line: the inbound server/discover of
	// Negotiate, the outbound decision (the only one with a peer digest),
	// and the go-sdk client's server/discover and tools/call.
	var peers int
	sc := bufio.NewScanner(&stdout)
	n := 0
	for ; sc.Scan(); n++ {
		var e events.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %d is not an event: %v\n%s", n, err, sc.Bytes())
		}
		p := e.Payload
		if p.Outcome != "accepted" || p.Version != "2026-07-28" || p.Requested != "2026-07-28" || e.RunID != "" {
			t.Errorf("event %d: %+v", n, e)
		}
		if p.PeerDigest != "" {
			peers++
		}
	}
	if n != 4 || peers != 1 {
		t.Errorf("%d events, %d with a peer digest; want 4 and 1:\n%s", n, peers, stdout.String())
	}
}

// TestDiscoverLists checks that server/discover answers exactly the
// revisions the host advertises.
func TestDiscoverLists(t *testing.T) {
	r := startHost(t, config{Facets: defaultFacets()})
	req, _ := http.NewRequest(http.MethodPost, r.h.URL(), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "server/discover")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// The go-sdk answers in an event stream.
	var data string
	for _, line := range strings.Split(string(body), "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data = d
		}
	}
	var msg struct {
		Result struct {
			SupportedVersions []string `json:"supportedVersions"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(data), &msg); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	got := slices.Sorted(slices.Values(msg.Result.SupportedVersions))
	if want := defaultFacets().MCP.Revisions; !slices.Equal(got, want) {
		t.Errorf("server/discover lists %v, want the advertised %v", got, want)
	}
}

// TestMounts mounts an extra handler through the seam the A2A endpoint
// uses, and refuses a listen address off loopback.
func TestMounts(t *testing.T) {
	var got Env
	mount := func(mux *http.ServeMux, env Env) error {
		got = env
		mux.HandleFunc("/a2a", func(w http.ResponseWriter, r *http.Request) {
			if s := env.Subject(r); s != nil {
				io.WriteString(w, s.SubjectID)
			}
		})
		return nil
	}
	h, err := newHost(config{Addr: "127.0.0.1:0", Token: "t", Facets: defaultFacets()}, &discard{}, mount)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Serve(ctx) }()
	req, _ := http.NewRequest(http.MethodGet, h.env.BaseURL+"/a2a", nil)
	req.Header.Set("Authorization", "Bearer t")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
	if string(body) != "demo-user" || got.Negotiator == nil || got.Sink == nil || got.BaseURL != h.env.BaseURL {
		t.Errorf("mounted handler answered %q with env %+v", body, got)
	}

	failing := func(*http.ServeMux, Env) error { return errors.New("no card") }
	if _, err := newHost(config{Addr: "127.0.0.1:0", Facets: defaultFacets()}, &discard{}, failing); err == nil || err.Error() != "host: mounting: no card" {
		t.Errorf("failing mount: %v", err)
	}
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:0", ":0", "example.com:80"} {
		if _, err := newHost(config{Addr: addr, Facets: defaultFacets()}, &discard{}); err == nil || !strings.Contains(err.Error(), "not loopback") {
			t.Errorf("%s: %v", addr, err)
		}
	}
}

type discard struct{}

func (*discard) Emit(context.Context, events.Event) error { return nil }

// TestInterrupt runs the command and stops it with SIGINT: it stops
// serving and exits 0.
func TestInterrupt(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "WOPNEG_HOST_MAIN=1", "WOPNEG_HOST_ARGS=-port 0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	// Once the release list embedded in the module has aged past the
	// refresh window, a warning that says so comes first.
	for sc.Scan() && strings.Contains(sc.Text(), "WARN wopneg: the release list embedded in the module is older than the refresh window") {
	}
	if !strings.HasPrefix(sc.Text(), "host: serving MCP on http://127.0.0.1:") {
		t.Fatalf("first line %q", sc.Text())
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	var rest []string
	for sc.Scan() {
		rest = append(rest, sc.Text())
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit: %v", err)
	}
	if !slices.Equal(rest, []string{"host: stopped"}) {
		t.Errorf("after SIGINT: %q", rest)
	}
}
