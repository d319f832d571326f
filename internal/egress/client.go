package egress

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/wopneg/wopneg/events"
)

// The defaults of the zero [Options] that other code names, and of a
// zero body bound.
const (
	DefaultMaxRedirects = 3
	DefaultMaxBodyBytes = 1 << 20 // 1 MiB
)

// Options configure the clients of [NewClient] and [NewTransport]. The
// zero value is the safe default: public addresses only, 20 s a fetch,
// 10 s to the headers, 3 same-origin redirects.
type Options struct {
	// AllowLoopback lets the client reach 127.0.0.0/8 and ::1.
	AllowLoopback bool
	// AllowPrivate lets the client reach the private ranges the package
	// doc lists (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7...).
	// Link-local and metadata addresses stay refused.
	AllowPrivate bool
	// Timeout bounds a whole fetch, redirects and the body included;
	// zero means 20 s, as the OpenWOP reference host's budget.
	Timeout time.Duration
	// HeaderTimeout bounds the wait for the answer's headers once the
	// request is written; zero means 10 s.
	HeaderTimeout time.Duration
	// MaxRedirects bounds the same-origin redirects a fetch follows; zero
	// means DefaultMaxRedirects (3). A redirect to another origin is
	// never followed.
	MaxRedirects int
}

// NewClient returns the client of the negotiation fetches: the address
// policy of o checked on every address dialled, the host dialled as the
// URL Standard reads it, same-origin redirects only, and o's bounds. A
// negative bound is an error.
func NewClient(o Options) (*http.Client, error) {
	for _, f := range [...]struct {
		name string
		v    int64
	}{{"Timeout", int64(o.Timeout)}, {"HeaderTimeout", int64(o.HeaderTimeout)}, {"MaxRedirects", int64(o.MaxRedirects)}} {
		if f.v < 0 {
			return nil, fmt.Errorf("egress: Options.%s is negative", f.name)
		}
	}
	return newClient(o), nil
}

// newClient is NewClient of valid options.
func newClient(o Options) *http.Client {
	return &http.Client{
		Transport:     newTransport(o, cmp.Or(o.HeaderTimeout, 10*time.Second)),
		CheckRedirect: sameOrigin(cmp.Or(o.MaxRedirects, DefaultMaxRedirects)),
		Timeout:       cmp.Or(o.Timeout, 20*time.Second),
	}
}

// NewTransport returns the transport of the calls stamped with a
// negotiated version: the address policy of o and the host as the URL
// Standard reads it, as [NewClient]'s, without its time bounds (the
// caller's context bounds a call) or a redirect rule (that is the
// client's). o's bounds are not used.
func NewTransport(o Options) http.RoundTripper { return newTransport(o, 0) }

// newTransport returns the transport of o, waiting at most header for an
// answer's headers (0: no bound). It connects within 30 s, as
// http.DefaultTransport does.
func newTransport(o Options, header time.Duration) *transport {
	p := policy{allowLoopback: o.AllowLoopback, allowPrivate: o.AllowPrivate}
	return dialVia(&net.Dialer{Timeout: 30 * time.Second, ControlContext: p.control}, header)
}

// dialVia returns the transport that dials with d, whose ControlContext
// is the address policy, and waits at most header for an answer's headers.
// Its other bounds are http.DefaultTransport's, but for the answer's
// headers: 64 KiB.
func dialVia(d *net.Dialer, header time.Duration) *transport {
	return &transport{dialer: d, base: &http.Transport{
		Proxy:                  nil,
		DialContext:            d.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           100,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		ResponseHeaderTimeout:  header,
		MaxResponseHeaderBytes: 64 << 10,
	}}
}

// transport sends each request to the host its URL names to the URL
// Standard, through base, which dials with dialer.
type transport struct {
	base   *http.Transport
	dialer *net.Dialer
}

// RoundTrip sends req to the host and port of its origin, with that host
// in the Host header (unless the caller set another) and as the TLS
// server name. A URL with no http(s) origin is refused with kind Denied.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	authority, err := dialAuthority(req.URL)
	if err != nil {
		if req.Body != nil {
			req.Body.Close() // a RoundTripper closes the body, even on errors
		}
		return nil, &Error{Kind: Denied, URL: Where(req.URL), Err: err}
	}
	if authority != req.URL.Host {
		r := req.WithContext(req.Context())
		u := *req.URL
		u.Host = authority
		r.URL = &u
		if req.Host == "" || req.Host == req.URL.Host {
			r.Host = authority
		}
		req = r
	}
	return t.base.RoundTrip(req)
}

// CloseIdleConnections closes the idle connections of the transport, as
// http.Client.CloseIdleConnections expects of one.
func (t *transport) CloseIdleConnections() { t.base.CloseIdleConnections() }

// dialAuthority returns the host, and the port unless it is the scheme's
// default, of the origin of u as [events.Origin] reads it: the address
// the digest names, which is the one to dial.
func dialAuthority(u *url.URL) (string, error) {
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("the scheme %q is not http or https", u.Scheme)
	}
	if u.Host == "" {
		return "", errors.New("the URL has no host")
	}
	origin, err := events.Origin(u.String())
	if err != nil {
		return "", err
	}
	return strings.TrimPrefix(origin, u.Scheme+"://"), nil
}

// Where is all an error or a log line may say of a URL the module
// fetched: its origin, or "" when it has none. Never its path, query or
// credentials, which hosted servers put keys in.
func Where(u *url.URL) string {
	o, _ := events.Origin(u.String())
	return o
}

