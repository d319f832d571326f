package exchange

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/a2aversion"
	"github.com/wopneg/wopneg/internal/rpcerr"
	"github.com/wopneg/wopneg/negotiate"
)

// PeerRefusal is the error an outbound negotiation, or a Transport a peer
// refused at runtime, returns for o, a refused outcome of an exchange in
// which the peer listed offered (its card's or server/discover's versions,
// or its refusal's data; nil when it listed none) and gave peerReason for
// its own refusal ("" when it gave none or did not refuse). Of what the
// peer said, only the versions of o's protocol, the first 16 of them, and
// a reason of the record's vocabulary are kept: the error is logged, and
// what a peer writes must not fill a log. It is o's
// interop_version_unsupported *errors.Error, its code and status kept,
// with what the peer said: details.offered lists what the peer offered, as
// it listed it, details.peerReason is the peer's reason, and the message
// says both, and says when the caller's identity refused it: the host's
// rule (reason unauthenticated: only an authenticated caller settles below
// the preferred version) or the peer's (peerReason unauthenticated: it
// serves what was asked only to a caller it authenticates). The record is
// o's and is not changed. Nil when o is accepted; o's own error when it is
// no such refusal (an audit that failed, or inputs never sent to a peer).
func PeerRefusal(o negotiate.Outcome, offered []string, peerReason string) error {
	err := o.Err()
	if err == nil || o.Rule == negotiate.RuleInput || o.Error == nil || o.Error.Code != wperrors.InteropVersionUnsupported {
		return err
	}
	// What a peer sends is kept only as far as it is versions of the
	// protocol, and only so many of them: the error is logged.
	var versions []string
	cut := false
	for _, v := range offered {
		if _, err := facets.ParseVersion(o.Protocol, v); err != nil {
			continue
		}
		if len(versions) == maxOffered {
			cut = true
			break
		}
		versions = append(versions, v)
	}
	listed := cmp.Or(strings.Join(versions, ", "), "no version")
	if cut {
		listed += ", ..."
	}
	if !slices.Contains([]string{events.ReasonBelowFloor, events.ReasonUnauthenticated, events.ReasonUnsupported}, peerReason) {
		peerReason = ""
	}
	var said string
	switch {
	case o.Rule == negotiate.RuleAuthenticated:
		said = "the peer offers " + listed + ", below the preferred version, which only an authenticated caller settles on: set OutboundOptions.Subject to the host's identity towards the peer"
	case peerReason == events.ReasonUnauthenticated:
		said = "the peer refused it to an unauthenticated caller, and offers such a caller " + listed + ": send it credentials it accepts (OutboundOptions.Client)"
	default:
		said = "the peer offers " + listed
	}
	e := o.Error.WithDetail("offered", append([]string{}, versions...))
	if peerReason != "" {
		e.Details["peerReason"] = peerReason
	}
	e.Message += "; " + said
	return e
}

// maxOffered is how many of the versions a peer offered a refusal keeps.
const maxOffered = 16

// rpcResponse is a JSON-RPC 2.0 error response.
type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      jsontext.Value  `json:"id"`
	Error   rpcerr.RPCError `json:"error"`
}

// WriteError answers with e, a JSON-RPC 2.0 error response on HTTP status,
// to the request whose id is id, byte for byte as the request wrote it (a
// client such as a2a-go decodes it into the type it sent); nil is null,
// the id of a request whose id could not be read (JSON-RPC 2.0 §5). The
// ids come from the module's own strict readers, so they marshal.
func WriteError(w http.ResponseWriter, status int, id jsontext.Value, e rpcerr.RPCError) {
	if id == nil {
		id = jsontext.Value("null")
	}
	WriteJSON(w, status, rpcResponse{"2.0", id, e})
}

// WriteJSON answers with v, an error answer of the module's own making
// (which always marshals), as the JSON body of a response of status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body) // the client is gone if this fails; nothing to do
}

// Refusal is how a protocol refuses a version in a JSON-RPC answer: the
// facts by which [Refusal.Read], the one lenient reader of answers for
// every place (the middlewares' answer watchers, the Transports, the
// start-up checks), finds a refusal.
type Refusal struct {
	// Code is the refusal's JSON-RPC error code.
	Code int
	// Reason, when set, is the reason of a google.rpc.ErrorInfo in an
	// error's data or details that refuses whatever the code.
	Reason string
	// ResultFirst: a result that comes first at the top of a response cut
	// short (one that outgrew what is held of it) settles it as served,
	// unread further: a protocol that holds little of an answer does not
	// hold a result to look for an error beside it, which JSON-RPC
	// forbids. A whole response is read whole either way, and a refusal
	// anywhere in it counts, as a client that takes an error beside a
	// result reads it.
	ResultFirst bool
	// Answers are the members, besides result and error, whose value
	// (not null) makes a message a response, in any case as those are:
	// A2A's StreamResponse members, the whole data of an HTTP+JSON
	// stream's event, which holds no JSON-RPC response.
	Answers []string
}

