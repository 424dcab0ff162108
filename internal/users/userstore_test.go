package users_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"planwerk/internal/auth"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
	"planwerk/internal/users"
)

// tables are the users' tables on db, with the credentials they end.
func tables(db *store.DB) *users.Tables { return users.NewTables(db, auth.NewTables(db)) }

func count(t *testing.T, db *store.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func createUser(ctx context.Context, db *store.DB, tenantID int64, email string) (users.User, error) {
	var u users.User
	err := db.Tx(ctx, func(q store.Querier) error {
		var err error
		u, err = tables(db).CreateUser(ctx, q, tenantID, users.NewUser{Email: email, PasswordHash: testenv.FakeHash})
		return err
	})
	return u, err
}

// twoTenants opens a fresh database with the tenants alpha and beta.
func twoTenants(t *testing.T, b testenv.Backend) (db *store.DB, alpha, beta store.Tenant) {
	t.Helper()
	db = testenv.OpenDB(t, b)
	alpha, _ = testenv.TenantIn(t, db, "alpha", "admin@alpha.test")
	beta, _ = testenv.TenantIn(t, db, "beta", "admin@beta.test")
	return db, alpha, beta
}

func TestCreateTenant(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := testenv.OpenDB(t, b)
		tn, u, err := tables(db).CreateTenant(ctx, "acme", "Acme Ltd", users.NewAdmin{Email: "Boss@Acme.test", PasswordHash: testenv.FakeHash})
		if err != nil {
			t.Fatal(err)
		}
		if tn.ID == 0 || tn.Slug != "acme" || tn.Name != "Acme Ltd" || tn.CreatedAt == "" {
			t.Errorf("tenant = %+v", tn)
		}
		if _, err := time.Parse(store.TimeFormat, tn.CreatedAt); err != nil {
			t.Errorf("CreatedAt %q is not in TimeFormat: %v", tn.CreatedAt, err)
		}
		if u.TenantID != tn.ID || u.ID == 0 || !u.IsAdmin || u.Email != "Boss@Acme.test" || u.PasswordHash != testenv.FakeHash {
			t.Errorf("admin = %+v", u)
		}
		if bytes.Contains(u.Doc, []byte("argon2")) || bytes.Contains(u.Doc, []byte("password")) {
			t.Errorf("user doc leaks the password hash: %s", u.Doc)
		}

		got, err := db.TenantBySlug(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != tn.ID || got.Slug != "acme" || got.Name != "Acme Ltd" || got.StorageBytes != nil || got.CreatedAt != tn.CreatedAt {
			t.Errorf("TenantBySlug = %+v, want %+v", got, tn)
		}
		stored, err := tables(db).UserByID(ctx, tn.ID, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if stored.Email != "Boss@Acme.test" || !stored.IsAdmin || stored.PasswordHash != testenv.FakeHash || stored.TenantID != tn.ID {
			t.Errorf("UserByID = %+v", stored)
		}
		if bytes.Contains(stored.Doc, []byte(testenv.FakeHash)) {
			t.Errorf("stored doc leaks the password hash: %s", stored.Doc)
		}
	})
}

func TestCreateTenantDuplicateSlug(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := testenv.OpenDB(t, b)
		first, _ := testenv.TenantIn(t, db, "acme", "admin@acme.test")

		tn, u, err := tables(db).CreateTenant(ctx, "acme", "Another", users.NewAdmin{Email: "someone@else.test", PasswordHash: testenv.FakeHash})
		if !errors.Is(err, store.ErrConflict) {
			t.Fatalf("duplicate slug: err = %v, want ErrConflict", err)
		}
		if tn.ID != 0 || u.ID != 0 {
			t.Errorf("duplicate slug returned %+v, %+v", tn, u)
		}
		if n := count(t, db, `SELECT count(*) FROM tenants`); n != 1 {
			t.Errorf("%d tenants, want 1", n)
		}
		if n := count(t, db, `SELECT count(*) FROM users`); n != 1 {
			t.Errorf("%d users, want 1", n)
		}
		if n := count(t, db, `SELECT count(*) FROM users WHERE email_key = $1`, "someone@else.test"); n != 0 {
			t.Errorf("the rejected admin was written")
		}
		got, err := db.TenantBySlug(ctx, "acme")
		if err != nil || got.ID != first.ID || got.Name != "Name of acme" {
			t.Errorf("TenantBySlug(acme) = %+v, %v; want the first tenant unchanged", got, err)
		}
		// The store is still usable after the rolled-back transaction.
		testenv.TenantIn(t, db, "acme-two", "admin@acme-two.test")
	})
}

func TestCreateTenantAdminEmailTaken(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := testenv.OpenDB(t, b)
		testenv.TenantIn(t, db, "one", "Boss@Example.test")

		_, _, err := tables(db).CreateTenant(ctx, "two", "Two", users.NewAdmin{Email: "bOSS@example.TEST", PasswordHash: testenv.FakeHash})
		if !errors.Is(err, store.ErrConflict) {
			t.Fatalf("admin e-mail of another tenant: err = %v, want ErrConflict", err)
		}
		if _, err := db.TenantBySlug(ctx, "two"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("TenantBySlug(two) err = %v, want ErrNotFound: the tenant must not be created", err)
		}
		if n := count(t, db, `SELECT count(*) FROM tenants`); n != 1 {
			t.Errorf("%d tenants, want 1", n)
		}
		if n := count(t, db, `SELECT count(*) FROM users`); n != 1 {
			t.Errorf("%d users, want 1", n)
		}
		// A plain user (not an admin of a new tenant) in another tenant also blocks.
		three, _ := testenv.TenantIn(t, db, "three", "admin@three.test")
		if _, err := createUser(ctx, db, three.ID, "Worker@Three.test"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := tables(db).CreateTenant(ctx, "four", "Four", users.NewAdmin{Email: "worker@three.test", PasswordHash: testenv.FakeHash}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("admin e-mail of a plain user elsewhere: err = %v, want ErrConflict", err)
		}
		if _, err := db.TenantBySlug(ctx, "four"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("TenantBySlug(four) err = %v, want ErrNotFound", err)
		}
	})
}

