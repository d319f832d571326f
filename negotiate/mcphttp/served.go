package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strconv"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/internal/rpcerr"
	"github.com/wopneg/wopneg/internal/strictjson"
	"github.com/wopneg/wopneg/negotiate"
)

// The record follows the server (DESIGN: "where the wrapped server
// contradicts a decision, the record follows the server"). An accepted
// decision is not recorded when it is made but when the wrapped server
// answers, before any byte of the answer leaves: the middleware reads as
// much of the answer as it needs, records accepted when the server served
// the revision decided and refused (reason unsupported) when it did not,
// and then lets the answer through unchanged.

// heldErrorBytes bounds what is held of a JSON answer to a request whose
// result names no revision, to find a -32022 refusal in it: an error
// answer is small, so a longer answer is let through as it comes and the
// decision stands.
const heldErrorBytes = 64 << 10

// minus32022 is the code of a refusal of the revision, as it is written.
var minus32022 = []byte(strconv.Itoa(rpcerr.RPCMCPUnsupportedProtocolVersion))

// errAnswerReplaced is what the wrapped handler's writes return once its
// answer has been replaced by the middleware's (the record could not be
// written and the policy requires it).
var errAnswerReplaced = errors.New("mcphttp: the answer was replaced: its negotiation could not be recorded")

// follow returns w watched: the accepted decision of offer for subject is
// recorded once the wrapped handler's answer shows whether it served the
// revision, o's. method is the method of the request when it is one
// message; id is the id a replacement answer carries.
func (h *Handler) follow(w http.ResponseWriter, r *http.Request, subject *negotiate.Subject, offer negotiate.Offer, o *negotiate.Outcome, method string, id json.RawMessage) *answerWatch {
	a := &answerWatch{ResponseWriter: w, h: h, r: r, subject: subject, offer: offer, version: o.Version, id: id, limit: heldErrorBytes}
	if method == methodDiscover || method == methodInitialize {
		// Their results name the revisions served: the answer must confirm
		// the decision, read whole up to the request bound.
		a.confirm, a.method, a.limit = true, method, int(h.maxBody)
	}
	return a
}

// record decides offer for subject and records it through sink, logging a
// failure to record that the policy lets stand.
func (h *Handler) record(r *http.Request, sink events.Sink, subject *negotiate.Subject, offer negotiate.Offer) negotiate.Outcome {
	var dest negotiate.Destination
	if h.opts.Destination != nil {
		dest = h.opts.Destination(r)
	}
	// The exchange happened whether or not the client is still there: its
	// record must not depend on the client's connection.
	ctx := context.WithoutCancel(r.Context())
	o, err := h.n.DecideAndRecord(ctx, sink, dest, subject, offer)
	if err != nil && o.Rule != negotiate.RuleAudit {
		// The policy lets the outcome stand without its record; the host
		// must still hear of it.
		h.log.ErrorContext(ctx, "mcphttp: negotiation.decided was not recorded", "err", err, "outcome", o.Kind.String(), "version", o.Version)
	}
	return o
}

// followServer records a decision the wrapped server contradicted: what
// the server did was refuse the revision, so that is what the event says.
type followServer struct{ events.Sink }

func (s followServer) Emit(ctx context.Context, e events.Event) error {
	e.Payload.Outcome, e.Payload.Version, e.Payload.Reason = "refused", "", events.ReasonUnsupported
	return s.Sink.Emit(ctx, e)
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
	h       *Handler
	r       *http.Request
	subject *negotiate.Subject
	offer   negotiate.Offer
	version string // the revision decided
	id      json.RawMessage
	method  string
	confirm bool // the answer must confirm the revision
	limit   int

	state  int
	status int
	head   http.Header // the head as it was when the status was written
	sse    bool
	held   []byte
	events sseScanner
	werr   error // the error of writing the held bytes
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
	mt, _, _ := mime.ParseMediaType(a.Header().Get("Content-Type"))
	a.sse = mt == "text/event-stream" && a.confirm
	if mt != "application/json" && !a.sse {
		// Nothing to read in it: a discover or initialize answer that is
		// no JSON-RPC did not serve the revision; for any other request
		// the decision stands.
		a.settle(!a.confirm)
		return
	}
	a.state = holding
	a.head = a.Header().Clone()
}