// Reading is what [Refusal.Read] found in a message of an answer.
type Reading struct {
	// Verdict is Refused when a response's error refuses the version;
	// Undecided when the message is not complete and may yet show one;
	// Served otherwise.
	Verdict Verdict
	// Responses counts the responses (a result or an error, and no
	// method) in a message read to its end as one JSON value (a response
	// or a batch) or settled by a result first; it is 0 otherwise, and in
	// a refusal, which settles the answer whatever else it holds.
	Responses int
	// ID is the id of the response at the top, when it is a string or a
	// number: the id an answer in the server's place carries.
	ID jsontext.Value
	// IDs are the ids of the responses Responses counts that every client
	// reads alike (one member spelled id, a string or a number), as
	// written: the requests they answer ([Answered]).
	IDs []jsontext.Value
	// Listed is what a refusal's error lists of the versions the peer
	// serves: data.supported (MCP), or an ErrorInfo's
	// metadata.supportedVersions, comma-separated (A2A); Reason is its
	// data.reason (MCP's, of the v2 vocabulary).
	Listed []string
	Reason string
}

// MayRefuse reports whether msg could hold the refusal: its code in any
// spelling ([MayHoldCode]), its reason, or an escape that could spell the
// reason. false is certain, so that an answer that cannot refuse is not
// read.
func (f Refusal) MayRefuse(msg []byte) bool {
	return MayHoldCode(msg, f.Code) ||
		f.Reason != "" && (bytes.Contains(msg, []byte(f.Reason)) || bytes.IndexByte(msg, '\\') >= 0)
}

// Read reads msg, a JSON-RPC answer (one response or a batch) or as much
// of it as has come (complete false), as the most lenient client reads
// it, so that nothing a client reads as a refusal passes for an
// acceptance: member names match in any case (encoding/json matches
// struct fields so), a repeated member counts under each of its values,
// strings need not be valid UTF-8, and the code is any JSON number equal
// to f.Code as a float64 (-3.2022e4, -32022.0). Only the first JSON value
// is read, as a streaming decoder reads it. A refusal counts once its
// error is read, whatever follows; while msg is still coming, once its
// error object has ended, so that what it lists is read whole and a code
// cut short (-32009 of -320090) settles nothing: the reading is the same
// however an answer is cut.
func (f Refusal) Read(msg []byte, complete bool) Reading {
	s := lenientReaders.Get()
	s.buf = *bytes.NewBuffer(msg)
	s.d.Reset(&s.buf, lenient...)
	s.f, s.complete, s.r = f, complete, Reading{}
	err := s.answer()
	r := s.r
	if err == errSettled {
		if r.Verdict == Refused {
			r.Responses, r.IDs = 0, nil
		}
	} else if !complete && cut(err) {
		r = Reading{Verdict: Undecided, ID: r.ID}
	} else {
		if _, end := s.d.ReadToken(); err != nil || end != io.EOF {
			r.Responses, r.IDs = 0, nil // not one JSON value
		}
		r.Verdict = Served // read, and no refusal in it: none a client reads
	}
	s.buf, s.r = bytes.Buffer{}, Reading{}
	s.d.Reset(&s.buf)
	lenientReaders.Put(s)
	return r
}

// cut reports whether err is the end of a message that has not all come.
func cut(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) }

// lenient are the options a client's reading takes: see [Refusal.Read].
var lenient = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// lenientReaders keeps the readers [Refusal.Read] uses, and their
// decoders' stacks.
var lenientReaders = NewPool[lenientReader]()

// errSettled ends a reading that has settled: a refusal, or a result
// first.
var errSettled = errors.New("settled")

// lenientReader is one [Refusal.Read].
type lenientReader struct {
	d        jsontext.Decoder
	buf      bytes.Buffer
	f        Refusal
	complete bool
	r        Reading
}

// Each reading below reads a value of its kind, and skips a value of
// any other: what is not where a client looks refuses nothing.

// answer reads a response, or a batch of them.
func (s *lenientReader) answer() error {
	if s.d.PeekKind() == '[' {
		return s.array(func() error { return s.response(false) })
	}
	return s.response(true)
}

