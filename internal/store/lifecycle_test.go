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

// TestReserveIDs: after ReserveIDs the tenant's ids exceed the ids its
// rows hold, and a lower mark later takes none back; the ids it had
// drawn beyond those count where the tenant has a counter of its own
// (SQLite), and move no sequence that every tenant draws from
// (PostgreSQL).
func TestReserveIDs(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := testenv.OpenDB(t, b)
		tn := testenv.BareTenant(t, db, "acme")
		other := testenv.BareTenant(t, db, "other")
		reserve := func(held, drawn int64) {
			t.Helper()
			if err := db.Tx(ctx, func(q store.Querier) error { return db.ReserveIDs(ctx, q, tn.ID, held, drawn) }); err != nil {
				t.Fatal(err)
			}
		}
		reserve(5000, 0)
		first, err := db.NewID(ctx, db, tn.ID)
		if err != nil || first <= 5000 {
			t.Fatalf("id after reserving 5000: %d %v", first, err)
		}
		reserve(10, 0)
		if next, err := db.NewID(ctx, db, tn.ID); err != nil || next <= first {
			t.Errorf("id after reserving 10 below the ids drawn: %d %v, want above %d", next, err, first)
		}
		reserve(first+2, 1<<53)
		next, err := db.NewID(ctx, db, tn.ID)
		others, oerr := db.NewID(ctx, db, other.ID)
		if err != nil || oerr != nil {
			t.Fatal(err, oerr)
		}
		switch b.Name {
		case "sqlite":
			if next <= 1<<53 || others > 1<<20 {
				t.Errorf("SQLite: ids %d (want above the 2^53 drawn) and %d of another tenant (want its own, low)", next, others)
			}
		case "postgres":
			if next <= first+2 || next > 1<<40 || others > 1<<40 {
				t.Errorf("PostgreSQL: ids %d and %d of another tenant, want above %d and the shared sequence not moved to 2^53", next, others, first+2)
			}
		}
		var handed int64
		if err := db.Tx(ctx, func(q store.Querier) error {
			var err error
			handed, err = db.IDsHandedOut(ctx, q, tn.ID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if want := map[string]bool{"sqlite": handed >= next, "postgres": handed == 0}; !want[b.Name] {
			t.Errorf("ids handed out on %s: %d (last id %d)", b.Name, handed, next)
		}
	})
}
