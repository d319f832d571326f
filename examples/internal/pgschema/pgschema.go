// Package pgschema places the tables of the examples' PostgreSQL stores
// (pgsink, pgnonce) in an optional schema, so that each store quotes its
// names and starts its migration the same way.
package pgschema

import "github.com/jackc/pgx/v5"

// Qualifier returns a function that quotes a table name as an SQL
// identifier, inside schema when schema is not empty.
func Qualifier(schema string) func(table string) string {
	return func(table string) string {
		if schema == "" {
			return pgx.Identifier{table}.Sanitize()
		}
		return pgx.Identifier{schema, table}.Sanitize()
	}
}

// DDL returns the first statements of a migration: CREATE SCHEMA IF NOT
// EXISTS when schema is not empty, nothing otherwise.
func DDL(schema string) []string {
	if schema == "" {
		return nil
	}
	return []string{"CREATE SCHEMA IF NOT EXISTS " + pgx.Identifier{schema}.Sanitize()}
}
