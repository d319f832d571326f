package main

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
)

// a2aWire records the A2A-Version every request named, client side.
type a2aWire struct {
	mu   sync.Mutex
	sent [][]string
}

func (w *a2aWire) RoundTrip(r *http.Request) (*http.Response, error) {
	w.mu.Lock()
	w.sent = append(w.sent, slices.Clone(r.Header.Values(a2a.SvcParamVersion)))
	w.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

func (w *a2aWire) seen() [][]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.sent)
}

// TestA2A runs the real a2a-go v2 client against the host's A2A mount:
// with its defaults it resolves the 1.0 card and is served at 1.0; forced
// to 9.9 it surfaces a2a's VersionNotSupported.
func TestA2A(t *testing.T) {
	rec := &negotiatetest.Recorder{}
	h, err := newHost(config{Addr: "127.0.0.1:0", Facets: defaultFacets()}, rec, mounts...)
	if err != nil {
		t.Fatal(err)
	}
	serve(t, h)
	ctx := t.Context()
	// a2aEvents returns the events recorded since the last call.
	var seen int
	a2aEvents := func() []events.NegotiationDecided {
		all := rec.Events()
		var out []events.NegotiationDecided
		for _, e := range all[seen:] {
			if e.Payload.Protocol != facets.ProtocolA2A || e.RunID != "" {
				t.Errorf("event %+v is not an a2a host event", e)
			}
			out = append(out, e.Payload)
		}
		seen = len(all)
		return out
	}
	msg := &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello"))}

	t.Run("default 1.0", func(t *testing.T) {
		w := &a2aWire{}
		hc := &http.Client{Transport: w}
		card, err := agentcard.NewResolver(hc).Resolve(ctx, h.env.BaseURL)
		if err != nil {
			t.Fatal(err)
		}
		client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(hc))
		if err != nil {
			t.Fatal(err)
		}
		res, err := client.SendMessage(ctx, msg)
		if err != nil {
			t.Fatal(err)
		}
		if m, ok := res.(*a2a.Message); !ok || len(m.Parts) != 1 || m.Parts[0].Text() != "hello (served at A2A 1.0)" {
			t.Errorf("SendMessage returned %#v", res)
		}
		// The card request names no version (the preferred 1.0 card); the
		// JSON-RPC request names 1.0.
		if got := w.seen(); len(got) != 2 || len(got[0]) != 0 || !slices.Equal(got[1], []string{"1.0"}) {
			t.Errorf("A2A-Version on the wire: %q", got)
		}
		// The card, then the call: both accepted at 1.0.
		got := a2aEvents()
		if len(got) != 2 || got[0].Outcome != "accepted" || got[0].Version != "1.0" || got[0].Requested != "" ||
			got[1].Outcome != "accepted" || got[1].Version != "1.0" || got[1].Requested != "1.0" || got[1].Reason != events.ReasonOK {
			t.Errorf("events %+v", got)
		}
	})

	t.Run("forced 9.9", func(t *testing.T) {
		factory := a2aclient.TransportFactoryFn(func(_ context.Context, _ *a2a.AgentCard, iface *a2a.AgentInterface) (a2aclient.Transport, error) {
			return a2aclient.NewJSONRPCTransport(iface.URL, http.DefaultClient), nil
		})
		client, err := a2aclient.NewFromEndpoints(ctx,
			[]*a2a.AgentInterface{{URL: h.env.BaseURL + a2aPath, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "9.9"}},
			a2aclient.WithDefaultsDisabled(), a2aclient.WithCompatTransport("9.9", a2a.TransportProtocolJSONRPC, factory))
		if err != nil {
			t.Fatal(err)
		}
		_, err = client.SendMessage(ctx, msg)
		if !errors.Is(err, a2a.ErrVersionNotSupported) {
			t.Fatalf("the client surfaced %v (%T), not a2a.ErrVersionNotSupported", err, err)
		}
		got := a2aEvents()
		if len(got) != 1 || got[0].Outcome != "refused" || got[0].Requested != "9.9" || got[0].Reason != events.ReasonUnsupported {
			t.Errorf("events %+v", got)
		}
	})
}
