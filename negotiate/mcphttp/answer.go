package mcphttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

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

// errAnswerReplaced is what the wrapped handler's writes return once its
// answer has been replaced by the middleware's (the record could not be
// written and the policy requires it).
var errAnswerReplaced = errors.New("mcphttp: the answer was replaced: its negotiation could not be recorded")

// follow returns w watched: the accepted decision o for subject, whose
// event is e, is recorded once the wrapped handler's answer shows whether
// it served the revision, o's. method is the method the request's
// Mcp-Method header names, which decides whether the answer must confirm
// the revision, and observed the method of its one message, for
// Options.Observe; id is the id a replacement answer carries; requests is
// how many of the request's messages ask for a response, which an event
// stream is held for.
func (h *handler) follow(w http.ResponseWriter, r *http.Request, subject *negotiate.Subject, o *negotiate.Outcome, e *events.NegotiationDecided, method, observed string, id jsontext.Value, requests int) *answerWatch {
	a := watchers.Get().(*answerWatch)
	*a = answerWatch{ResponseWriter: w, h: h, r: r, subject: subject, outcome: o, payload: *e, id: id, expect: requests, observed: observed, held: a.held[:0]}
	if method == methodDiscover || method == methodInitialize {
		// Their results name the revisions served: the answer must confirm
		// the decision.
		a.confirm, a.method = true, method
	}
	return a
}

// watchers keeps answerWatches, and the buffers they hold answers in, for
// the next request, as a2ahttp's do: most answers are held whole, and a
// buffer that has grown to an answer's size fits the next one.
var watchers = sync.Pool{New: func() any { return new(answerWatch) }}

// maxPooledAnswer bounds the buffer a pooled answerWatch keeps.
const maxPooledAnswer = 16 << 10

// release returns a to the pool once the wrapped handler has returned and
// a has observed it, when nothing may use it any more.
func (a *answerWatch) release() {
	held := a.held[:0]
	if cap(held) > maxPooledAnswer {
		held = nil
	}
	*a = answerWatch{held: held}
	watchers.Put(a)
}

// record records o, decided for subject, with its event e, logging a
// failure to record that the policy lets stand.
func (h *handler) record(r *http.Request, subject *negotiate.Subject, o negotiate.Outcome, e *events.NegotiationDecided) negotiate.Outcome {
	var dest negotiate.Destination
	if h.opts.Destination != nil {
		dest = h.opts.Destination(r)
	}
	// The exchange happened whether or not the client is still there: its
	// record must not depend on the client's connection.
	ctx := context.WithoutCancel(r.Context())
	o, err := h.n.Record(ctx, h.opts.Sink, dest, subject, o, *e)
	if err != nil && o.Rule != negotiate.RuleAudit {
		// The policy lets the outcome stand without its record; the host
		// must still hear of it.
		h.log.ErrorContext(ctx, "mcphttp: negotiation.decided was not recorded", "err", err, "outcome", o.Kind.String(), "version", o.Version)
	}
	return o
}

// The states of an answerWatch.
const (
	watching = iota // nothing written yet
	holding         // the head and the first bytes are held
	released        // recorded; the answer goes through
	replaced        // recorded failed; the middleware answered instead
)

// answerWatch is the ResponseWriter the wrapped handler answers an
// accepted request through. It holds the head of the answer (and, while
// it must read it, its first bytes, up to limit), records the decision as
// the answer shows it, then writes what it held and lets the rest through.
type answerWatch struct {
	http.ResponseWriter
	h       *handler
	r       *http.Request
	subject *negotiate.Subject
	outcome *negotiate.Outcome // the decision, accepted
	payload events.NegotiationDecided
	id      jsontext.Value
	method  string
	confirm bool // the answer must confirm the revision
	expect  int  // the responses an event stream is held for

	observed string // the request's method, for Options.Observe
	code     int    // the JSON-RPC error code the answer was read to carry

	state  int
	status int
	late   http.Header // what the handler changes in the head while it is held
	sse    bool
	held   []byte
	events sseScanner
	// What the events read so far showed: how many responses, and whether
	// one refused the revision.
	responses int
	refused   bool
	werr      error // the error of writing the held bytes
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
	if a.sse && a.expect == 0 {
		// A stream that answers no request (a session's GET, or a POST of
		// notifications) holds no response to read: the decision stands.
		a.settle(true)
		return
	}
	// Whatever else it is labelled, a client may read it as JSON-RPC.
	a.state = holding
}

// Header is the head of the answer. Once its status is written and while
// the answer is held, changes go to a copy nothing sends: net/http sends
// the head as it was when the status was written, and so does the
// watcher, from the header underneath, untouched since.
func (a *answerWatch) Header() http.Header {
	if a.state != holding {
		return a.ResponseWriter.Header()
	}
	if a.late == nil {
		a.late = a.ResponseWriter.Header().Clone()
	}
	return a.late
}

// WriteString is Write, without a copy of s to make it bytes.
func (a *answerWatch) WriteString(s string) (int, error) {
	if a.state == released {
		return io.WriteString(a.ResponseWriter, s)
	}
	return a.write(nil, s)
}