// response reads a message object, counting it when it is a response: a
// result, an error or one of the protocol's Answers, and no method.
func (s *lenientReader) response(top bool) error {
	method, answers := false, false
	var id jsontext.Value // the id member, spelled id; nil unless one
	ids := 0              // members named id in any case
	err := s.members(func(key string) error {
		switch {
		case strings.EqualFold(key, "method"):
			method = true
		case strings.EqualFold(key, "result"):
			answers = true
			if top && s.f.ResultFirst && !s.complete {
				s.r.Verdict = Served
				return errSettled
			}
		case strings.EqualFold(key, "error"):
			answers = true
			return s.error()
		case s.d.PeekKind() != 'n' && slices.ContainsFunc(s.f.Answers, func(a string) bool { return strings.EqualFold(key, a) }):
			answers = true
		case strings.EqualFold(key, "id"):
			ids++
			v, err := s.d.ReadValue()
			if k := v.Kind(); err == nil && (k == '"' || k == '0') {
				c := v.Clone()
				if top {
					s.r.ID = c
				}
				if key == "id" {
					id = c
				}
			}
			return err
		}
		return s.d.SkipValue()
	})
	if answers && !method {
		s.r.Responses++
		if ids == 1 && id != nil {
			s.r.IDs = append(s.r.IDs, id)
		}
	}
	return err
}

// Answers reports whether a response whose id is got answers the request
// whose id is want: when got is written as the request wrote want, which
// is how its client matches one whatever it reads ids as. Every match of
// a response to its request is this one.
func Answers(got, want jsontext.Value) bool { return bytes.Equal(got, want) }

// Answered returns pending, the ids of the requests an answer is still to
// answer, less those ids answers ([Answers]). pending's array is reused.
//
// It stays out of line: inlined, its closures would widen the frame of
// every answer watcher that calls it (see "The record runs deep").
//
//go:noinline
func Answered(pending, ids []jsontext.Value) []jsontext.Value {
	return slices.DeleteFunc(pending, func(want jsontext.Value) bool {
		return slices.ContainsFunc(ids, func(got jsontext.Value) bool { return Answers(got, want) })
	})
}

// error reads a response's error: its code, and its data or details (one
// detail, or an array of them, as A2A 1.0.1 sends them), for the refusal
// and what it lists.
func (s *lenientReader) error() error {
	var (
		refused bool
		listed  []string
		reason  string
	)
	str := func(fn func(string)) error {
		return s.token('"', func(t jsontext.Token) { fn(t.String()) })
	}
	detail := func() error {
		return s.members(func(key string) error {
			switch {
			case strings.EqualFold(key, "reason"):
				return str(func(v string) { reason, refused = v, refused || s.f.Reason != "" && v == s.f.Reason })
			case strings.EqualFold(key, "supported"):
				return s.array(func() error { return str(func(v string) { listed = append(listed, v) }) })
			case strings.EqualFold(key, "metadata"):
				return s.members(func(key string) error {
					if !strings.EqualFold(key, "supportedVersions") {
						return s.d.SkipValue()
					}
					return str(func(v string) { listed = append(listed, a2aversion.Listed(v)...) })
				})
			}
			return s.d.SkipValue()
		})
	}
	err := s.members(func(key string) error {
		switch {
		case strings.EqualFold(key, "code"):
			// A number at the end of what has come may go on (-32009 of
			// -320090); it settles nothing then, as its error has not ended.
			return s.token('0', func(t jsontext.Token) {
				code, _ := t.Float()
				refused = refused || code == float64(s.f.Code)
			})
		case strings.EqualFold(key, "data") || strings.EqualFold(key, "details"):
			if s.d.PeekKind() == '[' {
				return s.array(detail)
			}
			return detail()
		}
		return s.d.SkipValue()
	})
	if refused && (s.complete || !cut(err)) {
		s.r.Verdict, s.r.Listed, s.r.Reason = Refused, listed, reason
		return errSettled
	}
	return err
}

// token reads a token of kind (a string '"', a number '0'), calling fn
// with it.
func (s *lenientReader) token(kind jsontext.Kind, fn func(jsontext.Token)) error {
	if s.d.PeekKind() != kind {
		return s.d.SkipValue()
	}
	t, err := s.d.ReadToken()
	if err == nil {
		fn(t)
	}
	return err
}

// array reads an array, calling fn to read each element.
func (s *lenientReader) array(fn func() error) error {
	if s.d.PeekKind() != '[' {
		return s.d.SkipValue()
	}
	_, err := s.d.ReadToken()
	for err == nil && s.d.PeekKind() != ']' {
		err = fn()
	}
	if err == nil {
		_, err = s.d.ReadToken()
	}
	return err
}

// members reads an object, calling fn with each name to read its value.
func (s *lenientReader) members(fn func(key string) error) error {
	if s.d.PeekKind() != '{' {
		return s.d.SkipValue()
	}
	_, err := s.d.ReadToken()
	for err == nil && s.d.PeekKind() == '"' {
		var name jsontext.Token
		if name, err = s.d.ReadToken(); err == nil {
			err = fn(name.String())
		}
	}
	if err == nil {
		_, err = s.d.ReadToken() // the '}', or an error at anything else
	}
	return err
}
