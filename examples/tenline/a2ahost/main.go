// Command a2ahost is an a2a-go v2 agent behind wopneg. Its wopneg lines
// end in "// wopneg"; README.md shows this file, and a test counts them.
package main

import (
	"context"
	"iter"
	"log"
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/wopneg/wopneg/facets"            // wopneg
	"github.com/wopneg/wopneg/negotiate"         // wopneg
	"github.com/wopneg/wopneg/negotiate/a2ahttp" // wopneg
)

func main() {
	log.Fatal(http.ListenAndServe("localhost:8080", host("http://localhost:8080")))
}

// facet is what the agent advertises: A2A 1.0, the version a2a-go v2
// serves.
var facet = &facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0"} // wopneg

func host(base string) http.Handler {
	handler, err := a2ahttp.Handler(facet, caller, agentServer(base)) // wopneg
	if err != nil {                                                   // wopneg
		log.Fatal(err) // wopneg
	} // wopneg
	return handler
}

// agentServer is the a2a-go v2 agent: its card, and its JSON-RPC handler
// at /.
func agentServer(base string) http.Handler {
	card := &a2a.AgentCard{Name: "a2ahost", Description: "Says hello.", Version: "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{{URL: base + "/", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version}},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"}}
	mux := http.NewServeMux()
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	mux.Handle("/", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(agent{})))
	return mux
}

// caller says who is calling: whoever shows the demo token is a signed-in
// agent, anyone else is anonymous.
func caller(r *http.Request) *negotiate.Subject {
	if r.Header.Get("Authorization") != "Bearer demo" {
		return nil
	}
	return &negotiate.Subject{Issuer: "https://idp.example", SubjectID: "agent-1", Tenant: "demo", Lane: "oidc", Kind: "agent"}
}

type agent struct{}

func (agent) Execute(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("hello")), nil)
	}
}

func (agent) Cancel(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(func(a2a.Event, error) bool) {}
}