func (a *answerWatch) Write(p []byte) (int, error) {
	if a.state == watching {
		a.WriteHeader(http.StatusOK)
	}
	switch a.state {
	case replaced:
		return 0, errAnswerReplaced
	case released:
		return a.ResponseWriter.Write(p)
	}
	if len(a.held)+len(p) > a.limit {
		// Too long to be read: not the small answer a refusal is, and not
		// a confirmation the middleware could read.
		a.held = append(a.held, p...)
		a.settle(!a.confirm)
		return len(p), a.writeErr()
	}
	a.held = append(a.held, p...)
	if a.sse {
		if data, ok := a.events.response(a.held); ok {
			a.settle(serves(data, a.method, a.version))
			return len(p), a.writeErr()
		}
	}
	return len(p), nil
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
		ok := !a.confirm
		if !a.sse {
			ok = serves(a.held, a.method, a.version)
		}
		a.settle(ok)
	}
}

// settle records the decision, as served when ok and as the server's
// refusal otherwise, then writes the held answer, or the middleware's own
// when the record could not be written and the policy requires it.
func (a *answerWatch) settle(ok bool) {
	sink := a.h.opts.Sink
	if !ok {
		sink = followServer{sink}
	}
	o := a.h.record(a.r, sink, a.subject, a.offer)
	head := a.Header()
	if o.Rule == negotiate.RuleAudit {
		a.state = replaced
		clear(head)
		writeRPCError(a.ResponseWriter, http.StatusInternalServerError, a.id, rpcerr.RPCError{Code: codeInternalError, Message: o.Error.Message})
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
	clear(head)
	for k, v := range a.head {
		head[k] = v
	}
	a.ResponseWriter.WriteHeader(a.status)
	_, a.werr = a.ResponseWriter.Write(a.held)
	a.held = nil
}

// serves reports whether msg, the wrapped server's JSON-RPC answer to a
// request decided at version, shows the revision served: a discover
// result that lists it, an initialize result that names it, and for any
// other method anything but a -32022 refusal (in a batch answer, of any
// member). method is "" for a request whose result names no revision.
func serves(msg []byte, method, version string) bool {
	r := strictjson.NewReader(msg, 0)
	if method == methodDiscover || method == methodInitialize {
		rep, err := readReply(r)
		if err != nil || r.End() != nil || rep.result == nil {
			return false
		}
		if method == methodDiscover {
			versions, err := resultVersions(rep.result)
			return err == nil && slices.Contains(versions, version)
		}
		served, err := resultMember(rep.result, "protocolVersion")
		return err == nil && served == version
	}
	if !bytes.Contains(msg, minus32022) {
		// The common answer, read no further: a -32022 refusal spells its
		// code out, as an integer must be.
		return true
	}
	refused := false
	one := func() error {
		rep, err := readReply(r)
		refused = refused || rep.err != nil && rep.err.code == rpcerr.RPCMCPUnsupportedProtocolVersion
		return err
	}
	if k, _ := r.Next(); k == strictjson.Array {
		_ = r.Array(func(int) error { return one() })
	} else {
		_ = one()
	}
	// An answer the middleware cannot read is no refusal it could see;
	// what it read of one stands.
	return !refused
}

// reply is a JSON-RPC response, as far as this package reads one.
type reply struct {
	result []byte // the result as it was sent; nil when there is none
	err    *replyError
}

type replyError struct {
	code    int64
	message string
	data    []byte // as it was sent; nil when there is none
}

// readReply reads the next value of r as a JSON-RPC response: an object
// with exactly one of result and error; error's code must be an integer
// and its message a string. What it read is returned even with an error.
func readReply(r *strictjson.Reader) (reply, error) {
	var rep reply
	err := r.Object(func(key string) error {
		var err error
		switch key {
		case "result":
			rep.result, err = r.Raw()
		case "error":
			rep.err = &replyError{}
			err = r.Object(func(key string) error {
				var err error
				switch key {
				case "code":
					var n json.Number
					if n, err = r.Number(); err == nil {
						if rep.err.code, err = n.Int64(); err != nil {
							err = fmt.Errorf("error.code %s is not an integer", n)
						}
					}
				case "message":
					rep.err.message, err = r.String()
				case "data":
					rep.err.data, err = r.Raw()
				}
				return err
			})
		}
		return err
	})
	if err == nil && (rep.result == nil) == (rep.err == nil) {
		err = errors.New("a response has exactly one of result and error")
	}
	return rep, err
}

// resultVersions reads a discover result's supportedVersions, or a
// -32022 error's data.supported: an object whose member holds an array
// of strings. A missing member is an error.
func resultVersions(obj []byte) ([]string, error) {
	return stringsMember(obj, "supportedVersions")
}

// stringsMember reads obj, a JSON object, and returns its member key, an
// array of strings.
func stringsMember(obj []byte, key string) ([]string, error) {
	var out []string
	err := member(obj, key, func(r *strictjson.Reader) error {
		out = []string{}
		return r.Array(func(int) error {
			s, err := r.String()
			out = append(out, s)
			return err
		})
	})
	return out, err
}

// resultMember reads obj, a JSON object, and returns its member key, a
// string.
func resultMember(obj []byte, key string) (string, error) {
	var out string
	err := member(obj, key, func(r *strictjson.Reader) (err error) {
		out, err = r.String()
		return err
	})
	return out, err
}

// member reads obj, one JSON value as strictjson's Raw returns it, which
// must be an object, and calls read for the value of its member key, which
// must be there.
func member(obj []byte, key string, read func(*strictjson.Reader) error) error {
	r := strictjson.NewReader(obj, 0)
	found := false
	err := r.Object(func(k string) error {
		if k != key {
			return nil
		}
		found = true
		return read(r)
	})
	if err == nil && !found {
		err = fmt.Errorf("no member %q", key)
	}
	return err
}

// sseScanner reads server-sent events as they are held, to find the first
// one whose data is a JSON-RPC response. It keeps its place, so that each
// byte is scanned once however the answer is split into writes.
type sseScanner struct {
	pos int // bytes of complete lines read
	// searched is how far b has been searched for the end of the line
	// at pos.
	searched int
	data     []byte // the data of the event being read
	has      bool   // the event being read has a data field
}

// response reads the complete lines of b past what it has read, and
// returns the data of the first event it completes that is a JSON-RPC
// response (a notification or request before it is passed over).
func (s *sseScanner) response(b []byte) ([]byte, bool) {
	for {
		rest := b[s.pos:]
		// Search only what was not searched before: a long line arriving
		// in many reads is searched once, not once a read.
		from := max(s.searched-s.pos, 0)
		i := bytes.IndexAny(rest[from:], "\r\n")
		if i < 0 {
			s.searched = len(b)
			return nil, false // the line is not complete yet
		}
		i += from
		if rest[i] == '\r' && i+1 == len(rest) {
			s.searched = s.pos + i // the \r again: a \n may follow it
			return nil, false
		}
		line := rest[:i]
		s.pos += i + 1
		if rest[i] == '\r' && rest[i+1] == '\n' {
			s.pos++
		}
		if len(line) == 0 {
			data, has := s.data, s.has
			s.data, s.has = nil, false
			if has && isResponse(data) {
				return data, true
			}
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		if string(field) != "data" {
			continue
		}
		if s.has {
			s.data = append(s.data, '\n')
		}
		s.has = true
		s.data = append(s.data, bytes.TrimPrefix(value, []byte(" "))...)
	}
}

// isResponse reports whether data is a JSON-RPC response, not a request
// or notification the server sent before it.
func isResponse(data []byte) bool {
	r := strictjson.NewReader(data, 0)
	_, err := readReply(r)
	return err == nil && r.End() == nil
}
