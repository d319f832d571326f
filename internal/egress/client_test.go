package egress

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLoopbackOnlyWithTheOption: the zero Options refuse a peer on
// loopback before anything is sent; AllowLoopback reaches it.
func TestLoopbackOnlyWithTheOption(t *testing.T) {
	p := newPeer(t, answer("ok"))
	strict, err := NewClient(Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = get(t, strict, p.URL, 0)
	e := wantKind(t, err, Denied)
	if !strings.Contains(e.Err.Error(), "127.0.0.1 is a loopback address") || e.URL != p.URL {
		t.Errorf("error %v: want the URL and the loopback address named", err)
	}
	if p.hits.Load() != 0 {
		t.Errorf("the peer was reached %d times through the strict client", p.hits.Load())
	}
	resp, err := get(t, client(t, Options{}), p.URL, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := body(t, resp); got != "ok" {
		t.Errorf("body %q, want ok", got)
	}
}

// TestDoOfNilClient: a nil client is the zero Options' one, which refuses
// loopback.
func TestDoOfNilClient(t *testing.T) {
	p := newPeer(t, answer("ok"))
	_, err := get(t, nil, p.URL, 0)
	wantKind(t, err, Denied)
	if p.hits.Load() != 0 {
		t.Error("the default client reached a peer on loopback")
	}
}

// TestHostSpelledAsTheURLStandardReadsIt: a host Go's resolver would look
// up in DNS is dialled as the address the URL Standard, and so the
// digest, names; with the host in the Host header. Without AllowLoopback
// each is refused as the loopback address it is.
func TestHostSpelledAsTheURLStandardReadsIt(t *testing.T) {
	var host string
	p := newPeer(t, func(w http.ResponseWriter, r *http.Request) { host = r.Host })
	port := p.port()
	strict, loop := guardedClient(t, policy{}, nil), guardedClient(t, policy{allowLoopback: true}, nil)
	for _, tc := range []struct{ spelled, dialled string }{
		{"0x7f000001", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0x7f.0.0x0.1", "127.0.0.1"},
		{"127.0.0.1.", "127.0.0.1"},
		{"[::ffff:7f00:1]", "[::ffff:7f00:1]"},
		{"[0:0:0:0:0:ffff:127.0.0.1]", "[::ffff:7f00:1]"},
	} {
		u := "http://" + tc.spelled + ":" + port + "/x"
		_, err := get(t, strict, u, 0)
		if e := wantKind(t, err, Denied); !strings.Contains(e.Err.Error(), "loopback") {
			t.Errorf("%s: %v, want refused as loopback", u, err)
		}
		resp, err := get(t, loop, u, 0)
		if err != nil {
			t.Errorf("%s: %v", u, err)
			continue
		}
		body(t, resp)
		if want := tc.dialled + ":" + port; host != want {
			t.Errorf("%s: the peer saw Host %q, want %q", u, host, want)
		}
	}
}

// TestHostHeaderSetByTheCallerIsKept: only a Host that merely repeats the
// URL's host is rewritten.
func TestHostHeaderSetByTheCallerIsKept(t *testing.T) {
	var host string
	p := newPeer(t, func(w http.ResponseWriter, r *http.Request) { host = r.Host })
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://0x7f000001:"+p.port()+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "peer.example"
	loop := guardedClient(t, policy{allowLoopback: true}, nil)
	resp, err := Do(loop, req, 0)
	if err != nil {
		t.Fatal(err)
	}
	body(t, resp)
	if host != "peer.example" {
		t.Errorf("the peer saw Host %q, want the caller's peer.example", host)
	}
	req.Host = ""
	resp, err = Do(loop, req, 0)
	if err != nil {
		t.Fatal(err)
	}
	body(t, resp)
	if want := "127.0.0.1:" + p.port(); host != want {
		t.Errorf("the peer saw Host %q, want %q", host, want)
	}
}

// TestDialAuthority: the host and port dialled, and the URLs that have no
// origin to dial.
func TestDialAuthority(t *testing.T) {
	for _, tc := range []struct{ url, want, err string }{
		{"http://Peer.Example:80/x", "peer.example", ""},
		{"https://peer.example:443/x", "peer.example", ""},
		{"https://peer.example:8443", "peer.example:8443", ""},
		{"http://b\u00fccher.example/", "xn--bcher-kva.example", ""},
		{"http://0x7f000001:1/", "127.0.0.1:1", ""},
		{"http://user:secret@[::1]:8080/", "[::1]:8080", ""},
		{"ftp://peer.example/", "", `the scheme "ftp" is not http or https`},
		{"ws://peer.example/", "", `the scheme "ws" is not http or https`},
		{"http:opaque", "", "the URL has no host"},
		{"http://[fe80::1%25eth0]/", "", "zone"},
		{"http://peer<x.example/", "", "forbidden code point"},
		{"http://1.2.3.4.5/", "", "not an IPv4 address"},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		got, err := dialAuthority(u)
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("dialAuthority(%s) = %q, %v; want %q, %q", tc.url, got, err, tc.want, tc.err)
		}
	}
}

// TestNoOriginNoRequest: a URL with no origin to dial is refused by the
// transport before anything is sent, and the request's body is closed.
func TestNoOriginNoRequest(t *testing.T) {
	b := &closeCounter{Reader: strings.NewReader("{}")}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://1.2.3.4.5/", b)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Do(guardedClient(t, policy{allowLoopback: true}, nil), req, 0)
	if e := wantKind(t, err, Denied); !strings.Contains(e.Error(), "not an IPv4 address") {
		t.Errorf("error %v, want the URL's fault named", err)
	}
	if b.closed == 0 {
		t.Error("the request body was not closed")
	}
}

type closeCounter struct {
	io.Reader
	closed int
}

func (c *closeCounter) Close() error { c.closed++; return nil }

// TestCrossOriginRedirectRefused: a redirect to another origin is never
// followed, and the other origin is never reached; one to the same
// origin, however spelled, is.
func TestCrossOriginRedirectRefused(t *testing.T) {
	other := newPeer(t, answer("other"))
	var to string
	p := newPeer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/final" {
			io.WriteString(w, "final")
			return
		}
		http.Redirect(w, r, to, http.StatusTemporaryRedirect)
	})
	for _, tc := range []struct {
		to   string
		want Kind // 0: followed
	}{
		{other.URL + "/final", RedirectRefused},
		{"http://169.254.169.254/latest/meta-data/", RedirectRefused},
		{"https://127.0.0.1:" + p.port() + "/final", RedirectRefused},
		{"http://0x7f000001:" + p.port() + "/final", 0},
		{"HTTP://127.0.0.1:" + p.port() + "/final", 0},
		{"/final", 0},
	} {
		to = tc.to
		resp, err := get(t, guardedClient(t, policy{allowLoopback: true}, nil), p.URL+"/start", 0)
		if tc.want == 0 {
			if err != nil {
				t.Errorf("redirect to %s: %v, want followed", tc.to, err)
			} else if got := body(t, resp); got != "final" {
				t.Errorf("redirect to %s: body %q, want final", tc.to, got)
			}
			continue
		}
		e := wantKind(t, err, tc.want)
		if e.URL != p.URL || !strings.Contains(e.Err.Error(), "another origin") || strings.Contains(err.Error(), "/start") || strings.Contains(err.Error(), "/final") || strings.Contains(err.Error(), "meta-data") {
			t.Errorf("redirect to %s: %v, want the first origin and the reason, and no path", tc.to, err)
		}
	}
	if other.hits.Load() != 0 {
		t.Errorf("the other origin was reached %d times", other.hits.Load())
	}
}

