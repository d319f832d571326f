package mcphttp

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/wopneg/wopneg/negotiate"
)

// TestSessionSharesProperty drives the store with random puts, gets and
// removes of anonymous callers and five tenants, and checks after each
// step: the store holds at most max, its lists hold exactly what byID
// holds, no tenant keeps an empty list, and a put never evicts a session
// of a tenant that held fewer than the newcomer's tenant.
func TestSessionSharesProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for run := range 200 {
		max := 1 + rng.IntN(12)
		s := newSessions(max)
		for step := range 300 {
			id := strconv.Itoa(rng.IntN(60))
			switch rng.IntN(4) {
			case 0:
				s.get(id)
			case 1:
				s.remove(id)
			default:
				v := session{}
				if rng.IntN(3) > 0 {
					v = session{authenticated: true, subject: &negotiate.Subject{Tenant: "t" + strconv.Itoa(rng.IntN(5))}}
				}
				before := s.counts()
				_, had := s.byID[id]
				s.put(id, v)
				after := s.counts()
				for tenant, n := range before {
					if tenant == v.tenant() || !v.authenticated || had {
						continue
					}
					if after[tenant] < n && n < before[v.tenant()]+1 {
						t.Fatalf("run %d step %d: tenant %s's %d-th put evicted tenant %s holding %d", run, step, v.tenant(), before[v.tenant()]+1, tenant, n)
					}
				}
			}
			total := s.anon.Len()
			for tenant, l := range s.auth {
				if l.Len() == 0 {
					t.Fatalf("run %d step %d: tenant %q keeps an empty list", run, step, tenant)
				}
				total += l.Len()
			}
			if total != len(s.byID) || len(s.byID) > max {
				t.Fatalf("run %d step %d: lists hold %d, byID %d, max %d", run, step, total, len(s.byID), max)
			}
		}
	}
}

// counts is how many sessions each tenant holds.
func (s *sessions) counts() map[string]int {
	m := map[string]int{}
	for tenant, l := range s.auth {
		m[tenant] = l.Len()
	}
	return m
}
