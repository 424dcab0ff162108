package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"planwerk/internal/idempotency"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// TestKeyLifecycle: a key is claimed by one request at a time,
// renewed and finished only by its holder, taken over when its holder's
// lease ran out or it expired, and purged once expired; tenants' keys of
// the same name are apart.
func TestKeyLifecycle(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := testenv.OpenDB(t, b)
		tenants := createTenants(t, db, 2)
		alpha, beta := tenants[0], tenants[1]
		keys := idempotency.NewKeys(db)
		now := time.Now()
		k := idempotency.Key{TenantID: alpha.ID, UserID: 1, Name: "k"}
		claim := func(k idempotency.Key, holder string, at time.Time) bool {
			t.Helper()
			ok, err := keys.Claim(ctx, k, []byte(holder), at, time.Minute, 24*time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		entry := func(k idempotency.Key, at time.Time) (idempotency.Entry, error) {
			t.Helper()
			return keys.Entry(ctx, k, at)
		}

		// Of concurrent claims, one wins.
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins := 0
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := keys.Claim(ctx, k, []byte{byte(i)}, now, time.Minute, 24*time.Hour)
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
		if _, err := keys.Release(ctx, k, nil); err != nil {
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
		if !claim(idempotency.Key{TenantID: beta.ID, UserID: 1, Name: "k"}, "h1", now) {
			t.Error("beta's key k was taken by alpha's")
		}
		// Only the holder renews; a renewed lease keeps the key past the first.
		if ok, err := keys.Renew(ctx, k, []byte("h2"), now.Add(2*time.Minute)); ok || err != nil {
			t.Errorf("renewal by another: %v %v", ok, err)
		}
		if ok, err := keys.Renew(ctx, k, []byte("h1"), now.Add(2*time.Minute)); !ok || err != nil {
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
		a := idempotency.Answer{Fingerprint: []byte("fp"), Status: 201,
			Header: map[string]string{"Location": "/v1/projects/7", "Content-Type": "application/json"}, Body: []byte(`{"id":7}`)}
		if ok, err := keys.Finish(ctx, k, []byte("h1"), a); ok || err != nil {
			t.Errorf("finish by the holder whose lease ran out: %v %v", ok, err)
		}
		if ok, err := keys.Finish(ctx, k, []byte("h2"), a); !ok || err != nil {
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
		if ok, err := keys.Release(ctx, k, []byte("h2")); ok || err != nil {
			t.Errorf("release of a finished key: %v %v", ok, err)
		}
		expired := now.Add(25 * time.Hour)
		if _, err := entry(k, expired); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("entry of an expired key: %v, want ErrNotFound", err)
		}

		// Purge: what expired goes, in every tenant; the rest stays.
		fresh := idempotency.Key{TenantID: alpha.ID, UserID: 1, Name: "fresh"}
		if !claim(fresh, "h4", now.Add(2*time.Hour)) {
			t.Fatal("claim fresh")
		}
		n, err := keys.PurgeExpired(ctx, expired)
		if err != nil || n != 2 {
			t.Fatalf("purge: %d %v, want alpha's and beta's k", n, err)
		}
		if e, err := entry(fresh, now.Add(2*time.Hour)); err != nil || !e.Running {
			t.Errorf("the key that had not expired: %+v %v", e, err)
		}
		// A released key is free at once.
		if ok, err := keys.Release(ctx, fresh, []byte("h4")); !ok || err != nil {
			t.Errorf("release by the holder: %v %v", ok, err)
		}
		if !claim(fresh, "h5", now) {
			t.Error("a released key could not be claimed")
		}
	})
}

// TestPurgeExpiredAcrossTenants: expired keys go in every tenant and are
// counted, also past one batch; keys still valid stay.
func TestPurgeExpiredAcrossTenants(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := testenv.OpenDB(t, b)
		keys := idempotency.NewKeys(db)
		tenants := createTenants(t, db, 7)
		now := time.Now()
		for _, tn := range tenants {
			for j := range 150 {
				keep := -time.Minute // expired a minute ago
				if j%3 == 0 {
					keep = time.Hour
				}
				k := idempotency.Key{TenantID: tn.ID, UserID: 1, Name: fmt.Sprintf("k%d", j)}
				if ok, err := keys.Claim(ctx, k, []byte("h"), now, time.Second, keep); !ok || err != nil {
					t.Fatalf("claim: %v %v", ok, err)
				}
			}
		}
		n, err := keys.PurgeExpired(ctx, now)
		if err != nil || n != 7*100 {
			t.Fatalf("purge: %d %v, want 700", n, err)
		}
		for _, tn := range tenants {
			var left int
			if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM idempotency_keys WHERE tenant_id = $1`, tn.ID).Scan(&left); err != nil {
				t.Fatal(err)
			}
			if left != 50 {
				t.Errorf("tenant %s: %d keys left, want the 50 valid", tn.Slug, left)
			}
		}
	})
}

// createTenants adds n tenant rows, whose keys the tests keep.
func createTenants(t *testing.T, db *store.DB, n int) []store.Tenant {
	t.Helper()
	out := make([]store.Tenant, n)
	for i := range out {
		out[i] = testenv.BareTenant(t, db, fmt.Sprintf("t%03d", i))
	}
	return out
}
