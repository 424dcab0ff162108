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
// comes back.
func TestConcurrent(t *testing.T) {
	t.Parallel()
	g := gate.New("test", gate.Options{Capacity: 3, PerKey: 2, MaxQueue: 1000})
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
			if held[key] > 2 || total > 3 {
				t.Errorf("key %d holds %d, %d in all", key, held[key], total)
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
		t.Fatalf("%d slots in use at the end", all)
	}
}
