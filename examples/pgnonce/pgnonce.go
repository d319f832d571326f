// Package pgnonce is an [mrtr.NonceStore] on PostgreSQL through pgx: the
// nonce store that the replicas of one host share, so that a requestState
// consumed on one replica is refused on every other.
//
// One table, created by [New] when it does not exist: wopneg_mrtr_nonces,
// one row per consumed nonce (primary key), with the principal it was
// issued to and its expiry.
//
// # Consuming
//
// [Store.Consume] is one INSERT … ON CONFLICT DO NOTHING: a nonce already
// there is a replay ([mrtr.ErrReplayed]). Any error of the database — it
// is down, the pool is closed, the context ended — is returned as it is,
// and [mrtr.Sealer.Open] refuses the state: the store fails closed.
//
// # Pruning
//
// [Store.Prune] deletes rows that expired more than Options.Skew ago by
// the database's clock, a batch at a time. It locks only the rows it
// deletes, so Consume, which inserts other rows, never waits for it. A
// replay of a nonce being pruned waits for the prune and then finds no
// row; so that it is not let through, a trigger refuses, after the
// insert, any nonce that expired more than Skew before the database's
// clock at that moment: a nonce pruned has, by then, expired longer ago
// than that. Skew is the furthest a replica's clock may lag the
// database's: a replica lagging further has its states refused (never
// opened twice). Give every replica the same Skew: New writes it into the
// trigger, and the last New wins. Run Prune from one goroutine per replica (or from one
// replica) every few minutes; the table holds a TTL's worth of nonces
// plus what has not been pruned yet.
//
// # Rotating keys across replicas
//
// Every replica loads its keys from its configuration ([ParseKeys]) and
// gives them to its Sealer ([mrtr.Sealer.SetKeys]); the first key seals,
// every key opens. To replace key OLD by NEW without refusing a state:
//
//  1. Add NEW last, after OLD, on every replica. OLD still seals; every
//     replica can now open what NEW will seal. Wait until all have it.
//  2. Put NEW first on every replica (they may do so one by one: each
//     opens both). From now on NEW seals.
//  3. When the TTL has passed since the last replica took step 2, remove
//     OLD: no state it sealed still opens anyway.
//
// Skipping step 1 — a replica sealing with NEW while another does not
// have it — makes that other refuse the state ([mrtr.ErrSignature]).
package pgnonce

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopneg/wopneg/examples/internal/pgschema"
	"github.com/wopneg/wopneg/negotiate/mrtr"
)

// DefaultSkew is Options.Skew when it is zero.
const DefaultSkew = time.Minute

// DefaultBatch is Options.Batch when it is zero.
const DefaultBatch = 1000

// Options configures a [Store].
type Options struct {
	// Schema holds the table, created when missing. Empty means the
	// connection's search_path, usually public.
	Schema string
	// Skew is the furthest a replica's clock may lag the database's; zero
	// means DefaultSkew. Rows are pruned Skew after they expire.
	Skew time.Duration
	// Batch is how many rows one DELETE of Prune removes at most; zero
	// means DefaultBatch.
	Batch int
}

// Store is an mrtr.NonceStore over PostgreSQL. It is safe for concurrent
// use, as its pool is. It does not own the pool: close the pool yourself.
type Store struct {
	pool           *pgxpool.Pool
	batch          int
	consume, prune string
}

// lockKey is the advisory lock New holds while it creates the table, so
// that replicas starting together do not race on CREATE.
const lockKey = 0x776f706e6f6e // "wopnon"

// staleCode is the SQLSTATE the trigger raises for a nonce that expired
// more than Skew ago: it may have been pruned, so it is a replay.
const staleCode = "WN001"

