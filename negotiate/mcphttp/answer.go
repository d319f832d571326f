package mcphttp

import (
	"bytes"
	"errors"
	"net/http"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/internal/rpcerr"
	"github.com/wopneg/wopneg/negotiate"
)

// The record follows the server: where the wrapped server contradicts a
// decision, the record says what the server did. An accepted
// decision is not recorded when it is made but when the wrapped server
// answers, before any byte of the answer leaves: the middleware reads as
// much of the answer as it needs, records accepted when the server served
// the revision decided and refused (reason unsupported) when it did not,
// and then lets the answer through unchanged.

// follow returns w watched: the accepted decision o for subject, whose
// event is e, is recorded once the wrapped handler's answer shows whether
// it served the revision, o's (or, when recorded, only when the answer
// contradicts it). method is the method the request's Mcp-Method header
// names, which decides whether the answer must confirm the revision, and
// observed the method of its one message, for Options.Observe; id is the
// id of that message, which a replacement answer carries; asked are the
// ids of a batch's requests (nil unless a batch), and requests how many of
// its messages ask for a response: an event stream is held until each is
// answered.
func (h *handler) follow(w http.ResponseWriter, r *http.Request, subject *negotiate.Subject, o *negotiate.Outcome, e *events.NegotiationDecided, method, observed string, id jsontext.Value, asked []jsontext.Value, requests int, recorded bool) *answerWatch {
	a := watchers.Get() // as release left it: all but its Hold zero
	a.h, a.r, a.subject, a.outcome, a.payload = h, r, subject, o, *e
	a.id, a.pending, a.observed, a.recorded = id, asked, observed, recorded
	if asked == nil && requests > 0 {
		a.one[0] = id
		a.pending = a.one[:]
	}
	a.Start(w, a, h.maxAnswer)
	if method == methodDiscover || method == methodInitialize {
		a.confirm = method
	}
	return a
}

// watchers pools the answer watchers, and the buffers they hold answers
// in, across requests.
var watchers = exchange.NewPool[answerWatch]()

// maxPooledAnswer bounds the buffer a pooled watcher keeps.
const maxPooledAnswer = 16 << 10

// release returns a to the pool, once the wrapped handler has returned.
func (a *answerWatch) release() {
	a.Release(maxPooledAnswer)
	a.watched = watched{}
	watchers.Put(a)
}

// dest is where r's events are written.
func (h *handler) dest(r *http.Request) negotiate.Destination {
	if h.opts.Destination == nil {
		return negotiate.Destination{}
	}
	return h.opts.Destination(r)
}

// answerWatch is the ResponseWriter the wrapped handler answers an
// accepted request through: the engine's Hold, with the MCP side of it
// (which answers must be read, how, and what is recorded).
type answerWatch struct {
	exchange.Hold
	watched
}

// watched is what an answerWatch knows of the request whose answer it
// watches: release zeroes it in place, and keeps the Hold.
type watched struct {
	h        *handler
	r        *http.Request
	subject  *negotiate.Subject
	outcome  *negotiate.Outcome // the decision, accepted
	payload  events.NegotiationDecided
	id       jsontext.Value
	confirm  string // discover or initialize, whose answer must confirm the revision; "" else
	recorded bool   // the acceptance was recorded before the handler ran
	// pending are the ids of the requests an event stream is held until
	// it answers (one is the array of a single request's).
	pending []jsontext.Value
	one     [1]jsontext.Value

	observed string // the request's method, for Options.Observe
	code     int    // the JSON-RPC error code the answer was read to carry
	// session is what an initialize settles for the session its answer
	// opens: pinned only when the answer serves the revision decided.
	session *session
	// onSession: the request is served on a remembered session, decided
	// at its initialize, and is observed only when its server refuses.
	onSession bool
}

// Holds: every answer is read, but a stream that answers no request of
// this one (a GET's), which shows nothing of the revision.
func (a *answerWatch) Holds(_ int, stream bool) bool { return !stream || len(a.pending) > 0 }

// observe settles the answer once the handler has returned (see Finish);
// a handler that wrote nothing answered 200, which a watcher beneath
// hears of too.
func (a *answerWatch) observe(int) {
	wrote := a.Status() != 0
	a.Finish()
	if o, ok := a.Underlying().(observer); ok && !wrote {
		o.observe(http.StatusOK)
	}
}

// AtEnd is the verdict of an answer that ended without showing one: a
// discover or initialize that confirmed nothing refused the revision;
// anything else served it.
func (a *answerWatch) AtEnd(bool) exchange.Verdict {
	if a.confirm != "" {
		return exchange.Refused
	}
	return exchange.Served
}

// Classify is the MCP reading of the answer's messages: a discover or
// initialize answer must confirm the revision; any other is refused by a
// -32022 among its responses, and an event stream is read until it has
// answered each request, as its client matches a response: by its id.
func (a *answerWatch) Classify(msg []byte, complete bool) exchange.Verdict {
	if !complete {
		return exchange.Undecided
	}
	if a.confirm != "" {
		return a.confirmed(msg)
	}
	if !a.Stream() && !versionRefusal.MayRefuse(msg) {
		return exchange.Served // no spelling of the refusal's code: read no further
	}
	read := versionRefusal.Read(msg, true)
	if read.Verdict == exchange.Refused {
		a.code = rpcerr.RPCMCPUnsupportedProtocolVersion
		return exchange.Refused
	}
	if a.pending = exchange.Answered(a.pending, read.IDs); a.Stream() && len(a.pending) > 0 {
		return exchange.Undecided
	}
	return exchange.Served
}

