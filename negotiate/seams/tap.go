package seams

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/internal/strictjson"
)

// tap is the transport of an exchange's discovery request (the agent card,
// or server/discover): it reads the peer's answer, up to the bound, keeps
// it (the A2A seam reads the card's interface URL from it), and, when the
// request names peerOffersOnly, narrows the versions the answer offers to
// that one before the adapter reads them, as if the peer advertised only
// it (§22).
type tap struct {
	base http.RoundTripper
	only string
	body []byte
	// getOnly passes every request but a GET through untouched: the A2A
	// seam's card requests are its only GETs, and its call goes through
	// the same client.
	getOnly bool
}

func (x *invocation) discoveryTap() *tap {
	return &tap{base: x.client.Transport, only: x.req.PeerOffersOnly}
}

// via is c sending through rt.
func via(c *http.Client, rt http.RoundTripper) *http.Client {
	cc := *c
	cc.Transport = rt
	return &cc
}

// RoundTrip sends req and hands back the answer, read, kept and narrowed.
// The answer is read as the adapter reads it, with the engine's one
// reader (its Content-Encoding decoded, a byte-order mark skipped, of an
// event stream the event that answers the request), so that what is kept
// and narrowed is what the adapter would have read; when narrowed, it is
// handed back as that one JSON value. An answer that holds none (a stream
// that ends before its response) is handed back as it came.
func (t *tap) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.getOnly && req.Method != http.MethodGet {
		return t.base.RoundTrip(req)
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	var msg []byte
	sse := exchange.IsEventStream(resp.Header.Get("Content-Type"))
	v, err := exchange.Read(resp, maxPeerBytes, func(b []byte, complete bool) exchange.Verdict {
		if !complete || sse && !answersAsk(mcpRefusal.Read(b, true)) {
			return exchange.Undecided
		}
		msg = b
		return exchange.Served
	}, nil)
	if err != nil {
		return nil, err
	}
	if v != exchange.Served {
		return resp, nil
	}
	t.body = bytes.Clone(msg)
	if t.only == "" {
		return resp, nil // the answer as it came, what was read of it replayed
	}
	resp.Body.Close()
	narrowed := t.narrow(t.body)
	resp.Body = io.NopCloser(bytes.NewReader(narrowed))
	resp.ContentLength = int64(len(narrowed))
	resp.Header.Set("Content-Type", "application/json")
	resp.Header.Del("Content-Encoding")
	resp.Header.Del("Content-Length")
	return resp, nil
}

// askID is the id of the one request of an MCP negotiation (discover,
// initialize), as mcphttp writes it.
var askID = jsontext.Value("1")

// answersAsk reports whether r, an event read leniently, is the answer
// to the negotiation's request, as an MCP client matches one: a response
// to its id, or a refusal.
func answersAsk(r exchange.Reading) bool {
	return r.Verdict == exchange.Refused || len(exchange.Answered([]jsontext.Value{askID}, r.IDs)) == 0
}

// narrow rewrites raw, an answer's one JSON value, so that it offers
// t.only at most: a card's supportedInterfaces at other versions, and an
// A2A 0.3 card's top-level protocolVersion of another version, go; so do
// the other revisions of a server/discover result's supportedVersions or
// a -32022's data.supported. The answer is read with the module's strict
// reader, as the adapter reads it, and every value narrow does not touch
// is kept as written (a number beyond float64 included); an answer it
// cannot read is passed on as read, and the adapter refuses it too.
func (t *tap) narrow(raw []byte) []byte {
	var doc object
	if strictjson.Decode(raw, &doc) != nil {
		return raw
	}
	doc.filter("supportedInterfaces", func(v jsontext.Value) bool {
		var i struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		return strictjson.DecodeOpen(v, &i) == nil && i.ProtocolVersion == t.only
	})
	var v string
	if strictjson.Decode(doc["protocolVersion"], &v) == nil && !strings.HasPrefix(v+".", t.only+".") {
		delete(doc, "protocolVersion")
		if doc["supportedInterfaces"] == nil {
			// Still a card, one that offers nothing: without a version
			// member it would be no card at all, and no decision.
			doc["supportedInterfaces"] = jsontext.Value("[]")
		}
	}
	isOnly := func(v jsontext.Value) bool {
		var s string
		return strictjson.Decode(v, &s) == nil && s == t.only
	}
	doc.within("result", func(r object) { r.filter("supportedVersions", isOnly) })
	doc.within("error", func(e object) { e.within("data", func(d object) { d.filter("supported", isOnly) }) })
	out, _ := json.Marshal(doc) // members as they were read, or as filter and within wrote them: valid JSON
	return out
}

// object is a JSON object whose members are kept as written.
type object map[string]jsontext.Value

// filter keeps the elements of the array at key that ok keeps; a member
// that is not an array is left alone.
func (o object) filter(key string, ok func(jsontext.Value) bool) {
	var list []jsontext.Value
	if o[key] == nil || strictjson.Decode(o[key], &list) != nil {
		return
	}
	kept := []jsontext.Value{}
	for _, v := range list {
		if ok(v) {
			kept = append(kept, v)
		}
	}
	o[key], _ = json.Marshal(kept)
}

// within edits the object at key with edit; a member that is not an
// object is left alone.
func (o object) within(key string, edit func(object)) {
	var inner object
	if o[key] == nil || strictjson.Decode(o[key], &inner) != nil || inner == nil {
		return
	}
	edit(inner)
	o[key], _ = json.Marshal(inner)
}
