package a2ahttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

func TestCardOffers(t *testing.T) {
	for _, tc := range []struct {
		name string
		card string
		want []string
		err  string
	}{
		{"1.0 card", `{"supportedInterfaces":[{"url":"http://h/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`, []string{"1.0"}, ""},
		{"in the card's order, once each", `{"supportedInterfaces":[{"protocolVersion":"1.2"},{"protocolVersion":"1.1"},{"protocolVersion":"1.2"}]}`, []string{"1.2", "1.1"}, ""},
		{"other forms are not offers", `{"supportedInterfaces":[{"protocolVersion":"1.0.1"},{"protocolVersion":"v1"},{"protocolVersion":1.0},{"protocolVersion":null},{},{"protocolVersion":"1.1"}]}`, []string{"1.1"}, ""},
		{"the pattern admits leading zeros; the decision ignores them", `{"supportedInterfaces":[{"protocolVersion":"01.0"}]}`, []string{"01.0"}, ""},
		{"a 0.3 card falls back on protocolVersion", `{"protocolVersion":"0.3.0","url":"http://h/a2a"}`, []string{"0.3"}, ""},
		{"major.minor protocolVersion", `{"protocolVersion":"0.3"}`, []string{"0.3"}, ""},
		{"union card: interfaces win", `{"protocolVersion":"0.3.0","supportedInterfaces":[{"protocolVersion":"1.0"},{"protocolVersion":"0.3"}]}`, []string{"1.0", "0.3"}, ""},
		{"interfaces without a version: fallback", `{"protocolVersion":"0.3.0","supportedInterfaces":[{"protocolVersion":""}]}`, []string{"0.3"}, ""},
		{"nothing", `{"name":"x"}`, nil, a2ahttp.ErrNoVersion.Error()},
		{"a bare major: a card that offers nothing", `{"protocolVersion":"1"}`, nil, ""},
		{"not a number: a card that offers nothing", `{"protocolVersion":"x.y.z"}`, nil, ""},
		{"no interfaces: a card that offers nothing", `{"supportedInterfaces":[]}`, nil, ""},
		{"a version that is not a string names nothing", `{"protocolVersion":1.0}`, nil, a2ahttp.ErrNoVersion.Error()},
		{"not JSON", `<html>`, nil, "the card is not a JSON agent card: invalid character '<' looking for beginning of value"},
		{"not an object", `[]`, nil, "the card is not a JSON agent card: want an object, got an array"},
		// The one strict reader: exact keys, no repeats, nothing after.
		{"a repeated key", `{"protocolVersion":"0.3","protocolVersion":"1.0"}`, nil, `the card is not a JSON agent card: the key "protocolVersion" appears twice`},
		{"a key in another case", `{"ProtocolVersion":"1.0"}`, nil, a2ahttp.ErrNoVersion.Error()},
		{"a key in another case inside", `{"supportedInterfaces":[{"ProtocolVersion":"1.0"}]}`, nil, ""},
		{"trailing bytes", `{"protocolVersion":"1.0"}{}`, nil, "the card is not a JSON agent card: data after the JSON value"},
		{"an interface that is not an object", `{"supportedInterfaces":["1.0"]}`, nil, "the card is not a JSON agent card: supportedInterfaces[0]: want an object, got a string"},
		{"interfaces that are not a list", `{"supportedInterfaces":{"protocolVersion":"1.0"}}`, nil, "the card is not a JSON agent card: supportedInterfaces: want an array, got an object"},
		{"null interfaces: fallback", `{"supportedInterfaces":null,"protocolVersion":"0.3.0"}`, []string{"0.3"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := a2ahttp.CardOffers([]byte(tc.card))
			if !reflect.DeepEqual(got, tc.want) || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
				t.Errorf("CardOffers = %q, %v\nwant %q, %s", got, err, tc.want, tc.err)
			}
		})
	}
}

// peerServer is a peer on loopback that serves card and counts every other
// request, with the A2A-Version each carried.
type peerServer struct {
	*httptest.Server
	mu       sync.Mutex
	cardSeen []string // A2A-Version of each card request
	calls    []string // A2A-Version lines of each other request, joined
}

