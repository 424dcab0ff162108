package store_test

import (
	"context"
	"testing"
	"time"

	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// TestTenantChangeSignal: a commit that records changes of one tenant
// wakes that tenant's waiters and those waiting for any tenant, never
// another tenant's; on PostgreSQL, the notification by which another
// instance's commit arrives wakes its tenant's waiters, and only those.
func TestTenantChangeSignal(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		dsn := testenv.DSN(t, b)
		db, err := store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		acme, _ := testenv.TenantIn(t, db, "acme", "admin@acme.test")
		beta, _ := testenv.TenantIn(t, db, "beta", "admin@beta.test")
		projects := store.Collection{Table: "records", Resource: "projects"}
		waitClosed := func(what string, ch <-chan struct{}) {
			t.Helper()
			select {
			case <-ch:
			case <-time.After(time.Minute):
				t.Fatalf("%s: not woken within a minute", what)
			}
		}
		open := func(ch <-chan struct{}) bool {
			select {
			case <-ch:
				return false
			default:
				return true
			}
		}
		deadline := time.Now().Add(time.Minute)
		for !db.WakesOnCommit() { // PostgreSQL: until the listener hears
			if time.Now().After(deadline) {
				t.Fatal("the listener does not hear the notifications within a minute")
			}
			time.Sleep(10 * time.Millisecond)
		}

		if _, local := db.LocalFile(); !local {
			// The notifications of the tenants' creation may still be on
			// their way. They arrive in commit order: once the
			// notification of another instance's later commit has woken
			// its waiter, none is left to wake acme's.
			other, err := store.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			synced := db.TenantChangeSignal(beta.ID)
			insert(t, other, beta.ID, projects, map[string]any{"name": "sync"})
			waitClosed("beta's waiter at the notification of another instance's commit", synced)
			other.Close()
		}
		acmeWaits, anyWaits, betaWaits := db.TenantChangeSignal(acme.ID), db.ChangeSignal(), db.TenantChangeSignal(beta.ID)
		insert(t, db, beta.ID, projects, map[string]any{"name": "b"})
		waitClosed("beta's waiter after beta's commit", betaWaits)
		waitClosed("a waiter for any tenant after beta's commit", anyWaits)
		if !open(acmeWaits) {
			t.Fatal("another tenant's commit woke acme's waiter")
		}
		if _, local := db.LocalFile(); !local {
			// Another instance's commit reaches this one only as its
			// notification, which names its tenant.
			other, err := store.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			betaWaits = db.TenantChangeSignal(beta.ID)
			insert(t, other, beta.ID, projects, map[string]any{"name": "b2"})
			waitClosed("beta's waiter at the notification of another instance's commit", betaWaits)
			if !open(acmeWaits) {
				t.Fatal("the notification of another tenant's commit woke acme's waiter")
			}
		}
		insert(t, db, acme.ID, projects, map[string]any{"name": "a"})
		waitClosed("acme's waiter after acme's commit", acmeWaits)
	})
}
