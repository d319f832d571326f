package pgnonce_test

import (
	"context"
	"log"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopneg/wopneg/examples/pgnonce"
	"github.com/wopneg/wopneg/negotiate/mrtr"
)

// Each replica of a host wires its Sealer to the shared store, with keys
// from its configuration, and prunes now and then.
func Example() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("WOPNEG_PG_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	store, err := pgnonce.New(ctx, pool, pgnonce.Options{})
	if err != nil {
		log.Fatal(err)
	}
	keys, err := pgnonce.ParseKeys(os.Getenv("WOPNEG_MRTR_KEYS")) // "2026-12:…,2026-11:…"
	if err != nil {
		log.Fatal(err)
	}
	sealer, err := mrtr.NewSealer(mrtr.SealerOptions{Keys: keys, MaxRounds: 4, Nonces: store})
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		for range time.Tick(5 * time.Minute) {
			if _, err := store.Prune(ctx); err != nil {
				log.Print(err)
			}
		}
	}()
	_ = sealer // seal and open requestStates with it
}