func newPeer(t *testing.T, status int, card string) *peerServer {
	p := &peerServer{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if r.URL.Path == "/.well-known/agent-card.json" {
			p.cardSeen = append(p.cardSeen, strings.Join(r.Header.Values("A2A-Version"), "|"))
			w.WriteHeader(status)
			_, _ = io.WriteString(w, card)
			return
		}
		body, _ := io.ReadAll(r.Body)
		call := strings.Join(r.Header.Values("A2A-Version"), "|") + " " + string(body)
		if r.URL.RawQuery != "" {
			call += " ?" + r.URL.RawQuery
		}
		p.calls = append(p.calls, call)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *peerServer) seen() (card, calls []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.cardSeen...), append([]string(nil), p.calls...)
}

func cardOffering(versions ...string) string {
	var ifaces []string
	for _, v := range versions {
		ifaces = append(ifaces, `{"url":"http://peer/a2a","protocolBinding":"JSONRPC","protocolVersion":"`+v+`"}`)
	}
	return `{"name":"peer","supportedInterfaces":[` + strings.Join(ifaces, ",") + `]}`
}

func TestOutboundNegotiate(t *testing.T) {
	accepted := func(version, requested string) events.NegotiationDecided {
		return events.NegotiationDecided{Protocol: facets.ProtocolA2A, Outcome: "accepted", Version: version, Requested: requested, Reason: events.ReasonOK, Floor: "1.1", At: testNow}
	}
	refused := func(requested string, reason string) events.NegotiationDecided {
		return events.NegotiationDecided{Protocol: facets.ProtocolA2A, Outcome: "refused", Requested: requested, Reason: reason, Floor: "1.1", At: testNow}
	}
	for _, tc := range []struct {
		name      string
		status    int
		card      string
		subject   *negotiate.Subject
		requested string
		offers    []string
		kind      negotiate.Kind
		version   string
		event     events.NegotiationDecided
		err       string
	}{
		// The digest's table C, outbound.
		{"C1 preferred", 200, cardOffering("1.0", "1.1", "1.2"), peerAgent(), "", []string{"1.0", "1.1", "1.2"}, negotiate.Accepted, "1.2", accepted("1.2", "1.2"), ""},
		{"C2 authenticated downgrade", 200, cardOffering("1.1"), peerAgent(), "", []string{"1.1"}, negotiate.Downgraded, "1.1", accepted("1.1", "1.2"), ""},
		{"C3 unauthenticated downgrade", 200, cardOffering("1.1"), nil, "", []string{"1.1"}, negotiate.Refused, "", refused("1.2", events.ReasonUnauthenticated),
			"interop_version_unsupported: a2a negotiation refused: unauthenticated; the peer offers 1.1, below the preferred version, which only an authenticated caller settles on: set OutboundOptions.Subject to the host's identity towards the peer"},
		{"C4 below the floor", 200, cardOffering("1.0"), peerAgent(), "", []string{"1.0"}, negotiate.Refused, "", refused("1.2", events.ReasonBelowFloor),
			"interop_version_unsupported: a2a negotiation refused: below-floor; the peer offers 1.0"},
		{"C5 explicit downgrade", 200, cardOffering("1.1", "1.2"), peerAgent(), "1.1", []string{"1.1", "1.2"}, negotiate.Downgraded, "1.1", accepted("1.1", "1.1"), ""},
		{"C7 peer only above the candidate", 200, cardOffering("1.2"), peerAgent(), "1.1", []string{"1.2"}, negotiate.Refused, "", refused("1.1", events.ReasonUnsupported),
			"interop_version_unsupported: a2a negotiation refused: unsupported; the peer offers 1.2"},
		{"C8 asked below the floor", 200, cardOffering("1.0", "1.2"), peerAgent(), "1.0", []string{"1.0", "1.2"}, negotiate.Refused, "", refused("1.0", events.ReasonBelowFloor),
			"interop_version_unsupported: a2a negotiation refused: below-floor; the peer offers 1.0, 1.2"},
		{"C9 asked unsupported", 200, cardOffering("1.2"), peerAgent(), "1.3", []string{"1.2"}, negotiate.Refused, "", refused("1.3", events.ReasonUnsupported),
			"interop_version_unsupported: a2a negotiation refused: unsupported; the peer offers 1.2"},
		{"C10 unauthenticated at preferred", 200, cardOffering("1.0", "1.2"), nil, "", []string{"1.0", "1.2"}, negotiate.Accepted, "1.2", accepted("1.2", "1.2"), ""},
		{"A2 a 0.3 card", 200, `{"protocolVersion":"0.3.0"}`, peerAgent(), "", []string{"0.3"}, negotiate.Refused, "", refused("1.2", events.ReasonBelowFloor),
			"interop_version_unsupported: a2a negotiation refused: below-floor; the peer offers 0.3"},
		{"A6 a card that offers nothing", 200, `{"supportedInterfaces":[]}`, peerAgent(), "", nil, negotiate.Refused, "", refused("1.2", events.ReasonBelowFloor),
			"interop_version_unsupported: a2a negotiation refused: below-floor; the peer offers no version"},
		{"A6 a card whose versions are in another form", 200, cardOffering("1.0.1"), peerAgent(), "", nil, negotiate.Refused, "", refused("1.2", events.ReasonBelowFloor),
			"interop_version_unsupported: a2a negotiation refused: below-floor; the peer offers no version"},
		{"A7 a newer peer", 200, cardOffering("2.0"), peerAgent(), "", []string{"2.0"}, negotiate.Refused, "", refused("1.2", events.ReasonUnsupported),
			"interop_version_unsupported: a2a negotiation refused: unsupported; the peer offers 2.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			peer := newPeer(t, tc.status, tc.card)
			rec := &negotiatetest.Recorder{}
			o := a2ahttp.Outbound{Negotiator: compile(t, wideA2A(), policy.Policy{}), Sink: rec, Subject: tc.subject, Requested: tc.requested, AllowLoopback: true}
			p, err := o.Negotiate(context.Background(), peer.URL+"/")
			if p.URL != peer.URL+"/" || !reflect.DeepEqual(p.Offers, tc.offers) || p.Outcome.Kind != tc.kind || p.Outcome.Version != tc.version {
				t.Errorf("Peer %q offers %q, %v %q; want offers %q, %v %q", p.URL, p.Offers, p.Outcome.Kind, p.Outcome.Version, tc.offers, tc.kind, tc.version)
			}
			wantErr := strings.ReplaceAll(tc.err, "PEER", peer.URL)
			if (err == nil) != (wantErr == "") || (err != nil && err.Error() != wantErr) {
				t.Errorf("err %v\nwant %s", err, wantErr)
			}
			if tc.err != "" && !errors.Is(err, wperrors.InteropVersionUnsupported) {
				t.Errorf("errors.Is(err, InteropVersionUnsupported) is false: %v", err)
			}
			want := tc.event
			want.PeerDigest, _ = events.PeerDigest(peer.URL)
			if got := onlyPayload(t, rec); got != want {
				t.Errorf("event\n got %+v\nwant %+v", got, want)
			}
			card, calls := peer.seen()
			if !reflect.DeepEqual(card, []string{"1.2"}) || len(calls) != 0 {
				t.Errorf("the peer saw card requests at %q and calls %q; want one card request at 1.2 and nothing else", card, calls)
			}
		})
	}
}

