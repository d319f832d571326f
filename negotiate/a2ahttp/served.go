package a2ahttp

import (
	"net/http"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/internal/rpcerr"
	"github.com/wopneg/wopneg/negotiate"
)

// The record follows the server: an accepted decision is recorded once the
// wrapped handler's answer shows whether it served the version, before any
// byte of that answer leaves. See "The record follows the server" in the
// package doc.

// defaultMaxAnswerBytes bounds how much of an answer is held while it is
// read: a version refusal is a small error, and an answer is settled as
// soon as it shows a result.
const defaultMaxAnswerBytes = 64 << 10

// watchers keeps answerWatches, and the buffers they hold answers in, for
// the next request: most answers are held whole, and a buffer that has
// grown to an answer's size fits the next one.
var watchers = exchange.NewPool[answerWatch]()

// maxPooledBytes bounds the buffer a pooled answerWatch keeps.
const maxPooledBytes = 16 << 10

// watch returns an answerWatch for w, from the pool.
func watch(w http.ResponseWriter, m *Middleware, r *http.Request) *answerWatch {
	a := watchers.Get() // as release left it: all but its Hold zero
	a.m, a.r = m, r
	a.Start(w, a, int64(m.maxAnswer))
	return a
}

// release returns a to the pool once the wrapped handler has returned,
// when nothing may use it any more.
func (a *answerWatch) release() {
	a.Release(maxPooledBytes)
	a.watched = watched{}
	watchers.Put(a)
}

// overflowMessage is the internal error that replaces an answer the
// middleware could not read.
const overflowMessage = "the A2A server's answer could not be read within its bound; the exchange is refused"

// answerWatch is the ResponseWriter the wrapped handler answers through:
// the engine's Hold, with the A2A side of it. The answer leaves with the
// A2A-Version of the version served, or, when the server refused the
// version, with the server's own refusal and no A2A-Version.
type answerWatch struct {
	exchange.Hold
	watched
}

// watched is what an answerWatch knows of the request whose answer it
// watches: release zeroes it in place, and keeps the Hold.
type watched struct {
	m        *Middleware
	r        *http.Request
	subject  *negotiate.Subject
	payload  events.NegotiationDecided // the decision's event
	card     bool
	recorded bool              // the acceptance was recorded before the handler ran
	outcome  negotiate.Outcome // the decision, and the version it served
	body     *bodyPrefix       // the request's body, for Options.Observe
	id       jsontext.Value    // the answer's JSON-RPC id, once read
}

// Holds: any answer is read on the JSON-RPC binding, where a refusal is a
// 200; on HTTP+JSON and the card path, a stream and any status but 200,
// which a2a-go's REST client and this module's card fetch read as an
// error, 201 to 299 included.
func (a *answerWatch) Holds(status int, stream bool) bool {
	return !a.card && !a.m.opts.HTTPJSON || status != http.StatusOK || stream
}

// AtEnd: an answer that showed no refusal served the version (one not
// written at all is net/http's 200 with nothing).
func (a *answerWatch) AtEnd(bool) exchange.Verdict { return exchange.Served }

// Classify is the A2A reading of answer text ([read]). It keeps the
// answer's JSON-RPC id for a replacement.
func (a *answerWatch) Classify(b []byte, complete bool) exchange.Verdict {
	r := read(b, complete, a.Stream())
	if r.ID != nil {
		a.id = r.ID
	}
	return r.Verdict
}

// versionRefusal is A2A's refusal of a version, as the engine's lenient
// reader finds it (exchange.Refusal.Read): error.code -32009, or an error
// whose data or details carry an ErrorInfo with reason
// VERSION_NOT_SUPPORTED; a result first serves an answer cut short at
// the bound. The event of an HTTP+JSON stream is a StreamResponse, not a
// JSON-RPC response: one of its members answers the call, as a result
// does (a2a-go's REST client reads each event so).
var versionRefusal = exchange.Refusal{Code: rpcerr.RPCA2AVersionNotSupported, Reason: rpcerr.A2AReasonVersionNotSupported, ResultFirst: true,
	Answers: []string{"message", "task", "statusUpdate", "artifactUpdate"}}

// read reads answer text for the refusal, msg an answer (whole when
// complete) or, of an event stream, one event: an answer whose bytes
// cannot spell a refusal serves unread, and an event that holds no
// response (a request or notification sent before it) decides nothing.
func read(msg []byte, complete, stream bool) exchange.Reading {
	if complete && !stream && !versionRefusal.MayRefuse(msg) {
		return exchange.Reading{Verdict: exchange.Served}
	}
	r := versionRefusal.Read(msg, complete)
	if stream && r.Verdict == exchange.Served && r.Responses == 0 {
		r.Verdict = exchange.Undecided
	}
	return r
}

// Settle records the decision as the answer showed it (a refusal in a
// second event when the acceptance was recorded before the handler ran),
// and readies the head; when a required record failed or the answer could
// not be read, it answers in the server's place.
func (a *answerWatch) Settle(hold *exchange.Hold, v exchange.Verdict) bool {
	o := a.m.rec.Settled(a.r.Context(), negotiate.Destination{}, a.subject, &a.outcome, &a.payload, v, a.recorded)
	head := hold.Header()
	if o.Rule == negotiate.RuleAudit || v == exchange.Unreadable {
		msg := overflowMessage
		if o.Rule == negotiate.RuleAudit {
			msg = auditMessage
		}
		clear(head)
		head[canonicalHeader] = []string{a.m.adv.Preferred}
		if a.card {
			varyOnVersion(head)
		}
		a.m.answerInternal(hold.Underlying(), a.card, msg, a.id)
		a.m.observe(a.r, a.body, &o, a.m.rpcCode(a.card, -32603))
		return false
	}
	code := 0
	if v == exchange.Refused {
		code = a.m.rpcCode(a.card, rpcerr.RPCA2AVersionNotSupported)
	}
	if _, own := head[canonicalHeader]; v == exchange.Served && !own {
		head[canonicalHeader] = []string{a.outcome.Version}
	} else if v != exchange.Served {
		delete(head, canonicalHeader)
	}
	if a.card {
		varyOnVersion(head)
	}
	a.m.observe(a.r, a.body, &o, code)
	return true
}

// Contradicted records the server's refusal of the version in an event
// stream it released at a first result, after that result: a2a-go gives
// its caller the refusal too. The acceptance is on the record already, so
// the refusal is a second event.
func (a *answerWatch) Contradicted() {
	_, _ = a.m.rec.Contradicted(a.r.Context(), negotiate.Destination{}, a.subject, &a.outcome, &a.payload)
}

// varyOnVersion makes sure an answer on the card path says it depends on
// the version asked for, whatever the handler set.
func varyOnVersion(h http.Header) {
	for _, v := range h.Values("Vary") {
		for elem := range strings.SplitSeq(v, ",") {
			if e := trimOWS(elem); e == "*" || strings.EqualFold(e, headerName) {
				return
			}
		}
	}
	h.Add("Vary", headerName)
}
