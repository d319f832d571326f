package a2ahttp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// Wrap(nil) is a mistake in the host's wiring, like http.Handle(nil).
func TestWrapNil(t *testing.T) {
	m, err := a2ahttp.New(compile(t, wideA2A(), policy.Policy{}), a2ahttp.Options{Sink: &negotiatetest.Recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if r := recover(); r != "a2ahttp: Wrap(nil)" {
			t.Errorf("Wrap(nil) recovered %v", r)
		}
	}()
	m.Wrap(nil)
}

// A nil OutboundOptions.Client is the egress client, here allowed
// loopback.
func TestNegotiateDefaultClient(t *testing.T) {
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/agent-card.json" || r.Header.Get("A2A-Version") != "1.2" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, `{"supportedInterfaces":[{"protocolVersion":"1.2"}]}`)
	}))
	defer peer.Close()
	o, offers, err := a2ahttp.Negotiate(context.Background(), compile(t, wideA2A(), policy.Policy{}), peer.URL, a2ahttp.OutboundOptions{Sink: &negotiatetest.Recorder{}, AllowLoopback: true})
	if err != nil || o.Version != "1.2" || len(offers) != 1 {
		t.Errorf("%+v %q %v", o, offers, err)
	}
}

// A peer URL that does not parse reaches no decision, records nothing, and
// is named as such.
func TestNegotiateUnparsableURL(t *testing.T) {
	rec := &negotiatetest.Recorder{}
	o, offers, err := a2ahttp.Negotiate(context.Background(), compile(t, wideA2A(), policy.Policy{}), "http://[::1", a2ahttp.OutboundOptions{Sink: rec})
	if o.Kind != negotiate.Refused || offers != nil || detailReason(err) != "egress-denied" ||
		!strings.Contains(err.Error(), "egress: of a peer URL that does not parse: the egress policy refused to reach the peer: the peer URL is not an absolute http(s) URL") {
		t.Errorf("%+v %q %v", o, offers, err)
	}
	if len(rec.Events()) != 0 {
		t.Errorf("%d events, want none", len(rec.Events()))
	}
}