func TestOutboundConfiguration(t *testing.T) {
	n := compile(t, wideA2A(), policy.Policy{})
	mcpOnly := compile(t, facets.Set{MCP: &facets.MCP{
		Revisions: []string{"2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2026-07-28", RefreshedAt: "2026-11-01",
	}}, policy.Policy{})
	rec := &negotiatetest.Recorder{}
	for _, tc := range []struct {
		name string
		o    a2ahttp.Outbound
		want error
	}{
		{"no negotiator", a2ahttp.Outbound{Sink: rec}, nil},
		{"no sink", a2ahttp.Outbound{Negotiator: n}, events.ErrClosed},
		{"no a2a", a2ahttp.Outbound{Negotiator: mcpOnly, Sink: rec}, nil},
	} {
		if _, err := tc.o.Negotiate(context.Background(), "http://127.0.0.1:1"); err == nil || (tc.want != nil && !errors.Is(err, tc.want)) || !strings.HasPrefix(err.Error(), "a2ahttp: ") {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	o := a2ahttp.Outbound{Negotiator: n, Sink: rec, MaxCardBytes: -1}
	if _, err := o.Negotiate(context.Background(), "http://127.0.0.1:1"); err == nil || err.Error() != "a2ahttp: OutboundOptions.MaxCardBytes -1 is negative" {
		t.Errorf("negative MaxCardBytes: %v", err)
	}
	if len(rec.Events()) != 0 {
		t.Errorf("a misconfigured Outbound recorded %d events", len(rec.Events()))
	}
}

// A peer URL that is not http(s) is never fetched: the negotiation
// reaches no decision, and records nothing.
func TestOutboundBadPeerURL(t *testing.T) {
	rec := &negotiatetest.Recorder{}
	o := a2ahttp.Outbound{Negotiator: compile(t, wideA2A(), policy.Policy{}), Sink: rec, Subject: peerAgent()}
	p, err := o.Negotiate(context.Background(), "file:///etc/passwd")
	if err == nil || !strings.Contains(err.Error(), "a2ahttp: the negotiation reached no decision: egress: the egress policy refused to reach the peer: the peer URL is not an absolute http(s) URL") {
		t.Fatalf("err %v", err)
	}
	if reason := detailReason(err); reason != "egress-denied" {
		t.Errorf("details.reason %q", reason)
	}
	if p.Outcome.Kind != negotiate.Refused || p.Outcome.Reason != "" || len(rec.Events()) != 0 {
		t.Errorf("Outcome %+v, %d events", p.Outcome, len(rec.Events()))
	}
}

// A card larger than the bound is not read: no decision, no event.
func TestOutboundCardBound(t *testing.T) {
	card := cardOffering("1.2")
	for _, tc := range []struct {
		max  int64
		kind negotiate.Kind
	}{{int64(len(card)), negotiate.Accepted}, {int64(len(card)) - 1, negotiate.Refused}} {
		peer := newPeer(t, 200, card)
		rec := &negotiatetest.Recorder{}
		o := a2ahttp.Outbound{Negotiator: compile(t, wideA2A(), policy.Policy{}), Sink: rec, Client: peer.Client(), MaxCardBytes: tc.max}
		p, _ := o.Negotiate(context.Background(), peer.URL)
		if p.Outcome.Kind != tc.kind {
			t.Errorf("MaxCardBytes %d: %v", tc.max, p.Outcome.Kind)
		}
		if tc.kind == negotiate.Refused && (p.CardErr == nil || detailReason(p.CardErr) != "too-large" || len(rec.Events()) != 0) {
			t.Errorf("CardErr %v, %d events", p.CardErr, len(rec.Events()))
		}
	}
}

// Under a required audit, a negotiation that cannot be recorded is refused
// and yields no transport; without it, the AuditError comes back beside an
// accepted outcome.
func TestOutboundAudit(t *testing.T) {
	for _, require := range []bool{true, false} {
		peer := newPeer(t, 200, cardOffering("1.2"))
		rec := &negotiatetest.Recorder{}
		rec.Fail(errors.New("event store down"))
		o := a2ahttp.Outbound{Negotiator: compile(t, wideA2A(), policy.Policy{RequireAudit: require}), Sink: rec, Client: peer.Client()}
		p, err := o.Negotiate(context.Background(), peer.URL)
		var audit *negotiate.AuditError
		if !errors.As(err, &audit) {
			t.Fatalf("RequireAudit %v: err %v, not an AuditError", require, err)
		}
		_, terr := p.Transport(nil)
		if require && (p.Outcome.Rule != negotiate.RuleAudit || !errors.Is(err, wperrors.Internal) || terr == nil) {
			t.Errorf("required: Outcome %v rule %v, err %v, transport error %v", p.Outcome.Kind, p.Outcome.Rule, err, terr)
		}
		if !require && (p.Outcome.Kind != negotiate.Accepted || terr != nil) {
			t.Errorf("not required: Outcome %v, transport error %v", p.Outcome.Kind, terr)
		}
	}
}

// transportFor negotiates 1.2 with a card-serving peer and returns the
// stamping transport over the peer's client.
func transportFor(t *testing.T, peer *peerServer) *a2ahttp.Transport {
	t.Helper()
	o := a2ahttp.Outbound{Negotiator: compile(t, wideA2A(), policy.Policy{}), Sink: &negotiatetest.Recorder{}, Subject: peerAgent(), Client: peer.Client()}
	p, err := o.Negotiate(context.Background(), peer.URL)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := p.Transport(peer.Client().Transport)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// closeCounter is a request body that counts Close.
type closeCounter struct {
	io.Reader
	closed int
}

func (c *closeCounter) Close() error { c.closed++; return nil }

func TestTransport(t *testing.T) {
	for _, tc := range []struct {
		name   string
		path   string
		header http.Header
		sent   string // what the peer saw; empty when nothing was sent
		err    string
	}{
		{"stamps a request that names nothing", "/a2a", nil, "1.2 body", ""},
		{"keeps a matching header", "/a2a", http.Header{"A2a-Version": {"1.2"}}, "1.2 body", ""},
		{"one line for two matching spellings", "/a2a", http.Header{"A2a-Version": {"1.2"}, "a2a-version": {"1.2"}}, "1.2 body", ""},
		{"one line for a matching list", "/a2a", http.Header{"A2a-Version": {"1.2, 1.2"}}, "1.2 body", ""},
		{"replaces an empty value", "/a2a", http.Header{"A2a-Version": {""}}, "1.2 body", ""},
		{"a matching query parameter", "/a2a?A2A-Version=1.2", nil, "1.2 body", ""},
		{"a matching header and query parameter", "/a2a?A2A-Version=1.2", http.Header{"A2a-Version": {"1.2"}}, "1.2 body", ""},
		// The version goes once, in the header: a parameter beside it is a
		// second value to the peer.
		{"the other query parameters kept", "/a2a?x=1&A2A-Version=1.2&y=%41", nil, "1.2 body ?x=1&y=%41", ""},
		{"an escaped parameter name", "/a2a?A2A%2DVersion=1.2&x=1", nil, "1.2 body ?x=1", ""},
		{"an empty query parameter", "/a2a?A2A-Version=&x=1", nil, "1.2 body ?x=1", ""},
		{"a parameter of another name kept", "/a2a?A2A-Versions=1.1", nil, "1.2 body ?A2A-Versions=1.1", ""},
		{"lists four of many values", "/a2a", http.Header{"A2a-Version": {"1.1", "1.0", "0.3", "0.2", "0.1"}}, "",
			`a2ahttp: the request names A2A-Version "1.1", "1.0", "0.3", "0.2", ..., but 1.2 was negotiated with this peer; nothing was sent`},
		{"refuses another version", "/a2a", http.Header{"A2a-Version": {"1.1"}}, "",
			`a2ahttp: the request names A2A-Version "1.1", but 1.2 was negotiated with this peer; nothing was sent`},
		{"refuses another spelling", "/a2a", http.Header{"a2a-version": {"0.3"}}, "",
			`a2ahttp: the request names A2A-Version "0.3", but 1.2 was negotiated with this peer; nothing was sent`},
		{"refuses a list that holds another", "/a2a", http.Header{"A2a-Version": {"1.2,1.1"}}, "",
			`a2ahttp: the request names A2A-Version "1.2,1.1", but 1.2 was negotiated with this peer; nothing was sent`},
		{"refuses a second line", "/a2a", http.Header{"A2a-Version": {"1.2", "0.2"}}, "",
			`a2ahttp: the request names A2A-Version "1.2", "0.2", but 1.2 was negotiated with this peer; nothing was sent`},
		{"refuses another query parameter", "/a2a?A2A-Version=1.1", http.Header{"A2a-Version": {"1.2"}}, "",
			`a2ahttp: the request names A2A-Version "1.2", "1.1", but 1.2 was negotiated with this peer; nothing was sent`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			peer := newPeer(t, 200, cardOffering("1.2"))
			tr := transportFor(t, peer)
			body := &closeCounter{Reader: strings.NewReader("body")}
			req, err := http.NewRequest(http.MethodPost, peer.URL+tc.path, body)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.header {
				req.Header[k] = append([]string(nil), v...)
			}
			before := req.Header.Clone()
			resp, err := tr.RoundTrip(req)
			if resp != nil {
				resp.Body.Close()
			}
			if (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
				t.Errorf("err %v\nwant %s", err, tc.err)
			}
			if tc.err != "" && !errors.Is(err, a2ahttp.ErrVersionConflict) {
				t.Errorf("not an ErrVersionConflict: %#v", err)
			}
			if !reflect.DeepEqual(req.Header, before) {
				t.Errorf("RoundTrip changed the request's header: %v, was %v", req.Header, before)
			}
			if tc.err != "" && body.closed != 1 {
				t.Errorf("the body of a refused request was closed %d times, want 1", body.closed)
			}
			_, calls := peer.seen()
			want := []string{tc.sent}
			if tc.sent == "" {
				want = nil
			}
			if !reflect.DeepEqual(calls, want) {
				t.Errorf("the peer saw %q, want %q", calls, want)
			}
		})
	}
}

func TestNewTransportRefusesWhatCannotBeSent(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    negotiate.Outcome
		want string
	}{
		{"refused", negotiate.Outcome{Protocol: facets.ProtocolA2A}, "a2ahttp: no transport for a refused negotiation: interop_version_unsupported: negotiation refused"},
		{"mcp", negotiate.Outcome{Kind: negotiate.Accepted, Protocol: facets.ProtocolMCP, Version: "2026-07-28"}, `a2ahttp: no transport for a "mcp" negotiation`},
		{"no version", negotiate.Outcome{Kind: negotiate.Accepted, Protocol: facets.ProtocolA2A}, `a2ahttp: no transport for the outcome: a2a version "": want "major.minor"`},
	} {
		tr, err := a2ahttp.NewTransport(tc.o, nil)
		if tr != nil || err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, %v; want %s", tc.name, tr, err, tc.want)
		}
	}
	tr, err := a2ahttp.NewTransport(negotiate.Outcome{Kind: negotiate.Downgraded, Protocol: facets.ProtocolA2A, Version: "1.1"}, nil)
	if err != nil || tr.Version() != "1.1" {
		t.Errorf("downgraded: %v, %v", tr, err)
	}
}

// TestZeroValuesRefuse: the zero Middleware and the zero Transport have
// nothing to decide with and no version to send at, so they fail closed
// and never panic: what the Middleware wraps is never reached and every
// request is answered 500 naming New, as its Check says; the Transport
// sends nothing, closes the request's body and names its constructors.
func TestZeroValuesRefuse(t *testing.T) {
	var m a2ahttp.Middleware
	reached := false
	w := httptest.NewRecorder()
	m.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true })).ServeHTTP(w, cardOrPost("/a2a", "1.2"))
	const made = "a2ahttp: a zero Middleware decides nothing and sends nothing; make it with New"
	if reached || w.Code != http.StatusInternalServerError || !strings.Contains(w.Body.String(), made) {
		t.Errorf("the zero Middleware answered %d %s (reached the handler: %t)", w.Code, w.Body, reached)
	}
	if err := m.Check(context.Background(), http.NotFoundHandler()); err == nil || err.Error() != made {
		t.Errorf("the zero Middleware's Check: %v", err)
	}
	body := &closeCounter{Reader: strings.NewReader("body")}
	resp, err := new(a2ahttp.Transport).RoundTrip(httptest.NewRequest(http.MethodPost, "http://127.0.0.1:9/a2a", body))
	if resp != nil || err == nil || err.Error() != "a2ahttp: a zero Transport decides nothing and sends nothing; make it with NewTransport or Connect" || body.closed != 1 {
		t.Errorf("the zero Transport: %v, %v, the body closed %d times", resp, err, body.closed)
	}
}
