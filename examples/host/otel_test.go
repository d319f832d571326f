package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// exportedSpan is what the stdout trace exporter writes of a span, as far
// as the test reads it.
type exportedSpan struct {
	Name       string
	SpanKind   int
	Attributes []struct {
		Key   string
		Value struct{ Value any }
	}
}

// TestOTelStdout: with -otel-stdout, the self-test's negotiations are
// exported to stdout: the server span of its server/discover carries the
// decision under openwop.negotiation and the exchange Observe adds, and
// the decision counter is exported when the host stops.
func TestOTelStdout(t *testing.T) {
	cfg, selftest, err := parseFlags([]string{"-otel-stdout", "-selftest"}, io.Discard)
	if err != nil || !cfg.OTelStdout || !selftest {
		t.Fatalf("parseFlags = %+v, %t, %v", cfg, selftest, err)
	}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), cfg, selftest, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	var discover map[string]any
	metric := false
	for _, line := range strings.Split(stdout.String(), "\n") {
		if strings.Contains(line, `"openwop.negotiation.decisions"`) {
			metric = true
		}
		var s exportedSpan
		if json.Unmarshal([]byte(line), &s) != nil || s.Name == "" {
			continue
		}
		attrs := map[string]any{}
		for _, a := range s.Attributes {
			attrs[a.Key] = a.Value.Value
		}
		if attrs["mcp.method.name"] == "server/discover" && s.SpanKind == 2 { // trace.SpanKindServer
			discover = attrs
			t.Logf("exported span %q: %v", s.Name, attrs)
		}
	}
	want := map[string]any{
		"openwop.negotiation.protocol": "mcp", "openwop.negotiation.outcome": "accepted",
		"openwop.negotiation.requested": "2026-07-28", "openwop.negotiation.negotiated": "2026-07-28",
		"openwop.negotiation.reason": "ok", "openwop.negotiation.rule": "accept",
		"mcp.protocol.version": "2026-07-28",
	}
	for k, v := range want {
		if discover[k] != v {
			t.Errorf("the server/discover span's %s = %v, want %v (span %v)", k, discover[k], v, discover)
		}
	}
	if !metric {
		t.Errorf("stdout holds no openwop.negotiation.decisions metric:\n%s", stdout.String())
	}
}

// brokenStdout refuses every write, as a closed pipe does.
type brokenStdout struct{}

func (brokenStdout) Write([]byte) (int, error) { return 0, errors.New("stdout is gone") }

// With -otel-stdout, a telemetry shutdown that fails (the last export of
// the decision counter cannot be written) is run's error, so that the
// host exits 1: the deferred shutdown assigns run's own err, not a copy
// of it.
func TestOTelStdoutShutdownFailureIsAnError(t *testing.T) {
	cfg, _, err := parseFlags([]string{"-otel-stdout", "-port", "0"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // serve, then stop at once
	var stderr bytes.Buffer
	err = run(ctx, cfg, false, brokenStdout{}, &stderr)
	if err == nil || !strings.Contains(err.Error(), "stdout is gone") {
		t.Errorf("run = %v, want the failed export's error\n%s", err, stderr.String())
	}
}
