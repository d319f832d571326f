package events

import (
	"container/list"
	"context"
	"sort"
	"strings"
	"sync"
)

// Log is a [Sink] whose events can be read back, tenant by tenant: the
// store behind GET /runs/{runId}/events/poll and GET /host/events (see
// [LogHandler]). [NewMemoryLog] is one in memory; examples/pgsink is one
// in PostgreSQL.
//
// Reads are tenant-scoped, and a tenant is never the empty string: a read
// for tenant "" returns nothing, which is how an unauthenticated
// exchange's host event (Event.Tenant "") reaches no reader. A run belongs
// to its runId's tenant, the first segment of [anon:]tenant/id.
type Log interface {
	Sink
	// RunEvents returns, in sequence order, at most limit events of the run
	// runID whose sequence is above after (-1 for all), and the highest
	// sequence the run's log holds. A run the log holds no event of, or a
	// run of another tenant than tenant, is reported the same way: no
	// events and a last sequence of -1, so a caller cannot tell another
	// tenant's run from one that does not exist.
	RunEvents(ctx context.Context, tenant, runID string, after int64, limit int) (events []Event, last int64, err error)
	// HostEvents returns, oldest first, at most limit host events of tenant
	// recorded after the host event whose ID is afterID. When afterID is
	// empty, or names no host event the log holds for tenant (it was
	// evicted, or never was tenant's), it returns the tenant's newest limit
	// host events instead.
	HostEvents(ctx context.Context, tenant, afterID string, limit int) ([]Event, error)
}

// The bounds of [NewMemoryLog] when it is given none.
const (
	defaultLogCapacity    = 1 << 16
	defaultLogTenantShare = 1 << 12
)

// NewMemoryLog returns a [Log] kept in memory, bounded: it holds at most
// capacity events in all and at most tenantShare of any one tenant (a
// capacity below 1 is 65,536; a share below 1 is 4,096, and a share is
// never more than the capacity). A full log never refuses an event: it
// evicts the oldest event of the tenant over its share, or else the
// oldest event of all, so that one noisy tenant cannot evict another's
// log and the newest record of a decision is always kept. An eviction is
// what a reader sees as a gap; a run whose every event was evicted is
// forgotten, and numbers its next event from 0 again.
//
// It numbers run events itself (the store assigns the sequence): 0 for a
// run's first event, then 1, 2, …, whatever sequence the event arrives
// with. Host events are kept for their tenant (Event.Tenant; "" for an
// unauthenticated exchange, which no reader is given). It is safe for
// concurrent use.
func NewMemoryLog(capacity, tenantShare int) Log {
	if capacity < 1 {
		capacity = defaultLogCapacity
	}
	if tenantShare < 1 {
		tenantShare = defaultLogTenantShare
	}
	return &memoryLog{
		capacity: capacity,
		share:    min(tenantShare, capacity),
		all:      list.New(),
		tenants:  make(map[string]*tenantLog),
		runs:     make(map[string]*runLog),
		hostIDs:  make(map[string]*logEntry),
	}
}

// memoryLog is NewMemoryLog's Log. Every entry is in all (oldest first),
// in its tenant's queue, and in its run's log or its tenant's host list.
type memoryLog struct {
	mu       sync.RWMutex
	capacity int
	share    int
	n        uint64 // the number of the next entry, for ordering host events
	all      *list.List
	tenants  map[string]*tenantLog
	runs     map[string]*runLog
	hostIDs  map[string]*logEntry
}

type logEntry struct {
	e      Event
	tenant string
	n      uint64
	elem   *list.Element
}

type tenantLog struct {
	queue []*logEntry // every entry of the tenant, oldest first
	host  []*logEntry // its host events, oldest first
}

type runLog struct {
	tenant string
	events []*logEntry // in sequence order
	next   int64
}

