package events

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/policy"
)

// The bounds of a [LogHandler] whose fields leave them zero.
const (
	defaultMaxEvents    = 1000
	defaultPollInterval = time.Duration(250_000_000) // 250 ms
	defaultMaxStreams   = 64
	keepAliveEvery      = time.Duration(15_000_000_000) // 15 s
	defaultPollTimeout  = 30
)

// LogHandler serves a [Log] over HTTP, tenant by tenant, with the shapes
// of spec/v2/core/events.md (openwop/openwop):
//
//   - GET /runs/{runId}/events/poll[?afterSequence=N][&timeout=S] answers
//     {runId, events, lastSequence, status, isTerminal}: the run events
//     whose sequence is above afterSequence (all when it is absent), in
//     sequence order, at most MaxEvents of them, as closed RunEventDoc
//     envelopes. afterSequence is an integer from 0, timeout one from 1 to
//     60 (seconds to wait for an event when the run is not terminal);
//     another parameter, a repeated one or a malformed value is 400
//     validation_error naming it. The runId may come with its '/' raw,
//     percent-encoded or projected as ~2F.
//   - GET /host/events is a stream of server-sent events: one frame per
//     durable host event of the caller's tenant, "event: <type>",
//     "id: <eventId>", "data: <host-event envelope>", recorded after the
//     stream opened, or after the event a Last-Event-ID header names. A
//     keep-alive comment goes out every 15 seconds. At most MaxStreams are
//     open at once; one more is 429 rate_limited with Retry-After.
//
// Every request is the caller's: Subject resolves it, and only a Subject
// that Policy counts as authenticated reads anything, and only its own
// tenant's events. No caller is 401 unauthenticated. A run of another
// tenant is 404 not_found, exactly as a run that does not exist, never 403,
// which would say that it exists. A host event of an unauthenticated
// exchange belongs to no tenant, and reaches no stream.
//
// The zero LogHandler serves nothing: with no Log or no Subject every
// request is refused. The error bodies are v2 envelopes.
type LogHandler struct {
	// Log is where the events are read from.
	Log Log
	// Subject resolves the caller of a request, as the adapters' hook of
	// the same name does; nil, or a nil Subject, is no caller.
	Subject func(*http.Request) *policy.Subject
	// Policy says who counts as authenticated (policy.Policy.IsAuthenticated).
	Policy policy.Policy
	// RunStatus is the run's snapshot status and whether it is terminal;
	// nil reports every run "completed" and terminal, as the audit runs a
	// host opens per exchange are.
	RunStatus func(ctx context.Context, runID string) (status string, terminal bool)
	// MaxEvents bounds the events of one poll response and of one read of
	// the log for a stream; zero is 1,000.
	MaxEvents int
	// PollInterval is how often a host-event stream, or a poll waiting on
	// a run that is not terminal, reads the log again; zero is 250 ms.
	PollInterval time.Duration
	// MaxStreams bounds the host-event streams open at once; zero is 64.
	MaxStreams int

	streams atomic.Int64
}

