package report

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
)

// MaxLine is the longest line ReadLines reads as an event: an event the
// JSON-lines sink writes is a few hundred bytes, so a longer line is
// counted as bad (and skipped) rather than buffered.
const MaxLine = 1 << 20

// ReadLines reads r, named source in what it reports, as JSON lines (one
// event per line, as [events.JSONLines] and the example host write them)
// and adds every negotiation.decided payload in it to t. A line that is
// not JSON, or is JSON but not a negotiation.decided event (run event or
// host event), is counted and noted with its line number, and reading goes
// on; blank lines are passed over. It returns only r's error.
func (t *Tally) ReadLines(r io.Reader, source string) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var long bool // inside a line longer than the buffer
	var line int64
	var pending []byte // the start of a line longer than br's buffer
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if !long {
				if len(pending)+len(chunk) > MaxLine {
					long = true
					pending = pending[:0]
				} else {
					pending = append(pending, chunk...)
				}
			}
			continue
		}
		if len(chunk) > 0 || long || len(pending) > 0 {
			line++
			long = long || len(pending)+len(chunk) > MaxLine
			if long {
				t.lines++
				t.bad(source, line, fmt.Sprintf("not JSON: longer than %d bytes", MaxLine), true)
			} else if len(pending) > 0 {
				pending = append(pending, chunk...)
				t.line(pending, source, line)
			} else {
				t.line(chunk, source, line)
			}
			long, pending = false, pending[:0]
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", source, err)
		}
	}
}

// AddPayload reads data, one negotiation.decided payload as a JSON object
// (as a database keeps it beside the envelope's columns), with the strict
// reader, and adds it to t; a payload that does not read is counted as
// bad, named by source and its row number n.
func (t *Tally) AddPayload(data []byte, source string, n int64) {
	t.lines++
	var p events.NegotiationDecided
	if err := p.UnmarshalJSON(data); err != nil {
		notJSON := !jsontext.Value(data).IsValid()
		what := "not a negotiation.decided payload: "
		if notJSON {
			what = "not JSON: "
		}
		t.bad(source, n, what+strings.TrimPrefix(err.Error(), "events: "), notJSON)
		return
	}
	t.Add(&p)
}

// line adds the event on one line (its newline included) to t, or counts
// the line as bad.
func (t *Tally) line(data []byte, source string, n int64) {
	data = bytes.TrimRight(data, "\r\n")
	if len(bytes.Trim(data, " \t")) == 0 {
		return
	}
	t.lines++
	p, err := t.reader.read(data)
	if err != nil {
		t.bad(source, n, err.Error(), !jsontext.Value(data).IsValid())
		return
	}
	t.Add(&p)
}

// reader reads one line as a negotiation.decided event. The lines the
// JSON-lines sink writes are read by a fast path over JSON v2's token
// reader, which allocates nothing once the record's few distinct values
// (versions, reasons, digests) have been seen; any line the fast path does
// not take whole — an escaped string, a value out of place — is read by
// events.Event's own strict reader, which decides what the line is.
type reader struct {
	src bytes.Reader
	dec *jsontext.Decoder
	// interned holds the distinct strings the fast path has read, so that
	// an event costs no allocation: versions, reasons, outcomes, digests.
	interned map[string]string
	// stamp is the last time the fast path parsed, as written and as read:
	// an event's timestamp and its payload's at are the same text when a
	// constructor made the event, and are parsed once.
	stamp     [64]byte
	stampLen  int
	stampTime time.Time
}

// decoderOptions are the fast path's: it tells repeated names apart
// itself, among the few it knows.
var decoderOptions = jsontext.AllowDuplicateNames(true)

// maxInterned bounds interned: past it, a new value is still read, as a
// fresh string.
const maxInterned = 1 << 16

// read returns the payload of the event on line.
func (r *reader) read(line []byte) (events.NegotiationDecided, error) {
	if p, ok := r.fast(line); ok {
		return p, nil
	}
	var e events.Event
	if err := e.UnmarshalJSON(line); err != nil {
		if !jsontext.Value(line).IsValid() {
			return events.NegotiationDecided{}, fmt.Errorf("not JSON: %s", strings.TrimPrefix(err.Error(), "events: "))
		}
		return events.NegotiationDecided{}, fmt.Errorf("not a negotiation.decided event: %s", strings.TrimPrefix(err.Error(), "events: "))
	}
	return e.Payload, nil
}

