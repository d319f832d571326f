package report

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopneg/wopneg/internal/report"
)

// ReadPostgres adds to t every negotiation.decided event in the tables
// examples/pgsink and examples/pgbatch write in schema (empty: the
// connection's search_path): the run events of wopneg_run_events and the
// host events of wopneg_host_events, of every tenant. It reads each
// row's payload with the module's strict reader; a payload that does not
// read is counted as bad, named by its table and event id's row, and
// reading goes on. A table that does not exist is skipped (a host that
// never recorded a run event has none). It returns the rows read, and
// the database's error, wrapped.
func ReadPostgres(ctx context.Context, pool *pgxpool.Pool, schema string, t *report.Tally) (int64, error) {
	if pool == nil {
		return 0, errors.New("report: no pool")
	}
	var rows int64
	for _, table := range []string{"wopneg_run_events", "wopneg_host_events"} {
		name := pgx.Identifier{table}
		if schema != "" {
			name = pgx.Identifier{schema, table}
		}
		var exists bool
		if err := pool.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", name.Sanitize()).Scan(&exists); err != nil {
			return rows, fmt.Errorf("report: %s: %w", name.Sanitize(), err)
		}
		if !exists {
			continue
		}
		// The text of the jsonb payload: its keys reordered by PostgreSQL,
		// its values exactly as the sink wrote them.
		q := `SELECT payload::text FROM ` + name.Sanitize() + ` WHERE type = 'negotiation.decided'`
		res, err := pool.Query(ctx, q)
		if err != nil {
			return rows, fmt.Errorf("report: %s: %w", name.Sanitize(), err)
		}
		var n int64
		for res.Next() {
			var payload []byte
			if err := res.Scan(&payload); err != nil {
				res.Close()
				return rows, fmt.Errorf("report: %s: %w", name.Sanitize(), err)
			}
			n++
			t.AddPayload(payload, table, n)
		}
		res.Close()
		if err := res.Err(); err != nil {
			return rows, fmt.Errorf("report: %s: %w", name.Sanitize(), err)
		}
		rows += n
	}
	return rows, nil
}
