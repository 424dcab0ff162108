package ratelimit

import "time"

// NewMemoryWithMax is NewMemory with room for maxKeys keys.
func NewMemoryWithMax(rule Rule, maxKeys int) *Memory { return newMemory(rule, maxKeys) }

// Len is the number of keys m remembers.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.buckets)
}

// SetClock replaces m's clock; it must come before the first Take.
func (m *Memory) SetClock(now func() time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = now
}

// SetClock replaces b's clock, which times its cool-down.
func (b *Breaker) SetClock(now func() time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.now = now
}

// SetLocalClock replaces the clock of f's in-process count; it must come
// before the first Take.
func (f *Fallback) SetLocalClock(now func() time.Time) { f.local.SetClock(now) }