// The envelope members the fast path knows, as bits.
const (
	mEventID = 1 << iota
	mType
	mTimestamp
	mPayload
	mRunID
	mSequence
	mSchemaVersion
	mNodeID
	mEngineVersion
	mCausationID
	mDelivery
	mWorkspaceID
)

const (
	runMembers   = mRunID | mSequence | mSchemaVersion | mNodeID | mEngineVersion | mCausationID
	hostMembers  = mDelivery | mWorkspaceID
	runRequired  = mEventID | mRunID | mType | mPayload | mTimestamp | mSequence | mSchemaVersion
	hostRequired = mEventID | mType | mTimestamp | mDelivery | mPayload
)

var envelopeMembers = map[string]int{
	"eventId": mEventID, "type": mType, "timestamp": mTimestamp, "payload": mPayload,
	"runId": mRunID, "sequence": mSequence, "schemaVersion": mSchemaVersion, "nodeId": mNodeID,
	"engineVersion": mEngineVersion, "causationId": mCausationID, "delivery": mDelivery, "workspaceId": mWorkspaceID,
}

// fast reads line when it is an event whose every member it can check
// without events.Event: the shape the sinks write. It reports false for
// anything else, valid or not, and then nothing it read is used. What it
// accepts is what Event.UnmarshalJSON accepts, with the same payload
// (FuzzReadLine holds it to that).
func (r *reader) fast(line []byte) (p events.NegotiationDecided, ok bool) {
	if r.dec == nil {
		r.dec = jsontext.NewDecoder(&r.src, decoderOptions)
		r.interned = make(map[string]string)
	}
	r.src.Reset(line)
	r.dec.Reset(&r.src, decoderOptions)
	if tok, err := r.dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return p, false
	}
	seen := 0
	for r.dec.PeekKind() == '"' {
		name, err := r.dec.ReadValue()
		if err != nil {
			return p, false
		}
		body, plain := unquoted(name)
		m := envelopeMembers[string(body)]
		if !plain || m == 0 || seen&m != 0 {
			return p, false
		}
		seen |= m
		if !r.envelopeMember(m, &p) {
			return p, false
		}
	}
	if tok, err := r.dec.ReadToken(); err != nil || tok.Kind() != '}' {
		return p, false
	}
	if _, err := r.dec.ReadToken(); err != io.EOF {
		return p, false
	}
	if seen&mRunID != 0 {
		return p, seen&hostMembers == 0 && seen&runRequired == runRequired
	}
	return p, seen&runMembers == 0 && seen&hostRequired == hostRequired
}

// envelopeMember reads the value of member m into p, or checks it.
func (r *reader) envelopeMember(m int, p *events.NegotiationDecided) bool {
	if m == mPayload {
		return r.payload(p)
	}
	v, err := r.dec.ReadValue()
	if err != nil {
		return false
	}
	switch m {
	case mSequence, mEngineVersion:
		return integerAtLeast(v, 0)
	case mSchemaVersion:
		return integerAtLeast(v, 1)
	}
	s, plain := unquoted(v)
	if !plain {
		return false
	}
	switch m {
	case mEventID:
		return validID(s, 16)
	case mType:
		return string(s) == "negotiation.decided"
	case mDelivery:
		return string(s) == "durable"
	case mTimestamp:
		_, ok := r.time(s)
		return ok
	case mRunID:
		return validRunID(s)
	}
	return true // nodeId, causationId, workspaceId: any string
}

// The payload members, as bits.
const (
	pProtocol = 1 << iota
	pOutcome
	pVersion
	pRequested
	pReason
	pFloor
	pPeerDigest
	pAt
)

var payloadMembers = map[string]int{
	"protocol": pProtocol, "outcome": pOutcome, "version": pVersion, "requested": pRequested,
	"reason": pReason, "floor": pFloor, "peerDigest": pPeerDigest, "at": pAt,
}

