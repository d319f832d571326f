package negotiate

import (
	"fmt"
	"sync"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/policy"
)

// peerCacheSize bounds how many peer digests a [Negotiator] keeps.
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
func Compile(s facets.Set, p policy.Policy) (*Negotiator, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	n := &Negotiator{facets: s.Clone(), policy: p, digests: digestCache{max: peerCacheSize}}
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
func (n *Negotiator) Decide(subject *Subject, offer Offer) (Outcome, events.NegotiationDecided) {
	now := n.policy.Time()
	var f *facet
	switch offer.Protocol {
	case facets.ProtocolA2A:
		f = n.a2a
	case facets.ProtocolMCP:
		f = n.mcp
	}
	if f == nil {
		return refuseInput(offer, nil, fmt.Errorf("%w: %q", errNotAdvertised, offer.Protocol), now)
	}
	digest, err := n.digests.get(offer.Peer)
	if err != nil {
		return refuseInput(offer, &f.adv, err, now)
	}
	return f.decide(subject, &offer, &n.policy, digest, now)
}

// digestCache remembers the digests of peer URLs, up to max of them.
type digestCache struct {
	mu  sync.RWMutex
	max int
	m   map[string]string
}

func (c *digestCache) get(peer string) (string, error) {
	if peer == "" {
		return "", nil
	}
	c.mu.RLock()
	d, ok := c.m[peer]
	c.mu.RUnlock()
	if ok {
		return d, nil
	}
	d, err := events.PeerDigest(peer)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]string)
	}
	if len(c.m) >= c.max {
		// Evicting an arbitrary entry keeps the bound without bookkeeping on
		// the read path; a peer evicted too soon only costs one more hash.
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[peer] = d
	return d, nil
}