// redirectChain is a peer whose /?left=n redirects n times, to itself.
func redirectChain(t *testing.T) *peer {
	return newPeer(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("left"))
		if n == 0 {
			io.WriteString(w, "done")
			return
		}
		http.Redirect(w, r, "/?left="+strconv.Itoa(n-1), http.StatusFound)
	})
}

// TestSameOriginRedirectsBounded: MaxRedirects same-origin redirects are
// followed (3 by default), one more is refused.
func TestSameOriginRedirectsBounded(t *testing.T) {
	p := redirectChain(t)
	for _, tc := range []struct {
		max, redirects int
		ok             bool
	}{
		{0, 3, true}, {0, 4, false}, {1, 1, true}, {1, 2, false}, {5, 5, true}, {5, 6, false},
	} {
		resp, err := get(t, client(t, Options{MaxRedirects: tc.max}), p.URL+"/?left="+strconv.Itoa(tc.redirects), 0)
		if tc.ok {
			if err != nil {
				t.Errorf("MaxRedirects %d, %d redirects: %v", tc.max, tc.redirects, err)
			} else {
				body(t, resp)
			}
			continue
		}
		if e := wantKind(t, err, RedirectRefused); !strings.Contains(e.Err.Error(), "more than") {
			t.Errorf("MaxRedirects %d, %d redirects: %v", tc.max, tc.redirects, err)
		}
	}
}

