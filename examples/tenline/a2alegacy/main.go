// Command a2alegacy is an a2a-go v2 agent behind wopneg that also serves
// A2A 0.3 clients, which send no A2A-Version (A2A §3.6.2 reads that as
// 0.3): the facet offers 0.3 above the floor, and the host routes each
// request on the version the middleware decided. The cost: RFC 0175 keeps
// 0.3 out of a v2 advertisement, so this facet's discovery record is
// non-conformant (`wopneg lint` says legacy-version), and 0.3 goes only to
// authenticated callers, never to an anonymous one (rule 5). Its wopneg
// lines end in "// wopneg"; a test counts them.
package main

import (
	"context"
	"iter"
	"log"
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/wopneg/wopneg/facets"            // wopneg
	"github.com/wopneg/wopneg/negotiate"         // wopneg
	"github.com/wopneg/wopneg/negotiate/a2ahttp" // wopneg
)

func main() {
	log.Fatal(http.ListenAndServe("localhost:8080", host()))
}

// facet offers 0.3 beside 1.0, preferring 1.0; 0.3 is the floor.
var facet = &facets.A2A{Versions: []string{"0.3", "1.0"}, PreferredVersion: "1.0", MinimumVersion: "0.3"} // wopneg

func host() http.Handler {
	v10 := a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(greeter{"1.0"}))
	v03 := a2av0.NewJSONRPCHandler(a2asrv.NewHandler(greeter{"0.3"}))
	byVersion := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v, _ := a2ahttp.Version(r.Context()); v == "0.3" { // wopneg
			v03.ServeHTTP(w, r)
			return
		}
		v10.ServeHTTP(w, r)
	})
	handler, err := a2ahttp.Handler(facet, caller, byVersion) // wopneg
	if err != nil {                                           // wopneg
		log.Fatal(err) // wopneg
	} // wopneg
	return handler
}

// caller says who is calling: whoever shows the demo token is a signed-in
// agent, anyone else is anonymous.
func caller(r *http.Request) *negotiate.Subject {
	if r.Header.Get("Authorization") != "Bearer demo" {
		return nil
	}
	return &negotiate.Subject{Issuer: "https://idp.example", SubjectID: "agent-1", Tenant: "demo", Lane: "oidc", Kind: "agent"}
}

// greeter answers "served at" and the version it serves.
type greeter struct{ version string }

func (g greeter) Execute(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("served at "+g.version)), nil)
	}
}

func (greeter) Cancel(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(func(a2a.Event, error) bool) {}
}
