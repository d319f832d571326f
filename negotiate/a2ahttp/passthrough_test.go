package a2ahttp_test

import (
	"bytes"
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/policy"
)

// randomBodies returns bodies of every kind the middleware must not touch:
// empty, JSON-RPC, binary with NULs and invalid UTF-8, and larger than the
// bound the middleware reads refusals with. The seed is fixed, so a failure
// names a body that can be made again.
func randomBodies() [][]byte {
	rng := rand.New(rand.NewPCG(4, 2))
	bodies := [][]byte{nil, {}, []byte(rpcBody(`"req-1"`)), []byte("\xff\xfe\x00{\"id\":"), bytes.Repeat([]byte{0}, 4096)}
	for _, size := range []int{1, 2, 3, 17, 512, 4095, 4096, 4097, 65536, a2ahttp.DefaultMaxBodyBytes + 1, 3 << 20} {
		for range 3 {
			b := make([]byte, size)
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			bodies = append(bodies, b)
		}
	}
	return bodies
}

// An accepted request's body reaches the wrapped handler byte for byte,
// whatever it holds and however large: the middleware never reads it.
func TestBodyPassesThroughByteForByte(t *testing.T) {
	for _, binding := range []bool{false, true} {
		f := newFixture(t, policy.Policy{}, a2ahttp.Options{HTTPJSON: binding, MaxBodyBytes: 16})
		for i, body := range randomBodies() {
			r := httptest.NewRequest(http.MethodPost, "/a2a", bytes.NewReader(body))
			r.Header.Set("A2A-Version", "1.2")
			w := f.do(r)
			if w.Body.String() != "served" {
				t.Fatalf("%v body %d: answered %s", binding, i, w.Body)
			}
			if !bytes.Equal(f.served.body, body) {
				t.Fatalf("%v body %d (%d bytes): the handler read %d bytes, sha256 %x, want %x",
					binding, i, len(body), len(f.served.body), sha256.Sum256(f.served.body), sha256.Sum256(body))
			}
		}
	}
}

// The same over a real connection on loopback, where the body is a network
// stream and the handler also sees the Content-Length the client sent.
func TestBodyPassesThroughOverLoopback(t *testing.T) {
	f := newFixture(t, policy.Policy{}, a2ahttp.Options{MaxBodyBytes: 16})
	var gotLength int64
	inner := f.h
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotLength = r.ContentLength
		inner.ServeHTTP(w, r)
	}))
	defer srv.Close()
	for i, body := range randomBodies() {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/a2a", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("A2A-Version", "1.2")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(answer) != "served" || resp.Header.Get("A2A-Version") != "1.2" {
			t.Fatalf("body %d: A2A-Version %q, answered %s", i, resp.Header.Get("A2A-Version"), answer)
		}
		if !bytes.Equal(f.served.body, body) || gotLength != int64(len(body)) {
			t.Fatalf("body %d (%d bytes): the handler read %d bytes (Content-Length %d), sha256 %x, want %x",
				i, len(body), len(f.served.body), gotLength, sha256.Sum256(f.served.body), sha256.Sum256(body))
		}
	}
}
