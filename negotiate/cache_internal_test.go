package negotiate

import (
	"fmt"
	"testing"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/policy"
)

// The digest cache never holds more than its bound, holds exactly its
// bound once that many peers were seen, and keeps answering right.
func TestDigestCacheBound(t *testing.T) {
	set := facets.Set{A2A: &facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0", RefreshedAt: "2026-11-01"}}
	n, err := Compile(set, policy.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if n.digests.max != DefaultPeerCacheSize || DefaultPeerCacheSize != 4096 {
		t.Fatalf("cache bound %d (DefaultPeerCacheSize %d), want 4096", n.digests.max, DefaultPeerCacheSize)
	}
	decide := func(peer string) {
		t.Helper()
		_, e := n.Decide(nil, Offer{Protocol: facets.ProtocolA2A, Peer: peer, PeerVersions: []string{"1.0"}})
		want := ""
		if peer != "" {
			var err error
			if want, err = events.PeerDigest(peer); err != nil {
				t.Fatal(err)
			}
		}
		if e.PeerDigest != want {
			t.Fatalf("%s: digest %s, want %s", peer, e.PeerDigest, want)
		}
	}
	for i := range DefaultPeerCacheSize - 1 {
		decide(fmt.Sprintf("https://p%d.example", i))
	}
	if got := len(n.digests.m); got != DefaultPeerCacheSize-1 {
		t.Fatalf("cache holds %d, want %d", got, DefaultPeerCacheSize-1)
	}
	decide("https://p-last.example")
	if got := len(n.digests.m); got != DefaultPeerCacheSize {
		t.Fatalf("cache holds %d at the bound, want %d", got, DefaultPeerCacheSize)
	}
	// A cached peer costs nothing and changes nothing.
	decide("https://p-last.example")
	if got := len(n.digests.m); got != DefaultPeerCacheSize {
		t.Fatalf("cache holds %d after a hit, want %d", got, DefaultPeerCacheSize)
	}
	for i := range 100 {
		decide(fmt.Sprintf("https://q%d.example", i))
		if got := len(n.digests.m); got != DefaultPeerCacheSize {
			t.Fatalf("cache holds %d past the bound, want %d", got, DefaultPeerCacheSize)
		}
		if _, ok := n.digests.m[fmt.Sprintf("https://q%d.example", i)]; !ok {
			t.Fatalf("the newest peer was not cached")
		}
	}
	// Neither an empty peer nor a peer without an origin is cached.
	decide("")
	n.Decide(nil, Offer{Protocol: facets.ProtocolA2A, Peer: "ftp://x.example", PeerVersions: []string{"1.0"}})
	if len(n.digests.m) != DefaultPeerCacheSize {
		t.Fatalf("cache holds %d", len(n.digests.m))
	}
	if _, ok := n.digests.m[""]; ok {
		t.Fatal("the empty peer was cached")
	}
	if _, ok := n.digests.m["ftp://x.example"]; ok {
		t.Fatal("a peer without an origin was cached")
	}
}

func TestDigestCacheSmallBound(t *testing.T) {
	c := digestCache{max: 2}
	for i, peer := range []string{"https://a.example", "https://b.example", "https://c.example", "https://a.example"} {
		d, err := c.get(peer)
		want, _ := events.PeerDigest(peer)
		if err != nil || d != want {
			t.Fatalf("get(%s) = %s, %v; want %s", peer, d, err, want)
		}
		if wantLen := min(i+1, 2); len(c.m) != wantLen {
			t.Fatalf("after %d peers the cache holds %d, want %d", i+1, len(c.m), wantLen)
		}
	}
	if d, err := c.get(""); d != "" || err != nil || len(c.m) != 2 {
		t.Fatalf(`get("") = %q, %v`, d, err)
	}
	if _, err := c.get("data:text/plain,x"); err == nil || len(c.m) != 2 {
		t.Fatalf("get(data:) = %v", err)
	}
}
