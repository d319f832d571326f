package negotiate

import (
	"fmt"
	"hash/maphash"
	"testing"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/policy"
)

// cached reports the peers the cache holds.
func (c *digestCache) cached() map[string]string {
	m := make(map[string]string)
	for i := range c.slots {
		if e := c.slots[i].Load(); e != nil {
			m[e.peer] = e.digest
		}
	}
	return m
}

// The digest cache holds at most its size, the peer it saw last, and
// keeps answering right however many peers it sees.
func TestDigestCacheBound(t *testing.T) {
	set := facets.Set{A2A: &facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0", RefreshedAt: "2026-11-01"}}
	n, err := Compile(set, policy.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if len(n.digests.slots) != peerCacheSize || peerCacheSize != 4096 {
		t.Fatalf("cache size %d (peerCacheSize %d), want 4096", len(n.digests.slots), peerCacheSize)
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
		if e := n.digests.slots[maphash.String(n.digests.seed, peer)%uint64(len(n.digests.slots))].Load(); peer != "" && (e == nil || e.peer != peer || e.digest != want) {
			t.Fatalf("%s: the peer just seen is not cached with its digest", peer)
		}
	}
	for round := range 2 { // the second round meets the cached peers, or their replacements
		for i := range peerCacheSize + 500 {
			decide(fmt.Sprintf("https://p%d.example", i))
		}
		if got := len(n.digests.cached()); got > peerCacheSize || got < peerCacheSize/2 {
			t.Fatalf("round %d: cache holds %d of its %d slots", round, got, peerCacheSize)
		}
	}
	// Neither an empty peer nor a peer without an origin is cached.
	before := len(n.digests.cached())
	decide("")
	n.Decide(nil, Offer{Protocol: facets.ProtocolA2A, Peer: "ftp://x.example", PeerVersions: []string{"1.0"}})
	got := n.digests.cached()
	if len(got) != before {
		t.Fatalf("cache holds %d, want %d", len(got), before)
	}
	if _, ok := got[""]; ok {
		t.Fatal("the empty peer was cached")
	}
	if _, ok := got["ftp://x.example"]; ok {
		t.Fatal("a peer without an origin was cached")
	}
}

// Two peers in a one-slot cache take the slot from each other, and each
// answer is still right.
func TestDigestCacheOneSlot(t *testing.T) {
	c := newDigestCache(1)
	for _, peer := range []string{"https://a.example", "https://b.example", "https://a.example", "https://a.example"} {
		d, err := c.get(peer)
		want, _ := events.PeerDigest(peer)
		if err != nil || d != want {
			t.Fatalf("get(%s) = %s, %v; want %s", peer, d, err, want)
		}
		if got := c.cached(); len(got) != 1 || got[peer] != want {
			t.Fatalf("after %s the cache holds %v", peer, got)
		}
	}
	if d, err := c.get(""); d != "" || err != nil {
		t.Fatalf(`get("") = %q, %v`, d, err)
	}
	if _, err := c.get("data:text/plain,x"); err == nil {
		t.Fatal("get(data:) found an origin")
	}
	if got := c.cached(); len(got) != 1 || got["https://a.example"] == "" {
		t.Fatalf("a failed or empty lookup changed the cache: %v", got)
	}
}

// The table's length is size rounded up to a power of two, so that a slot
// is picked with a mask, and every slot is reachable.
func TestDigestCacheSizeIsAPowerOfTwo(t *testing.T) {
	for _, tt := range []struct{ size, want int }{{0, 1}, {1, 1}, {2, 2}, {3, 4}, {4, 4}, {5, 8}, {4096, 4096}, {4097, 8192}} {
		c := newDigestCache(tt.size)
		if len(c.slots) != tt.want || c.mask != uint64(tt.want-1) {
			t.Errorf("newDigestCache(%d): %d slots, mask %d; want %d slots, mask %d", tt.size, len(c.slots), c.mask, tt.want, tt.want-1)
		}
	}
}
