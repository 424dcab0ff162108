// Package ratelimit counts events per key against a token-bucket rule:
// in the process by default, or in Redis so that several instances share
// their counters, falling back to the process while Redis does not answer.
package ratelimit

import (
	"context"
	"hash/maphash"
	"sync"
	"time"

	"golang.org/x/time/rate"
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
	// Refund gives back one event that Take counted for key, so that a
	// caller can count an attempt before it knows its outcome and give it
	// back when the outcome should not count. It never raises key above
	// its full burst; refunding an unknown key does nothing.
	Refund(ctx context.Context, key string) error
	// Fresh reports whether key has no counted events left that have not
	// refilled: its bucket is full, as that of a key never seen.
	Fresh(ctx context.Context, key string) (bool, error)
}

// MaxKeys is how many keys a Memory remembers. Keys are kept as 8-byte
// hashes next to their bucket, so a full Memory holds about 10 MB
// whatever the keys' length; clients that invent keys cannot grow it.
const MaxKeys = 100_000

// Memory is a Limiter that keeps its counters in this process, for at
// most MaxKeys keys.
type Memory struct {
	rule    Rule
	maxKeys int
	seed    maphash.Seed
	now     func() time.Time
	mu      sync.Mutex
	buckets map[uint64]*rate.Limiter
}

// NewMemory returns an in-process Limiter for rule.
func NewMemory(rule Rule) *Memory {
	return newMemory(rule, MaxKeys)
}

func newMemory(rule Rule, maxKeys int) *Memory {
	// A random seed per Memory: clients cannot choose keys that collide.
	return &Memory{rule: rule, maxKeys: maxKeys, seed: maphash.MakeSeed(),
		now: time.Now, buckets: make(map[uint64]*rate.Limiter)}
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
	now := m.now()
	b, known := m.buckets[h]
	if !known {
		m.makeRoom(now)
		b = rate.NewLimiter(rate.Every(m.rule.Every), m.rule.Burst)
	}
	r := b.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, nil
	}
	m.buckets[h] = b
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

// Refund implements Limiter. x/time/rate has no way to give back a token
// that an accepted reservation took, so the token is put back by a
// reservation of -1 tokens. A bucket that the refund makes full is
// forgotten instead: a full bucket answers like an unknown key, and
// x/time/rate would otherwise hold more than Burst tokens until its next
// refill.
func (m *Memory) Refund(_ context.Context, key string) error {
	h := maphash.String(m.seed, key)
	m.mu.Lock()
	defer m.mu.Unlock()
	b, known := m.buckets[h]
	if !known {
		return nil
	}
	now := m.now()
	if b.TokensAt(now)+1 >= float64(m.rule.Burst) {
		delete(m.buckets, h)
		return nil
	}
	b.ReserveN(now, -1)
	return nil
}

// Fresh implements Limiter.
func (m *Memory) Fresh(_ context.Context, key string) (bool, error) {
	h := maphash.String(m.seed, key)
	m.mu.Lock()
	defer m.mu.Unlock()
	b, known := m.buckets[h]
	return !known || b.TokensAt(m.now()) >= float64(m.rule.Burst), nil
}

// makeRoom forgets keys when the Memory is full. Full buckets go first:
// forgetting them changes no answer. If too few are full, arbitrary keys
// go too, so that an eighth of the room is free: a flood of new keys then
// pays one sweep per maxKeys/8 keys instead of one per key.
func (m *Memory) makeRoom(now time.Time) {
	if len(m.buckets) < m.maxKeys {
		return
	}
	for h, b := range m.buckets {
		if b.TokensAt(now) >= float64(m.rule.Burst) {
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
