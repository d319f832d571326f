// Package pgsink records negotiation.decided events in PostgreSQL through
// pgx: an [events.Log], the host's event log, which events.LogHandler
// serves as GET /runs/{runId}/events/poll and GET /host/events, tenant by
// tenant.
//
// Three tables, created by [New] when they do not exist:
//
//   - wopneg_run_events: one row per run event, primary key (run_id,
//     sequence), event_id unique. Append-only: a trigger refuses UPDATE,
//     DELETE and TRUNCATE.
//   - wopneg_run_sequences: the next sequence of each run.
//   - wopneg_host_events: one row per host event (RFC 0242 §B), in the
//     order recorded (an identity column), also append-only, with the
//     tenant it belongs to (Event.Tenant; ” for an unauthenticated
//     exchange, which no reader is given). A host event has no sequence.
//     New adds the tenant column to a table made before it had one.
//
// A run belongs to its run id's tenant, the first segment of
// [anon:]tenant/id, so the run tables need no tenant column.
//
// # Sequences
//
// The database numbers run events, in the statement that inserts them:
// an INSERT … ON CONFLICT DO UPDATE … RETURNING on the run's counter row
// and the INSERT of the event, in one statement and so one transaction.
// The counter row stays locked until that transaction ends, so concurrent
// writers on one run take turns, each run's events commit in sequence
// order, and a failed insert rolls its number back with it: the numbering
// has no gap and no repeat under any number of writers and processes, and
// a reader never sees a gap that fills later. Writers on different runs do
// not wait for each other.
//
// Timestamps are stored as timestamptz, to the microsecond, as PostgreSQL
// keeps them; the payload is stored as jsonb and comes back exactly.
package pgsink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/examples/internal/pgschema"
)

// DefaultPollLimit is the page size of [Sink.Poll] and [Sink.AllHostEvents]
// when the caller names none.
const DefaultPollLimit = 1000

// Options configures a [Sink].
type Options struct {
	// Schema holds the tables, created when missing. Empty means the
	// connection's search_path, usually public.
	Schema string
}

// Sink is an [events.Sink] over PostgreSQL. It is safe for concurrent use,
// as its pool is. It does not own the pool: close the pool yourself.
type Sink struct {
	pool *pgxpool.Pool
	sql  statements
}

type statements struct {
	insertRun, insertHost, poll, hostEvents, last, tenantAfter, tenantPosition, tenantNewest string
}

// schemaCurrent is true when every table, column, index and trigger New
// creates is there: the tables ($1 runs, $2 hosts, $3 sequences), the
// tenant column and its index ($4), and the append-only trigger on both
// event tables.
const schemaCurrent = `SELECT to_regclass($3) IS NOT NULL
	AND to_regclass($4) IS NOT NULL
	AND EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($2) AND attname = 'tenant' AND NOT attisdropped)
	AND (SELECT count(*) FROM pg_trigger WHERE tgname = 'wopneg_append_only' AND tgrelid IN (to_regclass($1), to_regclass($2))) = 2`

// migrationLock is the advisory lock key New holds while it creates the
// tables, so that hosts starting together do not race on CREATE.
const migrationLock = 0x776f706e6567 // "wopneg"

