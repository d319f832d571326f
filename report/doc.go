// Package report is the part of `wopneg report` that needs more than the
// core module: reading the record from PostgreSQL (the tables
// examples/pgsink and examples/pgbatch write, through pgx) and writing the
// report as an HTML page whose charts gonum.org/v1/plot draws, inline, so
// that the page opens offline. It is a module of its own, so that the
// core keeps its few dependencies; the counting is the core's
// (internal/report), and so is `wopneg report`'s text and JSON over JSON
// lines.
//
// Its command is wopneg-report:
//
//	cd report && go install ./cmd/wopneg-report
//	wopneg-report --pg "$WOPNEG_PG_URL" --html report.html --floor a2a=1.0 --drop mcp=2025-06-18
//
// It takes every flag of `wopneg report`, and JSON-lines files as operands
// beside (or instead of) --pg.
package report
