package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/wopneg/wopneg/internal/report"
)

// reportCmd reads a record of negotiation.decided events as JSON lines,
// from the files named or stdin, and writes what it holds per protocol and
// period, and what each --floor or --drop would have refused. Bad lines
// are counted and named, never fatal: it exits 0 when the report was
// written, 2 on a usage error or a file that cannot be read.
func reportCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c report.Command
	c.Bind(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, reportUsage)
		return 2
	}
	t, err := c.Tally()
	if err != nil {
		return fail(stderr, 2, fmt.Errorf("report: %w", err))
	}
	files := fs.Args()
	if len(files) == 0 {
		files = []string{"-"}
	}
	if err := report.ReadFiles(t, files, stdin); err != nil {
		return fail(stderr, 2, fmt.Errorf("report: %w", err))
	}
	if err := c.Write(stdout, t.Report()); err != nil {
		return fail(stderr, 2, fmt.Errorf("report: %w", err))
	}
	return 0
}

const reportUsage = "usage: wopneg report [--json] [--period day|week|month] [--floor [PROTO=]VERSION]... [--drop [PROTO=]VERSION]... [--names FILE] [FILE|-]..."
