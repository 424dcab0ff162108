//go:build system

package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// TestEraseTenantLoad erases a tenant of 20,000 records (with their
// changes and audit entries) through a handle of its own, as the
// operator's command does beside a running service, while another
// tenant writes one record after another on the service's handle. It
// reports how long the erasure took, its longest batch (a transaction,
// its commit included) and the other tenant's slowest write, and checks
// that every write succeeded and that nothing of the tenant is left. It
// asserts no time: how long writes waited beside an erasure is measured
// by planwerk-bench lifecycle, on a machine doing nothing else.
func TestEraseTenantLoad(t *testing.T) {
	testenv.EachInTurn(t, func(t *testing.T, b testenv.Backend) {
		const records = 20000
		dsn := testenv.MigratedDSN(t, b)
		service, operator := testenv.Open(t, dsn), testenv.Open(t, dsn)
		acme, _ := testenv.TenantIn(t, service, "acme", "admin@acme.test")
		other, _ := testenv.TenantIn(t, service, "other", "admin@other.test")
		for range records / 1000 {
			fill(t, service, acme.ID, 1000)
		}
		ctx := context.Background()
		if _, err := operator.SetTenantState(ctx, "acme", store.TenantDeleting, store.TenantActive); err != nil {
			t.Fatal(err)
		}
		rowsBefore := testenv.TenantRows(t, operator, acme.ID)

		stop := make(chan struct{})
		var wg sync.WaitGroup
		var writes int
		var slowest time.Duration
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				err := service.Tx(ctx, func(q store.Querier) error {
					id, err := service.NewID(ctx, q, other.ID)
					if err == nil {
						_, err = service.InsertRecord(ctx, q, other.ID, projects, id, map[string]any{"name": "during"})
					}
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
				writes++
				slowest = max(slowest, time.Since(start))
			}
		}()

		var batches int
		var longest time.Duration
		operator.ObserveErase(func(took time.Duration) {
			batches++
			longest = max(longest, took)
		})
		start := time.Now()
		err := operator.EraseTenant(ctx, acme.ID, nil)
		took := time.Since(start)
		close(stop)
		wg.Wait()
		if err != nil {
			t.Fatal(err)
		}
		testenv.NoRows(t, "acme", testenv.TenantRows(t, operator, acme.ID))
		var rows int64
		for _, n := range rowsBefore {
			rows += n
		}
		t.Logf("%s: erased %d rows (%d records) in %v, %d batches, the longest %v; the other tenant's %d writes meanwhile, the slowest %v",
			b.Name, rows, rowsBefore["records"], took.Round(time.Millisecond), batches, longest.Round(time.Millisecond),
			writes, slowest.Round(time.Millisecond))
	})
}
