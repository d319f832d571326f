// Package metrics exports what a person running a wopneg host graphs, to
// Prometheus through client_golang:
//
//   - wopneg_decisions_total{protocol, outcome, reason}: every
//     negotiation.decided the host emitted, counted by [Decisions], a sink
//     in front of the audit sink, whether the audit then recorded it or
//     not;
//   - wopneg_audit_queue_depth, wopneg_audit_queue_bytes,
//     wopneg_audit_waiting, wopneg_audit_unacknowledged_total,
//     wopneg_audit_retries_total, wopneg_audit_dropped_total,
//     wopneg_audit_failed_total and wopneg_audit_write_errors_total: the
//     audit buffer, the requests waiting on it, what it could not write
//     in time, tried again, dropped and gave up on, read from its Stats
//     when scraped ([Audit]);
//   - wopneg_mrtr_refusals_total{reason}: every requestState refused, by
//     kind, through the core's one metrics hook, mrtr.SealerOptions.OnRefuse
//     ([Refusals]); reason "replayed" counts the nonce store's refusals
//     (a state used on another replica included), "store" a store that
//     failed, and so refused, too.
//
// The core imports no metrics library: the decisions are its events, the
// audit counts are events.AsyncStats (an events.Async's Stats), and the
// refusals come through a func-typed option, so any library can be wired
// the way this package wires client_golang.
package metrics

import (
	"context"
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/negotiate/mrtr"
)

// Decisions returns a sink that counts every event by its decision and
// hands it to next, returning next's answer; it is [events.Durable] when
// next is. It registers its counter with reg.
func Decisions(reg prometheus.Registerer, next events.Sink) (events.Sink, error) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "wopneg_decisions_total",
		Help: "Negotiation decisions, by protocol, outcome and reason.",
	}, []string{"protocol", "outcome", "reason"})
	if err := reg.Register(c); err != nil {
		return nil, err
	}
	return &counting{next: next, c: c}, nil
}

// counting is the sink of Decisions.
type counting struct {
	next events.Sink
	c    *prometheus.CounterVec
}

func (s *counting) Emit(ctx context.Context, e events.Event) error {
	s.c.WithLabelValues(string(e.Payload.Protocol), string(e.Payload.Outcome), string(e.Payload.Reason)).Inc()
	return s.next.Emit(ctx, e)
}

// Durable is next's: counting adds nothing to lose.
func (s *counting) Durable() bool {
	d, ok := s.next.(events.Durable)
	return ok && d.Durable()
}

// Audit registers the audit buffer's gauges and counters with reg, read
// from stats (an events.Async's Stats) and writeErrors (the failed writes
// of the store behind it, such as pgbatch.Writer.BatchErrors; nil for
// none) at each scrape.
func Audit(reg prometheus.Registerer, stats func() events.AsyncStats, writeErrors func() uint64) error {
	cs := []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "wopneg_audit_queue_depth",
			Help: "Audit events accepted and not yet written.",
		}, func() float64 { return float64(stats().Pending) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "wopneg_audit_queue_bytes",
			Help: "The size of the audit events accepted and not yet written.",
		}, func() float64 { return float64(stats().PendingBytes) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "wopneg_audit_waiting",
			Help: "Requests waiting for room in the audit buffer or for their event to be written.",
		}, func() float64 { return float64(stats().Waiting) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "wopneg_audit_unacknowledged_total",
			Help: "Requests whose audit event was not written in time, or failed: answered internal_error when the audit is required.",
		}, func() float64 { return float64(stats().Unacknowledged) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "wopneg_audit_retries_total",
			Help: "Audit writes tried again because the store was unavailable.",
		}, func() float64 { return float64(stats().Retries) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "wopneg_audit_dropped_total",
			Help: "Audit events refused for want of room in the buffer.",
		}, func() float64 { return float64(stats().Dropped) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "wopneg_audit_failed_total",
			Help: "Audit events accepted and then given up on: not written.",
		}, func() float64 { return float64(stats().Failed) }),
	}
	if writeErrors != nil {
		cs = append(cs, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "wopneg_audit_write_errors_total",
			Help: "Failed writes of the audit store, retries included.",
		}, func() float64 { return float64(writeErrors()) }))
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// refusalReasons are the label values of wopneg_mrtr_refusals_total, in
// the order tried; an error matching none is "store".
var refusalReasons = []struct {
	err    error
	reason string
}{
	{mrtr.ErrReplayed, "replayed"},
	{mrtr.ErrSignature, "signature"},
	{mrtr.ErrExpired, "expired"},
	{mrtr.ErrMalformed, "malformed"},
	{mrtr.ErrBinding, "binding"},
	{wperrors.MCPRoundsExceeded, "round"}, // a state sealed before maxRounds was lowered
}

// Refusals registers wopneg_mrtr_refusals_total with reg and returns the
// function to set as mrtr.SealerOptions.OnRefuse.
func Refusals(reg prometheus.Registerer) (func(error), error) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "wopneg_mrtr_refusals_total",
		Help: "MRTR requestStates refused, by kind; replayed is the nonce store's refusal.",
	}, []string{"reason"})
	if err := reg.Register(c); err != nil {
		return nil, err
	}
	return func(err error) { c.WithLabelValues(refusal(err)).Inc() }, nil
}

// refusal is the label of err.
func refusal(err error) string {
	for _, r := range refusalReasons {
		if errors.Is(err, r.err) {
			return r.reason
		}
	}
	return "store"
}
