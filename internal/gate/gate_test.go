package gate_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"

	"planwerk/internal/gate"
)

func acquire(t *testing.T, g *gate.Gate, key int64) func() {
	t.Helper()
	release, err := g.Acquire(gate.WithKey(context.Background(), key))
	if err != nil {
		t.Fatalf("acquire for %d: %v", key, err)
	}
	return release
}

// A key at its share waits; another key passes it, even while the first
// key's requests queue.
func TestShare(t *testing.T) {
	t.Parallel()
	g := gate.New("test", gate.Options{Capacity: 4, PerKey: 2, MaxQueue: 8})
	a1, a2 := acquire(t, g, 1), acquire(t, g, 1)

	granted := make(chan func(), 1)
	go func() { granted <- acquire(t, g, 1) }() // a third for key 1 must wait
	waitQueued(t, g, 1)

	b := acquire(t, g, 2) // key 2 is under its share: not behind key 1's waiter
	if all, held := g.InUse(2); all != 3 || held != 1 {
		t.Fatalf("in use %d, key 2 holds %d; want 3 and 1", all, held)
	}
	select {
	case <-granted:
		t.Fatal("key 1 got a third slot while holding its share")
	default:
	}
	a1()
	a3 := <-granted // the freed slot goes to the waiter
	if _, held := g.InUse(1); held != 2 {
		t.Fatalf("key 1 holds %d, want 2", held)
	}
	a2()
	a3()
	b()
	if all, _ := g.InUse(1); all != 0 {
		t.Fatalf("%d slots still in use after every release", all)
	}
}

// waitQueued waits until a goroutine of key is queued in the gate.
func waitQueued(t *testing.T, g *gate.Gate, key int64) {
	t.Helper()
	for {
		if g.Queued(key) > 0 {
			return
		}
		runtime.Gosched()
	}
}

// Capacity bounds all keys together; a cancelled wait reports whose load
// it was and leaves nothing held.
func TestCapacityAndCancel(t *testing.T) {
	t.Parallel()
	g := gate.New("test", gate.Options{Capacity: 2, PerKey: 2, MaxQueue: 1})
	r1, r2 := acquire(t, g, 1), acquire(t, g, 2)
	ctx, cancel := context.WithCancel(gate.WithKey(context.Background(), 3))
	cancel()
	_, err := g.Acquire(ctx)
	var busy *gate.BusyError
	if !errors.As(err, &busy) || busy.Queued || !errors.Is(err, context.Canceled) {
		t.Fatalf("acquire at capacity with a cancelled context: %v", err)
	}
	if g.Queued(3) != 0 {
		t.Fatal("a cancelled waiter stayed queued")
	}
	r1()
	r3 := acquire(t, g, 3)
	r2()
	r3()
	if all, _ := g.InUse(0); all != 0 {
		t.Fatalf("%d slots in use after every release", all)
	}
}

// A key with MaxQueue waiters is refused at once, without waiting.
func TestQueueBound(t *testing.T) {
	t.Parallel()
	g := gate.New("test", gate.Options{Capacity: 10, PerKey: 1, MaxQueue: 1})
	r := acquire(t, g, 1)
	done := make(chan struct{})
	go func() { defer close(done); acquire(t, g, 1)() }()
	waitQueued(t, g, 1)
	_, err := g.Acquire(gate.WithKey(context.Background(), 1))
	var busy *gate.BusyError
	if !errors.As(err, &busy) || !busy.Queued {
		t.Fatalf("acquire beyond the queue bound: %v, want a BusyError of the key's queue", err)
	}
	r()
	<-done
}

// Under concurrent use the bounds hold at every moment and every slot
// comes back; lending, a key holds at most all slots but the reserve.
func TestConcurrent(t *testing.T) {
	t.Parallel()
	for _, lend := range []bool{false, true} {
		g := gate.New("test", gate.Options{Capacity: 4, PerKey: 2, MaxQueue: 1000, Lend: lend})
		perKey := 2
		if lend {
			perKey = 3
		}
		var mu sync.Mutex
		held := map[int64]int{}
		total := 0
		var wg sync.WaitGroup
		for i := 0; i < 200; i++ {
			wg.Add(1)
			go func(key int64) {
				defer wg.Done()
				release, err := g.Acquire(gate.WithKey(context.Background(), key))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				held[key]++
				total++
				if held[key] > perKey || total > 4 {
					t.Errorf("lend %v: key %d holds %d, %d in all", lend, key, held[key], total)
				}
				mu.Unlock()
				runtime.Gosched()
				mu.Lock()
				held[key]--
				total--
				mu.Unlock()
				release()
			}(int64(i % 4))
		}
		wg.Wait()
		if all, _ := g.InUse(0); all != 0 {
			t.Fatalf("lend %v: %d slots in use at the end", lend, all)
		}
	}
}

