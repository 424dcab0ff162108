// Package ratelimit counts events per key against a token-bucket rule:
// in the process by default, or in Redis so that several instances share
// their counters, falling back to the process while Redis does not answer.
package ratelimit

import (
	"context"
	"hash/maphash"
	"sync"
	"time"
)

// Rule allows Burst events at once, refilled at one event per Every.
type Rule struct {
	Burst int
	Every time.Duration
}

// Limiter counts events per key.
type Limiter interface {
	// Take counts one event for key if it is allowed and returns zero;
	// otherwise it counts nothing and returns how long to wait.
	Take(ctx context.Context, key string) (time.Duration, error)
	// Reset forgets key's events.
	Reset(ctx context.Context, key string) error
}

// MaxKeys is how many keys a Memory remembers. Keys are kept as 8-byte
// hashes next to a 16-byte bucket, so a full Memory holds about 4 MB
// whatever the keys' length; clients that invent keys cannot grow it.
const MaxKeys = 100_000

// bucket is one key's token bucket: tokens left at the moment at.
type bucket struct {
	tokens float64
	at     time.Duration // since Memory.start, on the monotonic clock
}

// Memory is a Limiter that keeps its counters in this process, for at
// most MaxKeys keys.
type Memory struct {
	rule    Rule
	maxKeys int
	seed    maphash.Seed
	start   time.Time
	now     func() time.Time
	mu      sync.Mutex
	buckets map[uint64]bucket
}

// NewMemory returns an in-process Limiter for rule.
func NewMemory(rule Rule) *Memory {
	return newMemory(rule, MaxKeys)
}

func newMemory(rule Rule, maxKeys int) *Memory {
	// A random seed per Memory: clients cannot choose keys that collide.
	return &Memory{rule: rule, maxKeys: maxKeys, seed: maphash.MakeSeed(), start: time.Now(),
		now: time.Now, buckets: make(map[uint64]bucket)}
}

// Take implements Limiter.
func (m *Memory) Take(_ context.Context, key string) (time.Duration, error) {
	if m.rule.Every <= 0 {
		return 0, nil // no refill interval: nothing to limit
	}
	if m.rule.Burst < 1 {
		return m.rule.Every, nil
	}
	h := maphash.String(m.seed, key)
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now().Sub(m.start)
	b, known := m.buckets[h]
	tokens := float64(m.rule.Burst)
	if known {
		tokens = m.tokens(b, now)
	}
	if tokens < 1 {
		return max(time.Duration((1-tokens)*float64(m.rule.Every)), time.Nanosecond), nil
	}
	if !known {
		m.makeRoom(now)
	}
	m.buckets[h] = bucket{tokens: tokens - 1, at: now}
	return 0, nil
}

// Reset implements Limiter.
func (m *Memory) Reset(_ context.Context, key string) error {
	h := maphash.String(m.seed, key)
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.buckets, h)
	return nil
}

// tokens is what b holds at now, refilled since it was last counted.
func (m *Memory) tokens(b bucket, now time.Duration) float64 {
	t := b.tokens + float64(now-b.at)/float64(m.rule.Every)
	return min(t, float64(m.rule.Burst))
}

// makeRoom forgets keys when the Memory is full. Full buckets go first:
// forgetting them changes no answer. If too few are full, arbitrary keys
// go too, so that an eighth of the room is free: a flood of new keys then
// pays one sweep per maxKeys/8 keys instead of one per key.
func (m *Memory) makeRoom(now time.Duration) {
	if len(m.buckets) < m.maxKeys {
		return
	}
	for h, b := range m.buckets {
		if m.tokens(b, now) >= float64(m.rule.Burst) {
			delete(m.buckets, h)
		}
	}
	excess := len(m.buckets) - (m.maxKeys - max(m.maxKeys/8, 1))
	for h := range m.buckets { // map order is arbitrary
		if excess <= 0 {
			break
		}
		delete(m.buckets, h)
		excess--
	}
}
