// Package events holds the negotiation.decided payload that records every
// A2A and MCP version negotiation (RFC 0175 §D.3), and the peer digest that
// keeps it content-free.
//
// The payload is the v2 schema's closed negotiationDecided object plus the
// optional requested of RFC 0242. The schema and the interop prose disagree
// on its shape; this package follows the schema, as both known emitters and
// RFC 0242 do: outcome is accepted or refused, and a downgrade is an
// accepted record whose version differs from requested.
//
// The peer never appears in clear: [PeerDigest] is the lowercase hex
// SHA-256 of the WHATWG origin serialization of the peer's URL, and a URL
// with no http(s) or ws(s) origin is an error rather than a digest of
// whatever was given.
//
// # Envelopes
//
// An [Event] is one value type for both v2 envelopes, passed to sinks by
// value as slog passes a slog.Record: a run event when it names a run
// (RunID), a durable host event (RFC 0242 §B) when it does not. Both
// envelopes are closed and this package keeps them so: [Event.Validate]
// refuses a run event that carries workspaceId and a host event that
// carries runId, sequence or another run-only field; the JSON form
// ([Event.MarshalJSON], [Event.UnmarshalJSON]) holds exactly the schema's
// keys, in the schema's order, and reading refuses an unknown key, a key in
// another case, a repeated key or a null. Every problem is a [*FieldError]
// naming the field; validation reports all of them at once.
//
// Stricter readings, each refused with an error rather than written:
//
//   - the only type is negotiation.decided, whose payload this package
//     carries, and a negotiation.decided host event is durable, so an
//     Event has neither a type nor a delivery to get wrong;
//   - a run event's sequence is assigned by the store that records it,
//     never by the caller, so the zero Event has none and the JSON form of
//     an unsequenced run event is an error rather than a made-up 0;
//   - strings the id patterns do not govern (nodeId, causationId,
//     workspaceId) must be valid UTF-8, because JSON would alter them;
//   - a timestamp must be writable as RFC 3339 (years 0000–9999).
//
// [NewRunEvent] and [NewHostEvent] give the event a fresh 130-bit id and
// validate it once; the event carries a private proof of that, so that a
// sink handed it unchanged compares instead of validating again.
//
// # Sinks
//
// A [Sink] records events: one method, Emit(ctx, Event) error, as small as
// slog.Handler, so that any store can be one and sinks compose by wrapping.
// Its contract is on the interface; negotiatetest.TestSink checks it for
// any sink. The sinks here:
//
//   - [JSONLines]: an event store in an io.Writer, one closed envelope per
//     line, a single Write per event under a lock, numbering each run's
//     events as it writes them;
//   - [NewSlogSink]: one slog.Record per event, envelope and payload fields
//     as flat attributes, through any slog.Handler, and so through
//     github.com/samber/slog-multi's Fanout, Failover and Router;
//   - [NewFanout]: several sinks, every failure reported with errors.Join;
//   - [Async]: a bounded buffer off the request path that waits for room at
//     most AsyncOptions.MaxWait (100 ms unless set, never past the
//     context), or not at all with AsyncOptions.Drop, counts every drop
//     ([AsyncStats]) and refuses it with [ErrDropped], so that a host
//     requiring the audit refuses the decision; it validates each event
//     before queueing it, so that an invalid one is refused to its caller
//     rather than failed later, and it stops, refusing later events, if
//     its sink ends the recording goroutine with runtime.Goexit; a sink
//     that is also a [BatchSink] is handed what is queued a batch at a
//     time (examples/pgbatch writes each batch in one transaction). A
//     write failing with [ErrUnavailable] (the store down) is tried again
//     with a backoff until the store is back, while the buffer, bounded
//     in events and bytes, holds what comes meanwhile; drops are counted
//     and logged at most once per interval.
//
// What is durable when: by default an Async's nil means queued in memory,
// lost if the process dies before the write, and failed (reported by
// Close and OnError, not by Emit) if the store stays down past
// AsyncOptions.CloseWait at Close. In the acknowledged mode
// (AsyncOptions.Acknowledge) Emit returns nil only once the write holding
// its event succeeded, the events queued meanwhile sharing one write
// (group commit), and an error when it failed or did not succeed in time;
// over a [Durable] store (examples/pgbatch) the nil then means committed,
// and [Async.Durable] says so. A host that requires the audit records
// into a durable sink. See the [Sink] contract for each sink.
//
// Sequences are assigned when an event is recorded, not when it is
// decided, so that an event a buffer drops never takes a number. The
// pipeline for a file or a log is therefore
//
//	NewAsync(NewJSONLines(w), AsyncOptions{...})
//
// and a database numbers events in the transaction that inserts them (see
// examples/pgsink). A store consumes a number only when it recorded the
// event, so a failed write leaves no gap.
//
// Failures are never swallowed. Every shipped sink returns the error of the
// store, writer or handler under it; a panic in a sink or handler becomes a
// [*PanicError]; a nil, zero or closed sink is [ErrClosed]; a handler not
// enabled at the record's level is an error, because a skipped audit record
// is a lost one. Wrappers own what they wrap: Close on an Async or a
// fan-out closes the sinks inside that are io.Closers, after flushing.
// JSONLines and the slog sink do not own their writer or handler.
//
// # Event log
//
// A [Log] is a sink read back tenant by tenant ([NewMemoryLog] holds at
// most 65,536 events, 4,096 per tenant, unless told otherwise), and a
// [LogHandler] serves it: GET /runs/{runId}/events/poll and the GET
// /host/events stream of server-sent events, each caller reading only its
// own tenant's events. Nothing a caller holds open is unbounded, and no
// tenant can take another's share. Each bound is a LogHandler field whose
// zero value is the default:
//
//	MaxStreams            64     streams open at once, over all tenants
//	MaxTenantStreams      8      streams one tenant has open (≤ MaxStreams)
//	StreamLifetime        10 min how long a stream lasts
//	WriteTimeout          10 s   each write of a stream, and a poll's answer
//	KeepAlive             15 s   a comment frame when there is nothing to send
//	MaxPollWaiters        256    polls waiting for an event, over all tenants
//	MaxTenantPollWaiters  16     polls one tenant has waiting (≤ MaxPollWaiters)
//	MaxEvents             1,000  events of one answer or one read of the log
//	PollInterval          250 ms how often a stream or a waiting poll reads again
//
// A tenant at its share is refused 429. When all of a capacity is held, a
// newcomer takes the oldest stream (or wait) of the tenant holding the
// most, while that tenant holds two more than the newcomer will, so the
// capacity is spread evenly however many tenants press on it. A reader
// that stops reading is dropped at the first write it does not take
// within WriteTimeout, and holds its stream at most StreamLifetime +
// WriteTimeout (10 minutes 10 seconds) in any case. Stricter readings: a
// stream is refused (500) rather than served without a write deadline,
// and a poll over its tenant's waiters is refused 429 rather than answered
// early, so that a client cannot mistake it for a timeout.
package events
