package egress

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// peer is an httptest server on 127.0.0.1 that counts its requests.
type peer struct {
	*httptest.Server
	hits atomic.Int32
}

// newPeer starts a peer serving h; it stops when the test ends.
func newPeer(t *testing.T, h http.HandlerFunc) *peer {
	t.Helper()
	p := &peer{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

// port is the peer's port, for URLs spelled another way.
func (p *peer) port() string {
	_, port, _ := net.SplitHostPort(p.Listener.Addr().String())
	return port
}

func answer(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, body) }
}

// client is NewClient(o) with loopback allowed, as every test that
// reaches a peer needs.
func client(t *testing.T, o Options) *http.Client {
	t.Helper()
	o.AllowLoopback = true
	c, err := NewClient(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// get is Do of a GET of url with c, bounded to max.
func get(t *testing.T, c *http.Client, url string, max int64) (*http.Response, error) {
	t.Helper()
	return getContext(t.Context(), t, c, url, max)
}

func getContext(ctx context.Context, t *testing.T, c *http.Client, url string, max int64) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return Do(c, req, max)
}

// body reads and closes an answer's body.
func body(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the body: %v", err)
	}
	return string(b)
}

// wantKind fails unless err is an *Error of kind k.
func wantKind(t *testing.T, err error, k Kind) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, k) {
		t.Fatalf("error %v (%T), want an *Error of kind %v", err, err, k)
	}
	return e
}

// stubResolver answers A queries from names, and every other query with
// no record; a name it does not hold does not exist. It speaks DNS over
// an in-memory pipe: no query leaves the process.
func stubResolver(t *testing.T, names map[string]netip.Addr) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		c, s := net.Pipe()
		go serveDNS(t, s, names)
		return c, nil
	}}
}

// serveDNS answers the length-prefixed queries (DNS over a stream) read
// from conn until it is closed.
func serveDNS(t *testing.T, conn net.Conn, names map[string]netip.Addr) {
	defer conn.Close()
	for {
		var n [2]byte
		if _, err := io.ReadFull(conn, n[:]); err != nil {
			return
		}
		q := make([]byte, binary.BigEndian.Uint16(n[:]))
		if _, err := io.ReadFull(conn, q); err != nil {
			return
		}
		var m dnsmessage.Message
		if err := m.Unpack(q); err != nil || len(m.Questions) != 1 {
			t.Errorf("the stub resolver got a query it cannot read: %v", err)
			return
		}
		question := m.Questions[0]
		a, known := names[strings.TrimSuffix(question.Name.String(), ".")]
		m.Header.Response, m.Header.Authoritative = true, true
		switch {
		case !known:
			m.Header.RCode = dnsmessage.RCodeNameError
		case question.Type == dnsmessage.TypeA && a.Is4():
			m.Answers = []dnsmessage.Resource{{
				Header: dnsmessage.ResourceHeader{Name: question.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: 60},
				Body:   &dnsmessage.AResource{A: a.As4()},
			}}
		}
		out, err := m.Pack()
		if err != nil {
			t.Errorf("the stub resolver cannot pack its answer: %v", err)
			return
		}
		if _, err := conn.Write(binary.BigEndian.AppendUint16(nil, uint16(len(out)))); err != nil {
			return
		}
		if _, err := conn.Write(out); err != nil {
			return
		}
	}
}

// guardedClient is the negotiation client of p whose names resolve
// through a stub resolver holding names, with a guard behind the policy:
// an address the policy let through that is not loopback fails the test
// and is not connected to. So neither a broken policy nor a host left
// unrewritten (a mutant's) sends a packet, or a DNS query, off loopback.
func guardedClient(t *testing.T, p policy, names map[string]netip.Addr) *http.Client {
	d := &net.Dialer{Resolver: stubResolver(t, names), ControlContext: func(ctx context.Context, network, address string, c syscall.RawConn) error {
		if err := p.control(ctx, network, address, c); err != nil {
			return err
		}
		if ap, err := netip.ParseAddrPort(address); err != nil || !ap.Addr().Unmap().IsLoopback() {
			t.Errorf("the policy let %s through: the test does not connect to it", address)
			return errors.New("test guard: not a loopback address")
		}
		return nil
	}}
	return &http.Client{Transport: dialVia(d, 10*time.Second), CheckRedirect: sameOrigin(DefaultMaxRedirects)}
}