// confirmed reads a discover or initialize answer, which must confirm the
// revision. Its reply is read in a frame of its own, apart from the
// common answer's (see internal/exchange, "The record runs deep").
func (a *answerWatch) confirmed(msg []byte) exchange.Verdict {
	rep, err := readReply(msg)
	if a.Stream() && (err != nil || !exchange.Answers(rep.id, a.id)) {
		return exchange.Undecided // an event that is no response, or answers another request
	}
	a.code = int(rep.code)
	if err == nil && confirms(rep, a.confirm, a.outcome.Version) {
		return exchange.Served
	}
	return exchange.Refused
}

// Settle records the decision as the answer showed it: accepted when
// served (unless recorded before the handler ran), the server's refusal
// otherwise, under RequireAudit as a second event. It replaces the answer
// when the record failed under RequireAudit or the answer could not be
// read.
func (a *answerWatch) Settle(hold *exchange.Hold, v exchange.Verdict) bool {
	o := a.h.rec.Settled(a.r.Context(), a.h.dest(a.r), a.subject, a.outcome, &a.payload, v, a.recorded)
	if o.Rule != negotiate.RuleAudit && v != exchange.Unreadable {
		if v == exchange.Served && a.session != nil {
			a.h.pin(hold, a.session)
		}
		if !a.onSession || v != exchange.Served {
			a.h.observe(a.r, a.observed, &o, a.code)
		}
		return true
	}
	a.replace(hold, &o)
	return false
}

// replace answers in the server's place, when the record o of the
// answer is the audit's refusal or the answer could not be read.
func (a *answerWatch) replace(hold *exchange.Hold, o *negotiate.Outcome) {
	clear(hold.Header())
	limit := strconv.FormatInt(a.h.maxAnswer, 10)
	e := rpcerr.RPCError{Code: codeInternalError, Message: "the server's answer could not be read as its clients read it within " + limit + " bytes, which the middleware must do to record it"}
	if int64(len(hold.Held())) > a.h.maxAnswer {
		e.Message = "the server's answer exceeds " + limit + " bytes, more than the middleware reads to record it"
	}
	a.h.answerRefusal(hold.Underlying(), a.r, a.observed, a.id, http.StatusBadGateway, o, e)
}

// confirms reports whether rep, a server's answer to method (a discover
// or initialize), read strictly (a response the middleware could read two
// ways confirms nothing), shows version: a discover result that lists it,
// an initialize result that names it.
func confirms(rep reply, method, version string) bool {
	if method == methodDiscover {
		return rep.result && slices.Contains(rep.versions, version)
	}
	return rep.result && rep.protocolVersion == version
}

// versionRefusal is MCP's refusal of a revision, as the engine's lenient
// reader finds it in an answer (exchange.Refusal.Read): error.code -32022
// in any response, a response read whole.
var versionRefusal = exchange.Refusal{Code: rpcerr.RPCMCPUnsupportedProtocolVersion}

// reply is a JSON-RPC response, as far as this package reads one.
type reply struct {
	id              []byte // as written
	result, isError bool
	versions        []string // result.supportedVersions; nil when absent
	protocolVersion string   // result.protocolVersion, when a string
	code            int64    // error.code
	message         string   // error.message
	supported       []string // error.data.supported; nil when absent
	reason          string   // error.data.reason, when a string
}

// readReply reads b, one JSON value, as a JSON-RPC response, by the
// module's rules (body.go): an object with exactly one of result and
// error, whose error.code is an integer and error.message a string, and
// nothing after it. What it read is returned even with an error.
func readReply(b []byte) (reply, error) {
	var rep reply
	r := newReader(b)
	defer r.release()
	err := errors.New("the answer is not a JSON object")
	if r.d.PeekKind() == '{' {
		err = r.object(func(key []byte) error {
			// A key a case-folding client reads as result or error is
			// refused: the response would read two ways.
			switch k, err := matchKey(key, "result", "error", "id"); {
			case err != nil:
				return err
			case k == "id":
				v, err := r.d.ReadValue()
				rep.id = bytes.Clone(v)
				return err
			case k == "result":
				rep.result = true
				return r.object(func(key []byte) error {
					switch string(key) {
					case "supportedVersions":
						return r.strings(&rep.versions)
					case "protocolVersion":
						var err error
						rep.protocolVersion, _, err = r.string()
						return err
					}
					return r.skip()
				})
			case k == "error":
				rep.isError = true
				return r.object(func(key []byte) error { return r.replyError(&rep, key) })
			}
			return r.skip()
		})
	}
	if err == nil && rep.result == rep.isError {
		err = errors.New("a response has exactly one of result and error")
	}
	return rep, r.finish(err)
}

// replyError reads the member key of a response's error into rep.
func (r *bodyReader) replyError(rep *reply, key []byte) error {
	switch string(key) {
	case "code":
		v, err := r.d.ReadValue()
		if err == nil {
			if rep.code, err = strconv.ParseInt(string(v), 10, 64); err != nil {
				err = errors.New("error.code is not an integer") // the peer's text is not echoed: the error is logged
			}
		}
		return err
	case "message":
		var ok bool
		var err error
		if rep.message, ok, err = r.string(); err == nil && !ok {
			err = errors.New("error.message is not a string")
		}
		return err
	case "data":
		var err error
		return r.object(func(key []byte) error {
			switch string(key) {
			case "supported":
				return r.strings(&rep.supported)
			case "reason":
				rep.reason, _, err = r.string()
				return err
			}
			return r.skip()
		})
	}
	return r.skip()
}
