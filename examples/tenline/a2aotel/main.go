// Command a2aotel is an a2a-go v2 agent behind wopneg, past the defaults:
// its decisions go to its own audit log as JSON lines and to
// OpenTelemetry (a counter, and the decision on the request's span), and
// Observe adds what only the adapter knows to that span. Its wopneg lines
// end in "// wopneg"; a test counts them.
package main

import (
	"context"
	"io"
	"iter"
	"log"
	"net/http"
	"os"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/wopneg/wopneg/events"            // wopneg
	"github.com/wopneg/wopneg/facets"            // wopneg
	"github.com/wopneg/wopneg/negotiate"         // wopneg
	"github.com/wopneg/wopneg/negotiate/a2ahttp" // wopneg
	wopnegotel "github.com/wopneg/wopneg/otel"   // wopneg
)

func main() {
	handler, err := host("http://localhost:8080", os.Stdout)
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(http.ListenAndServe("localhost:8080", handler))
}

func host(base string, audit io.Writer) (http.Handler, error) {
	facet := &facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0"} // wopneg
	card := &a2a.AgentCard{Name: "a2aotel", Description: "Says hello.", Version: "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{{URL: base + "/", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version}},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"}}
	mux := http.NewServeMux()
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	mux.Handle("/", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(agent{})))
	telemetry, err := wopnegotel.New(wopnegotel.Options{}) // wopneg
	if err != nil {                                        // wopneg
		return nil, err // wopneg
	} // wopneg
	return a2ahttp.Handler(facet, caller, mux, a2ahttp.HandlerOptions{Options: a2ahttp.Options{ // wopneg
		Sink: events.NewFanout(events.NewJSONLines(audit), telemetry), Observe: telemetry.Observe}}) // wopneg
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
