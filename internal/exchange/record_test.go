package exchange_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/egress"
	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

var user = &negotiate.Subject{Issuer: "https://idp.example", SubjectID: "u1", Kind: "user", Tenant: "acme"}

// TestRecorder: a record outlives its context; an unrecorded event is
// logged, content-free, only while the audit is not required.
func TestRecorder(t *testing.T) {
	for _, required := range []bool{false, true} {
		var lines bytes.Buffer
		rec := &negotiatetest.Recorder{}
		r := exchange.Recorder{Pkg: "pkg", N: placesNegotiator(t, policy.Policy{RequireAudit: required}), Sink: rec, Log: slog.New(slog.NewTextHandler(&lines, &slog.HandlerOptions{ReplaceAttr: dropTime}))}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		o, err := r.DecideAndRecord(ctx, negotiate.Destination{}, user, negotiate.InboundOffer(mustLookup(t, r.N), "", "1.0"))
		if err != nil || o.Err() != nil || len(rec.Events()) != 1 || lines.Len() != 0 {
			t.Fatalf("required %t: %+v, %v, %d events, log %q", required, o, err, len(rec.Events()), lines.String())
		}
		rec.Fail(errors.New("store down"))
		o, err = r.DecideAndRecord(ctx, negotiate.Destination{}, user, negotiate.InboundOffer(mustLookup(t, r.N), "", strings.Repeat("9", 40)))
		want := `level=ERROR msg="pkg: negotiation.decided was not recorded" protocol=a2a requested=` + strings.Repeat("9", 32) + `... decided=refused version="" error="negotiate: negotiation.decided was not recorded: store down"` + "\n"
		if required {
			want = ""
		}
		if err == nil || lines.String() != want || (o.Rule == negotiate.RuleAudit) != required {
			t.Errorf("required %t: %+v, %v, log %q\nwant %q", required, o, err, lines.String(), want)
		}
	}
}