// ServeHTTP serves the two routes; any other path is 404 and any other
// method 405.
func (h *LogHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	runID, isRuns := strings.CutPrefix(path, "/runs/")
	runID, isPoll := strings.CutSuffix(runID, "/events/poll")
	isPoll = isPoll && isRuns
	if !isPoll && path != "/host/events" {
		writeLogError(w, http.StatusNotFound, "not_found", "no operation at this path", nil)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeLogError(w, http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not served here", nil)
		return
	}
	var subject *policy.Subject
	if h.Subject != nil {
		subject = h.Subject(r)
	}
	if h.Log == nil || !h.Policy.IsAuthenticated(subject) {
		writeLogError(w, http.StatusUnauthorized, "unauthenticated", "the event log is read by an authenticated caller, for its own tenant", nil)
		return
	}
	if isPoll {
		h.poll(w, r, subject.Tenant, runID)
		return
	}
	h.stream(w, r, subject.Tenant)
}

// pollQuery is the validated query of a poll.
type pollQuery struct {
	after   int64
	timeout int
}

func (h *LogHandler) poll(w http.ResponseWriter, r *http.Request, tenant, runID string) {
	if !strings.Contains(runID, "/") {
		runID = strings.Replace(runID, "~2F", "/", 1)
	}
	if !validRunID(runID) {
		writeLogError(w, http.StatusBadRequest, "validation_error",
			"runId is not [anon:]tenant/id (tenant 1 to 128, id 16 to 128 of [A-Za-z0-9._~-])", map[string]any{"parameter": "runId"})
		return
	}
	q, bad := parsePollQuery(r.URL.RawQuery)
	if bad != "" {
		writeLogError(w, http.StatusBadRequest, "validation_error", bad, nil)
		return
	}
	status, terminal := "completed", true
	if h.RunStatus != nil {
		status, terminal = h.RunStatus(r.Context(), runID)
	}
	limit := positive(h.MaxEvents, defaultMaxEvents)
	evs, last, err := h.Log.RunEvents(r.Context(), tenant, runID, q.after, limit)
	if err == nil && len(evs) == 0 && last >= 0 && !terminal {
		evs, last, err = h.waitRun(r.Context(), tenant, runID, q, limit)
	}
	if err != nil {
		writeLogError(w, http.StatusInternalServerError, "internal_error", "the event log could not be read", nil)
		return
	}
	if last < 0 {
		writeLogError(w, http.StatusNotFound, "not_found", "no run "+runID+" is readable by the caller", nil)
		return
	}
	body := append([]byte(`{"runId":`), appendJSONString(nil, runID)...)
	body = append(body, `,"events":[`...)
	for i := range evs {
		if i > 0 {
			body = append(body, ',')
		}
		if body, err = evs[i].appendChecked(body); err != nil {
			writeLogError(w, http.StatusInternalServerError, "internal_error", "the event log holds an event that cannot be written", nil)
			return
		}
	}
	body = append(body, `],"lastSequence":`...)
	body = strconv.AppendInt(body, last, 10)
	body = append(body, `,"status":`...)
	body = appendJSONString(body, status)
	body = append(body, `,"isTerminal":`...)
	body = strconv.AppendBool(body, terminal)
	body = append(body, '}')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(body)
}

// waitRun reads the run again every PollInterval until it has an event
// after q.after or q.timeout seconds have passed.
func (h *LogHandler) waitRun(ctx context.Context, tenant, runID string, q pollQuery, limit int) ([]Event, int64, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(q.timeout)*time.Second)
	defer cancel()
	tick := time.NewTicker(positive(h.PollInterval, defaultPollInterval))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
		// A tick and the end of the wait can come together (the default
		// interval divides every timeout): the end wins, and so does an
		// end that came during a read, which the read then reports as its
		// error. Either way what the log holds now is the answer.
		if ctx.Err() != nil {
			return h.Log.RunEvents(context.WithoutCancel(ctx), tenant, runID, q.after, limit)
		}
		evs, last, err := h.Log.RunEvents(ctx, tenant, runID, q.after, limit)
		if ctx.Err() == nil && (err != nil || len(evs) > 0) {
			return evs, last, err
		}
	}
}

// parsePollQuery validates the poll's query, or says what is wrong with it.
func parsePollQuery(raw string) (pollQuery, string) {
	q := pollQuery{after: -1, timeout: defaultPollTimeout}
	values, err := url.ParseQuery(raw)
	if err != nil {
		return q, "the query string is malformed"
	}
	for name, vs := range values {
		if len(vs) != 1 {
			return q, "query parameter " + strconv.Quote(name) + " is repeated"
		}
		n, ok := decimal(vs[0])
		if name == "afterSequence" {
			if !ok {
				return q, "afterSequence must be an integer from 0"
			}
			q.after = n
		} else if name == "timeout" {
			if !ok || n < 1 || n > 60 {
				return q, "timeout must be an integer from 1 to 60 (seconds)"
			}
			q.timeout = int(n)
		} else {
			return q, "query parameter " + strconv.Quote(name) + " is not one of afterSequence, timeout"
		}
	}
	return q, ""
}

