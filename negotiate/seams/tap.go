package seams

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
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
}

func (x *exchange) discoveryTap() *tap {
	return &tap{base: x.client.Transport, only: x.req.PeerOffersOnly}
}

// client is c sending through t.
func (t *tap) client(c *http.Client) *http.Client {
	cc := *c
	cc.Transport = t
	return &cc
}

// RoundTrip sends req and hands back the answer, read, kept and narrowed.
func (t *tap) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := readBounded(resp.Body, maxPeerBytes)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if t.only != "" {
		body = t.narrow(resp, body)
	}
	t.body = body
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// narrow rewrites an answer so that it offers t.only at most: a card's
// supportedInterfaces at other versions, and an A2A 0.3 card's top-level
// protocolVersion of another version, go; so do the other revisions of a
// server/discover result's supportedVersions or a -32022's data.supported.
// An answer it cannot read is passed on as it came.
func (t *tap) narrow(resp *http.Response, body []byte) []byte {
	raw := body
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		events := eventData(body)
		if len(events) == 0 {
			return body
		}
		raw = events[0]
		resp.Header.Set("Content-Type", "application/json")
	}
	var doc map[string]any
	if json.Unmarshal(raw, &doc) != nil {
		return body
	}
	if list, ok := doc["supportedInterfaces"].([]any); ok {
		doc["supportedInterfaces"] = keep(list, func(v any) bool {
			i, _ := v.(map[string]any)
			return i["protocolVersion"] == t.only
		})
	}
	if v, ok := doc["protocolVersion"].(string); ok && !strings.HasPrefix(v+".", t.only+".") {
		delete(doc, "protocolVersion")
	}
	isOnly := func(v any) bool { return v == t.only }
	if r, ok := doc["result"].(map[string]any); ok {
		if list, ok := r["supportedVersions"].([]any); ok {
			r["supportedVersions"] = keep(list, isOnly)
		}
	}
	if e, ok := doc["error"].(map[string]any); ok {
		if d, ok := e["data"].(map[string]any); ok {
			if list, ok := d["supported"].([]any); ok {
				d["supported"] = keep(list, isOnly)
			}
		}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return body
	}
	return out
}

// keep returns the members of list that ok keeps, never nil.
func keep(list []any, ok func(any) bool) []any {
	out := []any{}
	for _, v := range list {
		if ok(v) {
			out = append(out, v)
		}
	}
	return out
}
