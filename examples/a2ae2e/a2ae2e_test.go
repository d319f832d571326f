package a2ae2e

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

func hello() *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello"))}
}

// reply returns a function that returns the text of the agent's answer to
// SendMessage, so that it takes SendMessage's results as they come.
func reply(t *testing.T) func(a2a.SendMessageResult, error) string {
	return func(res a2a.SendMessageResult, err error) string {
		t.Helper()
		if err != nil {
			t.Fatalf("SendMessage: %v", err)
		}
		msg, ok := res.(*a2a.Message)
		if !ok || len(msg.Parts) != 1 {
			t.Fatalf("SendMessage returned %#v, want one message with one part", res)
		}
		return msg.Parts[0].Text()
	}
}

// versionNotSupported checks that the client surfaced err as A2A's
// VersionNotSupported, with message and the supportedVersions of its
// ErrorInfo metadata (nil when the server sent no data).
func versionNotSupported(t *testing.T, err error, message string, metadata map[string]string) {
	t.Helper()
	if !errors.Is(err, a2a.ErrVersionNotSupported) {
		t.Fatalf("the client surfaced %v (%T), not a2a.ErrVersionNotSupported", err, err)
	}
	var ae *a2a.Error
	if !errors.As(err, &ae) || ae.Message != message {
		t.Fatalf("the client's message %q\nwant %q", ae.Message, message)
	}
	got, _ := ae.ErrorInfo().Value["metadata"].(map[string]string)
	if !reflect.DeepEqual(got, metadata) {
		t.Errorf("ErrorInfo metadata %v, want %v", got, metadata)
	}
}

func checkWire(t *testing.T, h *host, want []exchange) {
	t.Helper()
	if got := h.wire.seen(); !reflect.DeepEqual(got, want) {
		t.Errorf("on the wire\n got %+v\nwant %+v", got, want)
	}
}

func checkEvents(t *testing.T, h *host, want ...events.NegotiationDecided) {
	t.Helper()
	if got := h.payloads(t); !reflect.DeepEqual(got, want) {
		t.Errorf("events\n got %+v\nwant %+v", got, want)
	}
}

var served03 = map[string]string{"supportedVersions": "0.3,1.0"}

// served10 is what an anonymous caller can be served: nothing below
// preferred, which it could not have.
var served10 = map[string]string{"supportedVersions": "1.0"}

// (a) An a2a-go v2 client with its defaults resolves the card (sending no
// A2A-Version, so it gets the preferred 1.0 card), picks the 1.0 JSON-RPC
// interface and sends A2A-Version: 1.0.
func TestA2AGo10Default(t *testing.T) {
	h := newHost(t, nil)
	ctx := context.Background()
	card, err := agentcard.NewResolver(h.client(false)).Resolve(ctx, h.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(h.client(false)))
	if err != nil {
		t.Fatal(err)
	}
	if got := reply(t)(client.SendMessage(ctx, hello())); got != "served at 1.0" {
		t.Errorf("reply %q", got)
	}
	checkWire(t, h, []exchange{
		{"GET", a2asrv.WellKnownAgentCardPath, nil, []string{"1.0"}, 200},
		{"POST", "/a2a", []string{"1.0"}, []string{"1.0"}, 200},
	})
	checkEvents(t, h, accepted("1.0", ""), accepted("1.0", "1.0"))
}

