// Package adapter holds what the two HTTP adapters, negotiate/a2ahttp and
// negotiate/mcphttp, share, so that they read the same and neither keeps a
// copy of the other: the check of what both directions need, and the
// context that carries an accepted outcome to the wrapped handler.
package exchange

import (
	"context"
	"errors"
	"fmt"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
)

// Check returns the facet n advertises for p, or why the adapter named pkg
// cannot work with n and sink: a nil Negotiator, one that does not
// advertise p, or a nil sink, which wraps [events.ErrClosed] (a negotiation
// with nowhere to be recorded is a configuration error, not a default).
func Check(pkg string, n *negotiate.Negotiator, sink events.Sink, p facets.Protocol) (facets.Advertised, error) {
	if n == nil {
		return facets.Advertised{}, errors.New(pkg + ": the Negotiator is nil")
	}
	adv, ok := n.Facets().Lookup(p)
	if !ok {
		return facets.Advertised{}, fmt.Errorf("%s: the Negotiator does not advertise %s", pkg, p)
	}
	if sink == nil {
		return facets.Advertised{}, fmt.Errorf("%s: the Sink is nil; every negotiation must be recorded: %w", pkg, events.ErrClosed)
	}
	return adv, nil
}

// key keys the accepted outcome of a request for protocol p in its
// context, so that one adapter never reads the other's.
type key struct{ p facets.Protocol }

// The keys of the two protocols, made interface values once: a key made
// per request would cost an allocation each time.
var mcpKey, a2aKey any = key{facets.ProtocolMCP}, key{facets.ProtocolA2A}

func keyOf(p facets.Protocol) any {
	switch p {
	case facets.ProtocolMCP:
		return mcpKey
	case facets.ProtocolA2A:
		return a2aKey
	}
	return key{p}
}

// WithOutcome returns ctx carrying o, the accepted outcome of a request
// for protocol p.
func WithOutcome(ctx context.Context, p facets.Protocol, o *negotiate.Outcome) context.Context {
	return context.WithValue(ctx, keyOf(p), o)
}

// Outcome returns the outcome WithOutcome put in ctx for p, and false when
// there is none.
func Outcome(ctx context.Context, p facets.Protocol) (negotiate.Outcome, bool) {
	o, ok := ctx.Value(keyOf(p)).(*negotiate.Outcome)
	if !ok {
		return negotiate.Outcome{}, false
	}
	return *o, true
}

// Sendable returns nil when o is an accepted outcome of protocol p with a
// well-formed version, the only kind a transport may send at, and
// otherwise why the adapter named pkg makes no transport for it.
func Sendable(pkg string, o negotiate.Outcome, p facets.Protocol) error {
	if o.Err() != nil {
		return fmt.Errorf("%s: no transport for a refused negotiation: %w", pkg, o.Err())
	}
	if o.Protocol != p {
		return fmt.Errorf("%s: no transport for a %q negotiation", pkg, o.Protocol)
	}
	if _, err := facets.ParseVersion(p, o.Version); err != nil {
		return fmt.Errorf("%s: no transport for the outcome: %w", pkg, err)
	}
	return nil
}
