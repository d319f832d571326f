package main

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/policy"
)

// benchServers serves the same go-sdk handler (stateless, with the host's
// tools) twice on loopback: bare, and behind the middleware recording
// every decision as a JSON line (to io.Discard, so the encoding is paid and
// no disk is).
func benchServers(b *testing.B) (bare, negotiated string) {
	b.Helper()
	set, err := checked(new(facets.Refresher), defaultFacets())
	if err != nil {
		b.Fatal(err)
	}
	h := &host{cfg: config{Facets: set}}
	h.sealer = nil // echo needs no sealer
	n, err := negotiate.Compile(set, policy.Policy{})
	if err != nil {
		b.Fatal(err)
	}
	mw, err := mcphttp.New(n, mcphttp.Options{Sink: events.NewJSONLines(io.Discard)})
	if err != nil {
		b.Fatal(err)
	}
	serve := func(handler http.Handler) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(ln)
		b.Cleanup(func() { srv.Close() })
		return "http://" + ln.Addr().String() + "/mcp"
	}
	return serve(h.mcpHandler()), serve(mw.Wrap(h.mcpHandler()))
}

// echoRequest is one 2026-07-28-era tools/call, as the go-sdk client sends
// it: headers and _meta naming the revision.
const echoBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`

func post(b *testing.B, client *http.Client, url string) {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(echoBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "echo")
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"text":"hi (served at MCP `) {
		b.Fatalf("%d %s", resp.StatusCode, body)
	}
}

// BenchmarkMCPRequest is one MCP request (a stateless tools/call of echo)
// through the go-sdk v1.8.0 streamable handler over loopback, with and
// without the middleware, in the same run and over the same kept-alive
// connection per server. The "interleaved" run alternates the two
// request by request, so that drift in the machine's load hits both alike,
// and reports each one's mean and the overhead as metrics.
func BenchmarkMCPRequest(b *testing.B) {
	bare, negotiated := benchServers(b)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	b.Run("without", func(b *testing.B) {
		for b.Loop() {
			post(b, client, bare)
		}
	})
	b.Run("with", func(b *testing.B) {
		for b.Loop() {
			post(b, client, negotiated)
		}
	})
	b.Run("interleaved", func(b *testing.B) {
		var without, with time.Duration
		for b.Loop() {
			t0 := time.Now()
			post(b, client, bare)
			t1 := time.Now()
			post(b, client, negotiated)
			without += t1.Sub(t0)
			with += time.Since(t1)
		}
		b.ReportMetric(float64(without.Nanoseconds())/float64(b.N), "without-ns/req")
		b.ReportMetric(float64(with.Nanoseconds())/float64(b.N), "with-ns/req")
		b.ReportMetric(100*float64(with-without)/float64(without), "overhead-%")
	})
}
