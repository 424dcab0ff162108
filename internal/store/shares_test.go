package store_test

import (
	"context"
	"runtime"
	"testing"

	"planwerk/internal/gate"
	"planwerk/internal/testenv"
)

// The store's shares lend: a tenant alone takes more than one slot of
// each, a tenant that arrives then gets one at once, and a third tenant
// gets its first slot at the latest when the first gives one back.
func TestSharesLend(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		db := testenv.OpenDB(t, b)
		for _, g := range db.Shares() {
			t.Run(g.Name(), func(t *testing.T) {
				var alone []func()
				for {
					r, ok := tryAcquire(g, 1)
					if !ok {
						break
					}
					alone = append(alone, r)
				}
				if len(alone) < 2 {
					t.Fatalf("a tenant alone got %d slot(s), want it to borrow beyond its share", len(alone))
				}
				newcomer, ok := tryAcquire(g, 2)
				if !ok {
					t.Fatal("a tenant arriving beside a borrower waited")
				}
				waiting := make(chan func(), 1)
				go func() {
					r, err := g.Acquire(gate.WithKey(context.Background(), 3))
					if err != nil {
						t.Error(err)
						r = func() {}
					}
					waiting <- r
				}()
				// Wait until tenant 3 waits, or has its slot already.
				for granted := false; !granted && g.Queued(3) == 0; {
					select {
					case r := <-waiting:
						waiting <- r
						granted = true
					default:
						runtime.Gosched()
					}
				}
				alone[0]()
				second := <-waiting
				if _, held := g.InUse(3); held != 1 {
					t.Fatalf("tenant 3 holds %d after tenant 1 gave a slot back, want 1", held)
				}
				for _, r := range append(alone[1:], newcomer, second) {
					r()
				}
				if all, _ := g.InUse(0); all != 0 {
					t.Fatalf("%d slots in use after every release", all)
				}
			})
		}
	})
}

// tryAcquire takes a slot of g for key only if it is free at once.
func tryAcquire(g *gate.Gate, key int64) (func(), bool) {
	ctx, cancel := context.WithCancel(gate.WithKey(context.Background(), key))
	cancel()
	r, err := g.Acquire(ctx)
	return r, err == nil
}
