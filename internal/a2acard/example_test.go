package a2acard_test

import (
	"fmt"

	"github.com/wopneg/wopneg/internal/a2acard"
)

// A card that serves JSON-RPC at 1.0 and gRPC at 0.3 offers 0.3 over gRPC.
func ExampleOffers() {
	card := []byte(`{"supportedInterfaces":[
		{"url":"https://agent.example/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"},
		{"url":"agent.example:443","protocolBinding":"GRPC","protocolVersion":"0.3"}]}`)
	all, _ := a2acard.Offers(card, "")
	grpc, _ := a2acard.Offers(card, "GRPC")
	fmt.Println(all, grpc)
	// Output: [1.0 0.3] [0.3]
}