// TestDoRefusesCrossOriginOnAnyClient: a client the host hands in follows
// no redirect to another origin either; a redirect it hands back
// unfollowed, or refuses itself, is a refused redirect.
func TestDoRefusesCrossOriginOnAnyClient(t *testing.T) {
	other := newPeer(t, answer("other"))
	p := newPeer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/same" {
			http.Redirect(w, r, "/final", http.StatusFound)
			return
		}
		if r.URL.Path == "/final" {
			io.WriteString(w, "final")
			return
		}
		http.Redirect(w, r, other.URL, http.StatusFound)
	})
	_, err := get(t, &http.Client{}, p.URL, 0)
	wantKind(t, err, RedirectRefused)
	if other.hits.Load() != 0 {
		t.Errorf("the other origin was reached through a plain client")
	}

	lastResponse := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	_, err = get(t, lastResponse, p.URL+"/same", 0)
	if e := wantKind(t, err, RedirectRefused); e.Status != http.StatusFound {
		t.Errorf("status %d, want 302", e.Status)
	}

	mine := errors.New("the host's own rule")
	refusing := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return mine }}
	_, err = get(t, refusing, p.URL+"/same", 0)
	if wantKind(t, err, RedirectRefused); !errors.Is(err, mine) {
		t.Errorf("error %v, want the host's rule as the cause", err)
	}

	counted := 0
	allowing := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { counted++; return nil }}
	resp, err := get(t, allowing, p.URL+"/same", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := body(t, resp); got != "final" || counted != 1 {
		t.Errorf("body %q after %d checks, want final after 1", got, counted)
	}
}

// TestPlainClientStopsAfterTenRedirects: with no CheckRedirect of its own
// a client keeps the standard library's bound.
func TestPlainClientStopsAfterTenRedirects(t *testing.T) {
	p := redirectChain(t)
	resp, err := get(t, &http.Client{}, p.URL+"/?left=10", 0)
	if err != nil {
		t.Fatal(err)
	}
	body(t, resp)
	_, err = get(t, &http.Client{}, p.URL+"/?left=11", 0)
	wantKind(t, err, RedirectRefused)
}

// TestStatus: a 5xx is not a negotiation answer and a 3xx is a redirect
// not followed; every other status is the peer's answer, for the adapter
// to read (an MCP server's 400 "no session" among them).
func TestStatus(t *testing.T) {
	for _, tc := range []struct {
		status int
		want   Kind // 0: the answer
	}{
		{200, 0}, {204, 0}, {299, 0}, {400, 0}, {404, 0}, {499, 0},
		{300, RedirectRefused}, {304, RedirectRefused}, {399, RedirectRefused},
		{500, NotAnAnswer}, {502, NotAnAnswer}, {503, NotAnAnswer}, {599, NotAnAnswer},
	} {
		p := newPeer(t, func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(tc.status)
			io.WriteString(w, "secret upstream body")
		})
		resp, err := get(t, client(t, Options{}), p.URL, 0)
		if tc.want == 0 {
			if err != nil {
				t.Errorf("status %d: %v, want the answer", tc.status, err)
				continue
			}
			if resp.StatusCode != tc.status {
				t.Errorf("status %d: got %d", tc.status, resp.StatusCode)
			}
			body(t, resp)
			continue
		}
		e := wantKind(t, err, tc.want)
		if e.Status != tc.status || strings.Contains(e.Error(), "secret") {
			t.Errorf("status %d: %v, want the status and nothing of the body", tc.status, err)
		}
	}
}

