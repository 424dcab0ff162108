package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// TestPurgeChangesAcrossTenants: changes older than the cutoff go in
// every tenant (more tenants than one batch takes, and a tenant with more
// changes than one batch reads), each tenant's purged position is what
// the feed then reports, and a cutoff before them purges nothing.
func TestPurgeChangesAcrossTenants(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := testenv.OpenDB(t, b)
		tenants := testenv.TenantsIn(t, db, 70)
		projects := store.Collection{Table: "records", Resource: "projects"}
		big := tenants[3]
		docs := make([]map[string]any, 1200)
		for i := range docs {
			docs[i] = map[string]any{"name": fmt.Sprint(i)}
		}
		if err := db.Tx(ctx, func(q store.Querier) error {
			_, err := db.InsertRecords(ctx, q, big.ID, projects, docs)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		for _, tn := range tenants {
			insert(t, db, tn.ID, projects, map[string]any{"name": "one more"})
		}
		if err := db.PurgeChanges(ctx, time.Now().Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
		if last, purged, _ := db.ChangeWindow(ctx, big.ID); purged != 0 || last < 1201 {
			t.Fatalf("a cutoff before every change: window (%d, %d), want nothing purged", last, purged)
		}
		if err := db.PurgeChanges(ctx, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		for _, tn := range tenants {
			last, purged, err := db.ChangeWindow(ctx, tn.ID)
			if err != nil || last == 0 || purged != last {
				t.Fatalf("tenant %s: window (%d, %d) %v, want all purged", tn.Slug, last, purged, err)
			}
			if cs, err := db.ChangesAfter(ctx, tn.ID, 0, nil, 10); err != nil || len(cs) != 0 {
				t.Fatalf("tenant %s: %d changes left (%v)", tn.Slug, len(cs), err)
			}
		}
		// The next change goes on from the purged position.
		insert(t, db, big.ID, projects, map[string]any{"name": "after"})
		last, purged, _ := db.ChangeWindow(ctx, big.ID)
		if cs, err := db.ChangesAfter(ctx, big.ID, purged, nil, 10); err != nil || len(cs) != 1 || cs[0].Seq != last {
			t.Errorf("after the purge: %+v %v, want the one new change at %d", cs, err, last)
		}
	})
}

// TestPurgeStopsAtTheDeadline: a purge whose context has ended stops with
// an error saying so, and a later run finishes the work.
func TestPurgeStopsAtTheDeadline(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		db := testenv.OpenDB(t, b)
		tn, _ := testenv.TenantIn(t, db, "acme", "admin@acme.test")
		insert(t, db, tn.ID, store.Collection{Table: "records", Resource: "projects"}, map[string]any{"name": "p"})
		ended, cancel := context.WithCancel(context.Background())
		cancel()
		if err := db.PurgeChanges(ended, time.Now().Add(time.Hour)); err == nil {
			t.Fatal("a purge on an ended context reported success")
		}
		if err := db.PurgeChanges(context.Background(), time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if last, purged, _ := db.ChangeWindow(context.Background(), tn.ID); last == 0 || purged != last {
			t.Errorf("window (%d, %d) after the second run, want all purged", last, purged)
		}
	})
}
