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

// Window is the time in which the rule's bucket fills from empty: Burst
// events per Window is the rule as a quota over a window.
func (r Rule) Window() time.Duration {
	if r.Every <= 0 || r.Burst < 1 {
		return 0
	}
	return time.Duration(r.Burst) * r.Every
}

// State is a key's bucket as a call left it, in the terms of the
// RateLimit header fields: the rule as a quota over a window, what is
// left of the quota, and when the next event refills.
type State struct {
	// Quota is how many events the rule allows at once: its Burst.
	Quota int
	// Window is the rule's Window; zero when nothing refills.
	Window time.Duration
	// Remaining is how many events the key may take now.
	Remaining int
	// Reset is the time until the next event refills; zero when the
	// bucket is full.
	Reset time.Duration
}

// Decision is Take's answer: whether the event was counted, and the state
// of the key's bucket afterwards.
type Decision struct {
	State
	// Wait is zero when Take counted the event; otherwise it counted
	// nothing, and Wait is how long until the event would be allowed.
	Wait time.Duration
}

// slack is how far a time to refill may be off a whole number of events
// and still count as that number: Redis computes in float seconds, which
// puts a few nanoseconds of noise on durations that are exact multiples.
const slack = time.Microsecond

// state is the State of a bucket that refills completely in full.
func (r Rule) state(full time.Duration) State {
	s := State{Quota: max(r.Burst, 0), Window: r.Window(), Remaining: max(r.Burst, 0)}
	if r.Every <= 0 || full <= slack {
		return s
	}
	missing := int64((full - slack + r.Every - 1) / r.Every) // whole or partial events to refill
	missing = min(missing, int64(s.Quota))
	s.Remaining = s.Quota - int(missing)
	s.Reset = min(max(full-time.Duration(missing-1)*r.Every, 0), r.Every)
	if s.Remaining == s.Quota {
		s.Reset = 0
	}
	return s
}

// Limiter counts events per key. Every call that changes a key reports
// the State it left the key's bucket in.
type Limiter interface {
	// Take counts one event for key if it is allowed (Wait zero);
	// otherwise it counts nothing and says how long to wait.
	Take(ctx context.Context, key string) (Decision, error)
	// Reset forgets key's events: its bucket is full.
	Reset(ctx context.Context, key string) (State, error)
	// Refund gives back one event that Take counted for key, so that a
	// caller can count an attempt before it knows its outcome and give it
	// back when the outcome should not count. It never raises key above
	// its full burst; refunding an unknown key does nothing.
	Refund(ctx context.Context, key string) (State, error)
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
func (m *Memory) Take(_ context.Context, key string) (Decision, error) {
	if m.rule.Every <= 0 {
		return Decision{State: m.rule.state(0)}, nil // no refill interval: nothing to limit
	}
	if m.rule.Burst < 1 {
		return Decision{State: State{Reset: m.rule.Every}, Wait: m.rule.Every}, nil
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
		s := m.stateOf(b, now)
		s.Remaining, s.Reset = 0, d
		return Decision{State: s, Wait: d}, nil
	}
	m.buckets[h] = b
	return Decision{State: m.stateOf(b, now)}, nil
}

// stateOf is the State of bucket b at now.
func (m *Memory) stateOf(b *rate.Limiter, now time.Time) State {
	missing := float64(m.rule.Burst) - b.TokensAt(now)
	return m.rule.state(time.Duration(missing * float64(m.rule.Every)))
}

// Reset implements Limiter.
func (m *Memory) Reset(_ context.Context, key string) (State, error) {
	h := maphash.String(m.seed, key)
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.buckets, h)
	return m.rule.state(0), nil
}

// Refund implements Limiter. x/time/rate has no way to give back a token
// that an accepted reservation took, so the token is put back by a
// reservation of -1 tokens. A bucket that the refund makes full is
// forgotten instead: a full bucket answers like an unknown key, and
// x/time/rate would otherwise hold more than Burst tokens until its next
// refill.
func (m *Memory) Refund(_ context.Context, key string) (State, error) {
	h := maphash.String(m.seed, key)
	m.mu.Lock()
	defer m.mu.Unlock()
	b, known := m.buckets[h]
	if !known {
		return m.rule.state(0), nil
	}
	now := m.now()
	if b.TokensAt(now)+1 >= float64(m.rule.Burst) {
		delete(m.buckets, h)
		return m.rule.state(0), nil
	}
	b.ReserveN(now, -1)
	return m.stateOf(b, now), nil
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