// TestHangUp: a peer that closes the connection before its answer is
// complete.
func TestHangUp(t *testing.T) {
	for _, tc := range []struct {
		name, wire string
		inBody     bool // the answer's headers arrive, its body is cut
	}{
		{"closed at once", "", false},
		{"closed in the status line", "HTTP/1.1 200", false},
		{"closed in the headers", "HTTP/1.1 200 OK\r\nContent-Ty", false},
		{"closed in the body", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"", true},
		{"closed in a chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{\"js", true},
	} {
		p := newPeer(t, func(w http.ResponseWriter, _ *http.Request) {
			conn, rw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			rw.WriteString(tc.wire)
			rw.Flush()
			conn.Close()
		})
		resp, err := get(t, client(t, Options{}), p.URL, 0)
		if tc.inBody {
			if err != nil {
				t.Fatalf("%s: %v, want the headers", tc.name, err)
			}
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		e := wantKind(t, err, HangUp)
		if e.URL != p.URL {
			t.Errorf("%s: URL %q, want %q", tc.name, e.URL, p.URL)
		}
	}
}

// TestUnreachable: a crashed peer (nothing listens) and a name that does
// not resolve.
func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = get(t, client(t, Options{}), "http://"+addr+"/", 0)
	if e := wantKind(t, err, Unreachable); !strings.Contains(e.Error(), "could not be reached") {
		t.Errorf("error %v", err)
	}
	var op *net.OpError
	if !errors.As(err, &op) {
		t.Errorf("error %v does not unwrap to its *net.OpError", err)
	}

	c := guardedClient(t, policy{}, nil)
	_, err = get(t, c, "http://nowhere.test/", 0)
	var dnsErr *net.DNSError
	if wantKind(t, err, Unreachable); !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Errorf("error %v, want a not-found *net.DNSError inside", err)
	}
}

// TestPolicyOnResolvedAddress: names that resolve to refused addresses
// are refused for the address, which is what DNS rebinding changes; the
// guard behind the policy makes sure nothing off loopback is dialled.
func TestPolicyOnResolvedAddress(t *testing.T) {
	p := newPeer(t, answer("ok"))
	names := map[string]netip.Addr{
		"metadata.test": netip.MustParseAddr("169.254.169.254"),
		"alibaba.test":  netip.MustParseAddr("100.100.100.200"),
		"private.test":  netip.MustParseAddr("10.0.0.1"),
		"cgnat.test":    netip.MustParseAddr("100.64.0.1"),
		"loop.test":     netip.MustParseAddr("127.0.0.1"),
	}
	for _, tc := range []struct {
		host string
		p    policy
		ok   bool
	}{
		{"metadata.test", policy{}, false},
		{"metadata.test", policy{allowLoopback: true, allowPrivate: true}, false},
		{"alibaba.test", policy{allowPrivate: true}, false},
		{"private.test", policy{}, false},
		{"private.test", policy{allowLoopback: true}, false},
		{"cgnat.test", policy{}, false},
		{"loop.test", policy{}, false},
		{"loop.test", policy{allowPrivate: true}, false},
		{"loop.test", policy{allowLoopback: true}, true},
	} {
		c := guardedClient(t, tc.p, names)
		resp, err := get(t, c, "http://"+tc.host+":"+p.port()+"/", 0)
		if tc.ok {
			if err != nil {
				t.Errorf("%s %+v: %v", tc.host, tc.p, err)
			} else if got := body(t, resp); got != "ok" {
				t.Errorf("%s: body %q", tc.host, got)
			}
			continue
		}
		if e := wantKind(t, err, Denied); !strings.Contains(e.Err.Error(), names[tc.host].String()) {
			t.Errorf("%s %+v: %v, want the resolved address named", tc.host, tc.p, err)
		}
	}
}

// stall is a peer that never answers until the test ends.
func stall(t *testing.T, headersFirst bool) *peer {
	release := make(chan struct{})
	p := newPeer(t, func(w http.ResponseWriter, r *http.Request) {
		if headersFirst {
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, "{")
			http.NewResponseController(w).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) }) // runs before the server's Close
	return p
}

