package pgbatch_test

import (
	"context"
	"log"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/examples/pgbatch"
	"github.com/wopneg/wopneg/negotiate"
)

// A busy host that requires the audit records every negotiation in
// PostgreSQL through an events.Async in the acknowledged mode: each
// decision stands once the transaction holding its event committed, the
// requests that come meanwhile share the next transaction (up to 512
// events), and a database that is down (or slower than a second) makes
// the decision an internal_error rather than an answer with no record.
// (Not run by go test: it needs a database; the tests run the same calls
// against one.)
func Example() {
	var pool *pgxpool.Pool // the host's pool, from pgxpool.New
	ctx := context.Background()
	w, err := pgbatch.New(ctx, pool, pgbatch.Options{}) // creates the tables when missing
	if err != nil {
		log.Fatal(err)
	}
	audit := events.NewAsync(w, events.AsyncOptions{
		Batch:       512,
		Acknowledge: time.Second,
		Logger:      slog.Default(), // drops and retries, at most once per 10 s
		OnError: func(e events.Event, err error) {
			log.Printf("audit event %s not written: %v", e.ID, err)
		},
	})
	defer func() {
		// Writes everything accepted, then reports the first failure.
		if err := audit.Close(); err != nil {
			log.Print(err)
		}
		s := audit.Stats()
		log.Printf("audit: %d recorded, %d failed, %d dropped; %d failed writes", s.Recorded, s.Failed, s.Dropped, w.BatchErrors())
	}()

	var n *negotiate.Negotiator // compiled from the host's facets, with policy.RequireAudit
	var offer negotiate.Offer
	outcome, err := n.DecideAndRecord(ctx, audit, negotiate.Destination{RunID: "acme/audit-0123456789abcdef"}, nil, offer)
	if err != nil {
		log.Printf("not recorded: %v; answering %v", err, outcome.Err())
	}
}
