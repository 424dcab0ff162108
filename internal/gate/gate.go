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

// Gate hands out at most Capacity slots at once, PerKey of them to one
// key. With Lend, a key may borrow beyond its share, every slot but one:
// any number while no other key waits, one more than its share while
// another does. A free slot goes to the waiting key that may take it and
// holds the fewest, the first to arrive among equals.
type Gate struct {
	name     string
	capacity int
	perKey   int
	maxQueue int // waiters per key; more are refused at once
	// borrowTo is how many slots may be in use after a key takes one
	// beyond its share: the capacity less the reserve, which keeps a
	// slot for a key that arrives while another borrows. 0: no lending.
	borrowTo int

	mu      sync.Mutex
	inUse   int
	held    map[int64]int
	queues  map[int64]*list.List // of *waiter, per key that waits
	waiting int
	seq     uint64
}

type waiter struct {
	key     int64
	seq     uint64 // arrival order
	granted chan struct{}
}

// Options size a Gate.
type Options struct {
	Capacity int // slots in all; 0: PerKey × 1024
	PerKey   int // slots one key may hold while another waits (at least 1)
	// MaxQueue is how many requests of one key may wait; 0: 4 × PerKey.
	MaxQueue int
	// Lend lets a key that no other key waits beside take slots beyond
	// PerKey, all but one: the last is kept for a key that arrives, so
	// that it never waits behind the borrowed slots. The borrowed slots
	// come back as they are released: while another key waits, none goes
	// to a key over its share.
	Lend bool
	// LendUpTo, when positive, is the most slots in use after a key
	// borrows one, below the reserve: for work bound by the processor,
	// the cores, beyond which borrowing adds no speed, only slowness to
	// whoever comes next.
	LendUpTo int
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
	g := &Gate{name: name, capacity: o.Capacity, perKey: o.PerKey, maxQueue: o.MaxQueue,
		held: make(map[int64]int), queues: make(map[int64]*list.List)}
	if o.Lend && o.Capacity-1 > o.PerKey {
		g.borrowTo = o.Capacity - 1
		if o.LendUpTo > 0 {
			g.borrowTo = min(g.borrowTo, o.LendUpTo)
		}
	}
	return g
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
	// Every change grants the waiters it can, so a slot this key may
	// take now is one no waiter may: taking it skips nobody. A key with
	// waiters of its own queues behind them.
	if g.queues[key] == nil && g.may(key) {
		g.take(key)
		g.mu.Unlock()
		return g.releaser(key), nil
	}
	q := g.queues[key]
	if q == nil {
		q = list.New()
		g.queues[key] = q
	}
	if q.Len() >= g.maxQueue {
		g.dropIfEmpty(key)
		g.mu.Unlock()
		return nil, &BusyError{Gate: g.name, Queued: true}
	}
	g.seq++
	w := &waiter{key: key, seq: g.seq, granted: make(chan struct{})}
	el := q.PushBack(w)
	g.waiting++
	g.mu.Unlock()

	select {
	case <-w.granted:
		return g.releaser(key), nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	select {
	case <-w.granted: // granted while giving up: hand the slot on
		g.inUse--
		g.drop(key)
	default:
		q.Remove(el)
		g.waiting--
		g.dropIfEmpty(key)
	}
	// Either way the gate changed: a slot came back, or a key stopped
	// waiting, which may let another borrow.
	g.grant()
	g.mu.Unlock()
	return nil, &BusyError{Gate: g.name, Err: ctx.Err()}
}

// may says whether key may take a free slot now: under its share; or,
// lending, beyond it while the reserve stays free, and either no other
// key waits or key holds no more than its share (a key above it gets
// nothing while another waits).
func (g *Gate) may(key int64) bool {
	if g.inUse >= g.capacity {
		return false
	}
	held := g.held[key]
	if held < g.perKey {
		return true
	}
	if g.inUse >= g.borrowTo {
		return false
	}
	_, waits := g.queues[key]
	return held <= g.perKey || len(g.queues) == 0 || len(g.queues) == 1 && waits
}

func (g *Gate) take(key int64) {
	g.inUse++
	g.held[key]++
}

func (g *Gate) drop(key int64) {
	if g.held[key]--; g.held[key] == 0 {
		delete(g.held, key)
	}
}

func (g *Gate) dropIfEmpty(key int64) {
	if q := g.queues[key]; q != nil && q.Len() == 0 {
		delete(g.queues, key)
	}
}

func (g *Gate) releaser(key int64) func() {
	var once sync.Once
	return func() { once.Do(func() { g.release(key) }) }
}

// release gives a slot back and grants what it can.
func (g *Gate) release(key int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inUse--
	g.drop(key)
	g.grant()
}

// grant hands free slots to waiters: each to the first waiter of the key
// that may take it and holds the fewest (the earliest to arrive among
// equals). Called with g.mu held.
func (g *Gate) grant() {
	for g.waiting > 0 && g.inUse < g.capacity {
		var best *list.List
		var bestKey int64
		for key, q := range g.queues {
			if !g.may(key) {
				continue
			}
			if best == nil || g.held[key] < g.held[bestKey] ||
				g.held[key] == g.held[bestKey] && q.Front().Value.(*waiter).seq < best.Front().Value.(*waiter).seq {
				best, bestKey = q, key
			}
		}
		if best == nil {
			return
		}
		w := best.Remove(best.Front()).(*waiter)
		g.waiting--
		g.dropIfEmpty(bestKey)
		g.take(bestKey)
		close(w.granted)
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
	return g.inUse, g.waiting
}

// Queued reports how many requests of key wait, for tests and metrics.
func (g *Gate) Queued(key int64) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if q := g.queues[key]; q != nil {
		return q.Len()
	}
	return 0
}