// Emit validates e and records it, evicting as NewMemoryLog says when the
// log is full.
func (m *memoryLog) Emit(ctx context.Context, e Event) error {
	err := ctx.Err()
	if err == nil {
		err = e.check()
	}
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, dup := m.hostIDs[e.ID]; dup && e.RunID == "" {
		// An eventId names one event: a second host event under the same
		// id would make a cursor ambiguous, so it is recorded once.
		return nil
	}
	tenant := e.Tenant
	if e.RunID != "" {
		tenant = runIDTenant(e.RunID)
		e.Tenant = tenant
	}
	t := m.tenants[tenant]
	if t == nil {
		t = &tenantLog{}
		m.tenants[tenant] = t
	}
	if len(t.queue) >= m.share {
		m.evict(t.queue[0])
	}
	if m.all.Len() >= m.capacity {
		m.evict(m.all.Front().Value.(*logEntry))
	}
	// The tenant may have been forgotten by the evictions above.
	if m.tenants[tenant] == nil {
		m.tenants[tenant] = t
	}
	entry := &logEntry{tenant: tenant, n: m.n}
	m.n++
	if e.RunID != "" {
		r := m.runs[e.RunID]
		if r == nil {
			r = &runLog{tenant: tenant}
			m.runs[e.RunID] = r
		}
		e.Sequence, e.HasSequence = r.next, true
		r.next++
		r.events = append(r.events, entry)
	} else {
		t.host = append(t.host, entry)
		m.hostIDs[e.ID] = entry
	}
	entry.e = e
	entry.elem = m.all.PushBack(entry)
	t.queue = append(t.queue, entry)
	return nil
}

// evict removes x, which is the oldest entry of its tenant, and so the
// oldest of its run or of its tenant's host events.
func (m *memoryLog) evict(x *logEntry) {
	m.all.Remove(x.elem)
	t := m.tenants[x.tenant]
	t.queue = t.queue[1:]
	if x.e.RunID != "" {
		r := m.runs[x.e.RunID]
		r.events = r.events[1:]
		if len(r.events) == 0 {
			delete(m.runs, x.e.RunID)
		}
	} else {
		t.host = t.host[1:]
		delete(m.hostIDs, x.e.ID)
	}
	if len(t.queue) == 0 {
		delete(m.tenants, x.tenant)
	}
}

// RunEvents implements [Log].
func (m *memoryLog) RunEvents(ctx context.Context, tenant, runID string, after int64, limit int) ([]Event, int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, -1, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	r := m.runs[runID]
	if tenant == "" || r == nil || r.tenant != tenant {
		return nil, -1, nil
	}
	last := r.events[len(r.events)-1].e.Sequence
	i := sort.Search(len(r.events), func(i int) bool { return r.events[i].e.Sequence > after })
	return copyEvents(r.events[i:], limit), last, nil
}

// HostEvents implements [Log].
func (m *memoryLog) HostEvents(ctx context.Context, tenant, afterID string, limit int) ([]Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	t := m.tenants[tenant]
	if tenant == "" || t == nil || limit < 1 {
		return nil, nil
	}
	if x := m.hostIDs[afterID]; afterID != "" && x != nil && x.tenant == tenant {
		i := sort.Search(len(t.host), func(i int) bool { return t.host[i].n > x.n })
		return copyEvents(t.host[i:], limit), nil
	}
	return copyEvents(t.host[max(len(t.host)-limit, 0):], limit), nil
}

// copyEvents copies out the events of the first limit entries.
func copyEvents(entries []*logEntry, limit int) []Event {
	if limit < 1 || len(entries) == 0 {
		return nil
	}
	entries = entries[:min(limit, len(entries))]
	out := make([]Event, len(entries))
	for i, x := range entries {
		out[i] = x.e
	}
	return out
}

// runIDTenant is the tenant of a tenant-bound run id, [anon:]tenant/id:
// its first segment without the anon: mark.
func runIDTenant(runID string) string {
	tenant, _, _ := strings.Cut(strings.TrimPrefix(runID, "anon:"), "/")
	return tenant
}
