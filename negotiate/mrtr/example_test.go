package mrtr_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wopneg/wopneg/negotiate/mrtr"
)

// A server seals the requestState of each input_required round, bound to
// the caller and the request; the client echoes it; the server opens it
// once. The client's Guard stops the invocation at the facet's maxRounds,
// and the server could not seal a round past it anyway.
func Example() {
	secret := make([]byte, 32)
	rand.Read(secret)
	server, err := mrtr.NewSealer(mrtr.SealerOptions{Keys: []mrtr.Key{{ID: "2026-11", Secret: secret}}, MaxRounds: 2})
	if err != nil {
		panic(err)
	}
	digest, _ := mrtr.Digest("book_flight", json.RawMessage(`{"to":"LIS"}`))
	bound := mrtr.Binding{Principal: "https://idp.example|u-42", Tenant: "acme", RunID: "acme/run-0123456789abcdef", InterruptID: "confirm", RequestDigest: digest}

	client, _ := mrtr.NewGuard(2)
	for round := 1; ; round++ {
		// The server needs input again: it seals the next round, or
		// answers 422 when there is none.
		state, err := server.Seal(bound, round)
		if err != nil {
			fmt.Println("server:", err)
			break
		}
		result := fmt.Sprintf(`{"resultType":"input_required","inputRequests":{"confirm":{}},"requestState":%q}`, state)

		// The client counts the round before it retries.
		if retry, err := client.Observe([]byte(result)); !retry {
			fmt.Println("client:", err)
			break
		}
		// The retry echoes the state; the server opens it, once.
		opened, err := server.Open(context.Background(), state, bound)
		if err != nil {
			panic(err)
		}
		fmt.Println("round", opened.Round, "opened")
		if _, err := server.Open(context.Background(), state, bound); errors.Is(err, mrtr.ErrReplayed) {
			fmt.Println("round", opened.Round, "replayed: refused")
		}
		round = opened.Round
	}
	// Output:
	// round 1 opened
	// round 1 replayed: refused
	// round 2 opened
	// round 2 replayed: refused
	// server: mcp_mrtr_rounds_exceeded: MCP tool result needed 3 rounds; at most 2 are allowed
}
