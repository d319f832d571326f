package conform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/internal/strictjson"
)

// maxResponse bounds every response body the runner reads from the host.
const maxResponse = 1 << 20

// answer is one response of the host, read whole (bounded).
type answer struct {
	Status int
	Header http.Header
	Body   []byte
	// JSON is the body read as a JSON object, nil when it is not one.
	JSON map[string]any
	// Err is why the exchange failed before an answer: unreachable,
	// timed out, too large. Status is 0 then.
	Err error
}

// hostClient sends the runner's requests to the host under test.
type hostClient struct {
	base    *url.URL
	token   string
	hc      *http.Client
	timeout time.Duration
}

// resolve makes ref absolute against the host's base URL.
func (c *hostClient) resolve(ref string) (string, error) {
	u, err := url.Parse(ref)
	if err != nil {
		return "", err
	}
	return c.base.ResolveReference(u).String(), nil
}

// do sends one request with a timeout and reads its answer. body, when not
// nil, is sent as JSON. The bearer token goes only to the host's own
// origin.
func (c *hostClient) do(ctx context.Context, method, ref string, body any, header http.Header) answer {
	target, err := c.resolve(ref)
	if err != nil {
		return answer{Err: err}
	}
	var rd *bytes.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return answer{Err: err}
		}
		rd = bytes.NewReader(data)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var req *http.Request
	if rd != nil {
		req, err = http.NewRequestWithContext(ctx, method, target, rd)
	} else {
		req, err = http.NewRequestWithContext(ctx, method, target, nil)
	}
	if err != nil {
		return answer{Err: err}
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	c.authorize(req)
	res, err := c.send(req)
	if err != nil {
		return answer{Err: err}
	}
	defer res.Body.Close()
	data, err := readCapped(res.Body, maxResponse)
	if err != nil {
		return answer{Err: fmt.Errorf("%s %s: %w", method, ref, err)}
	}
	return answerOf(res.StatusCode, res.Header, data)
}

// answerOf reads a response body as a JSON object: the body itself, or,
// for an event stream (as MCP's streamable HTTP may answer), the data of
// its first event that is one.
func answerOf(status int, h http.Header, data []byte) answer {
	a := answer{Status: status, Header: h, Body: data}
	if strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
		_ = readSSE(bytes.NewReader(data), func(f frame) bool {
			return strictjson.Decode([]byte(f.Data), &a.JSON) != nil
		})
		return a
	}
	_ = strictjson.Decode(data, &a.JSON)
	return a
}

// authorize sets the bearer token on req when it goes to the host's origin.
func (c *hostClient) authorize(req *http.Request) {
	if c.token != "" && sameOrigin(req.URL, c.base) {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
}

// send sends req with the runner's client, whose redirects carry no
// Authorization to another origin than the host's: a redirect to another
// scheme, host or port is followed without it (net/http keeps it for the
// same host on another port). The client's own CheckRedirect, or the
// default limit of 10 redirects, still applies.
func (c *hostClient) send(req *http.Request) (*http.Response, error) {
	hc := *c.hc
	check := c.hc.CheckRedirect
	hc.CheckRedirect = func(next *http.Request, via []*http.Request) error {
		if !sameOrigin(next.URL, c.base) {
			next.Header.Del("Authorization")
		}
		if check != nil {
			return check(next, via)
		}
		if len(via) >= maxRedirects {
			return errTooManyRedirects
		}
		return nil
	}
	return hc.Do(req)
}

// maxRedirects is how many redirects a request follows when the caller's
// client sets no rule, as net/http's default.
const maxRedirects = 10

// errTooManyRedirects is why a request stopped after maxRedirects.
var errTooManyRedirects = errors.New("stopped after 10 redirects")

// sameOrigin reports whether a and b have one origin as the URL Standard
// reads it (scheme, host and port, the scheme's default port filled in);
// a URL with no origin has none in common with any.
func sameOrigin(a, b *url.URL) bool {
	oa, err := events.Origin(a.String())
	if err != nil {
		return false
	}
	ob, err := events.Origin(b.String())
	return err == nil && oa == ob
}

// str is m[key] when it is a string.
func str(m map[string]any, key string) (string, bool) {
	s, ok := m[key].(string)
	return s, ok
}

// obj is m[key] when it is an object.
func obj(m map[string]any, key string) map[string]any {
	o, _ := m[key].(map[string]any)
	return o
}

// strs is m[key] when it is an array, its strings only.
func strs(m map[string]any, key string) []string {
	arr, _ := m[key].([]any)
	out := make([]string, 0, len(arr))
	for _, v := range arr {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
