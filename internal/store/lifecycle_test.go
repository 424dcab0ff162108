package store_test

import (
	"context"
	"errors"
	"testing"

	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// TestLockTenant: a slug's lock held by one handle on the database is
// refused to another (ErrConflict), a second slug's is not, and once
// released it is free.
func TestLockTenant(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		dsn := testenv.MigratedDSN(t, b)
		one, two := testenv.Open(t, dsn), testenv.Open(t, dsn)
		release, err := one.LockTenant(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := two.LockTenant(ctx, "acme"); !errors.Is(err, store.ErrConflict) {
			t.Errorf("a second lock of acme: %v, want ErrConflict", err)
		}
		other, err := two.LockTenant(ctx, "other")
		if err != nil {
			t.Fatalf("the lock of another slug: %v", err)
		}
		other()
		release()
		again, err := two.LockTenant(ctx, "acme")
		if err != nil {
			t.Fatalf("the lock of acme once released: %v", err)
		}
		again()
	})
}

// TestReserveIDs: after ReserveIDs the tenant's ids exceed the mark, and
// a lower mark later takes none back.
func TestReserveIDs(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := testenv.OpenDB(t, b)
		tn := testenv.BareTenant(t, db, "acme")
		reserve := func(through int64) {
			t.Helper()
			if err := db.Tx(ctx, func(q store.Querier) error { return db.ReserveIDs(ctx, q, tn.ID, through) }); err != nil {
				t.Fatal(err)
			}
		}
		reserve(5000)
		first, err := db.NewID(ctx, db, tn.ID)
		if err != nil || first <= 5000 {
			t.Fatalf("id after reserving 5000: %d %v", first, err)
		}
		reserve(10)
		if next, err := db.NewID(ctx, db, tn.ID); err != nil || next <= first {
			t.Errorf("id after reserving 10 below the ids drawn: %d %v, want above %d", next, err, first)
		}
		var handed int64
		if err := db.Tx(ctx, func(q store.Querier) error {
			var err error
			handed, err = db.IDsHandedOut(ctx, q, tn.ID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if want := map[string]bool{"sqlite": handed > first, "postgres": handed == 0}; !want[b.Name] {
			t.Errorf("ids handed out on %s: %d (first id %d)", b.Name, handed, first)
		}
	})
}