// New creates the table when it does not exist and returns a Store over
// pool.
func New(ctx context.Context, pool *pgxpool.Pool, opts Options) (*Store, error) {
	if pool == nil {
		return nil, errors.New("pgnonce: no pool")
	}
	if opts.Skew < 0 || opts.Batch < 0 {
		return nil, fmt.Errorf("pgnonce: Options.Skew %v and Options.Batch %d may not be negative", opts.Skew, opts.Batch)
	}
	if opts.Skew == 0 {
		opts.Skew = DefaultSkew
	}
	if opts.Batch == 0 {
		opts.Batch = DefaultBatch
	}
	q := pgschema.Qualifier(opts.Schema)
	table, fresh := q("wopneg_mrtr_nonces"), q("wopneg_mrtr_nonce_fresh")
	skew := fmt.Sprintf("'%d microseconds'", opts.Skew.Microseconds())
	ddl := pgschema.DDL(opts.Schema)
	ddl = append(ddl,
		`CREATE TABLE IF NOT EXISTS `+table+` (
			nonce      text        PRIMARY KEY,
			principal  text        NOT NULL,
			expires_at timestamptz NOT NULL
		)`,
		`CREATE INDEX IF NOT EXISTS wopneg_mrtr_nonces_expiry ON `+table+` (expires_at)`,
		// After the insert, so after any wait for a prune deleting the
		// same nonce: clock_timestamp() is then later than that prune.
		`CREATE OR REPLACE FUNCTION `+fresh+`() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.expires_at <= clock_timestamp() - TG_ARGV[0]::interval THEN
				RAISE EXCEPTION 'wopneg: the nonce expired too long ago to be told from a pruned one'
					USING ERRCODE = '`+staleCode+`';
			END IF;
			RETURN NULL;
		END $$`,
		`CREATE OR REPLACE TRIGGER wopneg_mrtr_nonce_fresh AFTER INSERT ON `+table+`
			FOR EACH ROW EXECUTE FUNCTION `+fresh+`(`+skew+`)`,
	)
	// One simple-protocol Exec: its statements run in one implicit
	// transaction, which holds the advisory lock to its end.
	lock := fmt.Sprintf("SELECT pg_advisory_xact_lock(%d)", lockKey)
	_, err := pool.Exec(ctx, strings.Join(append([]string{lock}, ddl...), ";\n"))
	if err != nil {
		return nil, fmt.Errorf("pgnonce: creating the table: %w", err)
	}
	return &Store{
		pool: pool, batch: opts.Batch,
		consume: `INSERT INTO ` + table + ` (nonce, principal, expires_at) VALUES ($1, $2, $3) ON CONFLICT (nonce) DO NOTHING`,
		prune: `DELETE FROM ` + table + ` WHERE ctid = ANY (ARRAY(
			SELECT ctid FROM ` + table + ` WHERE expires_at < now() - ` + skew + `::interval
			ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED))`,
	}, nil
}

// Consume records c.Nonce, or refuses it as replayed: it was consumed
// before, on this replica or another, or it expired more than Skew ago.
// Any other error means the database did not answer, and the state is
// refused.
func (s *Store) Consume(ctx context.Context, c mrtr.Claims) error {
	tag, err := s.pool.Exec(ctx, s.consume, c.Nonce, c.Principal, c.ExpiresAt)
	if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == staleCode {
		return fmt.Errorf("%w: it expired too long ago to be told from a pruned nonce", mrtr.ErrReplayed)
	}
	if err != nil {
		return fmt.Errorf("pgnonce: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return mrtr.ErrReplayed
	}
	return nil
}

// Prune deletes the rows that expired more than Skew ago, Batch at a time
// (skipping rows another Prune holds), and returns how many it deleted.
func (s *Store) Prune(ctx context.Context) (int64, error) {
	var total int64
	for {
		tag, err := s.pool.Exec(ctx, s.prune, s.batch)
		if err != nil {
			return total, fmt.Errorf("pgnonce: pruning: %w", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < int64(s.batch) {
			return total, nil
		}
	}
}

// ParseKeys reads a Sealer's keys from configuration: entries
// "ID:SECRET", separated by commas or white space, SECRET in unpadded
// base64url. The first key seals, all open; the Sealer checks their
// lengths and IDs ([mrtr.Sealer.SetKeys]). An empty configuration or an
// entry that is not ID:SECRET is an error naming the entry by its place;
// a secret is never named.
func ParseKeys(config string) ([]mrtr.Key, error) {
	var keys []mrtr.Key
	for i, entry := range strings.FieldsFunc(config, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
		// Without its colon an entry may be a bare secret: it is not
		// taken for an ID, which errors would name.
		id, secret, ok := strings.Cut(entry, ":")
		b, err := base64.RawURLEncoding.Strict().DecodeString(secret)
		if !ok || id == "" || err != nil {
			return nil, fmt.Errorf("pgnonce: key %d is not ID:SECRET, SECRET in unpadded base64url", i+1)
		}
		keys = append(keys, mrtr.Key{ID: id, Secret: b})
	}
	if len(keys) == 0 {
		return nil, errors.New("pgnonce: no keys in the configuration")
	}
	return keys, nil
}
