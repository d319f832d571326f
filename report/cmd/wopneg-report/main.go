// Command wopneg-report is `wopneg report` with two more sources and one
// more output: a record kept in PostgreSQL (--pg, the tables
// examples/pgsink and examples/pgbatch write) and an HTML report with
// charts (--html FILE), which opens offline.
//
// Usage:
//
//	wopneg-report [--pg URL] [--schema NAME] [--html FILE] [--json] [--period day|week|month]
//	              [--floor [PROTO=]VERSION]... [--drop [PROTO=]VERSION]... [--names FILE] [FILE|-]...
//
// With neither --pg nor a FILE it reads JSON lines on stdin, as wopneg
// report does. The text report (or --json) goes to stdout either way. It
// exits 0 when the report was written, 2 on a usage error, a file that
// cannot be read or a database that cannot be.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	internal "github.com/wopneg/wopneg/internal/report"
	"github.com/wopneg/wopneg/report"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wopneg-report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c internal.Command
	c.Bind(fs)
	pgURL := fs.String("pg", "", "read the record from the PostgreSQL database at `URL`")
	schema := fs.String("schema", "", "the `schema` of the tables (default: the connection's search_path)")
	htmlFile := fs.String("html", "", "write the HTML report, with charts, to `FILE`")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "wopneg-report: %v\n", err)
		return 2
	}
	t, err := c.Tally()
	if err != nil {
		return fail(err)
	}
	files := fs.Args()
	if len(files) == 0 && *pgURL == "" {
		files = []string{"-"}
	}
	if err := internal.ReadFiles(t, files, stdin); err != nil {
		return fail(err)
	}
	if *pgURL != "" {
		if err := readPostgres(ctx, *pgURL, *schema, t); err != nil {
			return fail(err)
		}
	}
	r := t.Report()
	if err := c.Write(stdout, r); err != nil {
		return fail(err)
	}
	if *htmlFile != "" {
		if err := writeHTML(*htmlFile, r); err != nil {
			return fail(err)
		}
	}
	return 0
}

func readPostgres(ctx context.Context, url, schema string, t *internal.Tally) error {
	ctx, cancel := context.WithTimeout(ctx, time.Hour)
	defer cancel()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	_, err = report.ReadPostgres(ctx, pool, schema, t)
	return err
}

func writeHTML(name string, r internal.Report) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	err = report.WriteHTML(f, r)
	return errors.Join(err, f.Close())
}
