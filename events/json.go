package events

import (
	"errors"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/wopneg/wopneg/internal/strictjson"
)

// MarshalJSON writes e's closed envelope as one JSON object: a run event
// as
//
//	{"eventId","runId","type","payload","timestamp","sequence","schemaVersion"[,"nodeId"][,"engineVersion"][,"causationId"]}
//
// and a host event as
//
//	{"eventId","type","timestamp","delivery","payload"[,"workspaceId"]}
//
// with "type" negotiation.decided, "delivery" durable, and the payload's
// keys in the reference host's order. It returns the error of
// [Event.Validate] when e is invalid, and a [*FieldError] for "sequence"
// when e is a run event no store has sequenced: the envelope requires one,
// and a made-up 0 would read as the first event of the run.
func (e Event) MarshalJSON() ([]byte, error) {
	b, err := e.appendChecked(make([]byte, 0, 512))
	if err != nil {
		return nil, err
	}
	return b, nil
}

// appendChecked appends e's envelope to dst, or returns dst unchanged and
// the error of checkWritable.
func (e *Event) appendChecked(dst []byte) ([]byte, error) {
	if err := e.checkWritable(); err != nil {
		return dst, err
	}
	return e.appendJSON(dst), nil
}

// checkWritable is what MarshalJSON and the JSON-lines sink refuse.
func (e *Event) checkWritable() error {
	if err := e.check(); err != nil {
		return err
	}
	if e.RunID != "" && !e.HasSequence {
		return &FieldError{Field: "sequence", Reason: "has not been assigned: a run event is written by a store that assigns its sequence (see JSONLines)"}
	}
	return nil
}

// appendJSON appends e's envelope to dst; e has passed checkWritable.
func (e *Event) appendJSON(dst []byte) []byte {
	// The constructors make the timestamp the payload's at: formatted
	// once, it is copied for the other, as formatting costs more.
	var buf [64]byte
	stamp := appendTime(buf[:0], e.Time)
	var at []byte // the payload's at, when it is the timestamp
	if e.Payload.At == e.Time {
		at = stamp
	}
	dst = append(dst, `{"eventId":`...)
	dst = appendJSONString(dst, e.ID)
	if e.RunID != "" {
		dst = append(dst, `,"runId":`...)
		dst = appendJSONString(dst, e.RunID)
		dst = append(dst, `,"type":"`+typeNegotiationDecided+`","payload":`...)
		dst = appendPayload(dst, &e.Payload, at)
		dst = append(dst, `,"timestamp":`...)
		dst = append(dst, stamp...)
		dst = append(dst, `,"sequence":`...)
		dst = strconv.AppendInt(dst, e.Sequence, 10)
		dst = append(dst, `,"schemaVersion":`...)
		dst = strconv.AppendInt(dst, int64(e.SchemaVersion), 10)
		if e.NodeID != "" {
			dst = append(dst, `,"nodeId":`...)
			dst = appendJSONString(dst, e.NodeID)
		}
		if e.HasEngineVersion {
			dst = append(dst, `,"engineVersion":`...)
			dst = strconv.AppendInt(dst, e.EngineVersion, 10)
		}
		if e.CausationID != "" {
			dst = append(dst, `,"causationId":`...)
			dst = appendJSONString(dst, e.CausationID)
		}
	} else {
		dst = append(dst, `,"type":"`+typeNegotiationDecided+`","timestamp":`...)
		dst = append(dst, stamp...)
		dst = append(dst, `,"delivery":"`+deliveryDurable+`","payload":`...)
		dst = appendPayload(dst, &e.Payload, at)
		if e.WorkspaceID != "" {
			dst = append(dst, `,"workspaceId":`...)
			dst = appendJSONString(dst, e.WorkspaceID)
		}
	}
	return append(dst, '}')
}

// appendPayload writes p as encoding/json writes a NegotiationDecided:
// the same keys, order and omissions, so that both spellings are one. at
// is p.At already written as JSON, or nil.
func appendPayload(dst []byte, p *NegotiationDecided, at []byte) []byte {
	dst = append(dst, `{"protocol":`...)
	dst = appendJSONString(dst, string(p.Protocol))
	dst = append(dst, `,"outcome":`...)
	dst = appendJSONString(dst, string(p.Outcome))
	for _, f := range [...]struct{ key, value string }{
		{`,"version":`, p.Version},
		{`,"requested":`, p.Requested},
		{`,"reason":`, string(p.Reason)},
		{`,"floor":`, p.Floor},
		{`,"peerDigest":`, p.PeerDigest},
	} {
		if f.value != "" {
			dst = append(dst, f.key...)
			dst = appendJSONString(dst, f.value)
		}
	}
	dst = append(dst, `,"at":`...)
	if at == nil {
		return append(appendTime(dst, p.At), '}')
	}
	return append(append(dst, at...), '}')
}

// appendTime writes t as time.Time.MarshalJSON does. Validate has already
// refused years RFC 3339 cannot write.
func appendTime(dst []byte, t time.Time) []byte {
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"')
}

// appendJSONString writes s as a JSON string the way encoding/json does
// with HTML escaping off: quotes, backslashes and control characters
// escaped, U+2028 and U+2029 escaped for JavaScript, and invalid UTF-8
// replaced by U+FFFD.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i-size]...)
			dst = append(dst, `\ufffd`...)
			start = i
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i-size]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
			start = i
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// The envelope fields, by JSON name, and which envelope admits each.
const (
	fEventID = iota
	fRunID
	fType
	fPayload
	fTimestamp
	fSequence
	fSchemaVersion
	fNodeID
	fEngineVersion
	fCausationID
	fDelivery
	fWorkspaceID
	numFields
)

