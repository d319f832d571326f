package a2ahttp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
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

// unservedVersion is a version no host offers, as the only one the server
// speaks: deciding the request again with it makes the decision refuse
// the request as unsupported, which is what the server did.
const unservedVersion = "65535.0"

// watchers keeps answerWatches, and the buffers they hold answers in, for
// the next request: most answers are held whole, and a buffer that has
// grown to an answer's size fits the next one.
var watchers = sync.Pool{New: func() any { return new(answerWatch) }}

// maxPooledBytes bounds the buffer a pooled answerWatch keeps.
const maxPooledBytes = 16 << 10

// watch returns an answerWatch for w, from the pool.
func watch(w http.ResponseWriter, m *Middleware, r *http.Request) *answerWatch {
	a := watchers.Get().(*answerWatch)
	*a = answerWatch{ResponseWriter: w, m: m, r: r, held: a.held[:0], limit: m.maxAnswer}
	return a
}

// release returns a to the pool once the wrapped handler has returned,
// when nothing may use it any more.
func (a *answerWatch) release() {
	held := a.held[:0]
	if cap(held) > maxPooledBytes {
		held = nil
	}
	*a = answerWatch{held: held}
	watchers.Put(a)
}

// errAnswerReplaced is what the wrapped handler's writes return once its
// answer has been replaced by the middleware's.
var errAnswerReplaced = errors.New("a2ahttp: the answer was replaced by the middleware's")

// overflowMessage answers a request whose answer did not show, within the
// bound, whether the server served the version.
const overflowMessage = "the A2A server's answer could not be read within its bound; the exchange is refused"

// verdict is what an answer showed of the version decided.
type verdict uint8

const (
	undecided verdict = iota // more of the answer is needed
	served                   // no version refusal: the decision stands
	refused                  // the server refused the version
)

// The states of an answerWatch.
const (
	watching = iota // nothing written yet
	holding         // the head and the first bytes are held
	released        // recorded; the answer goes through
	replaced        // the middleware answered instead
)

// answerWatch is the ResponseWriter the wrapped handler answers an accepted
// request through. It holds the head of the answer and, while it must read
// them, its first bytes (up to limit); it records the decision as the
// answer shows it, then writes what it held and lets the rest through.
type answerWatch struct {
	http.ResponseWriter
	m        *Middleware
	r        *http.Request
	subject  *negotiate.Subject
	payload  events.NegotiationDecided // the decision's event
	version  string                    // the version decided
	card     bool
	recorded bool              // the acceptance was recorded before the handler ran
	outcome  negotiate.Outcome // the decision, for Options.Observe
	body     *bodyPrefix       // the request's body, for Options.Observe
	// everyStatus says any answer may be a refusal: a JSON-RPC client reads
	// an error whatever the status. On HTTP+JSON, and for the card, only
	// an error status or an event of a stream is.
	everyStatus bool
	limit       int

	state  uint8
	status int
	// implicit says the handler wrote before it wrote a status: net/http
	// then sniffs a Content-Type the handler did not set from the first
	// bytes, which only a write without a status keeps.
	implicit bool
	head     http.Header // the head as it was when the status was written
	sse      bool
	held     []byte
	events   exchange.EventScanner
	id       jsontext.Value // the answer's JSON-RPC id, once read
}

func (a *answerWatch) WriteHeader(status int) {
	if a.state == released || a.state == watching && status < 200 {
		// Informational answers go before the real one; a superfluous
		// status is net/http's to report.
		a.ResponseWriter.WriteHeader(status)
		return
	}
	if a.state != watching {
		return // superfluous while held; dropped once replaced
	}
	a.status = status
	a.sse = exchange.IsEventStream(a.Header().Get("Content-Type"))
	if !a.everyStatus && status < 300 && !a.sse {
		// A success on HTTP+JSON is no error for any client to read.
		a.settle(served)
		return
	}
	a.state = holding
	if !a.implicit {
		// Changes to the header after WriteHeader must stay without
		// effect while the answer is held. After a write they have none
		// anyway, net/http's doc says, and a2a-go writes its answers so.
		a.head = a.Header().Clone()
	}
}

