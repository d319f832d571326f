package main

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
)

// a2aPath is the host's A2A JSON-RPC endpoint; the agent card is at
// a2asrv.WellKnownAgentCardPath.
const a2aPath = "/a2a"

// mountA2A serves an a2a-go agent behind negotiate/a2ahttp: JSON-RPC at
// 1.0 and 0.3 on one URL (the middleware's decision picks a2a-go's 1.0 or
// 0.3 compat handler, never the header itself), and the card of the
// decided version.
func mountA2A(mux *http.ServeMux, env Env) error {
	adv, ok := env.Negotiator.Facets().Lookup(facets.ProtocolA2A)
	if !ok {
		return nil // the host advertises no A2A, and serves none
	}
	m, err := a2ahttp.New(env.Negotiator, a2ahttp.Options{
		Sink:    env.Sink,
		Subject: env.Subject,
		Observe: env.Observe,
		Card: func(r *http.Request, version string) ([]byte, error) {
			return a2aCardJSON(r.Context(), env.BaseURL, version, adv)
		},
	})
	if err != nil {
		return err
	}
	v10 := a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(echoAgent{}))
	v03 := a2av0.NewJSONRPCHandler(a2asrv.NewHandler(echoAgent{}))
	mux.Handle(a2aPath, m.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v, _ := a2ahttp.Version(r.Context()); v == "0.3" {
			v03.ServeHTTP(w, r)
			return
		}
		v10.ServeHTTP(w, r)
	})))
	mux.Handle(a2asrv.WellKnownAgentCardPath, m.Wrap(http.NotFoundHandler())) // Options.Card answers
	return nil
}

// a2aCard is the host's agent card: one JSON-RPC URL, listed at every
// version the host advertises (preferred first), so that the card's
// supportedInterfaces[].protocolVersion set is the facet's versions.
func a2aCard(base string, adv facets.Advertised) *a2a.AgentCard {
	ifaces := []*a2a.AgentInterface{{URL: base + a2aPath, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.ProtocolVersion(adv.Preferred)}}
	for _, v := range adv.Versions {
		if v != adv.Preferred {
			ifaces = append(ifaces, &a2a.AgentInterface{URL: base + a2aPath, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.ProtocolVersion(v)})
		}
	}
	return &a2a.AgentCard{
		Name:                "wopneg-example-host",
		Description:         "Echoes text, and the A2A version the request was served at.",
		Version:             "0.1.0",
		SupportedInterfaces: ifaces,
		DefaultInputModes:   []string{"text/plain"},
		DefaultOutputModes:  []string{"text/plain"},
		Skills:              []a2a.AgentSkill{{ID: "echo", Name: "echo", Description: "echoes text", Tags: []string{"example"}}},
	}
}

// a2aCardJSON is the card of version: a2a-go's 0.3 compatibility producer
// for 0.3, the 1.0 card otherwise.
func a2aCardJSON(ctx context.Context, base, version string, adv facets.Advertised) ([]byte, error) {
	card := a2aCard(base, adv)
	if version == "0.3" {
		return a2av0.NewStaticAgentCardProducer(card).(a2asrv.AgentCardJSONProducer).CardJSON(ctx)
	}
	return json.Marshal(card)
}

// echoAgent answers a message with its text and the A2A version it was
// served at.
type echoAgent struct{}

func (echoAgent) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		var text string
		if ec.Message != nil {
			for _, p := range ec.Message.Parts {
				text += p.Text()
			}
		}
		v, ok := a2ahttp.Version(ctx)
		if !ok {
			v = "(not negotiated)"
		}
		yield(a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(text+" (served at A2A "+v+")")), nil)
	}
}

func (echoAgent) Cancel(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(func(a2a.Event, error) bool) {}
}