func (a *answerWatch) Write(p []byte) (int, error) { return a.write(p, "") }

// write writes p, or s when p is nil.
func (a *answerWatch) write(p []byte, s string) (int, error) {
	n := len(p) + len(s)
	if a.state == watching {
		a.WriteHeader(http.StatusOK)
	}
	switch a.state {
	case replaced:
		return 0, errAnswerReplaced
	case released:
		if p == nil {
			return io.WriteString(a.ResponseWriter, s)
		}
		return a.ResponseWriter.Write(p)
	}
	a.held = append(append(a.held, p...), s...)
	if int64(len(a.held)) > a.h.maxAnswer {
		// Not read within the bound: neither an acceptance nor a refusal
		// the middleware saw, so it does not leave.
		a.settle(false)
		return n, a.writeErr()
	}
	for a.sse {
		data, ok := a.events.Next(a.held)
		if !ok {
			break
		}
		if a.confirm {
			// The first event that is a response settles it.
			if rep, err := readReply(data); err == nil {
				a.code = int(rep.code)
				a.settle(a.confirms(rep))
				return n, a.writeErr()
			}
			continue
		}
		responses, refused := readAnswer(data)
		a.responses += responses
		a.refused = a.refused || refused
		if a.refused {
			a.code = rpcerr.RPCMCPUnsupportedProtocolVersion
		}
		if a.refused || a.responses >= a.expect {
			a.settle(!a.refused)
			return n, a.writeErr()
		}
	}
	return n, nil
}

// writeErr is what a Write that settled the answer returns.
func (a *answerWatch) writeErr() error {
	if a.state == replaced {
		return errAnswerReplaced
	}
	return a.werr
}