// try takes a slot for key only if it is free to take at once: with a
// context already ended, Acquire gives up rather than wait.
func try(g *gate.Gate, key int64) (func(), bool) {
	ctx, cancel := context.WithCancel(gate.WithKey(context.Background(), key))
	cancel()
	release, err := g.Acquire(ctx)
	return release, err == nil
}

// wait starts an Acquire for key that waits; the channel gets its release
// once it is granted.
func wait(t *testing.T, g *gate.Gate, key int64) chan func() {
	t.Helper()
	before := g.Queued(key)
	granted := make(chan func(), 1)
	go func() { granted <- acquire(t, g, key) }()
	for g.Queued(key) == before {
		runtime.Gosched()
	}
	return granted
}

func pending(c chan func()) bool {
	select {
	case r := <-c:
		c <- r
		return false
	default:
		return true
	}
}

// With Lend, a key alone takes the whole pool but the reserve. A second
// key gets the reserve at once, and each slot the first gives back
// while the second waits goes to the second, up to one beyond its share:
// the first gets none while it is above its share and another key waits.
func TestLend(t *testing.T) {
	t.Parallel()
	g := gate.New("test", gate.Options{Capacity: 6, PerKey: 2, MaxQueue: 8, Lend: true})
	var a []func()
	for i := 0; i < 5; i++ {
		r, ok := try(g, 1)
		if !ok {
			t.Fatalf("a key alone got %d slots at once, want 5 of 6", i)
		}
		a = append(a, r)
	}
	if _, ok := try(g, 1); ok {
		t.Fatal("a key alone took the reserve")
	}
	a6 := wait(t, g, 1) // waits: the last slot is the reserve

	b1, ok := try(g, 2)
	if !ok {
		t.Fatal("a newcomer waited while another key borrowed the pool")
	}
	b2 := wait(t, g, 2)
	a[0]() // the slot given back goes to the newcomer, not to the earlier waiter above its share
	b2r := <-b2
	if !pending(a6) {
		t.Fatal("a key above its share got a slot while another key waited")
	}
	if all, held := g.InUse(2); all != 6 || held != 2 {
		t.Fatalf("in use %d, key 2 holds %d; want 6 and 2", all, held)
	}
	b3 := wait(t, g, 2)
	a[1]() // 5 in use: the free slot is the reserve, which no key borrows
	if !pending(b3) || !pending(a6) {
		t.Fatal("a key borrowed the reserve")
	}
	// Both keys are back to their share or above it; the next slot goes
	// to the one that holds the fewest, the first to arrive among equals
	// (key 1's waiter), both holding 2, neither above its share.
	a[2]()
	a6r := <-a6
	if !pending(b3) {
		t.Fatal("two slots for one release")
	}
	a[3]() // key 1 holds 3 now, key 2 holds 2: key 2 gets it
	b3r := <-b3
	a[4]()
	// Nobody waits: key 2 (3 slots, above its share) borrows again, up to
	// the reserve.
	b4, ok := try(g, 2)
	if !ok {
		t.Fatal("a key alone could not borrow a free slot")
	}
	if _, ok := try(g, 2); ok {
		t.Fatal("a key alone took the reserve")
	}
	if all, held := g.InUse(2); all != 5 || held != 4 {
		t.Fatalf("in use %d, key 2 holds %d; want 5 and 4", all, held)
	}
	for _, r := range []func(){a6r, b1, b2r, b3r, b4} {
		r()
	}
	if all, _ := g.InUse(0); all != 0 {
		t.Fatalf("%d slots in use after every release", all)
	}
}

// Without Lend a key alone keeps to its share.
func TestNoLend(t *testing.T) {
	t.Parallel()
	g := gate.New("test", gate.Options{Capacity: 6, PerKey: 2})
	r1, _ := try(g, 1)
	r2, _ := try(g, 1)
	if _, ok := try(g, 1); ok {
		t.Fatal("a key beyond its share without Lend")
	}
	r1()
	r2()
}

// LendUpTo bounds what a key alone borrows below the reserve.
func TestLendUpTo(t *testing.T) {
	t.Parallel()
	g := gate.New("test", gate.Options{Capacity: 6, PerKey: 1, Lend: true, LendUpTo: 2})
	r1, ok1 := try(g, 1)
	r2, ok2 := try(g, 1)
	if !ok1 || !ok2 {
		t.Fatal("a key alone could not borrow up to LendUpTo")
	}
	if _, ok := try(g, 1); ok {
		t.Fatal("a key alone borrowed beyond LendUpTo")
	}
	r3, ok := try(g, 2)
	if !ok {
		t.Fatal("a newcomer waited")
	}
	r1()
	r2()
	r3()
}
