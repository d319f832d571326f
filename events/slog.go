package events

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
)

// SlogOptions configures a [SlogSink]. The zero value writes every event at
// slog.LevelInfo.
type SlogOptions struct {
	// Level is the level of every record; nil means slog.LevelInfo. A
	// handler not enabled at this level refuses the event rather than
	// silently skipping an audit record.
	Level slog.Leveler
}

// SlogSink writes each event as one slog.Record through any slog.Handler,
// so that a host's existing logging (and github.com/samber/slog-multi's
// Fanout, Failover and Router over it) is its audit log.
//
// The record's time is the event's timestamp, its message the event type,
// and its attributes, flat so that routing predicates see them, are the
// envelope's fields and then the payload's, under their JSON names:
//
//	eventId, runId, sequence, schemaVersion, nodeId, engineVersion, causationId  (run event)
//	eventId, delivery, workspaceId                                              (host event)
//	protocol, outcome, version, requested, reason, floor, peerDigest, at       (payload)
//
// Absent optional fields are left out. A record is a log line, not the
// closed envelope, so the sink writes a run event's sequence when the event
// has one and leaves it out otherwise; put a [Sequencer] in front when the
// log is the event store. A refusal can be routed by its outcome attribute:
//
//	slogmulti.Router().
//		Add(security, slogmulti.AttrValueIs("outcome", "refused")).
//		Add(audit).
//		Handler()
//
// A handler's error is returned, and a handler that panics returns a
// [*PanicError] instead of taking the request down.
type SlogSink struct {
	h     slog.Handler
	level slog.Leveler
}

// NewSlogSink returns a SlogSink writing through h; opts may be nil.
func NewSlogSink(h slog.Handler, opts *SlogOptions) *SlogSink {
	s := &SlogSink{h: h, level: slog.LevelInfo}
	if opts != nil && opts.Level != nil {
		s.level = opts.Level
	}
	return s
}

// Emit writes e as one record.
func (s *SlogSink) Emit(ctx context.Context, e Event) (err error) {
	if s == nil || s.h == nil {
		return ErrNoSink
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := e.Validate(); err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	level := s.level.Level()
	if !s.h.Enabled(ctx, level) {
		return fmt.Errorf("events: slog handler is not enabled at level %v, so the event would not be recorded", level)
	}
	r := slog.NewRecord(e.Time, level, e.Type, 0)
	var buf [16]slog.Attr
	r.AddAttrs(appendAttrs(buf[:0], &e)...)
	if err := s.h.Handle(ctx, r); err != nil {
		return fmt.Errorf("events: slog handler: %w", err)
	}
	return nil
}

// appendAttrs appends the attributes a [SlogSink] writes for e to dst.
func appendAttrs(dst []slog.Attr, e *Event) []slog.Attr {
	dst = append(dst, slog.String("eventId", e.ID))
	if e.IsRun() {
		dst = append(dst, slog.String("runId", e.RunID))
		if n, ok := e.Sequence(); ok {
			dst = append(dst, slog.Int64("sequence", n))
		}
		dst = append(dst, slog.Int("schemaVersion", e.SchemaVersion))
		if e.NodeID != "" {
			dst = append(dst, slog.String("nodeId", e.NodeID))
		}
		if v, ok := e.EngineVersion(); ok {
			dst = append(dst, slog.Int64("engineVersion", v))
		}
		if e.CausationID != "" {
			dst = append(dst, slog.String("causationId", e.CausationID))
		}
	} else {
		dst = append(dst, slog.String("delivery", string(e.Delivery)))
		if e.WorkspaceID != "" {
			dst = append(dst, slog.String("workspaceId", e.WorkspaceID))
		}
	}
	p := &e.Payload
	dst = append(dst, slog.String("protocol", string(p.Protocol)), slog.String("outcome", string(p.Outcome)))
	if p.Version != "" {
		dst = append(dst, slog.String("version", p.Version))
	}
	if p.Requested != "" {
		dst = append(dst, slog.String("requested", p.Requested))
	}
	if p.Reason != "" {
		dst = append(dst, slog.String("reason", string(p.Reason)))
	}
	if p.Floor != "" {
		dst = append(dst, slog.String("floor", p.Floor))
	}
	if p.PeerDigest != "" {
		dst = append(dst, slog.String("peerDigest", p.PeerDigest))
	}
	return append(dst, slog.Time("at", p.At))
}
