package mcphttp

import (
	"cmp"
	"container/list"
	"net/http"
	"sync"

	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/negotiate"
)

// defaultMaxSessions bounds how many legacy sessions a [handler] remembers
// when [Options.MaxSessions] is zero.
const defaultMaxSessions = 10000

// session is what the middleware remembers of a legacy session: the
// outcome its initialize settled, and who negotiated it.
type session struct {
	outcome negotiate.Outcome
	subject *negotiate.Subject
	// authenticated is true when the caller that negotiated the session
	// is identified (as the zero policy.Policy counts it): its pin is one that
	// anonymous traffic can never evict.
	authenticated bool
}

// sessions is a bounded map from Mcp-Session-Id to the session's
// negotiation, least recently used first out, in two classes: sessions an
// identified caller negotiated, and anonymous ones. A new anonymous
// session evicts only an anonymous one, and is not remembered when every
// remembered session is an identified caller's; so a flood of anonymous
// initializes cannot push out an authenticated session's pin.
//
// Identified callers' sessions are held by tenant, each tenant its share,
// as the event log shares its streams (events.LogHandler): when the store
// is full, a new session of tenant T evicts the least recently used
// session of the tenant holding the most, unless T holds as many (then
// T's own least recently used goes). So one tenant's initializes never
// evict another tenant's pin while that tenant holds no more than they
// do, and any number of tenants leave every other about max/tenants.
//
// A session the store no longer holds is refused (404) and must be
// initialized again, so forgetting one never serves it at another
// revision.
type sessions struct {
	mu   sync.Mutex
	max  int
	anon *list.List            // of *sessionEntry, most recently used first
	auth map[string]*list.List // by tenant, each most recently used first
	byID map[string]*list.Element
}

type sessionEntry struct {
	id string
	s  session
}

func newSessions(max int) *sessions {
	return &sessions{max: max, anon: list.New(), auth: make(map[string]*list.List), byID: make(map[string]*list.Element)}
}

// tenant is the tenant of the caller that negotiated s.
func (s session) tenant() string {
	if s.subject == nil {
		return ""
	}
	return s.subject.Tenant
}

// class is the list a session lives in: the anonymous one, or its
// tenant's (made when missing).
func (s *sessions) class(v session) *list.List {
	if !v.authenticated {
		return s.anon
	}
	l := s.auth[v.tenant()]
	if l == nil {
		l = list.New()
		s.auth[v.tenant()] = l
	}
	return l
}

// get returns the session id and marks it used.
func (s *sessions) get(id string) (session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byID[id]
	if !ok {
		return session{}, false
	}
	v := e.Value.(*sessionEntry).s
	s.class(v).MoveToFront(e)
	return v, true
}

// put remembers id, evicting the least recently used session of a class
// it may evict when full; when there is none, id is not remembered.
func (s *sessions) put(id string, v session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.byID[id]; ok {
		// The server named a session it already gave out: the newer
		// negotiation is the one its server settled.
		s.drop(e)
	}
	if len(s.byID) >= s.max {
		victims := s.anon
		if victims.Len() == 0 && v.authenticated {
			victims = s.heaviest(v.tenant())
		}
		if victims == nil || victims.Len() == 0 {
			return
		}
		s.drop(victims.Back())
	}
	s.byID[id] = s.class(v).PushFront(&sessionEntry{id: id, s: v})
}

// heaviest is the sessions of the tenant holding the most, tenant's own
// when it holds as many (nil when it holds none and no tenant more); the
// caller holds mu.
func (s *sessions) heaviest(tenant string) *list.List {
	most, n := s.auth[tenant], 0
	if most != nil {
		n = most.Len()
	}
	for _, l := range s.auth {
		if l.Len() > n {
			most, n = l, l.Len()
		}
	}
	return most
}

// drop forgets the session at e, and its tenant's list when it empties;
// the caller holds mu.
func (s *sessions) drop(e *list.Element) {
	entry := e.Value.(*sessionEntry)
	l := s.class(entry.s)
	l.Remove(e)
	if entry.s.authenticated && l.Len() == 0 {
		delete(s.auth, entry.s.tenant())
	}
	delete(s.byID, entry.id)
}

// remove forgets id.
func (s *sessions) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.byID[id]; ok {
		s.drop(e)
	}
}

// sameSubject reports whether a and b are the same caller: both absent, or
// equal in every field down their actor chains. Both are valid Subjects
// (handler.caller drops any other), so their chains are short and end.
func sameSubject(a, b *negotiate.Subject) bool {
	for a != nil && b != nil {
		if a.Issuer != b.Issuer || a.SubjectID != b.SubjectID || a.Tenant != b.Tenant ||
			a.Lane != b.Lane || a.Kind != b.Kind || a.KeyClass != b.KeyClass {
			return false
		}
		a, b = a.Actor, b.Actor
	}
	return a == b
}

// cloneSubject copies s, a valid Subject, and its actor chain, so that a
// caller changing its Subject later does not change what a session
// remembers.
func cloneSubject(s *negotiate.Subject) *negotiate.Subject {
	var head *negotiate.Subject
	for link := &head; s != nil; s = s.Actor {
		c := *s
		c.Actor = nil
		*link = &c
		link = &c.Actor
	}
	return head
}

// answerWatcher passes the wrapped handler's answer through and shows its
// final status to seen once, before the status line leaves: what seen
// changes is in place before the client can act on the answer.
type answerWatcher struct {
	http.ResponseWriter
	// seen is called with the answer's headers and a status of 200 or
	// more; informational answers come before the real one.
	seen func(header http.Header, status int)
	done bool
}

func (w *answerWatcher) WriteHeader(status int) {
	w.observe(status)
	w.ResponseWriter.WriteHeader(status)
}

func (w *answerWatcher) Write(p []byte) (int, error) {
	w.observe(http.StatusOK)
	return w.ResponseWriter.Write(p)
}

// Flush sends what was written; server-sent events depend on it.
func (w *answerWatcher) Flush() {
	w.observe(http.StatusOK)
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (w *answerWatcher) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *answerWatcher) observe(status int) {
	if w.done || status < 200 {
		return
	}
	w.done = true
	w.seen(w.Header(), status)
}

// pin remembers s, what an initialize settled, as the session its answer
// opens: when the answer succeeds and names a session. Its watcher calls
// it once the answer served the revision decided, and before the answer's
// status line leaves, so that the pin is in place before the client can
// use the session; a session whose initialize was refused is never
// pinned, and so is never served. When the store cannot take it (full of
// identified callers' sessions and this one anonymous), the session's
// next request is answered 404 and its client initializes again.
func (h *handler) pin(hold *exchange.Hold, s *session) {
	if vs := hold.Header()[headerSessionID]; cmp.Or(hold.Status(), http.StatusOK) <= 299 && len(vs) == 1 && vs[0] != "" {
		h.sessions.put(vs[0], *s)
	}
}

// forgetSession returns the seen of a DELETE of session id: the session is
// forgotten once the wrapped handler has ended it, or answered 404 because
// it no longer knows it.
func (h *handler) forgetSession(id string) func(http.Header, int) {
	return func(_ http.Header, status int) {
		if status <= 299 || status == http.StatusNotFound {
			h.sessions.remove(id)
		}
	}
}