// Flush sends what was written once the answer is settled; until then the
// bytes are held, and flushing them would send an unrecorded answer.
func (a *answerWatch) Flush() {
	if a.state != released {
		return
	}
	if f, ok := a.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (a *answerWatch) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// observe is called when the wrapped handler has returned: what it held is
// all the answer there is.
func (a *answerWatch) observe(int) {
	switch a.state {
	case watching:
		// No answer written: net/http answers 200 with nothing, which
		// confirms no revision.
		a.settle(!a.confirm)
		if o, ok := a.ResponseWriter.(observer); ok {
			// Replaced, the writer underneath has observed the
			// middleware's answer already, and this changes nothing.
			o.observe(http.StatusOK)
		}
	case holding:
		// An event stream that ended before it answered every request
		// stands unless it refused; a discover or initialize it never
		// answered did not serve the revision.
		ok := !a.confirm && !a.refused
		if !a.sse && a.confirm {
			rep, err := readReply(a.held)
			a.code = int(rep.code)
			ok = err == nil && a.confirms(rep)
		} else if !a.sse {
			_, refused := readAnswer(a.held)
			if ok = !refused; refused {
				a.code = rpcerr.RPCMCPUnsupportedProtocolVersion
			}
		}
		a.settle(ok)
	}
}

// settle records the decision, as served when ok and as the server's
// refusal otherwise, then writes the held answer, or the middleware's own
// when the record could not be written and the policy requires it, or
// when the answer is longer than the middleware reads.
func (a *answerWatch) settle(ok bool) {
	e := &a.payload
	if !ok {
		// The server contradicted the decision: what it did was refuse
		// the revision, so that is what the event says.
		e.Outcome, e.Version, e.Reason = "refused", "", events.ReasonUnsupported
	}
	o := a.h.record(a.r, a.subject, *a.outcome, e)
	if !ok && o.Rule != negotiate.RuleAudit {
		// Observed as the record says it: the server refused the
		// revision, as a peer that speaks none of it would.
		o, _ = a.h.n.Decide(a.subject, negotiate.Offer{Protocol: o.Protocol, Requested: o.Requested, PeerVersions: []string{unoffered}})
	}
	defer func() { a.h.observe(a.r, a.observed, &o, a.code) }()
	head := a.ResponseWriter.Header()
	if o.Rule == negotiate.RuleAudit || int64(len(a.held)) > a.h.maxAnswer {
		a.state = replaced
		a.held = a.held[:0]
		clear(head)
		e := rpcerr.RPCError{Code: codeInternalError, Message: "the server's answer exceeds " + strconv.FormatInt(a.h.maxAnswer, 10) + " bytes, more than the middleware reads to record it"}
		status := http.StatusBadGateway
		if o.Rule == negotiate.RuleAudit {
			e.Message, status = o.Error.Message, http.StatusInternalServerError
		}
		a.code = e.Code
		writeRPCError(a.ResponseWriter, status, a.id, e)
		return
	}
	prev := a.state
	a.state = released
	if prev == watching {
		if a.status != 0 {
			a.ResponseWriter.WriteHeader(a.status)
		}
		return
	}
	a.ResponseWriter.WriteHeader(a.status)
	_, a.werr = a.ResponseWriter.Write(a.held)
	a.held = a.held[:0]
}

// confirms reports whether rep, the wrapped server's answer to a discover
// or initialize, read strictly (a response the middleware could read two
// ways confirms nothing), shows the revision decided: a discover result
// that lists it, an initialize result that names it.
func (a *answerWatch) confirms(rep reply) bool {
	if a.method == methodDiscover {
		return rep.result && slices.Contains(rep.versions, a.outcome.Version)
	}
	return rep.result && rep.protocolVersion == a.outcome.Version
}

// clientReading is how the answer watcher reads an answer for a refusal:
// as the most lenient JSON-RPC client would, so that nothing a client
// reads as a refusal passes for an acceptance. Keys match in any case (as
// encoding/json matches struct fields), a repeated key counts under each
// of its values (some parsers keep the first, most the last), and strings
// need not be valid UTF-8 (encoding/json replaces what is not).
var clientReading = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// readAnswer reads b, a JSON-RPC answer (one message or a batch), as a
// client would, and returns how many responses it holds (messages without
// a method) and whether any carries error.code -32022: any JSON number
// equal to it as a float64, the way JSON parsers read numbers
// (-3.2022e4 and -32022.0 included). A refusal counts as soon as it is
// read, whatever follows it (a streaming decoder reads the first value and
// stops); responses are counted only in a b that is one JSON value.
func readAnswer(b []byte) (responses int, refused bool) {
	r := newReader(b, clientReading...)
	defer r.release()
	d := &r.d
	var err error
	switch d.PeekKind() {
	case '[':
		_, err = d.ReadToken()
		for err == nil && d.PeekKind() == '{' {
			err = readResponse(d, &responses, &refused)
		}
		if err == nil {
			_, err = d.ReadToken() // the ']', or an error at anything else
		}
	case '{':
		err = readResponse(d, &responses, &refused)
	}
	if _, end := d.ReadToken(); err != nil || end != io.EOF {
		return 0, refused
	}
	return responses, refused
}

// readResponse reads the message object that is d's next value, counting
// it in responses when it has no method and setting refused when its
// error's code is -32022.
func readResponse(d *jsontext.Decoder, responses *int, refused *bool) error {
	response := true
	_, err := d.ReadToken()
	for err == nil && d.PeekKind() == '"' {
		var name jsontext.Token
		if name, err = d.ReadToken(); err != nil {
			break
		}
		switch key := name.String(); {
		case strings.EqualFold(key, "method"):
			response = false
			err = d.SkipValue()
		case strings.EqualFold(key, "error") && d.PeekKind() == '{':
			_, err = d.ReadToken()
			for err == nil && d.PeekKind() == '"' {
				if name, err = d.ReadToken(); err == nil && strings.EqualFold(name.String(), "code") && d.PeekKind() == '0' {
					var code jsontext.Token
					code, err = d.ReadToken()
					f, _ := code.Float()
					*refused = *refused || f == rpcerr.RPCMCPUnsupportedProtocolVersion
				} else if err == nil {
					err = d.SkipValue()
				}
			}
			if err == nil {
				_, err = d.ReadToken()
			}
		default:
			err = d.SkipValue()
		}
	}
	if err == nil {
		_, err = d.ReadToken() // the '}', or an error at anything else
	}
	if response {
		*responses++
	}
	return err
}

// reply is a JSON-RPC response, as far as this package reads one.
type reply struct {
	result, isError bool
	versions        []string // result.supportedVersions; nil when absent
	protocolVersion string   // result.protocolVersion, when a string
	code            int64    // error.code
	message         string   // error.message
	supported       []string // error.data.supported; nil when absent
}

// readReply reads b, one JSON value, as a JSON-RPC response, by the
// module's rules (body.go): an object with exactly one of result and
// error, whose error.code is an integer and error.message a string, and
// nothing after it. What it read is returned even with an error.
func readReply(b []byte) (reply, error) {
	var rep reply
	r := newReader(b)
	defer r.release()
	var at span
	err := errors.New("the answer is not a JSON object")
	if r.d.PeekKind() == '{' {
		err = r.object(&at, func(key []byte) error {
			// A key a case-folding client reads as result or error is
			// refused: the response would read two ways.
			switch k, err := matchKey(key, "result", "error"); {
			case err != nil:
				return err
			case k == "result":
				rep.result = true
				return r.objectOrSkip(&at, func(key []byte) error {
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
				return r.objectOrSkip(&at, func(key []byte) error { return r.replyError(&rep, key) })
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
				err = fmt.Errorf("error.code %s is not an integer", v)
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
		var at span
		return r.objectOrSkip(&at, func(key []byte) error {
			if string(key) == "supported" {
				return r.strings(&rep.supported)
			}
			return r.skip()
		})
	}
	return r.skip()
}

// sseScanner is the adapters' event-stream reader, with the search for
// the JSON-RPC response an answer carries.
type sseScanner struct{ exchange.EventScanner }

// response returns the data of the next event s completes in b that is a
// JSON-RPC response, passing over the notifications and requests before it.
func (s *sseScanner) response(b []byte) ([]byte, bool) {
	for {
		data, ok := s.Next(b)
		if !ok || isResponse(data) {
			return data, ok
		}
	}
}

// isResponse reports whether data is a JSON-RPC response, not a request
// or notification the server sent before it.
func isResponse(data []byte) bool {
	_, err := readReply(data)
	return err == nil
}
