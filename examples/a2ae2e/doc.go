// Package a2ae2e proves negotiate/a2ahttp against the real a2a-go v2
// client and server (github.com/a2aproject/a2a-go/v2 v2.4.0), end to end on
// loopback. It has no code of its own: the tests stand up an A2A host made
// of a2a-go's JSON-RPC (1.0 and, through a2acompat/a2av0, 0.3) and
// HTTP+JSON handlers behind the middleware, drive it with a2a-go clients,
// and check, for every exchange, the A2A-Version on the wire (captured by a
// handler in front of the middleware), what the client surfaced, and the
// negotiation.decided event recorded.
//
// The host offers 0.3 and 1.0, prefers 1.0 and has its floor at 0.3, so
// that a downgrade is possible and only an authenticated caller (here: one
// that presents the test's bearer token) can get it.
package a2ae2e
