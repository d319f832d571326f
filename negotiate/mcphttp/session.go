package mcphttp

import (
	"container/list"
	"sync"

	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// DefaultMaxSessions bounds how many legacy sessions a [Handler] remembers
// when [Options.MaxSessions] is zero.
const DefaultMaxSessions = 10000

// session is what the middleware remembers of a legacy session: the
// outcome its initialize settled, and who negotiated it.
type session struct {
	outcome negotiate.Outcome
	subject *negotiate.Subject
}

// sessions is a bounded, least-recently-used map from Mcp-Session-Id to
// the session's negotiation. Forgetting a session is safe: a request on a
// session the store no longer holds is decided afresh from its header, as
// a request without a session is, so eviction never lets a request through
// that the decision would refuse.
type sessions struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *sessionEntry, most recently used first
	byID  map[string]*list.Element
}

type sessionEntry struct {
	id string
	s  session
}

func newSessions(max int) *sessions {
	return &sessions{max: max, order: list.New(), byID: make(map[string]*list.Element)}
}

// get returns the session id and marks it used.
func (s *sessions) get(id string) (session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byID[id]
	if !ok {
		return session{}, false
	}
	s.order.MoveToFront(e)
	return e.Value.(*sessionEntry).s, true
}

// put remembers id, evicting the least recently used session when full.
func (s *sessions) put(id string, v session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.byID[id]; ok {
		e.Value.(*sessionEntry).s = v
		s.order.MoveToFront(e)
		return
	}
	if s.order.Len() >= s.max {
		last := s.order.Back()
		s.order.Remove(last)
		delete(s.byID, last.Value.(*sessionEntry).id)
	}
	s.byID[id] = s.order.PushFront(&sessionEntry{id: id, s: v})
}

// remove forgets id.
func (s *sessions) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.byID[id]; ok {
		s.order.Remove(e)
		delete(s.byID, id)
	}
}

// len returns how many sessions are remembered.
func (s *sessions) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.order.Len()
}

// maxChain is how many Subjects a chain may hold (the caller and
// policy.MaxActorDepth actors); a longer one, or a cycle, is no valid
// Subject and is never taken for the same caller twice.
const maxChain = policy.MaxActorDepth + 1

// sameSubject reports whether a and b are the same caller: both absent, or
// equal in every field down an actor chain of at most maxChain Subjects.
func sameSubject(a, b *negotiate.Subject) bool {
	for range maxChain + 1 {
		switch {
		case a == nil || b == nil:
			return a == b
		case a.Issuer != b.Issuer || a.SubjectID != b.SubjectID || a.Tenant != b.Tenant ||
			a.Lane != b.Lane || a.Kind != b.Kind || a.KeyClass != b.KeyClass:
			return false
		}
		a, b = a.Actor, b.Actor
	}
	return false
}

// cloneSubject copies s and its actor chain, so that a caller changing its
// Subject later does not change what a session remembers. It returns false
// for a chain longer than maxChain (or a cycle), which cannot be copied
// whole.
func cloneSubject(s *negotiate.Subject) (*negotiate.Subject, bool) {
	var head *negotiate.Subject
	link := &head
	for range maxChain + 1 {
		if s == nil {
			return head, true
		}
		c := *s
		c.Actor = nil
		*link = &c
		link = &c.Actor
		s = s.Actor
	}
	return nil, false
}