var fieldNames = [numFields]string{"eventId", "runId", "type", "payload", "timestamp", "sequence", "schemaVersion", "nodeId", "engineVersion", "causationId", "delivery", "workspaceId"}

// runOnly and hostOnly are the fields only one envelope admits; required
// lists what each envelope requires.
var (
	runOnly      = []int{fRunID, fSequence, fSchemaVersion, fNodeID, fEngineVersion, fCausationID}
	hostOnly     = []int{fDelivery, fWorkspaceID}
	runRequired  = []int{fEventID, fRunID, fType, fPayload, fTimestamp, fSequence, fSchemaVersion}
	hostRequired = []int{fEventID, fType, fTimestamp, fDelivery, fPayload}
)

// UnmarshalJSON reads a run event (when the object has a runId) or a host
// event strictly: both envelopes are closed, so a key of the other
// envelope, an unknown key, a key spelled in another case, a repeated key,
// a null, a missing required key or data after the object is an error, as
// is a type other than negotiation.decided or a delivery other than
// durable; the result must pass [Event.Validate], and carries the proof the
// constructors give. Every error is a [*FieldError], or several joined.
//
// The object is read once, payload included, with the module's strict
// reader; nesting deeper than the envelope's own two levels is refused
// while reading.
func (e *Event) UnmarshalJSON(data []byte) error {
	r := strictjson.NewReader(data, envelopeDepth)
	var ev Event
	var present [numFields]bool
	var strs [numFields]string
	var ints [numFields]int64
	var errs []error
	err := r.Object(func(key string) error {
		i := fieldIndex(key)
		if i < 0 {
			return &FieldError{Field: key, Reason: "is not a field of the event envelope, which is closed"}
		}
		present[i] = true
		k, _ := r.Next()
		if k == strictjson.Null {
			return &FieldError{Field: key, Reason: "must not be null"}
		}
		if i == fPayload {
			if err := readPayload(r, &ev.Payload); err != nil {
				return &FieldError{Field: key, Reason: err.Error()}
			}
			return nil
		}
		if i == fSequence || i == fSchemaVersion || i == fEngineVersion {
			minimum := int64(0)
			if i == fSchemaVersion {
				minimum = 1
			}
			var n string
			if k == strictjson.Number {
				num, err := r.Number()
				if err != nil {
					return err
				}
				n = string(num)
			}
			// As encoding/json reads an int64: no fraction, no exponent. A
			// value that is no number is "" here, and is skipped.
			v, err := strconv.ParseInt(string(n), 10, 64)
			if err != nil || v < minimum {
				errs = append(errs, &FieldError{Field: key, Reason: "must be an integer ≥ " + strconv.FormatInt(minimum, 10)})
			}
			ints[i] = v
			return nil
		}
		if k != strictjson.String {
			errs = append(errs, &FieldError{Field: key, Reason: "must be a string"})
			return nil // skipped
		}
		var err error
		strs[i], err = r.String()
		return err
	})
	if err == nil {
		err = r.End()
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		return err
	}
	if err != nil {
		return &FieldError{Field: "event", Reason: err.Error()}
	}

	isRun := present[fRunID]
	foreign, required, kind := hostOnly, runRequired, "a run event"
	if !isRun {
		foreign, required, kind = runOnly, hostRequired, "a host event"
	}
	for _, i := range foreign {
		if present[i] {
			return &FieldError{Field: fieldNames[i], Reason: "is not allowed in " + kind}
		}
	}
	for _, i := range required {
		if !present[i] {
			return &FieldError{Field: fieldNames[i], Reason: "is required in " + kind}
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}

	if strs[fType] != typeNegotiationDecided {
		return &FieldError{Field: "type", Reason: quoteTrunc(strs[fType]) + " is not negotiation.decided, the only type whose payload this package carries"}
	}
	if !isRun && strs[fDelivery] != deliveryDurable {
		return &FieldError{Field: "delivery", Reason: quoteTrunc(strs[fDelivery]) + " is not durable: negotiation.decided is a durable host event (RFC 0242 §B)"}
	}
	ev.ID, ev.RunID = strs[fEventID], strs[fRunID]
	ev.NodeID, ev.CausationID, ev.WorkspaceID = strs[fNodeID], strs[fCausationID], strs[fWorkspaceID]
	t, err := time.Parse(time.RFC3339Nano, strs[fTimestamp])
	if err != nil {
		return &FieldError{Field: "timestamp", Reason: "is not an RFC 3339 date-time"}
	}
	ev.Time = t
	if isRun {
		ev.Sequence, ev.HasSequence = ints[fSequence], true
		ev.SchemaVersion = int(ints[fSchemaVersion])
		ev.EngineVersion, ev.HasEngineVersion = ints[fEngineVersion], present[fEngineVersion]
	}
	if err := ev.validateAndSeal(); err != nil {
		return err
	}
	*e = ev
	return nil
}

// envelopeDepth is how deep an event nests: the envelope, then its
// payload, whose values are all strings.
const envelopeDepth = 2

func fieldIndex(key string) int {
	for i, name := range fieldNames {
		if key == name {
			return i
		}
	}
	return -1
}