// (b) a2a-go's 0.3 compatibility transport, for an authenticated caller:
// it asks for the 0.3 card, reads it with the 0.3 card parser, and speaks
// 0.3 JSON-RPC (message/send) with A2A-Version: 0.3. The host downgrades
// and routes the request to a2a-go's 0.3 handler.
func TestA2AGo03Compat(t *testing.T) {
	h := newHost(t, nil)
	ctx := context.Background()
	resolver := &agentcard.Resolver{Client: h.client(true), CardParser: a2av0.NewAgentCardParser()}
	card, err := resolver.Resolve(ctx, h.srv.URL, agentcard.WithRequestHeader(a2a.SvcParamVersion, "0.3"))
	if err != nil {
		t.Fatal(err)
	}
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithDefaultsDisabled(),
		a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{Client: h.client(true)}))
	if err != nil {
		t.Fatal(err)
	}
	if got := reply(t)(client.SendMessage(ctx, hello())); got != "served at 0.3" {
		t.Errorf("reply %q", got)
	}
	checkWire(t, h, []exchange{
		{"GET", a2asrv.WellKnownAgentCardPath, []string{"0.3"}, []string{"0.3"}, 200},
		{"POST", "/a2a", []string{"0.3"}, []string{"0.3"}, 200},
	})
	checkEvents(t, h, accepted("0.3", "0.3"), accepted("0.3", "0.3"))
}

