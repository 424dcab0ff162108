package store_test

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// TestIdempotencyKeyLifecycle: a key is claimed by one request at a time,
// renewed and finished only by its holder, taken over when its holder's
// lease ran out or it expired, and purged once expired; tenants' keys of
// the same name are apart.
func TestIdempotencyKeyLifecycle(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db, alpha, beta := twoTenants(t, b)
		now := time.Now()
		k := store.IdempotencyKey{TenantID: alpha.ID, UserID: 1, Key: "k"}
		claim := func(k store.IdempotencyKey, holder string, at time.Time) bool {
			t.Helper()
			ok, err := db.ClaimIdempotencyKey(ctx, k, []byte(holder), at, time.Minute, 24*time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		entry := func(k store.IdempotencyKey, at time.Time) (store.IdempotencyEntry, error) {
			t.Helper()
			return db.IdempotencyKeyEntry(ctx, k, at)
		}

		// Of concurrent claims, one wins.
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins := 0
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := db.ClaimIdempotencyKey(ctx, k, []byte{byte(i)}, now, time.Minute, 24*time.Hour)
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					wins++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if wins != 1 {
			t.Fatalf("%d of 8 concurrent claims won, want 1", wins)
		}
		if _, err := db.ReleaseIdempotencyKey(ctx, k, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE tenant_id = $1`, alpha.ID); err != nil {
			t.Fatal(err)
		}

		if !claim(k, "h1", now) || claim(k, "h2", now) {
			t.Fatal("a fresh key: want the first claim to win and the second to lose")
		}
		if e, err := entry(k, now); err != nil || !e.Running {
			t.Fatalf("entry of a running key: %+v %v", e, err)
		}
		// Another tenant's key of the same name and user is its own.
		if !claim(store.IdempotencyKey{TenantID: beta.ID, UserID: 1, Key: "k"}, "h1", now) {
			t.Error("beta's key k was taken by alpha's")
		}
		// Only the holder renews; a renewed lease keeps the key past the first.
		if ok, err := db.RenewIdempotencyKey(ctx, k, []byte("h2"), now.Add(2*time.Minute)); ok || err != nil {
			t.Errorf("renewal by another: %v %v", ok, err)
		}
		if ok, err := db.RenewIdempotencyKey(ctx, k, []byte("h1"), now.Add(2*time.Minute)); !ok || err != nil {
			t.Errorf("renewal by the holder: %v %v", ok, err)
		}
		if claim(k, "h2", now.Add(90*time.Second)) {
			t.Error("a key taken over within its renewed lease")
		}
		// Its lease over, the key is free: the look-up says so, a claim takes it.
		later := now.Add(3 * time.Minute)
		if _, err := entry(k, later); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("entry of a key whose lease ran out: %v, want ErrNotFound", err)
		}
		if !claim(k, "h2", later) {
			t.Fatal("a key whose lease ran out was not taken over")
		}
		a := store.IdempotentAnswer{Fingerprint: []byte("fp"), Status: 201,
			Header: map[string]string{"Location": "/v1/projects/7", "Content-Type": "application/json"}, Body: []byte(`{"id":7}`)}
		if ok, err := db.FinishIdempotencyKey(ctx, k, []byte("h1"), a); ok || err != nil {
			t.Errorf("finish by the holder whose lease ran out: %v %v", ok, err)
		}
		if ok, err := db.FinishIdempotencyKey(ctx, k, []byte("h2"), a); !ok || err != nil {
			t.Fatalf("finish by the holder: %v %v", ok, err)
		}
		e, err := entry(k, later)
		if err != nil || e.Running || !reflect.DeepEqual(e.Answer, a) {
			t.Fatalf("finished entry: %+v %v, want %+v", e, err, a)
		}
		// A finished key is not taken over, however old its lease, until it expires.
		if claim(k, "h3", now.Add(23*time.Hour)) {
			t.Error("a finished key taken over before it expired")
		}
		if ok, err := db.ReleaseIdempotencyKey(ctx, k, []byte("h2")); ok || err != nil {
			t.Errorf("release of a finished key: %v %v", ok, err)
		}
		expired := now.Add(25 * time.Hour)
		if _, err := entry(k, expired); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("entry of an expired key: %v, want ErrNotFound", err)
		}

		// Purge: what expired goes, in every tenant; the rest stays.
		fresh := store.IdempotencyKey{TenantID: alpha.ID, UserID: 1, Key: "fresh"}
		if !claim(fresh, "h4", now.Add(2*time.Hour)) {
			t.Fatal("claim fresh")
		}
		n, err := db.PurgeExpiredIdempotencyKeys(ctx, expired)
		if err != nil || n != 2 {
			t.Fatalf("purge: %d %v, want alpha's and beta's k", n, err)
		}
		if e, err := entry(fresh, now.Add(2*time.Hour)); err != nil || !e.Running {
			t.Errorf("the key that had not expired: %+v %v", e, err)
		}
		// A released key is free at once.
		if ok, err := db.ReleaseIdempotencyKey(ctx, fresh, []byte("h4")); !ok || err != nil {
			t.Errorf("release by the holder: %v %v", ok, err)
		}
		if !claim(fresh, "h5", now) {
			t.Error("a released key could not be claimed")
		}
	})
}
