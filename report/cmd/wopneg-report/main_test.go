package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	record := "../../../internal/report/testdata/record.jsonl"
	page := filepath.Join(t.TempDir(), "report.html")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--floor", "a2a=1.0", "--html", page, record}, nil, &stdout, &stderr)
	if code != 0 || !strings.HasPrefix(stdout.String(), "60 events in 60 lines") || stderr.Len() != 0 {
		t.Fatalf("exit %d\n%s\nstderr %s", code, stdout.String(), stderr.String())
	}
	html, err := os.ReadFile(page)
	if err != nil || strings.Count(string(html), "<svg") != 3 {
		t.Errorf("the HTML report (%v) does not hold 3 charts", err)
	}
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if code := run(context.Background(), []string{"--json"}, bytes.NewReader(data), &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), `"events": 60`) {
		t.Errorf("--json over stdin: exit %d\n%s", code, stdout.String())
	}
	for _, args := range [][]string{
		{"--period", "year"},
		{"--pg", "postgres://nobody@127.0.0.1:1/none?connect_timeout=1"},
		{"--html", filepath.Join(t.TempDir(), "no", "such", "dir.html"), record},
		{"no-such-record.jsonl"},
		{"--no-such-flag"},
		{"--names", "no-such-names.txt", record},
	} {
		stderr.Reset()
		if code := run(context.Background(), args, nil, new(bytes.Buffer), &stderr); code != 2 || stderr.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a reason", args, code, stderr.String())
		}
	}
	if code := run(context.Background(), []string{"-h"}, nil, new(bytes.Buffer), new(bytes.Buffer)); code != 0 {
		t.Errorf("-h: exit %d", code)
	}
}
