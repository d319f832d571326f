package events_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
)

// sinkAt is the decision time of the sample payloads: whole milliseconds, so
// that every store keeps it exactly.
var sinkAt = time.Date(2026, 11, 29, 12, 0, 0, 123_000_000, time.UTC)

const sinkPeerDigest = "a8b9cbc6a1eb3ac2b5ed6d6a2a0ea58f2fb1c3d6b5ac5c4c0c6c1e7f2e5a3b90"

// accepted is a downgrade recorded as accepted, with every optional field.
func sinkAccepted() events.NegotiationDecided {
	return events.NegotiationDecided{
		Protocol: facets.ProtocolA2A, Outcome: "accepted", Version: "1.1", Requested: "1.2",
		Reason: events.ReasonOK, Floor: "1.1", PeerDigest: sinkPeerDigest, At: sinkAt,
	}
}

// refused is an MCP refusal below the floor.
func sinkRefused() events.NegotiationDecided {
	return events.NegotiationDecided{
		Protocol: facets.ProtocolMCP, Outcome: "refused", Requested: "2025-06-18",
		Reason: events.ReasonBelowFloor, Floor: "2025-11-25", At: sinkAt,
	}
}

// runID returns a valid tenant-bound run id, distinct for each n.
func sinkRunID(n int) string { return fmt.Sprintf("acme/run-%016d", n) }

func sinkRun(id string, p events.NegotiationDecided) events.Event {
	e, err := events.NewRunEvent(id, p)
	if err != nil {
		panic(err)
	}
	return e
}

func sinkHost(workspace string, p events.NegotiationDecided) events.Event {
	e, err := events.NewHostEvent(workspace, p)
	if err != nil {
		panic(err)
	}
	return e
}

// sinkMemory is a minimal store for the wrappers' tests: it records what it is
// given, sequence and all, or fails with err.
type sinkMemory struct {
	mu     sync.Mutex
	events []events.Event
	err    error
}

func (m *sinkMemory) Emit(ctx context.Context, e events.Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return m.err
	}
	m.events = append(m.events, e)
	return nil
}

func (m *sinkMemory) all() []events.Event {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]events.Event(nil), m.events...)
}

// sinkFailingWriter fails every write with err, after writing n bytes of it.
type sinkFailingWriter struct {
	n   int
	err error
}

func (w sinkFailingWriter) Write(p []byte) (int, error) { return min(w.n, len(p)), w.err }

// withSeq returns e with the sequence n, as a store assigns it; a negative
// n removes it.
func withSeq(e events.Event, n int64) events.Event {
	e.Sequence, e.HasSequence = max(n, 0), n >= 0
	return e
}

// withEngine returns e with the engine version v; a negative v removes it.
func withEngine(e events.Event, v int64) events.Event {
	e.EngineVersion, e.HasEngineVersion = max(v, 0), v >= 0
	return e
}

// plain returns e's fields without its proof, for comparing events by
// their fields.
func plain(e events.Event) events.Event {
	return events.Event{
		ID: e.ID, Time: e.Time, Payload: e.Payload,
		RunID: e.RunID, SchemaVersion: e.SchemaVersion, Sequence: e.Sequence, HasSequence: e.HasSequence,
		NodeID: e.NodeID, EngineVersion: e.EngineVersion, HasEngineVersion: e.HasEngineVersion, CausationID: e.CausationID,
		WorkspaceID: e.WorkspaceID,
	}
}
