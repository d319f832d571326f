package report_test

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/examples/pgbatch"
	"github.com/wopneg/wopneg/examples/pgsink"
	"github.com/wopneg/wopneg/facets"
	internal "github.com/wopneg/wopneg/internal/report"
	"github.com/wopneg/wopneg/report"
)

// pool connects to the server at WOPNEG_PG_URL. Without one the test is
// skipped, except in CI (CI=true), where it fails: .ci/run starts a server.
func pool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	url := os.Getenv("WOPNEG_PG_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("WOPNEG_PG_URL is not set, and CI needs the PostgreSQL test to run")
		}
		t.Skip("WOPNEG_PG_URL is not set")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := pgxpool.New(ctx, url)
	if err == nil {
		err = p.Ping(ctx)
	}
	if err != nil {
		t.Fatalf("PostgreSQL at WOPNEG_PG_URL: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// freshSchema names a schema of its own for one test, dropped when the
// test ends.
func freshSchema(t *testing.T, p *pgxpool.Pool) string {
	t.Helper()
	schema := "wopneg_report_" + strings.ToLower(crand.Text()[:12])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := p.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	return schema
}

// record makes n valid exchanges of both protocols, from a few peers,
// over three months.
func record(n int) []events.NegotiationDecided {
	rng := rand.New(rand.NewPCG(5, 6))
	versions := map[facets.Protocol][]string{
		facets.ProtocolA2A: {"0.3", "1.0"},
		facets.ProtocolMCP: {"2025-06-18", "2025-11-25", "2026-07-28"},
	}
	var peers []string
	for i := range 9 {
		d, _ := events.PeerDigest(fmt.Sprintf("https://peer-%d.example", i))
		peers = append(peers, d, "")
	}
	at := time.Date(2026, 9, 1, 0, 0, 0, 123456789, time.UTC)
	out := make([]events.NegotiationDecided, n)
	for i := range out {
		proto := []facets.Protocol{facets.ProtocolA2A, facets.ProtocolMCP}[rng.IntN(2)]
		vs := versions[proto]
		p := events.NegotiationDecided{Protocol: proto, Floor: vs[0], PeerDigest: peers[rng.IntN(len(peers))], At: at.Add(time.Duration(i) * 90 * time.Minute)}
		if rng.IntN(4) > 0 {
			p.Outcome, p.Reason, p.Version = "accepted", events.ReasonOK, vs[rng.IntN(len(vs))]
			p.Requested = []string{"", p.Version, vs[len(vs)-1]}[rng.IntN(3)]
		} else {
			p.Outcome, p.Reason = "refused", []string{events.ReasonBelowFloor, events.ReasonUnsupported}[rng.IntN(2)]
		}
		out[i] = p
	}
	return out
}

// TestPostgresMatchesJSONLines writes one record to PostgreSQL, through
// pgsink (one row at a time) and pgbatch (in batches), as run events and
// host events, and the same record as JSON lines: the report read from
// the database is the report read from the lines, which the core's tests
// hold to a direct count, and its totals are counted here directly too.
func TestPostgresMatchesJSONLines(t *testing.T) {
	p := pool(t)
	schema := freshSchema(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sink, err := pgsink.New(ctx, p, pgsink.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	batches, err := pgbatch.New(ctx, p, pgbatch.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	// Before any row is written, the report of the empty tables is empty.
	empty, _ := internal.New(internal.Options{})
	if rows, err := report.ReadPostgres(ctx, p, schema, empty); err != nil || rows != 0 {
		t.Fatalf("empty tables: %d rows, %v", rows, err)
	}

	payloads := record(3000)
	var lines bytes.Buffer
	jsonl := events.NewJSONLines(&lines)
	var batch []events.Event
	for i, payload := range payloads {
		var e events.Event
		if i%3 == 0 {
			e, err = events.NewRunEvent(fmt.Sprintf("acme/RUN%016d", i%7), payload)
		} else {
			e, err = events.NewHostEvent("", payload)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := jsonl.Emit(ctx, e); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if err := sink.Emit(ctx, e); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if batch = append(batch, e); len(batch) == 200 {
			if err := batches.EmitBatch(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := batches.EmitBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}

	changes := []internal.Change{{Protocol: facets.ProtocolA2A, Floor: "1.0"}, {Protocol: facets.ProtocolMCP, Drop: "2025-06-18"}}
	fromDB, _ := internal.New(internal.Options{Period: internal.Week, Changes: changes})
	rows, err := report.ReadPostgres(ctx, p, schema, fromDB)
	if err != nil {
		t.Fatal(err)
	}
	fromLines, _ := internal.New(internal.Options{Period: internal.Week, Changes: changes})
	if err := fromLines.ReadLines(&lines, "record"); err != nil {
		t.Fatal(err)
	}
	db, want := fromDB.Report(), fromLines.Report()
	if rows != int64(len(payloads)) || db.Events != rows || db.Bad.NotJSON+db.Bad.NotDecided != 0 {
		t.Fatalf("%d rows read, %d events, bad %+v; %d written", rows, db.Events, db.Bad, len(payloads))
	}
	if !reflect.DeepEqual(db, want) {
		t.Errorf("the report from PostgreSQL differs from the report from JSON lines:\n%+v\n%+v", db, want)
	}
	accepted := map[facets.Protocol]int64{}
	for _, p := range payloads {
		if p.Outcome == "accepted" {
			accepted[p.Protocol]++
		}
	}
	for _, pr := range db.Protocols {
		if pr.Accepted != accepted[pr.Protocol] {
			t.Errorf("%s: %d accepted in the report, %d written", pr.Protocol, pr.Accepted, accepted[pr.Protocol])
		}
	}
}

// TestPostgresBadPayload checks that a row whose payload does not read is
// counted and named, and the rest read.
func TestPostgresBadPayload(t *testing.T) {
	p := pool(t)
	schema := freshSchema(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sink, err := pgsink.New(ctx, p, pgsink.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	e, err := events.NewHostEvent("", record(1)[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := sink.Emit(ctx, e); err != nil {
		t.Fatal(err)
	}
	hosts := pgx.Identifier{schema, "wopneg_host_events"}.Sanitize()
	if _, err := p.Exec(ctx, `INSERT INTO `+hosts+` (event_id, type, "timestamp", delivery, payload) VALUES ('BADBADBADBADBADBAD', 'negotiation.decided', now(), 'durable', '{"protocol":"grpc"}')`); err != nil {
		t.Fatal(err)
	}
	tally, _ := internal.New(internal.Options{})
	rows, err := report.ReadPostgres(ctx, p, schema, tally)
	r := tally.Report()
	if err != nil || rows != 2 || r.Events != 1 || r.Bad.NotDecided != 1 || r.Bad.Lines[0].Source != "wopneg_host_events" {
		t.Errorf("ReadPostgres: %d rows, %v; report %+v", rows, err, r)
	}
	if _, err := report.ReadPostgres(ctx, nil, schema, tally); err == nil {
		t.Error("ReadPostgres with no pool returned no error")
	}
	cancel()
	if _, err := report.ReadPostgres(ctx, p, schema, tally); err == nil {
		t.Error("ReadPostgres with its context done returned no error")
	}
}
