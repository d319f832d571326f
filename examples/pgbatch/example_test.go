package pgbatch_test

import (
	"context"
	"log"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/examples/pgbatch"
	"github.com/wopneg/wopneg/negotiate"
)

// A busy host records every negotiation in PostgreSQL through an
// events.Async, which keeps the request path off the database and hands
// the Writer up to 512 queued events per transaction. (Not run by go test:
// it needs a database; the tests run the same calls against one.)
func Example() {
	var pool *pgxpool.Pool // the host's pool, from pgxpool.New
	ctx := context.Background()
	w, err := pgbatch.New(ctx, pool, pgbatch.Options{}) // creates the tables when missing
	if err != nil {
		log.Fatal(err)
	}
	audit := events.NewAsync(w, events.AsyncOptions{
		Batch: 512,
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
