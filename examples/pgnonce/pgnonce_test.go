package pgnonce

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopneg/wopneg/examples/internal/pgtest"
	"github.com/wopneg/wopneg/negotiate/mrtr"
)

// pool returns a pool of its own (pgtest.Connect): each replica of a test
// gets one.
func pool(t *testing.T) *pgxpool.Pool { return pgtest.Connect(t, nil) }

// schema returns a schema name of the test's own, dropped when it ends.
func schema(t *testing.T, p *pgxpool.Pool) string { return pgtest.Schema(t, p) }

func store(t *testing.T, p *pgxpool.Pool, opts Options) *Store {
	t.Helper()
	s, err := New(context.Background(), p, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var bound = mrtr.Binding{Principal: "https://idp.example|u-42", Tenant: "acme", RunID: "acme/run-1", InterruptID: "confirm", RequestDigest: "d"}

func secret(b byte) string { return base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{b}, 32)) }

// replica is one host replica: its own pool, its Store on the shared
// table, and a Sealer with keys from configuration.
func replica(t *testing.T, sch, keys string, now func() time.Time) (*mrtr.Sealer, *Store) {
	t.Helper()
	st := store(t, pool(t), Options{Schema: sch})
	ks, err := ParseKeys(keys)
	if err != nil {
		t.Fatal(err)
	}
	s, err := mrtr.NewSealer(mrtr.SealerOptions{Keys: ks, MaxRounds: 4, Nonces: st, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return s, st
}

// TestReplicas (issue 12 item 1): a state consumed on one replica is
// refused on the other, and of many presenting it at once on both,
// exactly one opens it.
func TestReplicas(t *testing.T) {
	sch := schema(t, pool(t))
	keys := "k1:" + secret(1)
	a, _ := replica(t, sch, keys, nil)
	b, _ := replica(t, sch, keys, nil)
	ctx := context.Background()

	state, _ := a.Seal(bound, 1)
	if _, err := b.Open(ctx, state, bound); err != nil {
		t.Fatalf("B opening A's state: %v", err)
	}
	for name, s := range map[string]*mrtr.Sealer{"A": a, "B": b} {
		if _, err := s.Open(ctx, state, bound); !errors.Is(err, mrtr.ErrReplayed) {
			t.Errorf("%s opening it again: %v", name, err)
		}
	}

	state, _ = b.Seal(bound, 2)
	var opened, replayed atomic.Int32
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			_, err := []*mrtr.Sealer{a, b}[i%2].Open(ctx, state, bound)
			switch {
			case err == nil:
				opened.Add(1)
			case errors.Is(err, mrtr.ErrReplayed):
				replayed.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if opened.Load() != 1 || replayed.Load() != 15 {
		t.Errorf("%d opened, %d replayed", opened.Load(), replayed.Load())
	}
}

// TestFailsClosed (issue 12 item 1): a database that cannot answer makes
// Open refuse the state, whatever the reason.
func TestFailsClosed(t *testing.T) {
	p := pool(t)
	st := store(t, p, Options{Schema: schema(t, p)})
	keys := []mrtr.Key{{ID: "k", Secret: bytes.Repeat([]byte{1}, 32)}}
	sealer := func(n mrtr.NonceStore) *mrtr.Sealer {
		s, err := mrtr.NewSealer(mrtr.SealerOptions{Keys: keys, MaxRounds: 1, Nonces: n})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// No server: a pool on a port nobody listens on.
	dead, err := pgxpool.New(context.Background(), "postgres://wopneg:wopneg@127.0.0.1:1/wopneg?sslmode=disable&connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	// A pool closed under the store.
	closed := pool(t)
	closedStore := store(t, closed, Options{Schema: schema(t, p)})
	closed.Close()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name  string
		store mrtr.NonceStore
		ctx   context.Context
	}{
		{"no server", &Store{pool: dead, consume: st.consume}, context.Background()},
		{"a closed pool", closedStore, context.Background()},
		{"a canceled context", st, canceled},
	} {
		s := sealer(c.store)
		state, _ := s.Seal(bound, 1)
		if got, err := s.Open(c.ctx, state, bound); err == nil || errors.Is(err, mrtr.ErrReplayed) || !strings.HasPrefix(err.Error(), "pgnonce: ") {
			t.Errorf("%s: opened %+v, %v", c.name, got, err)
		}
	}
	// The store answers again: the state was never consumed.
	s := sealer(st)
	state, _ := s.Seal(bound, 1)
	if _, err := s.Open(canceled, state, bound); err == nil {
		t.Fatal("opened on a canceled context")
	}
	if _, err := s.Open(context.Background(), state, bound); err != nil {
		t.Errorf("after the failure: %v", err)
	}
}

// TestLaggingReplicaFailsClosed: a replica whose clock lags the database's
// by more than Skew opens no state that expired, by the database's clock,
// longer ago than that: it could be a pruned one.
func TestLaggingReplicaFailsClosed(t *testing.T) {
	p := pool(t)
	sch := schema(t, p)
	lag := func() time.Time { return time.Now().Add(-time.Hour) }
	s, _ := replica(t, sch, "k:"+secret(1), lag)
	state, _ := s.Seal(bound, 1)
	if _, err := s.Open(context.Background(), state, bound); !errors.Is(err, mrtr.ErrReplayed) {
		t.Errorf("a state an hour past its expiry: %v", err)
	}
}

// expired inserts nonces that expired an hour ago, which Consume refuses
// to do, by setting the trigger aside.
func expired(t *testing.T, p *pgxpool.Pool, sch string, nonces ...string) time.Time {
	t.Helper()
	table := pgx.Identifier{sch, "wopneg_mrtr_nonces"}.Sanitize()
	at := time.Now().Add(-time.Hour).Truncate(time.Microsecond)
	err := pgx.BeginFunc(context.Background(), p, func(tx pgx.Tx) error {
		if _, err := tx.Exec(context.Background(), "ALTER TABLE "+table+" DISABLE TRIGGER wopneg_mrtr_nonce_fresh"); err != nil {
			return err
		}
		for _, n := range nonces {
			if _, err := tx.Exec(context.Background(), "INSERT INTO "+table+" VALUES ($1, 'p', $2)", n, at); err != nil {
				return err
			}
		}
		_, err := tx.Exec(context.Background(), "ALTER TABLE "+table+" ENABLE TRIGGER wopneg_mrtr_nonce_fresh")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return at
}

func count(t *testing.T, p *pgxpool.Pool, sch string) int {
	t.Helper()
	var n int
	if err := p.QueryRow(context.Background(), "SELECT count(*) FROM "+pgx.Identifier{sch, "wopneg_mrtr_nonces"}.Sanitize()).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPrune: expired rows go, Batch at a time, live ones stay; a pruned
// nonce presented again is refused.
func TestPrune(t *testing.T) {
	p := pool(t)
	sch := schema(t, p)
	s := store(t, p, Options{Schema: sch, Batch: 7})
	ctx := context.Background()
	var old []string
	for i := range 20 {
		old = append(old, fmt.Sprint("old-", i))
	}
	at := expired(t, p, sch, old...)
	live := mrtr.Claims{Binding: bound, Nonce: "live", ExpiresAt: time.Now().Add(time.Minute)}
	if err := s.Consume(ctx, live); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Prune(ctx); n != 20 || err != nil || count(t, p, sch) != 1 {
		t.Errorf("pruned %d, %v; %d rows left", n, err, count(t, p, sch))
	}
	if n, err := s.Prune(ctx); n != 0 || err != nil {
		t.Errorf("pruned again: %d, %v", n, err)
	}
	if err := s.Consume(ctx, mrtr.Claims{Binding: bound, Nonce: "old-3", ExpiresAt: at}); !errors.Is(err, mrtr.ErrReplayed) {
		t.Errorf("a pruned nonce again: %v", err)
	}
	if err := s.Consume(ctx, live); !errors.Is(err, mrtr.ErrReplayed) {
		t.Errorf("a live nonce again: %v", err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Prune(canceled); err == nil || !strings.HasPrefix(err.Error(), "pgnonce: pruning: ") {
		t.Errorf("pruning on a canceled context: %v", err)
	}
}

// TestPruneDoesNotBlockConsume: while a prune holds the rows it deletes,
// a new nonce is consumed; the replay of a nonce being pruned waits for
// the prune, finds no row, and is refused all the same.
func TestPruneDoesNotBlockConsume(t *testing.T) {
	p := pool(t)
	sch := schema(t, p)
	s := store(t, p, Options{Schema: sch})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	at := expired(t, p, sch, "going")
	tx, err := p.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if tag, err := tx.Exec(ctx, s.prune, 10); err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("prune: %v, %v", tag, err)
	}
	if err := s.Consume(ctx, mrtr.Claims{Binding: bound, Nonce: "new", ExpiresAt: time.Now().Add(time.Minute)}); err != nil {
		t.Fatalf("a new nonce during a prune: %v", err)
	}
	replay := make(chan error, 1)
	go func() { replay <- s.Consume(ctx, mrtr.Claims{Binding: bound, Nonce: "going", ExpiresAt: at}) }()
	// Wait until the replay waits for the prune's lock.
	for {
		var waiting int
		if err := p.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()").Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		select {
		case err := <-replay:
			t.Fatalf("the replay did not wait for the prune: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-replay; !errors.Is(err, mrtr.ErrReplayed) {
		t.Errorf("the replay of a nonce pruned under it: %v", err)
	}
}

// TestRotation walks the documented procedure on two replicas: at every
// step, a state either seals opens on the other; and shows what skipping
// step 1 does.
func TestRotation(t *testing.T) {
	sch := schema(t, pool(t))
	oldKey, newKey := "old:"+secret(1), "new:"+secret(2)
	a, _ := replica(t, sch, oldKey, nil)
	b, _ := replica(t, sch, oldKey, nil)
	ctx := context.Background()
	load := func(s *mrtr.Sealer, config string) {
		t.Helper()
		keys, err := ParseKeys(config)
		if err == nil {
			err = s.SetKeys(keys)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	crossOpen := func(step string) {
		t.Helper()
		for _, pair := range [][2]*mrtr.Sealer{{a, b}, {b, a}} {
			state, _ := pair[0].Seal(bound, 1)
			if _, err := pair[1].Open(ctx, state, bound); err != nil {
				t.Errorf("%s: %v", step, err)
			}
		}
	}
	sealedWithOld, _ := a.Seal(bound, 1)

	// Skipping step 1: A seals with NEW, which B does not have.
	load(a, newKey+","+oldKey)
	state, _ := a.Seal(bound, 1)
	if _, err := b.Open(ctx, state, bound); !errors.Is(err, mrtr.ErrSignature) {
		t.Errorf("B opening a state sealed with a key it lacks: %v", err)
	}
	load(a, oldKey)

	load(a, oldKey+" "+newKey) // step 1, one replica at a time
	crossOpen("step 1 on A")
	load(b, oldKey+"\n"+newKey)
	crossOpen("step 1 on both")
	load(a, newKey+","+oldKey) // step 2
	crossOpen("step 2 on A")
	load(b, newKey+","+oldKey)
	crossOpen("step 2 on both")
	if _, err := b.Open(ctx, sealedWithOld, bound); err != nil {
		t.Errorf("a state sealed with OLD before the rotation: %v", err)
	}
	load(a, newKey) // step 3, after the TTL
	load(b, newKey)
	crossOpen("step 3")
	again, _ := b.Seal(bound, 1)
	load(b, oldKey)
	if _, err := b.Open(ctx, again, bound); !errors.Is(err, mrtr.ErrSignature) {
		t.Errorf("a state sealed with NEW on a replica that only has OLD: %v", err)
	}
}

func TestParseKeys(t *testing.T) {
	keys, err := ParseKeys(" a:" + secret(1) + ",\tb:" + secret(2) + "\n")
	if err != nil || len(keys) != 2 || keys[0].ID != "a" || keys[1].ID != "b" || !bytes.Equal(keys[1].Secret, bytes.Repeat([]byte{2}, 32)) {
		t.Errorf("%v, %v", keys, err)
	}
	for _, c := range []struct{ config, want string }{
		{"", "pgnonce: no keys in the configuration"},
		{" ,\n", "pgnonce: no keys in the configuration"},
		{secret(1), "pgnonce: key 1 is not ID:SECRET, SECRET in unpadded base64url"},
		{"a:" + secret(1) + ",:" + secret(2), "pgnonce: key 2 is not ID:SECRET, SECRET in unpadded base64url"},
		{"a:" + secret(1) + "=", "pgnonce: key 1 is not ID:SECRET, SECRET in unpadded base64url"},
		{"a:" + secret(1)[:42] + "B", "pgnonce: key 1 is not ID:SECRET, SECRET in unpadded base64url"},
	} {
		if _, err := ParseKeys(c.config); err == nil || err.Error() != c.want {
			t.Errorf("%q: %v, want %q", c.config, err, c.want)
		}
	}
}

func TestNew(t *testing.T) {
	p := pool(t)
	ctx := context.Background()
	for _, c := range []struct {
		pool *pgxpool.Pool
		opts Options
		want string
	}{
		{nil, Options{}, "pgnonce: no pool"},
		{p, Options{Skew: -time.Second}, "pgnonce: Options.Skew -1s and Options.Batch 0 may not be negative"},
		{p, Options{Batch: -1}, "pgnonce: Options.Skew 0s and Options.Batch -1 may not be negative"},
	} {
		if _, err := New(ctx, c.pool, c.opts); err == nil || err.Error() != c.want {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	// Twice on one schema, as replicas starting together do.
	sch := schema(t, p)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if _, err := New(ctx, p, Options{Schema: sch}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := New(canceled, p, Options{}); err == nil || !strings.HasPrefix(err.Error(), "pgnonce: creating the table: ") {
		t.Errorf("canceled: %v", err)
	}
}
