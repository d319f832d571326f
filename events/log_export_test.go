package events

// MemoryLogAll returns every event a log made by NewMemoryLog holds,
// oldest first, whatever its tenant, for the conformance kit.
func MemoryLogAll(l Log) []Event {
	m := l.(*memoryLog)
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []Event
	for el := m.all.Front(); el != nil; el = el.Next() {
		out = append(out, el.Value.(*logEntry).e)
	}
	return out
}