func (a *answerWatch) Write(p []byte) (int, error) {
	if a.state == watching {
		a.implicit = true
		a.WriteHeader(http.StatusOK)
	}
	switch a.state {
	case replaced:
		return 0, errAnswerReplaced
	case released:
		return a.ResponseWriter.Write(p)
	}
	a.held = append(a.held, p...)
	v := undecided
	if a.sse {
		if data, ok := a.events.Next(a.held); ok {
			v = a.read(data, true)
		}
	}
	if v == undecided && len(a.held) > a.limit {
		if !a.sse {
			v = a.read(a.held, false) // what is held may show it already
		}
		if v == undecided {
			a.overflow()
			return len(p), errAnswerReplaced
		}
	}
	if v != undecided {
		a.settle(v)
		if a.state == replaced {
			return len(p), errAnswerReplaced
		}
	}
	return len(p), nil
}

// Flush sends what was written once the answer is settled. Until then the
// answer read so far is read again, and stays held when it shows nothing
// yet: flushing it would send an unrecorded answer.
func (a *answerWatch) Flush() {
	if a.state == holding && !a.sse {
		if v := a.read(a.held, false); v != undecided {
			a.settle(v)
		}
	}
	if a.state != released {
		return
	}
	if f, ok := a.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (a *answerWatch) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// finish is called when the wrapped handler has returned: what is held is
// all the answer there is. An event stream that ended before its first
// event showed its client nothing, and so no refusal.
func (a *answerWatch) finish() {
	switch a.state {
	case watching:
		a.settle(served) // no answer written: net/http answers 200 with nothing
	case holding:
		v := served
		if !a.sse {
			v = a.read(a.held, true)
		}
		a.settle(v)
	}
}

// read reads b, an answer or the data of its first event, as a client of
// the binding would; complete says nothing more of it will come.
func (a *answerWatch) read(b []byte, complete bool) verdict {
	if complete && !mayRefuse(b) {
		return served
	}
	s := answerReader{complete: complete}
	s.d.Reset(bytes.NewBuffer(b), lenient...)
	v := s.response()
	if s.id != nil {
		a.id = s.id
	}
	if v == refused {
		// A refusal is one a client reads: the response it is in must be
		// whole, as a client parses it, and not only begin like one.
		s.d.Reset(bytes.NewBuffer(b), lenient...)
		if _, err := s.d.ReadValue(); err != nil {
			return s.failed(err)
		}
	}
	return v
}

// lenient are the options an answer is read with: see answerReader.
var lenient = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// settle records the decision as the answer showed it, then writes the held
// answer, or the middleware's own when the record could not be written and
// the policy requires it.
func (a *answerWatch) settle(v verdict) {
	o := a.outcome
	if v == refused {
		a.refusedByServer()
	}
	if v == refused || !a.recorded {
		// The exchange happened whether or not the client is still there:
		// its record must not depend on the client's connection.
		o = a.m.record(context.WithoutCancel(a.r.Context()), a.subject, a.outcome, a.payload)
	}
	if o.Rule == negotiate.RuleAudit {
		a.replace(auditMessage)
		a.m.observe(a.r, a.body, &o, a.m.rpcCode(a.card, -32603))
		return
	}
	code := 0
	if v == refused {
		code = a.m.rpcCode(a.card, rpcerr.RPCA2AVersionNotSupported)
	}
	defer a.m.observe(a.r, a.body, &o, code)
	head := a.Header()
	prev := a.state
	a.state = released
	if a.head != nil {
		clear(head)
		for k, vs := range a.head {
			head[k] = vs
		}
	}
	if _, own := head[canonicalHeader]; v == served && !own {
		// A handler that names a version itself says so in its own words,
		// as it did when the header was set before it ran.
		head[canonicalHeader] = []string{a.version}
	} else if v != served {
		// The server served no version the middleware could name.
		delete(head, canonicalHeader)
	}
	if a.card {
		varyOnVersion(head)
	}
	if a.status != 0 && !a.implicit {
		a.ResponseWriter.WriteHeader(a.status)
	}
	if prev == holding {
		_, _ = a.ResponseWriter.Write(a.held) // the handler's next write learns of a failure
		a.held = a.held[:0]
	}
}

// overflow answers a request whose answer did not show within the bound
// whether the server served the version: an acceptance the middleware did
// not see is never recorded, so the exchange is refused, and recorded so.
func (a *answerWatch) overflow() {
	a.refusedByServer()
	o := a.m.record(context.WithoutCancel(a.r.Context()), a.subject, a.outcome, a.payload)
	a.replace(overflowMessage)
	a.m.observe(a.r, a.body, &o, a.m.rpcCode(a.card, -32603))
}

// refusedByServer makes a's decision the refusal of a server that served
// no version the middleware saw, so that the record and Options.Observe say
// what the server did: the event is the decision's, made when the request
// came, as a refusal (as mcphttp records one), and the outcome is decided
// as for a peer that speaks none of the host's versions.
func (a *answerWatch) refusedByServer() {
	a.payload.Outcome, a.payload.Version, a.payload.Reason = "refused", "", events.ReasonUnsupported
	a.outcome, _ = a.m.n.Decide(a.subject, negotiate.Offer{Protocol: facets.ProtocolA2A, Requested: a.outcome.Requested, PeerVersions: []string{unservedVersion}})
}

// replace answers with an internal error in place of the server's answer.
func (a *answerWatch) replace(msg string) {
	a.state = replaced
	a.held = a.held[:0]
	head := a.Header()
	clear(head)
	head[canonicalHeader] = []string{a.m.adv.Preferred}
	if a.card {
		varyOnVersion(head)
	}
	id := nullID
	if a.id != nil {
		id = []byte(a.id)
	}
	a.m.answerInternal(a.ResponseWriter, a.card, msg, id)
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

// mayRefuse reports whether b could hold a version refusal: the digits of
// -32009 in any spelling (-32009, -32009.0, -3.2009e4, ...: always the
// digits 32009 in a row, a decimal point perhaps among them), the reason
// VERSION_NOT_SUPPORTED, or an escape that could spell either. Any answer
// that does not is read no further.
func mayRefuse(b []byte) bool {
	if bytes.IndexByte(b, '\\') >= 0 || bytes.Contains(b, []byte(rpcerr.A2AReasonVersionNotSupported)) {
		return true
	}
	for i := bytes.IndexByte(b, '3'); i >= 0; {
		if digitsFollow(b[i+1:], "2009") {
			return true
		}
		j := bytes.IndexByte(b[i+1:], '3')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// digitsFollow reports whether b starts with digits, a decimal point
// allowed once among them.
func digitsFollow(b []byte, digits string) bool {
	point := false
	for _, c := range []byte(digits) {
		if len(b) > 0 && b[0] == '.' && !point {
			point, b = true, b[1:]
		}
		if len(b) == 0 || b[0] != c {
			return false
		}
		b = b[1:]
	}
	return true
}

// answerReader reads an answer as a lenient client does: member names in
// any case (encoding/json matches them so), repeated names each read
// (whichever a client keeps, a refusal among them is seen), and the code
// as the number it spells, whatever the spelling.
type answerReader struct {
	d        jsontext.Decoder
	complete bool
	id       jsontext.Value
}

// failed is the verdict of an answer that could not be read to its end: it
// may yet show something when more of it is to come, and otherwise it is no
// refusal a client could read.
func (s *answerReader) failed(err error) verdict {
	if !s.complete && (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)) {
		return undecided
	}
	return served
}

// token reads the next token. A number that ends an answer still arriving
// may be cut short (-320 of -32009), and is read as it stands: only a
// refusal settles an answer before its end, and a refusal is settled only
// from a whole response, which a cut number is not.
func (s *answerReader) token() (jsontext.Token, error) { return s.d.ReadToken() }

// response reads a JSON-RPC response, a batch of them, or a google.rpc.Status
// body (an object with an error member too).
func (s *answerReader) response() verdict {
	t, err := s.token()
	if err != nil {
		return s.failed(err)
	}
	switch t.Kind() {
	case '{':
		v, err := s.object(true)
		if err != nil {
			return s.failed(err)
		}
		return v
	case '[':
		for s.d.PeekKind() == '{' {
			if _, err := s.token(); err != nil {
				return s.failed(err)
			}
			if v, err := s.object(false); err != nil || v == refused {
				return s.failedOr(v, err)
			}
		}
	}
	// Not a response a client reads a refusal in, or a batch without one
	// (whatever follows its last member).
	return served
}

// failedOr is v, or the verdict of err when there is one.
func (s *answerReader) failedOr(v verdict, err error) verdict {
	if err != nil {
		return s.failed(err)
	}
	return v
}

// object reads the members of a response after its '{'. At the top of the
// answer a result settles it: JSON-RPC forbids an error beside a result, and
// a result is not held to look for one.
func (s *answerReader) object(top bool) (verdict, error) {
	for s.d.PeekKind() != '}' {
		name, err := s.token()
		if err != nil {
			return undecided, err
		}
		switch key := name.String(); {
		case top && strings.EqualFold(key, "result"):
			return served, nil
		case strings.EqualFold(key, "error") && s.d.PeekKind() == '{':
			if ok, err := s.members(s.errorMember); ok || err != nil {
				return refused, err
			}
		case top && strings.EqualFold(key, "id"):
			v, err := s.d.ReadValue()
			if err != nil {
				return undecided, err
			}
			if k := v.Kind(); k == '"' || k == '0' {
				s.id = v.Clone()
			}
		default:
			if err := s.d.SkipValue(); err != nil {
				return undecided, err
			}
		}
	}
	_, err := s.token()
	return served, err
}

// members reads the object that comes next, calling member for each of its
// members, until one reports a refusal.
func (s *answerReader) members(member func(key string) (bool, error)) (bool, error) {
	if _, err := s.token(); err != nil {
		return false, err
	}
	for s.d.PeekKind() != '}' {
		name, err := s.token()
		if err != nil {
			return false, err
		}
		if ok, err := member(name.String()); ok || err != nil {
			return ok, err
		}
	}
	_, err := s.token()
	return false, err
}

// errorMember reads one member of an error object: a code of -32009, or
// data (JSON-RPC) or details (google.rpc.Status) holding an ErrorInfo with
// reason VERSION_NOT_SUPPORTED (an array of details, as A2A 1.0.1 sends
// them, or the one bare object of older servers).
func (s *answerReader) errorMember(key string) (bool, error) {
	switch {
	case strings.EqualFold(key, "code") && s.d.PeekKind() == '0':
		t, err := s.token()
		if err != nil {
			return false, err
		}
		f, _ := t.Float()
		return f == rpcerr.RPCA2AVersionNotSupported, nil
	case (strings.EqualFold(key, "data") || strings.EqualFold(key, "details")) && s.d.PeekKind() == '[':
		if _, err := s.token(); err != nil {
			return false, err
		}
		for s.d.PeekKind() != ']' {
			if ok, err := s.detail(); ok || err != nil {
				return ok, err
			}
		}
		_, err := s.token()
		return false, err
	case strings.EqualFold(key, "data") || strings.EqualFold(key, "details"):
		return s.detail()
	}
	return false, s.d.SkipValue()
}

// detail reads one detail: an ErrorInfo refuses the version by its reason.
func (s *answerReader) detail() (bool, error) {
	if s.d.PeekKind() != '{' {
		return false, s.d.SkipValue()
	}
	return s.members(func(key string) (bool, error) {
		if !strings.EqualFold(key, "reason") || s.d.PeekKind() != '"' {
			return false, s.d.SkipValue()
		}
		t, err := s.token()
		return err == nil && t.String() == rpcerr.A2AReasonVersionNotSupported, err
	})
}