// TestTimeouts: a peer that never answers is a timeout, whichever bound
// runs out; a caller that gives up is a cancellation. The bounds are
// short, and only the kind is asserted, never a duration.
func TestTimeouts(t *testing.T) {
	silent := stall(t, false)
	for _, tc := range []struct {
		name string
		o    Options
	}{
		{"HeaderTimeout", Options{HeaderTimeout: 20 * time.Millisecond}},
		{"Timeout", Options{Timeout: 20 * time.Millisecond}},
	} {
		_, err := get(t, client(t, tc.o), silent.URL, 0)
		var ne net.Error
		if wantKind(t, err, Timeout); !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("%s: %v, want the timeout inside", tc.name, err)
		}
	}

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	_, err := getContext(ctx, t, client(t, Options{}), silent.URL, 0)
	if wantKind(t, err, Timeout); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v, want context.DeadlineExceeded inside", err)
	}

	canceled, cancelNow := context.WithCancel(t.Context())
	cancelNow()
	_, err = getContext(canceled, t, client(t, Options{}), silent.URL, 0)
	if wantKind(t, err, Canceled); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled inside", err)
	}

	slowBody := stall(t, true)
	resp, err := get(t, client(t, Options{Timeout: 50 * time.Millisecond}), slowBody.URL, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, err = io.ReadAll(resp.Body)
	wantKind(t, err, Timeout)
	// The error sticks: a second read does not wait again.
	if _, again := resp.Body.Read(make([]byte, 1)); again != err {
		t.Errorf("second read: %v, want the same error %v", again, err)
	}

	readCtx, cancelRead := context.WithCancel(t.Context())
	resp, err = getContext(readCtx, t, client(t, Options{}), slowBody.URL, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	cancelRead()
	_, err = io.ReadAll(resp.Body)
	wantKind(t, err, Canceled)
}

// TestBodyBound: Do reads an answer's body up to its bound, and says
// TooLarge, distinctly, at one byte more.
func TestBodyBound(t *testing.T) {
	for _, tc := range []struct {
		size, max int64
		ok        bool
	}{
		{10, 10, true}, {11, 10, false}, {9, 10, true}, {0, 1, true}, {2, 1, false},
		{DefaultMaxBodyBytes, 0, true}, {DefaultMaxBodyBytes + 1, 0, false},
	} {
		p := newPeer(t, answer(strings.Repeat("x", int(tc.size))))
		resp, err := get(t, client(t, Options{}), p.URL, tc.max)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if tc.ok {
			if err != nil || int64(len(b)) != tc.size {
				t.Errorf("%d bytes under %d: read %d, %v", tc.size, tc.max, len(b), err)
			}
			continue
		}
		e := wantKind(t, err, TooLarge)
		limit := tc.max
		if limit == 0 {
			limit = DefaultMaxBodyBytes
		}
		var mb *http.MaxBytesError
		if !errors.As(err, &mb) || mb.Limit != limit || e.URL != p.URL || int64(len(b)) != limit {
			t.Errorf("%d bytes under %d: %v after %d bytes, want a MaxBytesError of %d", tc.size, tc.max, err, len(b), limit)
		}
	}
}

// TestReadBody: the bound without a client, for a body read elsewhere.
func TestReadBody(t *testing.T) {
	b, err := ReadBody(strings.NewReader(strings.Repeat("x", DefaultMaxBodyBytes)), 0)
	if err != nil || len(b) != DefaultMaxBodyBytes {
		t.Errorf("1 MiB: %d bytes, %v", len(b), err)
	}
	_, err = ReadBody(strings.NewReader(strings.Repeat("x", DefaultMaxBodyBytes+1)), 0)
	if e := wantKind(t, err, TooLarge); e.URL != "" {
		t.Errorf("URL %q, want none", e.URL)
	}
	b, err = ReadBody(strings.NewReader("abc"), 3)
	if err != nil || string(b) != "abc" {
		t.Errorf("3 of 3: %q, %v", b, err)
	}
	_, err = ReadBody(strings.NewReader("abcd"), 3)
	wantKind(t, err, TooLarge)
	cut := io.MultiReader(strings.NewReader("ab"), errReader{io.ErrUnexpectedEOF})
	b, err = ReadBody(cut, 10)
	if wantKind(t, err, HangUp); string(b) != "ab" || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut body: %q, %v", b, err)
	}
	if _, err := ReadBody(strings.NewReader(""), -1); err == nil || errors.Is(err, TooLarge) {
		t.Errorf("negative bound: %v, want a plain error", err)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// TestNegativeBounds: a negative bound is an error, never a default.
func TestNegativeBounds(t *testing.T) {
	for _, o := range []Options{{Timeout: -1}, {HeaderTimeout: -time.Second}, {MaxRedirects: -1}} {
		if c, err := NewClient(o); err == nil || c != nil || !strings.Contains(err.Error(), "negative") {
			t.Errorf("NewClient(%+v) = %v, %v; want an error", o, c, err)
		}
	}
	b := &closeCounter{Reader: strings.NewReader("{}")}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://127.0.0.1:1/", b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Do(nil, req, -1); err == nil || !strings.Contains(err.Error(), "negative") || b.closed != 1 {
		t.Errorf("Do with a negative bound: %v, body closed %d times", err, b.closed)
	}
}

// TestClientBounds: the defaults of the zero Options, the values given,
// and what NewTransport leaves to the caller.
func TestClientBounds(t *testing.T) {
	headerOf := func(rt http.RoundTripper) time.Duration { return rt.(*transport).base.ResponseHeaderTimeout }
	// The documented values, written out: a test against the constant
	// itself would pass whatever it held.
	for _, b := range []struct {
		name      string
		got, want time.Duration
	}{
		{"DefaultMaxBodyBytes", DefaultMaxBodyBytes, 1048576},
		{"DefaultMaxRedirects", DefaultMaxRedirects, 3},
	} {
		if b.got != b.want {
			t.Errorf("%s = %d, want %d", b.name, b.got, b.want)
		}
	}
	c := client(t, Options{})
	if c.Timeout != 20*time.Second || headerOf(c.Transport) != 10*time.Second {
		t.Errorf("zero Options: Timeout %v, header %v", c.Timeout, headerOf(c.Transport))
	}
	c = client(t, Options{Timeout: time.Minute, HeaderTimeout: time.Second})
	if c.Timeout != time.Minute || headerOf(c.Transport) != time.Second {
		t.Errorf("given: Timeout %v, header %v", c.Timeout, headerOf(c.Transport))
	}
	base := c.Transport.(*transport).base
	if base.Proxy != nil || base.MaxResponseHeaderBytes != 65536 || base.TLSHandshakeTimeout != 10*time.Second || base.IdleConnTimeout != 90*time.Second {
		t.Errorf("transport: proxy set %v, header bytes %d, TLS %v, idle %v", base.Proxy != nil, base.MaxResponseHeaderBytes, base.TLSHandshakeTimeout, base.IdleConnTimeout)
	}
	if d := c.Transport.(*transport).dialer; d.Timeout != 30*time.Second || d.ControlContext == nil {
		t.Errorf("dialer: timeout %v, policy hook set %v", d.Timeout, d.ControlContext != nil)
	}
	if h := headerOf(NewTransport(Options{HeaderTimeout: time.Second})); h != 0 {
		t.Errorf("NewTransport: header bound %v, want none (the caller's context bounds a call)", h)
	}
	c.CloseIdleConnections() // reaches the transport's, which must not panic
}

// TestNewTransportKeepsThePolicy: the stamped calls' transport refuses
// and reaches what the negotiation client does.
func TestNewTransportKeepsThePolicy(t *testing.T) {
	p := newPeer(t, answer("ok"))
	_, err := get(t, &http.Client{Transport: NewTransport(Options{})}, p.URL, 0)
	wantKind(t, err, Denied)
	resp, err := get(t, &http.Client{Transport: NewTransport(Options{AllowLoopback: true})}, p.URL, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := body(t, resp); got != "ok" {
		t.Errorf("body %q", got)
	}
}

// TestConnectedResetsPerConnection: a failure to get the second
// connection of a fetch is unreachable, although the first one was made.
func TestConnectedResetsPerConnection(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		l.Close() // the next connection is refused
		br := bufio.NewReader(conn)
		if _, err := http.ReadRequest(br); err == nil {
			io.WriteString(conn, "HTTP/1.1 302 Found\r\nLocation: /again\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
		}
		conn.Close()
	}()
	_, err = get(t, client(t, Options{}), "http://"+l.Addr().String()+"/", 0)
	wantKind(t, err, Unreachable)
}
