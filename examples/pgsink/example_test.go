package pgsink_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/examples/pgsink"
	"github.com/wopneg/wopneg/negotiate"
)

// A host records every negotiation in PostgreSQL and serves a run's events
// in order. (Not run by go test: it needs a database; the tests run the same
// calls against one.)
func Example() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("WOPNEG_PG_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	store, err := pgsink.New(ctx, pool, pgsink.Options{})
	if err != nil {
		log.Fatal(err)
	}
	// The request path: a bounded buffer in front of the database, which
	// numbers each run's events as it inserts them.
	sink := events.NewAsync(store, events.AsyncOptions{})
	defer sink.Close()

	var n *negotiate.Negotiator // compiled from the host's facets, with policy.RequireAudit
	var offer negotiate.Offer
	run := negotiate.Destination{RunID: "acme/audit-0123456789abcdef"}
	if outcome, err := n.DecideAndRecord(ctx, sink, run, nil, offer); err != nil {
		log.Printf("not recorded: %v; answering %v", err, outcome.Err())
	}

	// GET /runs/{runId}/events/poll
	page, err := store.Poll(ctx, run.RunID, 0, 100)
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range page {
		fmt.Println(e.Sequence, e.Payload.Outcome)
	}
}
