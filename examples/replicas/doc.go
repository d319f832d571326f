// Package replicas holds the test of a host run as several replicas: three
// examples/host processes on loopback ports, behind a round-robin reverse
// proxy, sharing one PostgreSQL (the audit log through examples/pgbatch,
// the requestState nonces through examples/pgnonce). It has no code of its
// own; see replicas_test.go and the README's "Running several replicas".
package replicas
