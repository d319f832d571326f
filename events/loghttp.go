package events

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/policy"
)

// The bounds of a [LogHandler] whose fields leave them zero.
const (
	defaultMaxEvents        = 1000
	defaultPollInterval     = 250 * time.Millisecond
	defaultMaxStreams       = 64
	defaultTenantStreams    = 8
	defaultStreamLifetime   = 10 * time.Minute
	defaultWriteTimeout     = 10 * time.Second
	defaultKeepAlive        = 15 * time.Second
	defaultMaxPollWaiters   = 256
	defaultTenantPollWaiter = 16
	defaultPollTimeout      = 30
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
//     keep-alive comment goes out every KeepAlive. HEAD answers the
//     stream's headers and ends.
//
// Every request is the caller's: Subject resolves it, and only a Subject
// that Policy counts as authenticated reads anything, and only its own
// tenant's events. No caller is 401 unauthenticated. A run of another
// tenant is 404 not_found, exactly as a run that does not exist, never 403,
// which would say that it exists. A host event of an unauthenticated
// exchange belongs to no tenant, and reaches no stream.
//
// # Bounds under hostile tenants
//
// What a caller holds open is bounded, and no tenant can take another's
// share of it. Streams and waiting polls each have a capacity (MaxStreams,
// MaxPollWaiters) and a share per tenant (MaxTenantStreams,
// MaxTenantPollWaiters, never more than the capacity). A tenant at its
// share is refused 429 rate_limited with Retry-After, whatever room is
// left. When the capacity is full, a tenant is not simply refused: it
// takes the oldest stream (or waiter) of the tenant holding the most, as
// long as that tenant holds at least two more than the newcomer will. So
// a tenant is refused for want of room only when the capacity is shared
// evenly (no tenant holds more than one above it), and any number of
// tenants, colluding or not, leave every other tenant about
// capacity/tenants. A stream ended that way ends as at the end of its
// lifetime (an EventSource reconnects with Last-Event-ID and loses
// nothing); a poll whose wait is ended that way is answered at once with
// what the log holds, as at its timeout.
//
// Every stream ends StreamLifetime after it opened, and every write to it
// (a frame, a keep-alive, the end of the response) has a deadline of
// WriteTimeout, set with [http.ResponseController.SetWriteDeadline] and
// never later than StreamLifetime + WriteTimeout after the stream opened.
// A reader that stops reading is therefore dropped once a write finds its
// connection's buffers full for WriteTimeout — a keep-alive goes out every
// KeepAlive, so that a connection that went away is seen within KeepAlive
// — and in any case it holds its slot and its connection at most
// StreamLifetime + WriteTimeout (10 minutes 10 seconds by default). A
// ResponseWriter that cannot take a write deadline (one a middleware
// wraps without an Unwrap method) is not streamed to: the stream is 500
// internal_error rather than unbounded. A poll's answer is one body of at
// most MaxEvents events; its waiter slot is given back before it is
// written, with a deadline of WriteTimeout where the ResponseWriter takes
// one.
//
// The defaults: 64 streams, 8 per tenant; 256 waiting polls, 16 per
// tenant; a stream lifetime of 10 minutes, a write timeout of 10 seconds,
// a keep-alive every 15 seconds. A handler's bounds are read per request,
// so they are set before it serves.
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
	// MaxStreams bounds the host-event streams open at once, over all
	// tenants; zero is 64.
	MaxStreams int
	// MaxTenantStreams bounds the host-event streams one tenant has open
	// at once; zero is 8, and it is never more than MaxStreams.
	MaxTenantStreams int
	// StreamLifetime is how long a host-event stream lasts before the
	// handler ends it; zero is 10 minutes.
	StreamLifetime time.Duration
	// WriteTimeout bounds each write of a stream and a poll's answer; zero
	// is 10 seconds.
	WriteTimeout time.Duration
	// KeepAlive is how often a stream with nothing to send writes a
	// comment frame; zero is 15 seconds.
	KeepAlive time.Duration
	// MaxPollWaiters bounds the polls waiting for an event at once, over
	// all tenants; zero is 256.
	MaxPollWaiters int
	// MaxTenantPollWaiters bounds the polls one tenant has waiting at
	// once; zero is 16, and it is never more than MaxPollWaiters.
	MaxTenantPollWaiters int

	streams slots
	waiters slots
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
		waiter := admit(w, &h.waiters, tenant, positive(h.MaxPollWaiters, defaultMaxPollWaiters),
			positive(h.MaxTenantPollWaiters, defaultTenantPollWaiter), "too many polls of this tenant are waiting")
		if waiter == nil {
			return
		}
		evs, last, err = h.waitRun(r.Context(), waiter, tenant, runID, q, limit)
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
	// A writer that takes no deadline is still answered: the body is
	// bounded, and the answer holds no waiter slot.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(positive(h.WriteTimeout, defaultWriteTimeout)))
	_, _ = w.Write(body)
}

