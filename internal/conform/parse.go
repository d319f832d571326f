package conform

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/strictjson"
)

// decidedType is the event type the runner reads.
const decidedType = "negotiation.decided"

// Bounds of the event stream the runner reads.
const (
	maxSSELine  = 64 << 10
	maxSSEBytes = 4 << 20
	maxFrames   = 1024
)

// record is one negotiation.decided record the host served: the envelope
// as an object (for its keys), its payload, and why it does not validate,
// if it does not.
type record struct {
	Envelope map[string]any
	Payload  map[string]any
	// Invalid is the envelope's or payload's validation error, or nil.
	Invalid error
}

// names reports whether rec records an exchange of protocol p that
// requested named: the record an inbound leg waits for and judges.
func (rec record) names(p facets.Protocol, named string) bool {
	return rec.Payload["requested"] == named && rec.Payload["protocol"] == string(p)
}

var errNotObject = errors.New("not a JSON object")

// parseRecord reads one event envelope, keeping it whatever its validity:
// a record that does not validate is judged, not dropped. ok is false when
// data is no JSON object or not a negotiation.decided event.
func parseRecord(data []byte) (record, bool) {
	var env map[string]any
	if strictjson.Decode(data, &env) != nil {
		return record{}, false
	}
	return recordOf(env)
}

// recordOf is parseRecord of a decoded envelope.
func recordOf(env map[string]any) (record, bool) {
	if t, _ := str(env, "type"); t != decidedType {
		return record{}, false
	}
	rec := record{Envelope: env, Payload: obj(env, "payload")}
	data, err := json.Marshal(env)
	if err != nil {
		rec.Invalid = err
		return rec, true
	}
	var e events.Event
	rec.Invalid = e.UnmarshalJSON(data)
	return rec, true
}

// parsePoll reads the answer of GET /runs/{runId}/events/poll, {"events":
// [...]}, and returns its negotiation.decided records in order.
func parsePoll(data []byte) ([]record, error) {
	var doc map[string]any
	if err := strictjson.Decode(data, &doc); err != nil {
		return nil, err
	}
	arr, ok := doc["events"].([]any)
	if !ok {
		return nil, fmt.Errorf("poll answer has no events array")
	}
	var out []record
	for i, v := range arr {
		env, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("events[%d]: %w", i, errNotObject)
		}
		if rec, ok := recordOf(env); ok {
			out = append(out, rec)
		}
	}
	return out, nil
}

// frame is one server-sent event.
type frame struct {
	Event string
	Data  string
}

// readSSE reads server-sent events (the WHATWG event-stream format: event
// and data fields, comments, blank-line dispatch) from r, at most
// maxSSEBytes and lines of at most maxSSELine, calling each for every
// frame until it returns false. A frame with no data is not dispatched.
func readSSE(r io.Reader, each func(frame) bool) error {
	sc := bufio.NewScanner(io.LimitReader(r, maxSSEBytes))
	sc.Buffer(make([]byte, 0, 4096), maxSSELine)
	ev, data, has := "message", []string(nil), false
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if has && !each(frame{Event: ev, Data: strings.Join(data, "\n")}) {
				return nil
			}
			ev, data, has = "message", nil, false
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		if field == "event" {
			ev = value
		} else if field == "data" {
			data, has = append(data, value), true
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if has {
		each(frame{Event: ev, Data: strings.Join(data, "\n")})
	}
	return nil
}

// runIDOf is the run a seam answer names: runId, or details.runId in an
// error envelope.
func runIDOf(body map[string]any) (string, bool) {
	if id, ok := str(body, "runId"); ok {
		return id, true
	}
	return str(obj(body, "details"), "runId")
}
