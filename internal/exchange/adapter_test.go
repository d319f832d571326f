package exchange_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

func a2aOnly(t *testing.T) *negotiate.Negotiator {
	t.Helper()
	n, err := negotiate.Compile(facets.Set{A2A: &facets.A2A{
		Versions: []string{"1.0", "1.1"}, PreferredVersion: "1.1", MinimumVersion: "1.0", RefreshedAt: "2026-11-01",
	}}, policy.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCheck(t *testing.T) {
	n, sink := a2aOnly(t), &negotiatetest.Recorder{}
	for _, c := range []struct {
		name string
		n    *negotiate.Negotiator
		sink events.Sink
		p    facets.Protocol
		want string
		is   error
	}{
		{"nil Negotiator", nil, sink, facets.ProtocolA2A, "x: the Negotiator is nil", nil},
		{"not advertised", n, sink, facets.ProtocolMCP, "x: the Negotiator does not advertise mcp", nil},
		{"nil sink", n, nil, facets.ProtocolA2A, "x: the Sink is nil; every negotiation must be recorded: " + events.ErrClosed.Error(), events.ErrClosed},
	} {
		adv, err := exchange.Check("x", c.n, c.sink, c.p)
		if err == nil || err.Error() != c.want || (c.is != nil && !errors.Is(err, c.is)) || adv.Preferred != "" {
			t.Errorf("%s: %+v, %v; want %q", c.name, adv, err, c.want)
		}
	}
	adv, err := exchange.Check("x", n, sink, facets.ProtocolA2A)
	if err != nil || adv.Preferred != "1.1" || adv.Floor != "1.0" {
		t.Errorf("usable: %+v, %v", adv, err)
	}
}

// Each protocol's outcome is read back by that protocol alone, a protocol
// neither adapter speaks included.
func TestOutcomeIsPerProtocol(t *testing.T) {
	protocols := []facets.Protocol{facets.ProtocolMCP, facets.ProtocolA2A, "grpc"}
	for _, p := range protocols {
		o := negotiate.Outcome{Kind: negotiate.Accepted, Protocol: p, Version: "1.1"}
		ctx := exchange.WithOutcome(context.Background(), p, &o)
		for _, q := range protocols {
			got, ok := exchange.Outcome(ctx, q)
			if want := p == q; ok != want || want && got != o || !want && got != (negotiate.Outcome{}) {
				t.Errorf("%s's outcome read as %s: %+v, %v", p, q, got, ok)
			}
		}
		if _, ok := exchange.Outcome(context.Background(), p); ok {
			t.Errorf("an empty context holds a %s outcome", p)
		}
	}
}

func TestSendable(t *testing.T) {
	for _, c := range []struct {
		name string
		o    negotiate.Outcome
		want string
	}{
		{"refused", negotiate.Outcome{Kind: negotiate.Refused, Protocol: facets.ProtocolA2A}, "x: no transport for a refused negotiation: interop_version_unsupported: negotiation refused"},
		{"another protocol", negotiate.Outcome{Kind: negotiate.Accepted, Protocol: facets.ProtocolMCP, Version: "2026-07-28"}, `x: no transport for a "mcp" negotiation`},
		{"no version", negotiate.Outcome{Kind: negotiate.Accepted, Protocol: facets.ProtocolA2A}, `x: no transport for the outcome: a2a version "": want "major.minor"`},
		{"downgraded", negotiate.Outcome{Kind: negotiate.Downgraded, Protocol: facets.ProtocolA2A, Version: "1.0"}, ""},
		{"accepted", negotiate.Outcome{Kind: negotiate.Accepted, Protocol: facets.ProtocolA2A, Version: "1.1"}, ""},
	} {
		err := exchange.Sendable("x", c.o, facets.ProtocolA2A)
		if got := fmt.Sprint(err); (c.want == "" && err != nil) || (c.want != "" && got != c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	refused := negotiate.Outcome{Kind: negotiate.Refused, Protocol: facets.ProtocolA2A}
	if err := exchange.Sendable("x", refused, facets.ProtocolA2A); !errors.Is(err, wperrors.InteropVersionUnsupported) {
		t.Errorf("a refusal's error %v does not wrap the refusal", err)
	}
}

// An adapter checks its configuration once, carries the accepted outcome to
// the wrapped handler in the request's context, and makes a transport only
// for an outcome a request may be sent at.
func Example() {
	n, err := negotiate.Compile(facets.Set{A2A: &facets.A2A{
		Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0", RefreshedAt: "2026-11-01",
	}}, policy.Policy{})
	if err != nil {
		panic(err)
	}
	adv, err := exchange.Check("a2ahttp", n, &negotiatetest.Recorder{}, facets.ProtocolA2A)
	fmt.Println(adv.Preferred, err)
	_, err = exchange.Check("mcphttp", n, &negotiatetest.Recorder{}, facets.ProtocolMCP)
	fmt.Println(err)

	o := negotiate.Outcome{Kind: negotiate.Accepted, Protocol: facets.ProtocolA2A, Version: "1.0"}
	ctx := exchange.WithOutcome(context.Background(), facets.ProtocolA2A, &o)
	got, ok := exchange.Outcome(ctx, facets.ProtocolA2A)
	fmt.Println(got.Version, ok, exchange.Sendable("a2ahttp", got, facets.ProtocolA2A))
	// Output:
	// 1.0 <nil>
	// mcphttp: the Negotiator does not advertise mcp
	// 1.0 true <nil>
}

// TestOffer holds the middleware's Offer to negotiate.InboundOffer for
// every request, offered or not, and to costing no allocation for an
// offered version, which is why it exists.
func TestOffer(t *testing.T) {
	adv := facets.Advertised{Protocol: facets.ProtocolMCP, Versions: []string{"2025-11-25", "2026-07-28"}, Preferred: "2026-07-28"}
	for _, requested := range []string{"2025-11-25", "2026-07-28", "", "2025-06-18", "not a revision"} {
		got, want := exchange.Offer(adv, requested), negotiate.InboundOffer(adv, "", requested)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("Offer(%q) = %+v, want %+v", requested, got, want)
		}
		if len(got.PeerVersions) != 1 || cap(got.PeerVersions) != 1 {
			t.Errorf("Offer(%q).PeerVersions = %q (cap %d): one version, that an append cannot write past", requested, got.PeerVersions, cap(got.PeerVersions))
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = exchange.Offer(adv, "2025-11-25") }); n != 0 {
		t.Errorf("Offer of an offered version allocates %v times, want 0", n)
	}
}