func dropTime(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

func mustLookup(t *testing.T, n *negotiate.Negotiator) facets.Advertised {
	t.Helper()
	adv, ok := n.Facets().Lookup(facets.ProtocolA2A)
	if !ok {
		t.Fatal("no a2a facet")
	}
	return adv
}

// TestDecided: an inbound decision is recorded before anything is served
// when it is a refusal, when the middleware answers it itself, and under
// RequireAudit when the request may act; a record that then fails under
// RequireAudit stands as the audit's refusal.
func TestDecided(t *testing.T) {
	for _, c := range []struct {
		name                    string
		requested               string
		own, acts, audit, fails bool
		recorded                bool
		rule                    negotiate.Rule // the rule of the outcome that stands
	}{
		{name: "accepted", requested: "1.0", rule: negotiate.RuleAccept},
		{name: "accepted, may act", requested: "1.0", acts: true, rule: negotiate.RuleAccept},
		{name: "accepted, audited, acts on nothing", requested: "1.0", audit: true, rule: negotiate.RuleAccept},
		{name: "accepted, audited, may act", requested: "1.0", acts: true, audit: true, recorded: true, rule: negotiate.RuleAccept},
		{name: "answered by the middleware", requested: "1.0", own: true, recorded: true, rule: negotiate.RuleAccept},
		{name: "refused", requested: "0.1", recorded: true, rule: negotiate.RuleFloor},
		{name: "audited, and its record fails", requested: "1.0", acts: true, audit: true, fails: true, recorded: true, rule: negotiate.RuleAudit},
	} {
		t.Run(c.name, func(t *testing.T) {
			sink := &negotiatetest.Recorder{}
			if c.fails {
				sink.Fail(errors.New("store down"))
			}
			r := exchange.Recorder{Pkg: "pkg", N: placesNegotiator(t, policy.Policy{RequireAudit: c.audit}), Sink: sink}
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // the client is gone: the record is not
			var (
				o       negotiate.Outcome
				payload events.NegotiationDecided
			)
			recorded := r.Decided(ctx, negotiate.Destination{}, user, exchange.Offer(mustLookup(t, r.N), c.requested), c.own, c.acts, &o, &payload)
			if recorded != c.recorded || o.Rule != c.rule || payload.Requested != c.requested {
				t.Errorf("%+v, %+v, recorded %v", o, payload, recorded)
			}
			if n := len(sink.Events()); n != btoi(c.recorded && !c.fails) {
				t.Errorf("%d events", n)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestContradicted: a server's refusal of what the decision accepted is
// recorded as that decision changed to the refusal, and stands as the
// refusal of a peer that serves none of the host's versions.
func TestContradicted(t *testing.T) {
	for _, p := range []facets.Protocol{facets.ProtocolA2A, facets.ProtocolMCP} {
		rec := &negotiatetest.Recorder{}
		r := exchange.Recorder{Pkg: "pkg", N: placesNegotiator(t, policy.Policy{}), Sink: rec}
		adv, _ := r.N.Facets().Lookup(p)
		o, payload := r.N.Decide(user, negotiate.InboundOffer(adv, "", adv.Preferred))
		got, err := r.Contradicted(context.Background(), negotiate.Destination{}, user, &o, &payload)
		ev := rec.Events()
		want := payload
		want.Outcome, want.Version, want.Reason = "refused", "", events.ReasonUnsupported
		if err != nil || got.Kind != negotiate.Refused || got.Rule != negotiate.RuleCommon || got.Requested != adv.Preferred || len(ev) != 1 || ev[0].Payload != want {
			t.Errorf("%s: %+v, %v, recorded %+v", p, got, err, ev)
		}
		// The decision's own event is the caller's, and stays the acceptance.
		if payload.Outcome != "accepted" || payload.Version != adv.Preferred || o.Kind != negotiate.Accepted {
			t.Errorf("%s: Contradicted changed the caller's decision: %+v, %+v", p, o, payload)
		}
	}
	if exchange.Unserved(facets.ProtocolA2A) != "65535.0" || exchange.Unserved(facets.ProtocolMCP) != "9999-12-31" {
		t.Error("the unserved versions moved")
	}
}

// TestNoDecision: the one line of a negotiation that reached no decision
// names the protocol and the peer's digest, and the error what was done.
func TestNoDecision(t *testing.T) {
	var lines bytes.Buffer
	r := exchange.Recorder{Pkg: "pkg", Log: slog.New(slog.NewTextHandler(&lines, &slog.HandlerOptions{ReplaceAttr: dropTime}))}
	cause := &egress.Error{Kind: egress.Timeout, URL: "https://peer.example"}
	err := r.NoDecision(context.Background(), facets.ProtocolMCP, "https://peer.example/mcp/sk-1?key=2", cause)
	digest, _ := events.PeerDigest("https://peer.example")
	want := `level=WARN msg="negotiation reached no decision" protocol=mcp peerDigest=` + digest + ` err.reason=timeout err.url=https://peer.example` + "\n"
	if !errors.Is(err, egress.Timeout) || err.Error() != "pkg: the negotiation reached no decision: "+cause.Error() || lines.String() != want {
		t.Errorf("%v, log %q\nwant %q", err, lines.String(), want)
	}
}

// TestBounded: what a log line carries of a caller's value is at most 32
// bytes, cut at a character boundary.
func TestBounded(t *testing.T) {
	for in, want := range map[string]string{
		"":                            "",
		strings.Repeat("a", 32):       strings.Repeat("a", 32),
		strings.Repeat("a", 33):       strings.Repeat("a", 32) + "...",
		strings.Repeat("a", 31) + "é": strings.Repeat("a", 31) + "...",
		// No character boundary at all (not UTF-8): nothing is kept.
		strings.Repeat("\x80", 40): "...",
	} {
		if got := exchange.Bounded(in); got != want {
			t.Errorf("Bounded(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPeer: a Transport's calls go to the peer's origin only; a nil Peer
// sends anything; a runtime refusal is recorded for the peer.
func TestPeer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	rec := &negotiatetest.Recorder{}
	p := &exchange.Peer{Recorder: exchange.Recorder{Pkg: "pkg", N: placesNegotiator(t, policy.Policy{}), Sink: rec}, URL: srv.URL + "/a2a", Subject: user}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/other/path", strings.NewReader("x"))
	if resp, err := p.Send(http.DefaultTransport, req); err != nil {
		t.Fatalf("same origin: %v", err)
	} else {
		resp.Body.Close()
	}
	body := &closed{Reader: strings.NewReader("x")}
	req, _ = http.NewRequest(http.MethodPost, "http://127.0.0.2:1/a2a", body)
	if _, err := p.Send(http.DefaultTransport, req); !errors.Is(err, egress.RedirectRefused) || !body.closed {
		t.Errorf("another origin: %v, body closed %t", err, body.closed)
	}
	bad := &exchange.Peer{URL: "not a url"}
	req, _ = http.NewRequest(http.MethodGet, srv.URL, nil)
	if _, err := bad.Send(http.DefaultTransport, req); !errors.Is(err, egress.RedirectRefused) {
		t.Errorf("a peer with no origin: %v", err)
	}
	var none *exchange.Peer
	req, _ = http.NewRequest(http.MethodGet, srv.URL, nil)
	if resp, err := none.Send(http.DefaultTransport, req); err != nil {
		t.Errorf("a nil Peer: %v", err)
	} else {
		resp.Body.Close()
	}
	o, err := p.Refused(context.Background(), facets.ProtocolA2A, "1.0", nil)
	digest, _ := events.PeerDigest(srv.URL)
	if ev := rec.Events(); err != nil || o.Kind != negotiate.Refused || len(ev) != 1 || ev[0].Payload.PeerDigest != digest || ev[0].Payload.Outcome != "refused" {
		t.Errorf("%+v, %v, %+v", o, err, ev)
	}
}

// closed is a request body that says whether it was closed.
type closed struct {
	*strings.Reader
	closed bool
}

func (c *closed) Close() error { c.closed = true; return nil }

// TestRefusalOffer: a peer's refusal is recorded below-floor only when
// it lists versions and every one is below the floor; anything else
// (nothing listed, which a decision would read as below-floor too, a
// version at or above the floor among them) is unsupported.
func TestRefusalOffer(t *testing.T) {
	n := placesNegotiator(t, policy.Policy{})
	for _, tc := range []struct {
		proto  facets.Protocol
		listed []string
		reason string
	}{
		{facets.ProtocolA2A, nil, events.ReasonUnsupported},
		{facets.ProtocolA2A, []string{}, events.ReasonUnsupported},
		{facets.ProtocolA2A, []string{"0.2"}, events.ReasonBelowFloor},
		{facets.ProtocolA2A, []string{"0.1", "0.2"}, events.ReasonBelowFloor},
		{facets.ProtocolA2A, []string{"0.2", "0.3"}, events.ReasonUnsupported},
		{facets.ProtocolA2A, []string{"banana"}, events.ReasonUnsupported},
		{facets.ProtocolA2A, []string{"banana", "0.2"}, events.ReasonBelowFloor},
		{facets.ProtocolMCP, []string{"2024-11-05"}, events.ReasonBelowFloor},
		{facets.ProtocolMCP, []string{"2025-11-25"}, events.ReasonUnsupported},
	} {
		requested := map[facets.Protocol]string{facets.ProtocolA2A: "1.0", facets.ProtocolMCP: "2026-07-28"}[tc.proto]
		offer := exchange.RefusalOffer(n, user, negotiate.Offer{Protocol: tc.proto, Requested: requested}, tc.listed)
		o, _ := n.Decide(user, offer)
		if o.Kind != negotiate.Refused || o.Reason != tc.reason || offer.Requested != requested {
			t.Errorf("%s %q: %s %s (offer %+v), want refused %s", tc.proto, tc.listed, o.Kind, o.Reason, offer, tc.reason)
		}
	}
}

// TestSettled: what an inbound answer settles on the record, for every
// verdict, whether the acceptance was recorded before the handler ran or
// not: a contradiction is a refusal in an event of its own, an acceptance
// not yet recorded is recorded once, and nothing is recorded twice.
func TestSettled(t *testing.T) {
	for _, c := range []struct {
		verdict  exchange.Verdict
		recorded bool
		want     []string // the outcomes of the events Settled writes
		stands   bool     // the decision still stands
	}{
		{exchange.Served, false, []string{"accepted"}, true},
		{exchange.Served, true, nil, true},
		{exchange.Refused, false, []string{"refused"}, false},
		{exchange.Refused, true, []string{"refused"}, false},
		{exchange.Unreadable, true, []string{"refused"}, false},
	} {
		rec := &negotiatetest.Recorder{}
		r := exchange.Recorder{Pkg: "pkg", N: placesNegotiator(t, policy.Policy{}), Sink: rec}
		o, payload := r.N.Decide(user, negotiate.InboundOffer(mustLookup(t, r.N), "", "1.0"))
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // a record never depends on the exchange's context
		stands := r.Settled(ctx, negotiate.Destination{}, user, &o, &payload, c.verdict, c.recorded)
		var got []string
		for _, e := range rec.Events() {
			got = append(got, e.Payload.Outcome)
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") || (stands.Err() == nil) != c.stands {
			t.Errorf("%v, recorded %t: events %q, stands %+v; want %q, stands %t", c.verdict, c.recorded, got, stands, c.want, c.stands)
		}
	}
}

// TestEgressPolicies: each of the four shared egress clients, and the
// transport of each, keeps its own address policy: loopback reached only
// where allowed, a private address only where allowed (refused before any
// connection otherwise), and a policy's client is one client, shared.
func TestEgressPolicies(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	denied := func(c *http.Client, url string) bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second) // bounds the test, nothing more
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		var e *egress.Error
		return errors.As(err, &e) && e.Kind == egress.Denied
	}
	for _, e := range []exchange.Egress{{}, {AllowLoopback: true}, {AllowPrivate: true}, {AllowLoopback: true, AllowPrivate: true}} {
		c := e.Fetcher()
		if c != e.Fetcher() {
			t.Errorf("%+v: a new client each time", e)
		}
		if got := denied(c, srv.URL); got == e.AllowLoopback {
			t.Errorf("%+v: loopback denied %t", e, got)
		}
		if got := denied(&http.Client{Transport: e.Base()}, srv.URL); got == e.AllowLoopback {
			t.Errorf("%+v: loopback denied %t to the policy's transport", e, got)
		}
		if got := denied(c, "http://10.255.255.1:9/"); got == e.AllowPrivate {
			t.Errorf("%+v: a private address denied %t", e, got)
		}
	}
}
