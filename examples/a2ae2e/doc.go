// Package a2ae2e proves negotiate/a2ahttp against real A2A clients and
// servers, end to end on loopback. It has no code of its own: the tests
// stand up an A2A host made of a2a-go's JSON-RPC (1.0 and, through
// a2acompat/a2av0, 0.3) and HTTP+JSON handlers (github.com/a2aproject/a2a-go/v2
// v2.4.0) behind the middleware, drive it with clients, and check, for
// every exchange, the A2A-Version on the wire (captured by a handler in
// front of the middleware), what the client surfaced, and the
// negotiation.decided event recorded.
//
// The clients: a2a-go v2.4.0 (1.0, and 0.3 through its compatibility
// transport, both of which send A2A-Version); the a2a-go 0.3 client
// (github.com/a2aproject/a2a-go v0.3.15) and @a2a-js/sdk 0.3.14, which send
// no A2A-Version at all, so that their calls are requests for 0.3 (A2A
// §3.6.2); and @a2a-js/sdk 1.3.0. The JS SDKs run through node from
// testdata/jsclient (npm ci from its pinned lockfile); without node the
// test is skipped, except in CI (CI set), where it fails.
//
// Outbound, the peers are the A2A JS SDK's own servers (@a2a-js/sdk 0.3.14
// and 1.3.0 with Express, from testdata/jsserver, started by node): the
// host negotiates with each from its card, with an authenticated Subject
// and without one, sends a real SendMessage through the recording
// Transport, and meets a 502 gateway, a peer that hangs up and one that
// crashed, none of which is recorded. Over gRPC, a2agrpc.Connect
// negotiates with @a2a-js/sdk 1.3.0's own gRPC server from the GRPC
// interface of its card, and a2a-go's gRPC client, dialled with Connect's
// options, is served at the version decided.
//
// The host offers 0.3 and 1.0, prefers 1.0 and has its floor at 0.3, so
// that a downgrade is possible and only an authenticated caller (here: one
// that presents the test's bearer token) can get it.
package a2ae2e
