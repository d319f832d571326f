package negotiate

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/policy"
)

// peerCacheSize is how many peer digests a [Negotiator] keeps at most.
const peerCacheSize = 4096

// Negotiator is the compiled form of [Decide] for hot paths: the facets are
// validated once, their versions parsed once, and the digests of recently
// seen peers cached. It gives the same answers as Decide with the same
// facets and policy, and is safe for concurrent use.
type Negotiator struct {
	facets  facets.Set
	a2a     *facet
	mcp     *facet
	policy  policy.Policy
	digests digestCache
}

// Compile validates s in full (see [facets.Set.Validate]) and returns a
// Negotiator that decides under p. It keeps its own copy of s, so later
// changes to the caller's facets do not reach it.
//
// A facet whose refreshedAt is empty, as a host that has never checked its
// versions against upstream writes it, is dated first: a check against
// the release list embedded in the module on p's clock (a zero
// [facets.Refresher]) gives it the day that list vouches for, and a facet
// the list does not vouch for is an error naming the versions it lacks.
// A refreshedAt the host wrote is kept as it is.
func Compile(s facets.Set, p policy.Policy) (*Negotiator, error) {
	s, err := dateEmpty(s, p)
	if err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	n := &Negotiator{facets: s.Clone(), policy: p, digests: newDigestCache(peerCacheSize)}
	for _, proto := range n.facets.Protocols() {
		adv, _ := n.facets.Lookup(proto)
		f, err := compileFacet(adv)
		if err != nil { // Validate covers every rule compileFacet checks.
			return nil, fmt.Errorf("negotiate: %w", err)
		}
		if proto == facets.ProtocolA2A {
			n.a2a = &f
		} else {
			n.mcp = &f
		}
	}
	return n, nil
}

// Facets returns a copy of the facets n decides with; changing it changes
// nothing in n.
func (n *Negotiator) Facets() facets.Set { return n.facets.Clone() }

// RequiresAudit reports whether the policy n was compiled with requires
// every decision to be recorded before it stands (policy.Policy.RequireAudit):
// an adapter then records a request that may act before it lets it act.
func (n *Negotiator) RequiresAudit() bool { return n.policy.RequireAudit }

// Decide is [Decide] with n's facets and policy.
func (n *Negotiator) Decide(subject *Subject, offer Offer) (o Outcome, e events.NegotiationDecided) {
	// Small enough to be inlined: the caller's variables receive the
	// decision, rather than a copy of it.
	n.decide(subject, &offer, &o, &e)
	return o, e
}

// decide is Decide, writing into o and e, which must be zero.
func (n *Negotiator) decide(subject *Subject, offer *Offer, o *Outcome, e *events.NegotiationDecided) {
	now := n.policy.Time()
	f := n.mcp
	if offer.Protocol == facets.ProtocolA2A {
		f = n.a2a
	} else if offer.Protocol != facets.ProtocolMCP {
		f = nil
	}
	if f == nil {
		*o, *e = refuseInput(*offer, nil, nil, fmt.Errorf("%w: %q", errNotAdvertised, offer.Protocol), now)
		return
	}
	digest, err := n.digests.get(offer.Peer)
	if err != nil {
		*o, *e = refuseInput(*offer, &f.adv, f.servable(subject, &n.policy), err, now)
		return
	}
	f.decide(subject, offer, &n.policy, digest, now, o, e)
}

// digestCache remembers the digests of peer URLs in a fixed table of
// slots, each peer in the slot its hash picks: a lookup is one hash, one
// atomic load and one string comparison, with no lock, and the table never
// holds more than its size. A peer whose slot another one took costs one
// more SHA-256, never a wrong answer.
type digestCache struct {
	seed  maphash.Seed
	mask  uint64 // len(slots)-1: the length is a power of two, so a slot is a mask, not a division
	slots []atomic.Pointer[digestEntry]
}

type digestEntry struct{ peer, digest string }

// newDigestCache returns a cache of size slots, rounded up to a power of
// two.
func newDigestCache(size int) digestCache {
	n := 1
	for n < size {
		n <<= 1
	}
	return digestCache{seed: maphash.MakeSeed(), mask: uint64(n - 1), slots: make([]atomic.Pointer[digestEntry], n)}
}

func (c *digestCache) get(peer string) (string, error) {
	if peer == "" {
		return "", nil
	}
	slot := &c.slots[maphash.String(c.seed, peer)&c.mask]
	if e := slot.Load(); e != nil && e.peer == peer {
		return e.digest, nil
	}
	d, err := events.PeerDigest(peer)
	if err != nil {
		return "", err
	}
	slot.Store(&digestEntry{peer, d})
	return d, nil
}

// dateEmpty returns s with the refreshedAt of every facet that has none
// set by a check against the release list embedded in the module, on p's
// clock; s itself when every facet has one.
func dateEmpty(s facets.Set, p policy.Policy) (facets.Set, error) {
	var empty []facets.Protocol
	for _, proto := range s.Protocols() {
		if adv, _ := s.Lookup(proto); adv.RefreshedAt == "" {
			empty = append(empty, proto)
		}
	}
	if len(empty) == 0 {
		return s, nil
	}
	rep, err := (&facets.Refresher{Now: p.Now}).Check(context.Background(), s)
	if err != nil {
		return s, err
	}
	s = s.Clone()
	for _, proto := range empty {
		dated, _ := rep.Set.Lookup(proto)
		if !slices.Contains(rep.Refreshed, proto) {
			var lacks []error
			for i := range rep.Findings {
				if f := &rep.Findings[i]; f.Rule == "unlisted" && strings.HasPrefix(f.Path, string(proto)+".") {
					lacks = append(lacks, f)
				}
			}
			return s, fmt.Errorf("negotiate: the %s facet has no refreshedAt, and the release list embedded in the module does not vouch for it: %w", proto, errors.Join(lacks...))
		}
		if proto == facets.ProtocolA2A {
			s.A2A.RefreshedAt = dated.RefreshedAt
		} else {
			s.MCP.RefreshedAt = dated.RefreshedAt
		}
	}
	return s, nil
}