// Two tenants created at once with the same admin e-mail address: exactly
// one wins, on both engines.
func TestCreateTenantAdminEmailRace(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := testenv.OpenDB(t, b)
		for round := 0; round < 5; round++ {
			email := fmt.Sprintf("race%d@example.test", round)
			errs := make(chan error, 2)
			for i := 0; i < 2; i++ {
				slug := fmt.Sprintf("race-%d-%d", round, i)
				go func() {
					_, _, err := tables(db).CreateTenant(ctx, slug, slug, users.NewAdmin{Email: email, PasswordHash: testenv.FakeHash})
					errs <- err
				}()
			}
			ok := 0
			for i := 0; i < 2; i++ {
				err := <-errs
				switch {
				case err == nil:
					ok++
				case !errors.Is(err, store.ErrConflict):
					t.Fatalf("round %d: %v", round, err)
				}
			}
			if ok != 1 {
				t.Fatalf("round %d: %d tenants created with one admin e-mail, want 1", round, ok)
			}
		}
	})
}

func TestCreateUserEmailUniqueness(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db, a, bt := twoTenants(t, b)

		ann, err := createUser(ctx, db, a.ID, "Ann@Example.test")
		if err != nil {
			t.Fatal(err)
		}
		if ann.IsAdmin || ann.TenantID != a.ID || ann.Email != "Ann@Example.test" {
			t.Errorf("created user = %+v", ann)
		}
		if _, err := createUser(ctx, db, a.ID, "ann@EXAMPLE.test"); !errors.Is(err, store.ErrConflict) {
			t.Errorf("same e-mail in other case, same tenant: err = %v, want ErrConflict", err)
		}
		if n := count(t, db, `SELECT count(*) FROM users WHERE tenant_id = $1`, a.ID); n != 2 {
			t.Errorf("tenant alpha has %d users, want 2 (admin and Ann)", n)
		}
		// The same address in another tenant is a different user.
		ann2, err := createUser(ctx, db, bt.ID, "ann@example.test")
		if err != nil {
			t.Fatalf("same e-mail in another tenant: %v", err)
		}
		if ann2.TenantID != bt.ID {
			t.Errorf("user of beta has tenant %d", ann2.TenantID)
		}

		// UserByEmail ignores case and surrounding space, and stays in its tenant.
		for _, q := range []string{"ann@example.test", "ANN@EXAMPLE.TEST", "Ann@Example.test", " ann@example.test "} {
			u, err := tables(db).UserByEmail(ctx, a.ID, q)
			if err != nil {
				t.Errorf("UserByEmail(alpha, %q): %v", q, err)
				continue
			}
			if u.ID != ann.ID || u.TenantID != a.ID || u.Email != "Ann@Example.test" {
				t.Errorf("UserByEmail(alpha, %q) = %+v, want Ann of alpha", q, u)
			}
			u, err = tables(db).UserByEmail(ctx, bt.ID, q)
			if err != nil || u.TenantID != bt.ID || u.Email != "ann@example.test" {
				t.Errorf("UserByEmail(beta, %q) = %+v, %v; want ann of beta", q, u, err)
			}
		}
		if _, err := tables(db).UserByEmail(ctx, a.ID, "nobody@example.test"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("UserByEmail(unknown) err = %v, want ErrNotFound", err)
		}
		if _, err := tables(db).UserByEmail(ctx, bt.ID, "admin@alpha.test"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("UserByEmail across tenants err = %v, want ErrNotFound", err)
		}
		// Ids may repeat across tenants (SQLite counts per tenant), but a
		// lookup in beta never returns alpha's user.
		if u, err := tables(db).UserByID(ctx, bt.ID, ann.ID); err == nil && u.TenantID != bt.ID || err != nil && !errors.Is(err, store.ErrNotFound) {
			t.Errorf("UserByID(beta, alpha's id) = %+v, %v", u, err)
		}
	})
}

func TestRecordIDsUniqueWithinTenant(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := testenv.OpenDB(t, b)
		tn, admin := testenv.TenantIn(t, db, "ids", "admin@ids.test")
		other, _ := testenv.TenantIn(t, db, "ids-other", "admin@ids-other.test")

		const n = 12
		ids := make([]int64, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tenantID := tn.ID
				if i%3 == 0 {
					tenantID = other.ID // interleave writes of another tenant
				}
				u, err := createUser(ctx, db, tenantID, fmt.Sprintf("user%d@ids.test", i))
				ids[i], errs[i] = u.ID, err
			}()
		}
		wg.Wait()
		seen := map[int64]string{admin.ID: "admin"}
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("create user %d: %v", i, errs[i])
			}
			if i%3 == 0 {
				continue
			}
			if ids[i] <= 0 {
				t.Errorf("user %d has id %d", i, ids[i])
			}
			if prev, dup := seen[ids[i]]; dup {
				t.Errorf("id %d handed out twice in one tenant (%s and user %d)", ids[i], prev, i)
			}
			seen[ids[i]] = fmt.Sprint("user ", i)
		}
		if got := count(t, db, `SELECT count(DISTINCT id) FROM users WHERE tenant_id = $1`, tn.ID); got != 1+n-n/3 {
			t.Errorf("tenant has %d distinct user ids, want %d", got, 1+n-n/3)
		}
	})
}