// waitRun reads the run again every PollInterval until it has an event
// after q.after, q.timeout seconds have passed, or the waiter's slot is
// taken for another tenant; it gives the slot back when it returns.
func (h *LogHandler) waitRun(ctx context.Context, waiter *slot, tenant, runID string, q pollQuery, limit int) ([]Event, int64, error) {
	defer h.waiters.give(waiter)
	ctx, cancel := context.WithTimeout(ctx, time.Duration(q.timeout)*time.Second)
	defer cancel()
	tick := time.NewTicker(positive(h.PollInterval, defaultPollInterval))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
		case <-waiter.ended:
			cancel()
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

// stream serves /host/events to tenant until the caller goes away, the
// stream's lifetime ends, its slot is taken for another tenant, or a write
// misses its deadline.
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
	slot := admit(w, &h.streams, tenant, positive(h.MaxStreams, defaultMaxStreams),
		positive(h.MaxTenantStreams, defaultTenantStreams), "too many host-event streams are open for this tenant")
	if slot == nil {
		return
	}
	defer h.streams.give(slot)
	lifetime := positive(h.StreamLifetime, defaultStreamLifetime)
	writeTimeout := positive(h.WriteTimeout, defaultWriteTimeout)
	end := time.Now().Add(lifetime + writeTimeout) // no write is allowed past it
	rc := http.NewResponseController(w)
	// deadline bounds the next write: WriteTimeout from now, and never
	// past the stream's end.
	deadline := func() error {
		d := time.Now().Add(writeTimeout)
		if d.After(end) {
			d = end
		}
		return rc.SetWriteDeadline(d)
	}
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
	if err := deadline(); err != nil && r.Method != http.MethodHead {
		writeLogError(w, http.StatusInternalServerError, "internal_error", "the response cannot be given a write deadline, so it is not streamed", nil)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil || r.Method == http.MethodHead {
		return
	}
	// send writes b with its deadline and flushes it; false is a reader
	// that is gone or did not take it in time.
	send := func(b []byte) bool {
		if deadline() != nil {
			return false
		}
		_, err := w.Write(b)
		return err == nil && rc.Flush() == nil
	}
	tick := time.NewTicker(positive(h.PollInterval, defaultPollInterval))
	defer tick.Stop()
	keepAlive := time.NewTicker(positive(h.KeepAlive, defaultKeepAlive))
	defer keepAlive.Stop()
	over := time.NewTimer(lifetime)
	defer over.Stop()
	var frame []byte
	for {
		if len(pending) > 0 {
			frame = frame[:0]
			for i := range pending {
				frame = appendFrame(frame, &pending[i])
			}
			cursor = pending[len(pending)-1].ID
			if !send(frame) {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-over.C:
			// The end of the response is a write too.
			_ = deadline()
			return
		case <-slot.ended:
			_ = deadline()
			return
		case <-keepAlive.C:
			if !send([]byte(": keep-alive\n\n")) {
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

// slots is a capacity that tenants share: streams, or waiting polls. A
// tenant is given a slot up to its share; when every slot is held, it
// takes the oldest slot of the tenant holding the most, as long as that
// tenant holds at least two more than the newcomer, so that the capacity
// ends up spread evenly however many tenants press on it. The zero slots
// is empty.
type slots struct {
	mu    sync.Mutex
	held  map[string][]*slot // by tenant, oldest first
	total int
}

// slot is one tenant's hold on a slots.
type slot struct {
	tenant string
	ended  chan struct{} // closed when the slot is taken for another tenant
}

// take gives tenant a slot of capacity, of which it may hold share, or nil
// when it may have none.
func (s *slots) take(tenant string, capacity, share int) *slot {
	s.mu.Lock()
	defer s.mu.Unlock()
	mine := len(s.held[tenant])
	if mine >= share {
		return nil
	}
	if s.total >= capacity {
		var heaviest []*slot
		for _, hs := range s.held {
			if len(hs) > len(heaviest) {
				heaviest = hs
			}
		}
		if len(heaviest) < mine+2 {
			return nil
		}
		oldest := heaviest[0]
		s.remove(oldest)
		close(oldest.ended)
	}
	if s.held == nil {
		s.held = make(map[string][]*slot)
	}
	x := &slot{tenant: tenant, ended: make(chan struct{})}
	s.held[tenant] = append(s.held[tenant], x)
	s.total++
	return x
}

// admit takes a slot of s for tenant, of capacity with share for each
// tenant (never more than capacity), or answers 429 with full and returns
// nil.
func admit(w http.ResponseWriter, s *slots, tenant string, capacity, share int, full string) *slot {
	x := s.take(tenant, capacity, min(share, capacity))
	if x == nil {
		w.Header().Set("Retry-After", "1")
		writeLogError(w, http.StatusTooManyRequests, "rate_limited", full, nil)
	}
	return x
}

// give gives x back, unless it was taken for another tenant.
func (s *slots) give(x *slot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.remove(x)
}

// remove drops x from the slots it is held in, if it still is.
func (s *slots) remove(x *slot) {
	hs := s.held[x.tenant]
	i := slices.Index(hs, x)
	if i < 0 {
		return
	}
	s.total--
	if len(hs) == 1 {
		delete(s.held, x.tenant)
		return
	}
	s.held[x.tenant] = slices.Delete(hs, i, i+1)
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
