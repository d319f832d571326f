package main

import (
	"testing"

	"github.com/wopneg/wopneg/negotiate/negotiatetest"
)

// TestWireVectors runs the wire vectors against the host's real handler:
// the go-sdk streamable handler and a2a-go's JSON-RPC handlers behind the
// middleware, with the host's own bearer authentication in front.
func TestWireVectors(t *testing.T) {
	negotiatetest.RunWire(t, WireHandler)
}
