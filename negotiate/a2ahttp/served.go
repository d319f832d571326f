package a2ahttp

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"

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
var watchers = sync.Pool{New: func() any { return new(answerWatch) }}

// maxPooledBytes bounds the buffer a pooled answerWatch keeps.
const maxPooledBytes = 16 << 10

// watch returns an answerWatch for w, from the pool.
func watch(w http.ResponseWriter, m *Middleware, r *http.Request) *answerWatch {
	a := watchers.Get().(*answerWatch)
	*a = answerWatch{Hold: a.Hold, m: m, r: r}
	a.Start(w, a, int64(m.maxAnswer))
	return a
}

// release returns a to the pool once the wrapped handler has returned,
// when nothing may use it any more.
func (a *answerWatch) release() {
	a.Release(maxPooledBytes)
	*a = answerWatch{Hold: a.Hold}
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

// Holds: an error or a stream is read on every binding, any answer on the
// JSON-RPC binding, where a refusal is a 200.
func (a *answerWatch) Holds(status int, stream bool) bool {
	return !a.card && !a.m.opts.HTTPJSON || status >= 300 || stream
}

// AtEnd: an answer that showed no refusal served the version (one not
// written at all is net/http's 200 with nothing).
func (a *answerWatch) AtEnd(bool) exchange.Verdict { return exchange.Served }

// Classify is the A2A reading of answer text: a -32009, or an error
// whose details carry the reason VERSION_NOT_SUPPORTED, refuses; a result,
// or a complete answer without either, serves. It keeps the answer's
// JSON-RPC id for a replacement.
func (a *answerWatch) Classify(b []byte, complete bool) exchange.Verdict {
	if complete && !mayRefuse(b) {
		return exchange.Served
	}
	s := answerReader{complete: complete}
	s.d.Reset(bytes.NewBuffer(b), lenient...)
	v, err := s.response()
	if s.id != nil {
		a.id = s.id
	}
	if v == exchange.Refused && err == nil {
		// A refusal settles an answer only once its whole value is read.
		s.d.Reset(bytes.NewBuffer(b), lenient...)
		_, err = s.d.ReadValue()
	}
	if err != nil {
		return s.failed(err)
	}
	return v
}

// lenient are the options an answer is read with: see answerReader.
var lenient = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// Settle records the decision as the answer showed it (a refusal in a
// second event when the acceptance was recorded before the handler ran),
// and readies the head; when a required record failed or the answer could
// not be read, it answers in the server's place.
func (a *answerWatch) Settle(hold *exchange.Hold, v exchange.Verdict) bool {
	o := a.m.rec.Settled(a.r.Context(), negotiate.Destination{}, a.subject, a.outcome, a.payload, v, a.recorded)
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

// mayRefuse reports whether b could hold a version refusal: the code
// -32009 in any spelling ([exchange.MayHoldCode]), the reason
// VERSION_NOT_SUPPORTED, or an escape that could spell the reason. Any
// answer that does not is read no further.
func mayRefuse(b []byte) bool {
	return bytes.IndexByte(b, '\\') >= 0 || bytes.Contains(b, []byte(rpcerr.A2AReasonVersionNotSupported)) ||
		exchange.MayHoldCode(b, rpcerr.RPCA2AVersionNotSupported)
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
func (s *answerReader) failed(err error) exchange.Verdict {
	if !s.complete && (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)) {
		return exchange.Undecided
	}
	return exchange.Served
}

// token reads the next token. A number that ends an answer still arriving
// may be cut short (-320 of -32009), and is read as it stands: only a
// refusal settles an answer before its end, and a refusal is settled only
// from a whole response, which a cut number is not.
func (s *answerReader) token() (jsontext.Token, error) { return s.d.ReadToken() }

// response reads a JSON-RPC response, a batch of them, or a
// google.rpc.Status body (an object with an error member too): what it
// shows, and the error that stopped the reading.
func (s *answerReader) response() (exchange.Verdict, error) {
	t, err := s.token()
	if err != nil {
		return exchange.Undecided, err
	}
	switch t.Kind() {
	case '{':
		return s.object(true)
	case '[':
		for s.d.PeekKind() == '{' {
			if _, err := s.token(); err != nil {
				return exchange.Undecided, err
			}
			if v, err := s.object(false); err != nil || v == exchange.Refused {
				return v, err
			}
		}
		// A batch serves only once it has ended: a member still to come
		// may refuse.
		_, err = s.token()
	}
	// Not a response a client reads a refusal in, or a batch without one.
	return exchange.Served, err
}

// object reads the members of a response after its '{'. At the top of the
// answer a result settles it: JSON-RPC forbids an error beside a result, and
// a result is not held to look for one.
func (s *answerReader) object(top bool) (exchange.Verdict, error) {
	for s.d.PeekKind() != '}' {
		name, err := s.token()
		if err != nil {
			return exchange.Undecided, err
		}
		switch key := name.String(); {
		case top && strings.EqualFold(key, "result"):
			return exchange.Served, nil
		case strings.EqualFold(key, "error") && s.d.PeekKind() == '{':
			if ok, err := s.members(s.errorMember); ok || err != nil {
				return exchange.Refused, err
			}
		case top && strings.EqualFold(key, "id"):
			v, err := s.d.ReadValue()
			if err != nil {
				return exchange.Undecided, err
			}
			if k := v.Kind(); k == '"' || k == '0' {
				s.id = v.Clone()
			}
		default:
			if err := s.d.SkipValue(); err != nil {
				return exchange.Undecided, err
			}
		}
	}
	_, err := s.token()
	return exchange.Served, err
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