// payload reads the payload object into p and checks it as
// NegotiationDecided.Validate does.
func (r *reader) payload(p *events.NegotiationDecided) bool {
	if tok, err := r.dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return false
	}
	seen, ok := 0, false
	for r.dec.PeekKind() == '"' {
		name, err := r.dec.ReadValue()
		if err != nil {
			return false
		}
		body, plain := unquoted(name)
		m := payloadMembers[string(body)]
		if !plain || m == 0 || seen&m != 0 {
			return false
		}
		seen |= m
		v, err := r.dec.ReadValue()
		if err != nil {
			return false
		}
		s, plain := unquoted(v)
		if !plain {
			return false
		}
		if m == pAt {
			if p.At, ok = r.time(s); !ok {
				return false
			}
			continue
		}
		str := r.intern(s)
		switch m {
		case pProtocol:
			p.Protocol = facets.Protocol(str)
		case pOutcome:
			p.Outcome = str
		case pVersion:
			p.Version = str
		case pRequested:
			p.Requested = str
		case pReason:
			p.Reason = str
		case pFloor:
			p.Floor = str
		case pPeerDigest:
			p.PeerDigest = str
		}
	}
	if tok, err := r.dec.ReadToken(); err != nil || tok.Kind() != '}' {
		return false
	}
	return seen&(pProtocol|pOutcome|pAt) == pProtocol|pOutcome|pAt && r.validPayload(p)
}

// validPayload is NegotiationDecided.Validate on the fast path.
func (r *reader) validPayload(p *events.NegotiationDecided) bool {
	if !p.Protocol.Valid() {
		return false
	}
	switch p.Outcome {
	case "accepted":
		if p.Version == "" {
			return false
		}
	case "refused":
		if p.Version != "" {
			return false
		}
	default:
		return false
	}
	return r.validVersion(p.Protocol, p.Version) && r.validVersion(p.Protocol, p.Requested) &&
		r.validVersion(p.Protocol, p.Floor) && r.validReason(p.Reason) && r.validDigest(p.PeerDigest)
}

func (r *reader) validVersion(protocol facets.Protocol, v string) bool {
	if v == "" {
		return true
	}
	_, err := facets.ParseVersion(protocol, v)
	return err == nil
}

func (r *reader) validReason(s string) bool {
	return s == "" || s == events.ReasonOK || s == events.ReasonBelowFloor || s == events.ReasonUnauthenticated || s == events.ReasonUnsupported
}

func (r *reader) validDigest(s string) bool {
	if s == "" {
		return true
	}
	if len(s) != 64 {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// time reads s, the body of a JSON string, as an RFC 3339 time that is
// not the zero time, as time.Time reads JSON.
func (r *reader) time(s []byte) (time.Time, bool) {
	if r.stampLen > 0 && bytes.Equal(s, r.stamp[:r.stampLen]) {
		return r.stampTime, true
	}
	var t time.Time
	if t.UnmarshalText(s) != nil || t.IsZero() {
		return t, false
	}
	if len(s) <= len(r.stamp) {
		r.stampLen = copy(r.stamp[:], s)
		r.stampTime = t
	}
	return t, true
}

// intern returns s as a string, the same one each time while interned has
// room.
func (r *reader) intern(s []byte) string {
	if str, ok := r.interned[string(s)]; ok {
		return str
	}
	str := string(s)
	if len(r.interned) < maxInterned {
		r.interned[str] = str
	}
	return str
}

// unquoted returns the body of the JSON string v and true when v is a
// string with no escape; JSON v2 has checked its UTF-8 and that it holds
// no control character.
func unquoted(v jsontext.Value) ([]byte, bool) {
	if len(v) < 2 || v[0] != '"' || bytes.IndexByte(v, '\\') >= 0 {
		return nil, false
	}
	return v[1 : len(v)-1], true
}

// integerAtLeast reports whether v, a JSON value, is a plain run of
// digits (as an int64 is written: no sign, fraction or exponent) of at
// least minimum. Anything else, valid or not, is left to the strict
// reader.
func integerAtLeast(v jsontext.Value, minimum int64) bool {
	if len(v) == 0 || len(v) > 18 {
		return false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int64(c-'0')
	}
	return n >= minimum
}

// validID reports whether s is minLen to 128 of [A-Za-z0-9._~-], as an
// event id and a run id's parts are.
func validID(s []byte, minLen int) bool {
	if len(s) < minLen || len(s) > 128 {
		return false
	}
	for _, c := range s {
		if !idByte(c) {
			return false
		}
	}
	return true
}

func idByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '~' || c == '-'
}

// validRunID matches ^(anon:)?[A-Za-z0-9._~-]{1,128}/[A-Za-z0-9._~-]{16,128}$.
func validRunID(s []byte) bool {
	tenant, id, ok := bytes.Cut(bytes.TrimPrefix(s, []byte("anon:")), []byte("/"))
	return ok && validID(tenant, 1) && validID(id, 16)
}
