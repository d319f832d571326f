// Package pgtest connects the examples' tests to the PostgreSQL server that
// .ci/run starts (WOPNEG_PG_URL, or the loopback default), gives each test
// a schema of its own, and reads back what the pgsink tables hold.
package pgtest

import (
	"context"
	"crypto/rand"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/examples/pgsink"
	"github.com/wopneg/wopneg/facets"
)

// DefaultURL is the loopback database that .ci/run and examples/README.md
// set up.
const DefaultURL = "postgres://wopneg:wopneg@127.0.0.1:5432/wopneg?sslmode=disable&connect_timeout=5"

// URL is WOPNEG_PG_URL, or DefaultURL when it is not set.
func URL() string {
	if url := os.Getenv("WOPNEG_PG_URL"); url != "" {
		return url
	}
	return DefaultURL
}

// Connect returns a pool of its own, closed when the test ends, with
// PrepareConn set to prepare (nil for none), through which a test makes
// the database fail. With no server the test is skipped, unless CI is set:
// CI starts one, so a missing server there is a broken pipeline.
func Connect(t testing.TB, prepare func(context.Context, *pgx.Conn) (bool, error)) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(URL())
	if err != nil {
		t.Fatalf("WOPNEG_PG_URL: %v", err)
	}
	cfg.MaxConns = 16
	cfg.PrepareConn = prepare
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err == nil {
		if err = pool.Ping(ctx); err != nil {
			pool.Close()
		}
	}
	if err != nil {
		if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
			t.Fatalf("CI is set but PostgreSQL is not reachable: %v", err)
		}
		t.Skipf("no PostgreSQL (%v): set WOPNEG_PG_URL, or start one as examples/README.md shows", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// Schema returns a schema name of the test's own, dropped when it ends.
func Schema(t testing.TB, pool *pgxpool.Pool) string {
	t.Helper()
	name := "wopneg_test_" + strings.ToLower(rand.Text())
	t.Cleanup(func() {
		if _, err := pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("dropping %s: %v", name, err)
		}
	})
	return name
}

// Payload is the i-th decision of a test: a refusal every third one, an
// acceptance otherwise, a millisecond apart.
func Payload(i int) events.NegotiationDecided {
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Millisecond)
	if i%3 == 0 {
		return events.NegotiationDecided{Protocol: facets.ProtocolMCP, Outcome: "refused", Requested: "2025-06-18",
			Reason: events.ReasonBelowFloor, Floor: "2025-11-25", At: at}
	}
	return events.NegotiationDecided{Protocol: facets.ProtocolA2A, Outcome: "accepted", Version: "1.1", Requested: "1.2",
		Reason: events.ReasonOK, Floor: "1.1", PeerDigest: strings.Repeat("ab", 32), At: at}
}

// All reads back every event in schema's pgsink tables: each run through
// Poll, page by page, in sequence order, then the host events in the order
// recorded.
func All(t testing.TB, pool *pgxpool.Pool, schema string) []events.Event {
	t.Helper()
	ctx := context.Background()
	s, err := pgsink.New(ctx, pool, pgsink.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, "SELECT DISTINCT run_id FROM "+pgx.Identifier{schema, "wopneg_run_events"}.Sanitize()+" ORDER BY run_id")
	if err != nil {
		t.Fatal(err)
	}
	runs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	const page = 100
	var out []events.Event
	for _, run := range runs {
		for from := int64(0); ; {
			got, err := s.Poll(ctx, run, from, page)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, got...)
			if len(got) < page {
				break
			}
			from = got[len(got)-1].Sequence + 1
		}
	}
	for after := int64(0); ; {
		got, next, err := s.AllHostEvents(ctx, after, page)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, got...)
		if len(got) < page {
			break
		}
		after = next
	}
	return out
}