// sameOrigin returns a CheckRedirect that follows a redirect to the
// origin of the first request only, at most max times.
func sameOrigin(max int) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		first := via[0].URL
		if to := Where(req.URL); to == "" || to != Where(first) {
			return &Error{Kind: RedirectRefused, URL: Where(first), Err: fmt.Errorf("the peer redirected to %s, another origin", Where(req.URL))}
		}
		if len(via) > max {
			return &Error{Kind: RedirectRefused, URL: Where(first), Err: fmt.Errorf("the peer redirected more than %d times", max)}
		}
		return nil
	}
}

// defaultClient is the client of the zero Options, for [Do] of a nil
// client.
var defaultClient = sync.OnceValue(func() *http.Client { return newClient(Options{}) })

// Do sends req with c (nil: [NewClient] of the zero Options) and returns
// the peer's answer, or an [*Error] that says why there is none:
//
//   - the peer could not be reached, timed out, hung up, or the caller
//     canceled (kinds Unreachable, Timeout, HangUp, Canceled);
//   - the policy refused its address (Denied);
//   - it redirected to another origin (RedirectRefused): Do refuses that
//     on any client, as NewClient's does, and a 3xx that c handed back
//     unfollowed is refused too;
//   - it answered with a 5xx (NotAnAnswer), whose body is not kept.
//
// The answer's body reads at most maxBody bytes (0: DefaultMaxBodyBytes):
// one byte more is an *Error of kind TooLarge; a read that fails is one
// of kind HangUp, Timeout or Canceled. A negative maxBody is an error.
// The caller closes the body.
func Do(c *http.Client, req *http.Request, maxBody int64) (*http.Response, error) {
	resp, err := Send(c, req, maxBody)
	if err == nil {
		err = Status(req, resp)
	}
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// Send is [Do] but for its rule on the answer's status: an answer of any
// status comes back, its body bounded as Do bounds it, for a call whose
// client reads a refusal in an error answer (an MCP client reads
// JSON-RPC errors on most 5xx) before the rule is applied ([Status]).
func Send(c *http.Client, req *http.Request, maxBody int64) (*http.Response, error) {
	if maxBody < 0 {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("egress: the body bound %d is negative", maxBody)
	}
	maxBody = cmp.Or(maxBody, DefaultMaxBodyBytes)
	if c == nil {
		c = defaultClient()
	}
	cc := *c
	cc.CheckRedirect = thenOrigin(c.CheckRedirect)
	resp, err := send(req, cc.Do)
	if err != nil {
		// A refused redirect comes with the previous answer, already
		// closed.
		return nil, err
	}
	resp.Body = &bounded{rc: resp.Body, left: maxBody, limit: maxBody, url: Where(req.URL)}
	return resp, nil
}

// Status is [Do]'s rule on resp's status, the answer to req: an answer
// that is no answer (a 5xx) or a redirect not followed (a 3xx) is closed
// and is the error of its kind; nil for any other.
func Status(req *http.Request, resp *http.Response) error {
	kind := statusKind(resp.StatusCode)
	if kind == 0 {
		return nil
	}
	resp.Body.Close()
	return &Error{Kind: kind, URL: Where(req.URL), Status: resp.StatusCode}
}

// statusKind is the failure an answer's status is: a 5xx is no
// negotiation answer, a 3xx a redirect not followed; 0 for every other.
func statusKind(status int) Kind {
	if status >= 500 {
		return NotAnAnswer
	}
	if status >= 300 && status < 400 {
		return RedirectRefused
	}
	return 0
}

// thenOrigin returns a CheckRedirect that refuses a redirect to another
// origin and then asks check, whose refusal is one of kind
// RedirectRefused too; when check is nil, it follows at most 10
// redirects, as a client with no CheckRedirect does.
func thenOrigin(check func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	origin := sameOrigin(10)
	if check == nil {
		return origin
	}
	return func(req *http.Request, via []*http.Request) error {
		if err := origin(req, via); err != nil {
			return err
		}
		err := check(req, via)
		var e *Error
		if err == nil || err == http.ErrUseLastResponse || errors.As(err, &e) { // the client compares it so
			return err
		}
		return &Error{Kind: RedirectRefused, URL: Where(via[0].URL), Err: err}
	}
}

// ReadBody reads all of r, at most max bytes (0: DefaultMaxBodyBytes).
// One byte more is an [*Error] of kind [TooLarge] wrapping an
// *http.MaxBytesError; a read that fails is an *Error of kind HangUp,
// Timeout or Canceled. A negative max is an error.
func ReadBody(r io.Reader, max int64) ([]byte, error) {
	if max < 0 {
		return nil, fmt.Errorf("egress: the body bound %d is negative", max)
	}
	max = cmp.Or(max, DefaultMaxBodyBytes)
	return io.ReadAll(&bounded{rc: io.NopCloser(r), left: max, limit: max})
}

// bounded is a body read up to a bound, whose read errors are [*Error]s.
type bounded struct {
	rc    io.ReadCloser
	left  int64 // bytes still allowed
	limit int64
	url   string
	err   error // sticky once set
}

func (b *bounded) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.left == 0 {
		// At the bound: a body that ends here fits, one more byte does
		// not.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			b.err = &Error{Kind: TooLarge, URL: b.url, Err: &http.MaxBytesError{Limit: b.limit}}
			return 0, b.err
		}
		return 0, b.fail(err)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, b.fail(err)
}

// fail returns err as the body's error: io.EOF and nil as they are, any
// other as the sticky *Error of its kind.
func (b *bounded) fail(err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	b.err = &Error{Kind: kindOf(err, true), URL: b.url, Err: err}
	return b.err
}

func (b *bounded) Close() error { return b.rc.Close() }
