package a2acard_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/wopneg/wopneg/internal/a2acard"
	"github.com/wopneg/wopneg/internal/egress"
)

// peer answers the card requests of a test: refuse answers a request that
// names a version with a refusal; it records what each request named.
type peer struct {
	mu      sync.Mutex
	named   []string
	traced  []string
	status  int
	refuse  bool
	body    string
	refusal string
}

func (p *peer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.named = append(p.named, r.Header.Get("A2A-Version"))
	p.traced = append(p.traced, r.Header.Get("traceparent"))
	p.mu.Unlock()
	if r.URL.Path != a2acard.Path || r.Header.Get("Accept") != "application/json" {
		http.NotFound(w, r)
		return
	}
	if p.refuse && r.Header.Get("A2A-Version") != "" {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(p.refusal))
		return
	}
	if p.status != 0 {
		w.WriteHeader(p.status)
	}
	_, _ = w.Write([]byte(p.body))
}

const card = `{"supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0"},{"protocolBinding":"GRPC","protocolVersion":"0.3"}]}`

// withRefuses sets a2acard.Refuses to f for the test.
func withRefuses(t *testing.T, f func([]byte) bool) {
	old := a2acard.Refuses
	a2acard.Refuses = f
	t.Cleanup(func() { a2acard.Refuses = old })
}

func isRefusal(b []byte) bool { return strings.Contains(string(b), "VERSION_NOT_SUPPORTED") }

// TestFetch: the card is fetched at the version asked for, with the trace
// context, read over the binding; a refusal of that version is asked
// again naming none; anything else that is no card is an *egress.Error.
func TestFetch(t *testing.T) {
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, tc := range []struct {
		name     string
		peer     *peer
		binding  string
		refuses  func([]byte) bool
		max      int64
		want     []string
		named    []string
		failKind egress.Kind
	}{
		{"every binding", &peer{body: card}, "", isRefusal, 0, []string{"1.0", "0.3"}, []string{"1.0"}, 0},
		{"GRPC", &peer{body: card}, "GRPC", isRefusal, 0, []string{"0.3"}, []string{"1.0"}, 0},
		{"refused, then the preferred card", &peer{body: card, refuse: true, refusal: `{"reason":"VERSION_NOT_SUPPORTED"}`}, "", isRefusal, 0, []string{"1.0", "0.3"}, []string{"1.0", ""}, 0},
		{"another 400", &peer{body: card, refuse: true, refusal: `{"reason":"BAD"}`}, "", isRefusal, 0, nil, []string{"1.0"}, egress.NotAnAnswer},
		{"no reader of refusals", &peer{body: card, refuse: true, refusal: `{"reason":"VERSION_NOT_SUPPORTED"}`}, "", nil, 0, nil, []string{"1.0"}, egress.NotAnAnswer},
		{"not found", &peer{body: card, status: http.StatusNotFound}, "", isRefusal, 0, nil, []string{"1.0"}, egress.NotAnAnswer},
		{"no card", &peer{body: `[]`}, "", isRefusal, 0, nil, []string{"1.0"}, egress.NotAnAnswer},
		{"too large", &peer{body: card}, "", isRefusal, int64(len(card) - 1), nil, []string{"1.0"}, egress.TooLarge},
		{"at the bound", &peer{body: card}, "", isRefusal, int64(len(card)), []string{"1.0", "0.3"}, []string{"1.0"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withRefuses(t, tc.refuses)
			p := tc.peer
			srv := httptest.NewServer(p)
			defer srv.Close()
			f := a2acard.Fetch{Client: srv.Client(), Max: tc.max, Binding: tc.binding,
				Trace: func(context.Context) (string, string) { return parent, "" }}
			got, err := f.Offers(context.Background(), srv.URL+"/", "1.0")
			var e *egress.Error
			switch {
			case tc.failKind != 0 && (!errors.As(err, &e) || e.Kind != tc.failKind):
				t.Errorf("error %v, want kind %v", err, tc.failKind)
			case tc.failKind == 0 && (err != nil || !reflect.DeepEqual(got, tc.want)):
				t.Errorf("Offers = %v, %v; want %v", got, err, tc.want)
			}
			if !reflect.DeepEqual(p.named, tc.named) {
				t.Errorf("the requests named %q, want %q", p.named, tc.named)
			}
			for _, tr := range p.traced {
				if tr != parent {
					t.Errorf("traceparent %q", tr)
				}
			}
		})
	}
}

// TestFetchPeerURL: a peer URL that is not an absolute http(s) URL is
// denied, named without its path, and nothing is sent.
func TestFetchPeerURL(t *testing.T) {
	f := a2acard.Fetch{Client: http.DefaultClient}
	for _, u := range []string{"ftp://peer.example/x", "/relative", "http://", "http://[::1", "https://peer.example/\x7f"} {
		_, err := f.Offers(context.Background(), u, "")
		var e *egress.Error
		if !errors.As(err, &e) || e.Kind != egress.Denied || strings.Contains(e.URL, "/x") {
			t.Errorf("%q: %v", u, err)
		}
	}
}
