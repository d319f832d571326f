package a2ahttp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// TestOutboundDowngradeVisible: when the host names no version, it asks
// the peer for its preferred one, and its record says so (requested),
// so that a downgrade reads as version < requested in the record alone
// (issue 9 item 5, the silent-downgrade witness of RFC 0175 §D.5). For
// every subset of versions a peer's card can offer, for an authenticated
// and an anonymous host: requested is the preferred version, and an
// accepted record's version differs from it exactly when the outcome is a
// downgrade.
func TestOutboundDowngradeVisible(t *testing.T) {
	all := []string{"1.0", "1.1", "1.2", "2.0"}
	n := compile(t, wideA2A(), policy.Policy{})
	for mask := 1; mask < 1<<len(all); mask++ {
		var offers []string
		for i, v := range all {
			if mask&(1<<i) != 0 {
				offers = append(offers, v)
			}
		}
		peer := newPeer(t, 200, cardOffering(offers...))
		for _, subject := range []*negotiate.Subject{peerAgent(), nil} {
			rec := &negotiatetest.Recorder{}
			o := a2ahttp.Outbound{Negotiator: n, Sink: rec, Subject: subject, Client: peer.Client()}
			p, _ := o.Negotiate(context.Background(), peer.URL)
			ev := rec.Events()
			if len(ev) != 1 {
				t.Fatalf("%v: %d events", offers, len(ev))
			}
			e := ev[0].Payload
			downgrade := e.Outcome == "accepted" && e.Version != e.Requested
			if e.Requested != "1.2" || downgrade != (p.Outcome.Kind == negotiate.Downgraded) {
				t.Errorf("offers %v, subject %v: recorded %+v for a %s outcome", offers, subject != nil, e, p.Outcome.Kind)
			}
		}
	}
}

// TestOutboundClient: an https peer's card is fetched with the Client
// given (here, the one that trusts the test server's certificate), and a
// nil Client is the egress client (which reaches loopback when allowed).
func TestOutboundClient(t *testing.T) {
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, cardOffering("1.2"))
	}))
	defer tls.Close()
	plain := newPeer(t, 200, cardOffering("1.2"))
	for _, c := range []struct {
		url    string
		client *http.Client
	}{{tls.URL, tls.Client()}, {plain.URL, nil}} {
		o := a2ahttp.Outbound{Negotiator: compile(t, wideA2A(), policy.Policy{}), Sink: &negotiatetest.Recorder{}, Client: c.client, AllowLoopback: true}
		if p, err := o.Negotiate(context.Background(), c.url); err != nil || p.Outcome.Version != "1.2" {
			t.Errorf("%s: %+v, %v", c.url, p, err)
		}
	}
}

// roundTripLog is a RoundTripper that keeps the headers of what it is
// given to send.
type roundTripLog struct{ sent []http.Header }

func (l *roundTripLog) RoundTrip(r *http.Request) (*http.Response, error) {
	l.sent = append(l.sent, r.Header.Clone())
	return &http.Response{StatusCode: 204, Body: http.NoBody, Request: r}, nil
}

// TestTransportBase: the Transport sends through the base it is given; a
// request it must restamp keeps its other headers, and one without a
// header is stamped; a card's version may hold any digit.
func TestTransportBase(t *testing.T) {
	o := negotiate.Outcome{Kind: negotiate.Accepted, Protocol: "a2a", Version: "1.9"}
	base := &roundTripLog{}
	tr, err := a2ahttp.NewTransport(o, base)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://peer.example/a2a", nil)
	req.Header.Set("X-Other", "kept")
	req.Header["a2a-version"] = []string{"1.9"}
	if _, err := tr.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	nilHeader := &http.Request{Method: http.MethodGet, URL: req.URL}
	if _, err := tr.RoundTrip(nilHeader); err != nil {
		t.Fatal(err)
	}
	if len(base.sent) != 2 || base.sent[0].Get("X-Other") != "kept" || base.sent[0].Get("A2A-Version") != "1.9" || base.sent[1].Get("A2A-Version") != "1.9" {
		t.Errorf("sent %v", base.sent)
	}
	if offers, err := a2ahttp.CardOffers([]byte(`{"supportedInterfaces":[{"protocolVersion":"9.90"}]}`)); err != nil || len(offers) != 1 || offers[0] != "9.90" {
		t.Errorf("CardOffers: %q, %v", offers, err)
	}
}
