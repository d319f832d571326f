package events

import (
	"context"
	"fmt"
	"log/slog"
)

// NewSlogSink returns a sink that writes each event as one slog.Record
// through h, at level (slog.LevelInfo when level is nil), so that a host's
// existing logging, and github.com/samber/slog-multi's Fanout, Failover and
// Router over it, is its audit log. A handler not enabled at level refuses
// the event rather than silently skipping an audit record. The sink does
// not own h.
//
// The record's time is the event's timestamp, its message the event type
// (negotiation.decided), and its attributes, flat so that routing
// predicates see them, are the envelope's fields and then the payload's,
// under their JSON names:
//
//	eventId, runId, sequence, schemaVersion, nodeId, engineVersion, causationId  (run event)
//	eventId, delivery, workspaceId                                              (host event)
//	protocol, outcome, version, requested, reason, floor, peerDigest, at       (payload)
//
// Absent optional fields are left out. A record is a log line, not the
// closed envelope: the sink numbers nothing, and writes a run event's
// sequence only when the event has one. A refusal can be routed by its
// outcome attribute:
//
//	slogmulti.Router().
//		Add(security, slogmulti.AttrValueIs("outcome", "refused")).
//		Add(audit).
//		Handler()
//
// A handler's error is returned, and a handler that panics returns a
// [*PanicError] instead of taking the request down. A nil h refuses every
// event with [ErrClosed].
func NewSlogSink(h slog.Handler, level slog.Leveler) Sink {
	if level == nil {
		level = slog.LevelInfo
	}
	return &slogSink{h: h, level: level}
}

type slogSink struct {
	h     slog.Handler
	level slog.Leveler
}

func (s *slogSink) Emit(ctx context.Context, e Event) (err error) {
	if s.h == nil {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := e.check(); err != nil {
		return err
	}
	defer recoverInto(&err)
	level := s.level.Level()
	if !s.h.Enabled(ctx, level) {
		return fmt.Errorf("events: slog handler is not enabled at level %v, so the event would not be recorded", level)
	}
	r := slog.NewRecord(e.Time, level, typeNegotiationDecided, 0)
	var buf [16]slog.Attr
	r.AddAttrs(appendAttrs(buf[:0], &e)...)
	if err := s.h.Handle(ctx, r); err != nil {
		return fmt.Errorf("events: slog handler: %w", err)
	}
	return nil
}

// appendAttrs appends the attributes the slog sink writes for e to dst.
func appendAttrs(dst []slog.Attr, e *Event) []slog.Attr {
	dst = append(dst, slog.String("eventId", e.ID))
	if e.RunID != "" {
		dst = append(dst, slog.String("runId", e.RunID))
		if e.HasSequence {
			dst = append(dst, slog.Int64("sequence", e.Sequence))
		}
		dst = append(dst, slog.Int("schemaVersion", e.SchemaVersion))
		if e.NodeID != "" {
			dst = append(dst, slog.String("nodeId", e.NodeID))
		}
		if e.HasEngineVersion {
			dst = append(dst, slog.Int64("engineVersion", e.EngineVersion))
		}
		if e.CausationID != "" {
			dst = append(dst, slog.String("causationId", e.CausationID))
		}
	} else {
		dst = append(dst, slog.String("delivery", deliveryDurable))
		if e.WorkspaceID != "" {
			dst = append(dst, slog.String("workspaceId", e.WorkspaceID))
		}
	}
	p := &e.Payload
	dst = append(dst, slog.String("protocol", string(p.Protocol)), slog.String("outcome", p.Outcome))
	if p.Version != "" {
		dst = append(dst, slog.String("version", p.Version))
	}
	if p.Requested != "" {
		dst = append(dst, slog.String("requested", p.Requested))
	}
	if p.Reason != "" {
		dst = append(dst, slog.String("reason", p.Reason))
	}
	if p.Floor != "" {
		dst = append(dst, slog.String("floor", p.Floor))
	}
	if p.PeerDigest != "" {
		dst = append(dst, slog.String("peerDigest", p.PeerDigest))
	}
	return append(dst, slog.Time("at", p.At))
}
