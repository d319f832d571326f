package main

import (
	"net/http"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/policy"
)

// WireToken is the bearer token negotiatetest.RunWire sends for an
// authenticated caller; [WireHandler] makes it the demo user's.
const WireToken = "negotiatetest"

// WireHandler builds the host as it serves — the go-sdk MCP server at
// /mcp and a2a-go at /a2a, each behind its middleware, and the agent card
// — from set, p and sink, with [WireToken] authenticating the demo user,
// and returns its handler without serving it. It has the shape
// negotiatetest.RunWire builds a host with (see wire_test.go).
func WireHandler(set facets.Set, p policy.Policy, sink events.Sink) (http.Handler, error) {
	h, err := newHost(config{Addr: "127.0.0.1:0", Token: WireToken, Facets: set, Policy: p}, sink, mounts...)
	if err != nil {
		return nil, err
	}
	// The handler is driven in process; the listener newHost opened is
	// not needed.
	if err := h.listener.Close(); err != nil {
		return nil, err
	}
	return h.mux, nil
}
