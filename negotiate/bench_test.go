package negotiate_test

import (
	"fmt"
	"testing"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// benchPeers are 1024 distinct peer URLs, so that the pure Decide digests
// a peer it has not just seen.
var benchPeers = func() []string {
	ps := make([]string, 1024)
	for i := range ps {
		ps[i] = fmt.Sprintf("https://peer-%d.example/a2a/jsonrpc", i)
	}
	return ps
}()

// BenchmarkNegotiatorDecide is the hot path: a compiled facet, a peer
// whose digest is cached, an authenticated caller, accepted at preferred.
func BenchmarkNegotiatorDecide(b *testing.B) {
	n, err := negotiate.Compile(wideA2A(), policy.Policy{})
	if err != nil {
		b.Fatal(err)
	}
	subject := user()
	offer := negotiate.Offer{Protocol: facets.ProtocolA2A, Peer: peerURL, Requested: "1.2", PeerVersions: []string{"1.0", "1.1", "1.2"}}
	if o, _ := n.Decide(subject, offer); o.Kind != negotiate.Accepted {
		b.Fatalf("Outcome %+v", o)
	}
	b.ReportAllocs()
	for b.Loop() {
		n.Decide(subject, offer)
	}
}

// BenchmarkDecide is the pure function on the same exchange, with a peer
// digest computed afresh every time.
func BenchmarkDecide(b *testing.B) {
	set := wideA2A()
	subject := user()
	offer := negotiate.Offer{Protocol: facets.ProtocolA2A, Requested: "1.2", PeerVersions: []string{"1.0", "1.1", "1.2"}}
	p := policy.Policy{}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		offer.Peer = benchPeers[i%len(benchPeers)]
		negotiate.Decide(subject, set, offer, p)
		i++
	}
}

// BenchmarkDecideRefused is a refusal below the floor, which builds the
// interop_version_unsupported error.
func BenchmarkDecideRefused(b *testing.B) {
	set := wideA2A()
	offer := negotiate.Offer{Protocol: facets.ProtocolA2A, Peer: peerURL, Requested: "1.0", PeerVersions: []string{"1.0"}}
	p := policy.Policy{}
	if o, _ := negotiate.Decide(nil, set, offer, p); o.Rule != negotiate.RuleFloor {
		b.Fatalf("Outcome %+v", o)
	}
	b.ReportAllocs()
	for b.Loop() {
		negotiate.Decide(nil, set, offer, p)
	}
}
