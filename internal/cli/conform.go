package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/wopneg/wopneg/internal/conform"
	"github.com/wopneg/wopneg/internal/conform/verdict"
)

// conformCmd runs the OpenWOP v2 interop scenarios against a running host.
func conformCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("conform", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "write the report as JSON")
	token := fs.String("token", "", "bearer token for the host's authenticated legs")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: wopneg conform [--json] [--token BEARER] BASEURL")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := conform.Run(ctx, conform.Options{Base: fs.Arg(0), Token: *token})
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