// (b') The same 0.3 client without credentials: an unauthenticated exchange
// never settles below the preferred version, so the host refuses, and the
// client surfaces VersionNotSupported. Nothing reaches the 0.3 handler.
func TestA2AGo03CompatUnauthenticated(t *testing.T) {
	h := newHost(t, nil)
	ctx := context.Background()
	resolver := &agentcard.Resolver{Client: h.client(false), CardParser: a2av0.NewAgentCardParser()}
	card, err := resolver.Resolve(ctx, h.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithDefaultsDisabled(),
		a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{Client: h.client(false)}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.SendMessage(ctx, hello())
	versionNotSupported(t, err, `A2A-Version "0.3" is below the preferred version 1.0 and is served only to an authenticated caller; this interface serves 1.0`, served10)
	checkWire(t, h, []exchange{
		{"GET", a2asrv.WellKnownAgentCardPath, nil, []string{"1.0"}, 200},
		{"POST", "/a2a", []string{"0.3"}, []string{"1.0"}, 200},
	})
	checkEvents(t, h, accepted("1.0", ""), refused("0.3", events.ReasonUnauthenticated))
}

// forcedClient is an a2a-go client whose JSON-RPC interface claims a
// version, so that it sends that version as A2A-Version.
func forcedClient(t *testing.T, h *host, version a2a.ProtocolVersion, binding a2a.TransportProtocol) *a2aclient.Client {
	t.Helper()
	path := "/a2a"
	factory := a2aclient.TransportFactoryFn(func(_ context.Context, _ *a2a.AgentCard, iface *a2a.AgentInterface) (a2aclient.Transport, error) {
		return a2aclient.NewJSONRPCTransport(iface.URL, h.client(true)), nil
	})
	if binding == a2a.TransportProtocolHTTPJSON {
		path = "/rest"
		factory = func(_ context.Context, _ *a2a.AgentCard, iface *a2a.AgentInterface) (a2aclient.Transport, error) {
			u, err := url.Parse(iface.URL)
			if err != nil {
				return nil, err
			}
			return a2aclient.NewRESTTransport(u, h.client(true)), nil
		}
	}
	client, err := a2aclient.NewFromEndpoints(context.Background(),
		[]*a2a.AgentInterface{{URL: h.srv.URL + path, ProtocolBinding: binding, ProtocolVersion: version}},
		a2aclient.WithDefaultsDisabled(), a2aclient.WithCompatTransport(version, binding, factory))
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// (c) A forced unsupported value: the client sends A2A-Version: 9.9, the
// host answers -32009 on HTTP 200 with the A2A 1.0 error details, and the
// client surfaces VersionNotSupported with the supported versions.
func TestA2AGoForcedUnsupported(t *testing.T) {
	h := newHost(t, nil)
	_, err := forcedClient(t, h, "9.9", a2a.TransportProtocolJSONRPC).SendMessage(context.Background(), hello())
	versionNotSupported(t, err, `A2A-Version "9.9" is not served; this interface serves 0.3, 1.0`, served03)
	checkWire(t, h, []exchange{{"POST", "/a2a", []string{"9.9"}, []string{"1.0"}, 200}})
	checkEvents(t, h, refused("9.9", events.ReasonUnsupported))
}

// (c, without data) With Options.OmitErrorData the client still surfaces
// VersionNotSupported from the code alone; it just learns no versions.
func TestA2AGoForcedUnsupportedWithoutData(t *testing.T) {
	h := newHost(t, func(o *a2ahttp.Options) { o.OmitErrorData = true })
	_, err := forcedClient(t, h, "9.9", a2a.TransportProtocolJSONRPC).SendMessage(context.Background(), hello())
	versionNotSupported(t, err, `A2A-Version "9.9" is not served; this interface serves 0.3, 1.0`, nil)
	checkEvents(t, h, refused("9.9", events.ReasonUnsupported))
}

// (c, two values) A version attached as a service parameter does not
// replace the one the a2a-go client stamps: they are two map keys
// ("a2a-version" and "A2A-Version"), so the request carries two
// A2A-Version lines, 0.2 and 1.0, in map order. The host picks neither.
func TestA2AGoSendsTwoVersions(t *testing.T) {
	h := newHost(t, nil)
	ctx := a2aclient.AttachServiceParams(context.Background(), a2aclient.ServiceParams{a2a.SvcParamVersion: {"0.2"}})
	client, err := a2aclient.NewFromEndpoints(ctx,
		[]*a2a.AgentInterface{{URL: h.srv.URL + "/a2a", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "1.0"}},
		a2aclient.WithJSONRPCTransport(h.client(true)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.SendMessage(ctx, hello())
	seen := h.wire.seen()
	if len(seen) != 1 || !reflect.DeepEqual(slices.Sorted(slices.Values(seen[0].Sent)), []string{"0.2", "1.0"}) {
		t.Fatalf("on the wire %+v, want one request with A2A-Version 0.2 and 1.0", seen)
	}
	sent := seen[0].Sent
	versionNotSupported(t, err, `A2A-Version carries 2 values ("`+sent[0]+`", "`+sent[1]+`"), not one; send exactly one version; this interface serves 0.3, 1.0`, served03)
	checkEvents(t, h, refused("", events.ReasonUnsupported))
}

// (d) The HTTP+JSON binding with a2a-go's REST transport: 1.0 is served;
// a forced 9.9 is HTTP 400 with a google.rpc.Status body, which the client
// reads as VersionNotSupported.
func TestA2AGoHTTPJSON(t *testing.T) {
	h := newHost(t, nil)
	ctx := context.Background()
	client, err := a2aclient.NewFromEndpoints(ctx,
		[]*a2a.AgentInterface{{URL: h.srv.URL + "/rest", ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: "1.0"}},
		a2aclient.WithDefaultsDisabled(), a2aclient.WithRESTTransport(h.client(false)))
	if err != nil {
		t.Fatal(err)
	}
	if got := reply(t)(client.SendMessage(ctx, hello())); got != "served at 1.0" {
		t.Errorf("reply %q", got)
	}
	_, err = forcedClient(t, h, "9.9", a2a.TransportProtocolHTTPJSON).SendMessage(ctx, hello())
	versionNotSupported(t, err, `A2A-Version "9.9" is not served; this interface serves 0.3, 1.0`, served03)
	checkWire(t, h, []exchange{
		{"POST", "/rest/message:send", []string{"1.0"}, []string{"1.0"}, 200},
		{"POST", "/rest/message:send", []string{"9.9"}, []string{"1.0"}, 400},
	})
	checkEvents(t, h, accepted("1.0", "1.0"), refused("9.9", events.ReasonUnsupported))
}

// With a policy that requires the audit, a host whose event store is down
// refuses rather than serve an exchange it has no record of; a2a-go's
// clients surface that as an internal error on both bindings.
func TestA2AGoAuditDown(t *testing.T) {
	h := newHostWith(t, policy.Policy{RequireAudit: true}, nil)
	h.events.Fail(errors.New("event store down"))
	ctx := context.Background()
	for _, binding := range []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON} {
		_, err := forcedClient(t, h, "1.0", binding).SendMessage(ctx, hello())
		var ae *a2a.Error
		if !errors.Is(err, a2a.ErrInternalError) || !errors.As(err, &ae) || ae.Message != "the A2A version negotiation could not be recorded; retry" {
			t.Errorf("%s: the client surfaced %v, want a2a.ErrInternalError with the middleware's message", binding, err)
		}
	}
	checkWire(t, h, []exchange{
		{"POST", "/a2a", []string{"1.0"}, []string{"1.0"}, 200},
		{"POST", "/rest/message:send", []string{"1.0"}, []string{"1.0"}, 500},
	})
	checkEvents(t, h)
}

// (e) Outbound: a host negotiates with the a2a-go peer from its card, then
// lets the a2a-go client call through the stamping Transport. When the
// negotiated version is the one the client speaks, the call goes through;
// when it is not, the Transport refuses and nothing reaches the peer.
func TestOutboundWithA2AGoClient(t *testing.T) {
	peer := newHost(t, nil)
	n, err := negotiate.Compile(hostFacets(), policy.Policy{Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	digest, _ := events.PeerDigest(peer.srv.URL)
	for _, tc := range []struct {
		name      string
		requested string
		version   string
		sent      bool
	}{
		{"the client's version", "", "1.0", true},
		{"another version than the client's", "0.3", "0.3", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(peer.wire.seen())
			store := &negotiatetest.Recorder{}
			o, offers, err := a2ahttp.Negotiate(ctx, n, peer.srv.URL, a2ahttp.OutboundOptions{Sink: store,
				Subject: subjectOf(&http.Request{Header: http.Header{"Authorization": {token}}}), Client: peer.client(true), Requested: tc.requested})
			if err != nil || o.Version != tc.version || !reflect.DeepEqual(offers, []string{"1.0", "0.3"}) {
				t.Fatalf("Negotiate: offers %q, %v %q, %v", offers, o.Kind, o.Version, err)
			}
			want := accepted(tc.version, tc.version)
			if tc.requested == "" {
				want.Requested = "1.0"
			}
			want.PeerDigest = digest
			if got := store.Events(); len(got) != 1 || got[0].Payload != want {
				t.Errorf("outbound events %+v, want one with %+v", got, want)
			}
			stamped, err := a2ahttp.NewTransport(o, peer.client(true).Transport)
			if err != nil {
				t.Fatal(err)
			}
			card, err := agentcard.NewResolver(peer.client(false)).Resolve(ctx, peer.srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(&http.Client{Transport: stamped}))
			if err != nil {
				t.Fatal(err)
			}
			res, err := client.SendMessage(ctx, hello())
			seen := peer.wire.seen()[before:]
			// The card request of Negotiate, the card request of the
			// resolver, then the call, if it was sent.
			wantSeen := []exchange{
				{"GET", a2asrv.WellKnownAgentCardPath, []string{"1.0"}, []string{"1.0"}, 200},
				{"GET", a2asrv.WellKnownAgentCardPath, nil, []string{"1.0"}, 200},
			}
			if tc.sent {
				if got := reply(t)(res, err); got != "served at 1.0" {
					t.Errorf("reply %q", got)
				}
				wantSeen = append(wantSeen, exchange{"POST", "/a2a", []string{"1.0"}, []string{"1.0"}, 200})
			} else {
				if !errors.Is(err, a2ahttp.ErrVersionConflict) || !strings.Contains(err.Error(), `the request names A2A-Version "1.0", but 0.3 was negotiated with this peer; nothing was sent`) {
					t.Errorf("SendMessage: %v, want an ErrVersionConflict", err)
				}
			}
			if !reflect.DeepEqual(seen, wantSeen) {
				t.Errorf("the peer saw\n %+v\nwant %+v", seen, wantSeen)
			}
		})
	}
}