// decimal parses a non-negative decimal integer of at most 18 digits, so
// that it cannot overflow.
func decimal(s string) (int64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int64(s[i]-'0')
	}
	return n, true
}

// stream serves /host/events to tenant until the caller goes away.
func (h *LogHandler) stream(w http.ResponseWriter, r *http.Request, tenant string) {
	if r.URL.RawQuery != "" {
		writeLogError(w, http.StatusBadRequest, "validation_error", "/host/events takes no query parameters", nil)
		return
	}
	cursor := r.Header.Get("Last-Event-ID")
	if cursor != "" && !validID(cursor, 1) {
		writeLogError(w, http.StatusBadRequest, "validation_error", "Last-Event-ID is not an eventId", map[string]any{"header": "Last-Event-ID"})
		return
	}
	if h.streams.Add(1) > int64(positive(h.MaxStreams, defaultMaxStreams)) {
		h.streams.Add(-1)
		w.Header().Set("Retry-After", "1")
		writeLogError(w, http.StatusTooManyRequests, "rate_limited", "too many host-event streams are open", nil)
		return
	}
	defer h.streams.Add(-1)
	ctx := r.Context()
	limit := positive(h.MaxEvents, defaultMaxEvents)
	var pending []Event
	if cursor == "" {
		// A new stream starts at the newest event: it is sent what is
		// recorded from now on.
		newest, err := h.Log.HostEvents(ctx, tenant, "", 1)
		if err != nil {
			writeLogError(w, http.StatusInternalServerError, "internal_error", "the event log could not be read", nil)
			return
		}
		if len(newest) == 1 {
			cursor = newest[0].ID
		}
	} else {
		var err error
		if pending, err = h.Log.HostEvents(ctx, tenant, cursor, limit); err != nil {
			writeLogError(w, http.StatusInternalServerError, "internal_error", "the event log could not be read", nil)
			return
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if err := rc.Flush(); err != nil || r.Method == http.MethodHead {
		return
	}
	tick := time.NewTicker(positive(h.PollInterval, defaultPollInterval))
	defer tick.Stop()
	keepAlive := time.NewTicker(keepAliveEvery)
	defer keepAlive.Stop()
	var frame []byte
	for {
		if len(pending) > 0 {
			frame = frame[:0]
			for i := range pending {
				frame = appendFrame(frame, &pending[i])
			}
			cursor = pending[len(pending)-1].ID
			if _, err := w.Write(frame); err != nil || rc.Flush() != nil {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-keepAlive.C:
			if _, err := w.Write([]byte(": keep-alive\n\n")); err != nil || rc.Flush() != nil {
				return
			}
			pending = nil
			continue
		case <-tick.C:
		}
		var err error
		if pending, err = h.Log.HostEvents(ctx, tenant, cursor, limit); err != nil {
			return
		}
	}
}

// appendFrame appends e as one server-sent event: a durable event carries
// its eventId as the frame's id, so that Last-Event-ID resumes after it.
func appendFrame(dst []byte, e *Event) []byte {
	data, err := e.appendChecked(nil)
	if err != nil || e.RunID != "" {
		return dst // a store hands out only valid host events; skip any other
	}
	// Every host event here is a durable negotiation.decided.
	dst = append(dst, "event: "+typeNegotiationDecided+"\nid: "...)
	dst = append(dst, e.ID...)
	dst = append(dst, "\ndata: "...)
	dst = append(dst, data...)
	return append(dst, "\n\n"...)
}

// positive is v, or def when v is not positive.
func positive[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// writeLogError answers a v2 error envelope with status.
func writeLogError(w http.ResponseWriter, status int, code, message string, details map[string]any) {
	body, _ := json.Marshal(wperrors.Error{Code: wperrors.Code(code), Message: message, Details: details})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
