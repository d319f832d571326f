package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wopneg/wopneg/examples/internal/pgtest"
)

var fleetKeys = "k1:" + base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))

// openFleet refuses what would make replicas disagree or not start.
func TestOpenFleetRefuses(t *testing.T) {
	pgURL := pgtest.URL()
	for _, tc := range []struct{ name, url, keys string }{
		{"no keys", pgURL, ""},
		{"bad keys", pgURL, "not-a-key"},
		{"bad url", "postgres://%zz", fleetKeys},
		{"no database", "postgres://wopneg:wopneg@127.0.0.1:1/wopneg?connect_timeout=1", fleetKeys},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cfg config
			if f, err := openFleet(context.Background(), tc.url, tc.keys, &cfg, nil); err == nil {
				f.Close()
				t.Fatal("openFleet succeeded")
			}
		})
	}
}

// A replica serves until its context ends (SIGTERM in main), then writes
// what it accepted and says so; its metrics are at /metrics, and it seals
// with the shared keys and refuses through the shared store.
func TestRunAsReplica(t *testing.T) {
	pool := pgtest.Connect(t, nil)
	schema := pgtest.Schema(t, pool)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	sep := "?"
	if strings.Contains(pgtest.URL(), "?") {
		sep = "&"
	}
	cfg := config{Addr: "127.0.0.1:0", Token: testToken, Facets: defaultFacets(),
		PG: pgtest.URL() + sep + "search_path=" + url.QueryEscape(schema), SharedKeys: fleetKeys}
	serveCtx, stop := context.WithCancel(ctx)
	var stderr syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(serveCtx, cfg, false, &bytes.Buffer{}, &stderr) }()
	var base string
	for deadline := time.Now().Add(20 * time.Second); base == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := regexp.MustCompile(`serving MCP on (http://[^ ]+)/mcp`).FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
		}
	}
	if base == "" {
		stop()
		t.Fatalf("the replica did not start: %v\n%s", <-done, stderr.String())
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "server/discover")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	res, err = http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	_, _ = body.ReadFrom(res.Body)
	res.Body.Close()
	for _, want := range []string{`wopneg_decisions_total{outcome="accepted",protocol="mcp",reason="ok"} 1`, "wopneg_audit_queue_depth", "wopneg_audit_write_errors_total 0"} {
		if !strings.Contains(body.String(), want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body.String())
		}
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "audit flushed: 1 recorded, 0 failed, 0 dropped") {
		t.Errorf("stderr:\n%s\nwant the one decision written", stderr.String())
	}
	if got := len(pgtest.All(t, pool, schema)); got != 1 {
		t.Errorf("%d events in the database, want 1", got)
	}
	var nonces int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{schema, "wopneg_mrtr_nonces"}.Sanitize()).Scan(&nonces); err != nil {
		t.Errorf("the replica made no shared nonce table: %v", err)
	}
}

// syncBuffer is a bytes.Buffer that run writes to while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
