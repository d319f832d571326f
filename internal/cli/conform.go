package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/wopneg/wopneg/internal/conform"
	"github.com/wopneg/wopneg/internal/conform/verdict"
)

// conformCmd runs the OpenWOP v2 interop scenarios against a running host.
func conformCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("conform", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "write the report as JSON")
	token := fs.String("token", "", "bearer token for the host's authenticated legs")
	nowFlag := fs.String("now", "", "the clock the refresh SLA is judged by: a full-date (its midnight UTC) or an RFC 3339 time; empty is the wall clock")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: wopneg conform [--json] [--token BEARER] [--now DATE|TIME] BASEURL")
		return 2
	}
	now, err := parseNow(*nowFlag)
	if err != nil {
		return fail(stderr, 2, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := conform.Run(ctx, conform.Options{Base: fs.Arg(0), Token: *token, Now: func() time.Time { return now }})
	if err != nil {
		return fail(stderr, 2, err)
	}
	if *asJSON {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteTable(stdout)
	}
	if err != nil {
		return fail(stderr, 2, err)
	}
	if rep.Counts()[verdict.Fail] > 0 {
		return 1
	}
	return 0
}
