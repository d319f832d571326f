package pgsink_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/examples/pgsink"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
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

	var n *negotiate.Negotiator // compiled from the host's facets
	var offer negotiate.Offer
	run := negotiate.Destination{RunID: "acme/audit-0123456789abcdef"}
	if outcome, err := n.DecideAndRecord(ctx, sink, run, nil, offer); err != nil {
		log.Printf("not recorded: %v; answering %v", err, outcome.Err())
	}

	// GET /runs/{runId}/events/poll and GET /host/events, tenant by
	// tenant: events.LogHandler serves the store to the host's callers.
	http.Handle("/runs/", &events.LogHandler{Log: store, Subject: subjectOf})

	// The same read, in code: the run's events above sequence -1, as acme.
	page, last, err := store.RunEvents(ctx, "acme", run.RunID, -1, 100)
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range page {
		fmt.Println(e.Sequence, e.Payload.Outcome, "of", last)
	}
}

// subjectOf is the host's own authentication.
func subjectOf(*http.Request) *policy.Subject { return nil }
