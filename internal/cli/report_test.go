package cli

import (
	"os"
	"strings"
	"testing"
)

// TestReportCommand runs wopneg report as a user would: over files, over
// stdin, and with the mistakes that exit 2. The report itself is tested in
// internal/report, over the same records.
func TestReportCommand(t *testing.T) {
	record, err := os.ReadFile("../report/testdata/edges.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "", "report", "--floor", "a2a=1.0", "../report/testdata/edges.jsonl")
	if code != 0 || !strings.HasPrefix(stdout, "4 events in 8 lines; 4 bad") || !strings.Contains(stdout, "floor a2a 1.0: refuses 2 of 2 accepted exchanges") || stderr != "" {
		t.Errorf("report over a file: exit %d\n%s\nstderr %s", code, stdout, stderr)
	}
	code, stdoutStdin, _ := runCLI(t, string(record), "report", "--floor", "a2a=1.0")
	if code != 0 || strings.ReplaceAll(stdoutStdin, "stdin:", "../report/testdata/edges.jsonl:") != stdout {
		t.Errorf("report over stdin (exit %d) differs from over the file:\n%s", code, stdoutStdin)
	}
	code, stdout, _ = runCLI(t, string(record), "report", "--json", "-")
	if code != 0 || !strings.Contains(stdout, `"notJson": 2`) {
		t.Errorf("report --json: exit %d\n%s", code, stdout)
	}
	for _, args := range [][]string{
		{"report", "--floor", "a2a=junk"},
		{"report", "--period", "year"},
		{"report", "no-such-record.jsonl"},
		{"report", "--names", "no-such-names.txt", "../report/testdata/edges.jsonl"},
	} {
		if code, _, stderr := runCLI(t, "", args...); code != 2 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a reason", args, code, stderr)
		}
	}
	if code, stdout, _ := runCLI(t, "", "report", "-h"); code != 0 || stdout != "" {
		t.Errorf("report -h: exit %d, stdout %q", code, stdout)
	}
}
