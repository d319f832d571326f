package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/examples/metrics"
	"github.com/wopneg/wopneg/examples/pgbatch"
	"github.com/wopneg/wopneg/examples/pgnonce"
)

// fleet is what one replica of a host shares with the others through
// PostgreSQL: the audit log, buffered by an events.Async and written in
// batches (examples/pgbatch), and the nonces of opened requestStates
// (examples/pgnonce); with the sealing keys from configuration, so that a
// state sealed by one replica opens on any, once. It serves its metrics at
// /metrics.
type fleet struct {
	pool   *pgxpool.Pool
	writer *pgbatch.Writer
	audit  *events.Async // in front of writer
	sink   events.Sink
	reg    *prometheus.Registry
}

// openFleet connects to the database at url, creates the tables when
// missing, and sets cfg's keys (from keys, pgnonce.ParseKeys's format),
// nonce store and refusal hook. The audit is written in the acknowledged
// mode when cfg.AuditWait is positive, asynchronously otherwise; logger
// hears of its drops and retries, at most once per 10 s. Close the fleet
// when the host has stopped serving: that flushes the audit buffer.
func openFleet(ctx context.Context, url, keys string, cfg *config, logger *slog.Logger) (_ *fleet, err error) {
	if keys == "" {
		return nil, errors.New("host: -pg needs -keys: replicas must seal with the same keys")
	}
	if cfg.Keys, err = pgnonce.ParseKeys(keys); err != nil {
		return nil, err
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("host: -pg: %w", err)
	}
	f := &fleet{pool: pool, reg: prometheus.NewRegistry()}
	defer func() {
		if err != nil {
			_ = f.Close()
		}
	}()
	if cfg.Nonces, err = pgnonce.New(ctx, pool, pgnonce.Options{}); err != nil {
		return nil, err
	}
	if f.writer, err = pgbatch.New(ctx, pool, pgbatch.Options{}); err != nil {
		return nil, err
	}
	f.audit = events.NewAsync(f.writer, events.AsyncOptions{
		Batch:       512,
		Buffer:      1 << 16,
		BufferBytes: 64 << 20,
		Acknowledge: cfg.AuditWait,
		Logger:      logger,
	})
	if f.sink, err = metrics.Decisions(f.reg, f.audit); err != nil {
		return nil, err
	}
	if err = metrics.Audit(f.reg, f.audit.Stats, f.writer.BatchErrors); err != nil {
		return nil, err
	}
	if cfg.OnRefuse, err = metrics.Refusals(f.reg); err != nil {
		return nil, err
	}
	return f, nil
}

// mount serves the metrics at /metrics.
func (f *fleet) mount(mux *http.ServeMux, _ Env) error {
	mux.Handle("/metrics", promhttp.HandlerFor(f.reg, promhttp.HandlerOpts{}))
	return nil
}

// Close writes every audit event accepted, then closes the pool, and
// returns the first error of a write that failed.
func (f *fleet) Close() error {
	err := f.audit.Close() // nil-safe: a nil Async closes quietly
	f.pool.Close()
	return err
}
