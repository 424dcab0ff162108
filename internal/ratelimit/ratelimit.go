// Package ratelimit counts events per key against a token-bucket rule:
// in the process by default, or in Redis so that several instances share
// their counters.
package ratelimit

import (
	"context"
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
}

// Memory is a Limiter that keeps its counters in this process.
type Memory struct {
	rule    Rule
	now     func() time.Time
	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

// NewMemory returns an in-process Limiter for rule.
func NewMemory(rule Rule) *Memory {
	return &Memory{rule: rule, now: time.Now, buckets: make(map[string]*rate.Limiter)}
}

// sweepAt is the number of keys above which full buckets are forgotten.
const sweepAt = 10000

func (m *Memory) bucket(key string, now time.Time) *rate.Limiter {
	b, ok := m.buckets[key]
	if !ok {
		if len(m.buckets) >= sweepAt {
			for k, other := range m.buckets {
				if other.TokensAt(now) >= float64(m.rule.Burst) {
					delete(m.buckets, k)
				}
			}
		}
		b = rate.NewLimiter(rate.Every(m.rule.Every), m.rule.Burst)
		m.buckets[key] = b
	}
	return b
}

// Take implements Limiter.
func (m *Memory) Take(_ context.Context, key string) (time.Duration, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	r := m.bucket(key, now).ReserveN(now, 1)
	if !r.OK() {
		return m.rule.Every, nil
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, nil
	}
	return 0, nil
}

// Reset implements Limiter.
func (m *Memory) Reset(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.buckets, key)
	return nil
}