// New creates the tables when they do not exist and returns a Sink over
// pool.
func New(ctx context.Context, pool *pgxpool.Pool, opts Options) (*Sink, error) {
	if pool == nil {
		return nil, errors.New("pgsink: no pool")
	}
	q := pgschema.Qualifier(opts.Schema)
	runs, seqs, hosts, guard := q("wopneg_run_events"), q("wopneg_run_sequences"), q("wopneg_host_events"), q("wopneg_append_only")

	ddl := pgschema.DDL(opts.Schema)
	ddl = append(ddl,
		`CREATE TABLE IF NOT EXISTS `+runs+` (
			run_id         text        NOT NULL,
			sequence       bigint      NOT NULL CHECK (sequence >= 0),
			event_id       text        NOT NULL UNIQUE,
			type           text        NOT NULL,
			"timestamp"    timestamptz NOT NULL,
			schema_version integer     NOT NULL CHECK (schema_version >= 1),
			node_id        text,
			engine_version bigint      CHECK (engine_version >= 0),
			causation_id   text,
			payload        jsonb       NOT NULL,
			recorded_at    timestamptz NOT NULL DEFAULT now(),
			PRIMARY KEY (run_id, sequence)
		)`,
		`CREATE TABLE IF NOT EXISTS `+seqs+` (
			run_id text   PRIMARY KEY,
			next   bigint NOT NULL CHECK (next >= 1)
		)`,
		`CREATE TABLE IF NOT EXISTS `+hosts+` (
			position     bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
			event_id     text        NOT NULL UNIQUE,
			type         text        NOT NULL,
			"timestamp"  timestamptz NOT NULL,
			delivery     text        NOT NULL CHECK (delivery IN ('durable', 'ephemeral')),
			workspace_id text,
			payload      jsonb       NOT NULL,
			recorded_at  timestamptz NOT NULL DEFAULT now()
		)`,
		`ALTER TABLE `+hosts+` ADD COLUMN IF NOT EXISTS tenant text NOT NULL DEFAULT ''`,
		`CREATE INDEX IF NOT EXISTS wopneg_host_events_tenant ON `+hosts+` (tenant, position)`,
		`CREATE OR REPLACE FUNCTION `+guard+`() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			RAISE EXCEPTION 'wopneg: % is append-only', TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
		END $$`,
		`CREATE OR REPLACE TRIGGER wopneg_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON `+runs+`
			FOR EACH STATEMENT EXECUTE FUNCTION `+guard+`()`,
		`CREATE OR REPLACE TRIGGER wopneg_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON `+hosts+`
			FOR EACH STATEMENT EXECUTE FUNCTION `+guard+`()`,
	)
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrationLock)); err != nil {
			return err
		}
		// A schema that is already current is left alone: its DDL would
		// take ACCESS EXCLUSIVE and SHARE ROW EXCLUSIVE locks on tables
		// that other replicas are writing, and deadlock with their batches.
		var current bool
		if err := tx.QueryRow(ctx, schemaCurrent, runs, hosts, seqs, q("wopneg_host_events_tenant")).Scan(&current); err != nil {
			return err
		}
		if current {
			return nil
		}
		for _, stmt := range ddl {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pgsink: creating the tables: %w", err)
	}
	return &Sink{pool: pool, sql: statements{
		insertRun: `WITH seq AS (
				INSERT INTO ` + seqs + ` AS s (run_id, next) VALUES ($1, 1)
				ON CONFLICT (run_id) DO UPDATE SET next = s.next + 1
				RETURNING s.next - 1 AS n
			)
			INSERT INTO ` + runs + ` (run_id, sequence, event_id, type, "timestamp", schema_version, node_id, engine_version, causation_id, payload)
			SELECT $1, seq.n, $2, $3, $4, $5, $6, $7, $8, $9 FROM seq
			RETURNING sequence`,
		insertHost: `INSERT INTO ` + hosts + ` (event_id, type, "timestamp", delivery, workspace_id, payload, tenant)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		poll: `SELECT event_id, type, "timestamp", sequence, schema_version, node_id, engine_version, causation_id, payload
			FROM ` + runs + ` WHERE run_id = $1 AND sequence >= $2 ORDER BY sequence LIMIT $3`,
		hostEvents: `SELECT position, event_id, type, "timestamp", delivery, workspace_id, payload, tenant
			FROM ` + hosts + ` WHERE position > $1 ORDER BY position LIMIT $2`,
		last:           `SELECT next - 1 FROM ` + seqs + ` WHERE run_id = $1`,
		tenantPosition: `SELECT position FROM ` + hosts + ` WHERE event_id = $1 AND tenant = $2`,
		tenantAfter: `SELECT position, event_id, type, "timestamp", delivery, workspace_id, payload, tenant
			FROM ` + hosts + ` WHERE tenant = $1 AND position > $2 ORDER BY position LIMIT $3`,
		tenantNewest: `SELECT * FROM (SELECT position, event_id, type, "timestamp", delivery, workspace_id, payload, tenant
			FROM ` + hosts + ` WHERE tenant = $1 ORDER BY position DESC LIMIT $2) newest ORDER BY position`,
	}}, nil
}

// Emit records e: a run event in its run's log under the next sequence,
// assigned in the inserting transaction; a host event in the host-event
// table. It refuses an invalid event and a context already done, and
// returns the database's error, wrapped, when the row was not written.
func (s *Sink) Emit(ctx context.Context, e events.Event) error {
	if s == nil || s.pool == nil {
		return events.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := e.Validate(); err != nil {
		return err
	}
	payload, err := json.Marshal(e.Payload)
	if err != nil {
		return fmt.Errorf("pgsink: encoding the payload: %w", err)
	}
	if e.RunID == "" {
		_, err := s.pool.Exec(ctx, s.sql.insertHost, e.ID, eventType, e.Time, delivery, nullable(e.WorkspaceID), string(payload), e.Tenant)
		if err != nil {
			return fmt.Errorf("pgsink: recording host event %s: %w", e.ID, err)
		}
		return nil
	}
	var engine *int64
	if e.HasEngineVersion {
		engine = &e.EngineVersion
	}
	var seq int64
	err = s.pool.QueryRow(ctx, s.sql.insertRun, e.RunID, e.ID, eventType, e.Time, e.SchemaVersion,
		nullable(e.NodeID), engine, nullable(e.CausationID), string(payload)).Scan(&seq)
	if err != nil {
		return fmt.Errorf("pgsink: recording event %s on run %s: %w", e.ID, e.RunID, err)
	}
	return nil
}

// Poll returns the events of run runID from sequence from on, in sequence
// order, at most limit of them (DefaultPollLimit when limit ≤ 0), whatever
// its tenant: an operator's read. A caller that got events up to sequence
// n asks next from n+1. Rows that no longer validate are an error, not an
// event. A host's callers read through [Sink.RunEvents] instead.
func (s *Sink) Poll(ctx context.Context, runID string, from int64, limit int) ([]events.Event, error) {
	if limit <= 0 {
		limit = DefaultPollLimit
	}
	rows, err := s.pool.Query(ctx, s.sql.poll, runID, from, limit)
	if err != nil {
		return nil, fmt.Errorf("pgsink: polling run %s: %w", runID, err)
	}
	defer rows.Close()
	var out []events.Event
	for rows.Next() {
		var (
			e               events.Event
			typ             string
			node, causation *string
			engine          *int64
			payload         []byte
		)
		if err := rows.Scan(&e.ID, &typ, &e.Time, &e.Sequence, &e.SchemaVersion, &node, &engine, &causation, &payload); err != nil {
			return nil, fmt.Errorf("pgsink: polling run %s: %w", runID, err)
		}
		e.RunID = runID
		e.Tenant = runTenant(runID)
		e.Time = e.Time.UTC()
		e.HasSequence = true
		if node != nil {
			e.NodeID = *node
		}
		if causation != nil {
			e.CausationID = *causation
		}
		if engine != nil {
			e.EngineVersion, e.HasEngineVersion = *engine, true
		}
		if err := decode(&e, typ, "", payload); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgsink: polling run %s: %w", runID, err)
	}
	return out, nil
}

// RunEvents implements [events.Log]: the events of run runID above
// sequence after, at most limit of them, and the run's last sequence, when
// the run is tenant's; nothing and -1 otherwise, as for a run that does
// not exist. The events returned are never past the last sequence
// reported.
func (s *Sink) RunEvents(ctx context.Context, tenant, runID string, after int64, limit int) ([]events.Event, int64, error) {
	if tenant == "" || runTenant(runID) != tenant {
		return nil, -1, nil
	}
	var last int64
	err := s.pool.QueryRow(ctx, s.sql.last, runID).Scan(&last)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, -1, nil
	}
	if err != nil {
		return nil, -1, fmt.Errorf("pgsink: reading run %s: %w", runID, err)
	}
	if limit < 1 || after >= last {
		return nil, last, nil
	}
	// The counter and the event commit together, so every event up to
	// last is there to read.
	evs, err := s.Poll(ctx, runID, max(after+1, 0), int(min(int64(limit), last-max(after, -1))))
	return evs, last, err
}

// HostEvents implements [events.Log]: tenant's host events recorded after
// the one whose eventId is afterID, or its newest limit when afterID is
// empty or not one of tenant's.
func (s *Sink) HostEvents(ctx context.Context, tenant, afterID string, limit int) ([]events.Event, error) {
	if tenant == "" || limit < 1 {
		return nil, nil
	}
	if afterID != "" {
		var position int64
		err := s.pool.QueryRow(ctx, s.sql.tenantPosition, afterID, tenant).Scan(&position)
		if err == nil {
			evs, _, err := s.hostRows(ctx, s.sql.tenantAfter, position, tenant, position, limit)
			return evs, err
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return nil, fmt.Errorf("pgsink: reading host events: %w", err)
		}
	}
	evs, _, err := s.hostRows(ctx, s.sql.tenantNewest, 0, tenant, limit)
	return evs, err
}

// AllHostEvents returns the host events of every tenant recorded after
// position after (0 for the first), in the order recorded, at most limit
// of them (DefaultPollLimit when limit ≤ 0), and the position of the last
// one returned, to pass as after for the next page: an operator's read. A
// host's callers read through [Sink.HostEvents] instead.
func (s *Sink) AllHostEvents(ctx context.Context, after int64, limit int) ([]events.Event, int64, error) {
	if limit <= 0 {
		limit = DefaultPollLimit
	}
	return s.hostRows(ctx, s.sql.hostEvents, after, after, limit)
}

// hostRows reads host-event rows with query and args; after is the
// position to report when there are none.
func (s *Sink) hostRows(ctx context.Context, query string, after int64, args ...any) ([]events.Event, int64, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, after, fmt.Errorf("pgsink: reading host events: %w", err)
	}
	defer rows.Close()
	var out []events.Event
	for rows.Next() {
		var (
			e             events.Event
			typ, delivery string
			workspace     *string
			payload       []byte
		)
		if err := rows.Scan(&after, &e.ID, &typ, &e.Time, &delivery, &workspace, &payload, &e.Tenant); err != nil {
			return nil, after, fmt.Errorf("pgsink: reading host events: %w", err)
		}
		e.Time = e.Time.UTC()
		if workspace != nil {
			e.WorkspaceID = *workspace
		}
		if err := decode(&e, typ, delivery, payload); err != nil {
			return nil, after, err
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, after, fmt.Errorf("pgsink: reading host events: %w", err)
	}
	return out, after, nil
}

// The type of every event the package carries, and the delivery of every
// host event, as the tables store them.
const (
	eventType = "negotiation.decided"
	delivery  = "durable"
)

// runTenant is the tenant of a tenant-bound run id, [anon:]tenant/id.
func runTenant(runID string) string {
	tenant, _, _ := strings.Cut(strings.TrimPrefix(runID, "anon:"), "/")
	return tenant
}

// decode fills e's payload from its stored JSON and checks the whole event,
// its stored type and delivery included (a run event's row has none), so
// that a row edited behind the trigger's back is reported, not served.
func decode(e *events.Event, typ, storedDelivery string, payload []byte) error {
	if typ != eventType || e.RunID == "" && storedDelivery != delivery {
		return fmt.Errorf("pgsink: stored event %s: type %q, delivery %q: want a durable negotiation.decided", e.ID, typ, storedDelivery)
	}
	if err := json.Unmarshal(payload, &e.Payload); err != nil {
		return fmt.Errorf("pgsink: stored event %s: %w", e.ID, err)
	}
	if err := e.Validate(); err != nil {
		return fmt.Errorf("pgsink: stored event %s: %w", e.ID, err)
	}
	return nil
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// compile-time check that Sink is an event log.
var _ events.Log = (*Sink)(nil)
