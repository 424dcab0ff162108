// Package gate shares a bounded number of slots fairly among keys
// (tenants): no key holds more than its share, so one tenant's burst of
// heavy work queues behind itself instead of in front of everyone else.
package gate

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"time"
)

// Gate hands out at most Capacity slots at once, at most PerKey of them
// to one key. Waiters are served in arrival order, skipping those whose
// key already holds its share.
type Gate struct {
	name     string
	capacity int
	perKey   int
	maxQueue int // waiters per key; more are refused at once

	mu      sync.Mutex
	inUse   int
	held    map[int64]int
	queued  map[int64]int
	waiters list.List // of *waiter
}

type waiter struct {
	key     int64
	granted chan struct{}
}

// Options size a Gate.
type Options struct {
	Capacity int // slots in all; 0: PerKey × 1024
	PerKey   int // slots one key may hold (at least 1)
	// MaxQueue is how many requests of one key may wait; 0: 4 × PerKey.
	MaxQueue int
}

// New returns a gate named name (for errors and metrics).
func New(name string, o Options) *Gate {
	if o.PerKey < 1 {
		o.PerKey = 1
	}
	if o.Capacity < 1 {
		o.Capacity = o.PerKey * 1024
	}
	if o.PerKey > o.Capacity {
		o.PerKey = o.Capacity
	}
	if o.MaxQueue < 1 {
		o.MaxQueue = 4 * o.PerKey
	}
	return &Gate{name: name, capacity: o.Capacity, perKey: o.PerKey, maxQueue: o.MaxQueue,
		held: make(map[int64]int), queued: make(map[int64]int)}
}

// BusyError is a request that got no slot: its key already had as many
// requests waiting as it may (Queued), or its context ended while it
// waited.
type BusyError struct {
	Gate string
	// Queued: refused at once, the key's own queue being full: the
	// caller's own load, not the service's.
	Queued bool
	Err    error // the context's error, when it ended the wait
}

func (e *BusyError) Error() string {
	if e.Queued {
		return fmt.Sprintf("%s: this account has as many requests waiting as it may", e.Gate)
	}
	return fmt.Sprintf("%s: no free slot in time: %v", e.Gate, e.Err)
}

func (e *BusyError) Unwrap() error { return e.Err }

// RetryAfter is the wait a client is told before trying again.
func (e *BusyError) RetryAfter() time.Duration { return time.Second }

// Acquire takes a slot for the key that ctx carries (see WithKey), waiting
// until one is free or ctx ends. The returned function gives it back; it
// must be called exactly once.
func (g *Gate) Acquire(ctx context.Context) (release func(), err error) {
	if g == nil {
		return func() {}, nil
	}
	key := KeyFrom(ctx)
	g.mu.Lock()
	// Every release grants the waiters it can, so a free slot here means
	// no earlier waiter could take it: taking it skips nobody.
	if g.inUse < g.capacity && g.held[key] < g.perKey {
		g.take(key)
		g.mu.Unlock()
		return g.releaser(key), nil
	}
	if g.queued[key] >= g.maxQueue {
		g.mu.Unlock()
		return nil, &BusyError{Gate: g.name, Queued: true}
	}
	w := &waiter{key: key, granted: make(chan struct{})}
	el := g.waiters.PushBack(w)
	g.queued[key]++
	g.mu.Unlock()

	select {
	case <-w.granted:
		return g.releaser(key), nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	select {
	case <-w.granted: // granted while giving up: hand the slot on
		g.mu.Unlock()
		g.release(key)
		g.mu.Lock()
	default:
		g.waiters.Remove(el)
		g.dequeue(key)
	}
	g.mu.Unlock()
	return nil, &BusyError{Gate: g.name, Err: ctx.Err()}
}

func (g *Gate) take(key int64) {
	g.inUse++
	g.held[key]++
}

func (g *Gate) dequeue(key int64) {
	if g.queued[key]--; g.queued[key] == 0 {
		delete(g.queued, key)
	}
}

func (g *Gate) releaser(key int64) func() {
	var once sync.Once
	return func() { once.Do(func() { g.release(key) }) }
}

// release gives a slot back and grants free slots to the first waiters
// whose keys are under their share.
func (g *Gate) release(key int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inUse--
	if g.held[key]--; g.held[key] == 0 {
		delete(g.held, key)
	}
	for el := g.waiters.Front(); el != nil && g.inUse < g.capacity; {
		next := el.Next()
		w := el.Value.(*waiter)
		if g.held[w.key] < g.perKey {
			g.waiters.Remove(el)
			g.dequeue(w.key)
			g.take(w.key)
			close(w.granted)
		}
		el = next
	}
}

// InUse reports the slots held in all and by key, for tests and metrics.
func (g *Gate) InUse(key int64) (all, byKey int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inUse, g.held[key]
}

type keyCtx struct{}

// WithKey returns a context whose gate waits count against key (a
// tenant id). Work without a key shares key 0.
func WithKey(ctx context.Context, key int64) context.Context {
	return context.WithValue(ctx, keyCtx{}, key)
}

// KeyFrom returns the key of ctx, 0 when it has none.
func KeyFrom(ctx context.Context) int64 {
	k, _ := ctx.Value(keyCtx{}).(int64)
	return k
}

// Name is the gate's name.
func (g *Gate) Name() string { return g.name }

// Stats reports the slots held and the requests waiting, of all keys.
func (g *Gate) Stats() (inUse, waiting int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inUse, g.waiters.Len()
}

// Queued reports how many requests of key wait, for tests and metrics.
func (g *Gate) Queued(key int64) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.queued[key]
}
