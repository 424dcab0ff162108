package store_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// The store never looks inside password hashes, so any string does.
const fakeHash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$a2V5"

// applyLater gives a database migrated to an earlier version what
// today's store needs of the named later migrations of its engine: their
// CREATE and ALTER statements and their DO blocks, which run again
// harmlessly when the database migrates. Other blocks between
// StatementBegin and StatementEnd (functions) are left out.
func applyLater(t *testing.T, db *store.DB, b testenv.Backend, names ...string) {
	t.Helper()
	for _, name := range names {
		m, err := os.ReadFile(filepath.Join("migrations", engine(b), name))
		if os.IsNotExist(err) {
			continue // not a migration of this engine
		}
		if err != nil {
			t.Fatal(err)
		}
		up, _, _ := strings.Cut(string(m), "-- +goose Down")
		var plain strings.Builder
		for block := range strings.SplitSeq(up, "-- +goose StatementBegin") {
			if inner, after, ok := strings.Cut(block, "-- +goose StatementEnd"); ok {
				if strings.HasPrefix(strings.TrimSpace(inner), "DO ") {
					exec(t, db, inner)
				}
				block = after
			}
			plain.WriteString(block)
		}
		for stmt := range strings.SplitSeq(plain.String(), ";") {
			if strings.Contains(stmt, "CREATE") || strings.Contains(stmt, "ALTER") {
				exec(t, db, stmt)
			}
		}
	}
}

func count(t *testing.T, db *store.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func createTenant(t *testing.T, db *store.DB, slug, email string) (store.Tenant, store.User) {
	t.Helper()
	tn, u, err := db.CreateTenant(context.Background(), slug, "Name of "+slug, store.NewAdmin{Email: email, PasswordHash: fakeHash})
	if err != nil {
		t.Fatalf("create tenant %s: %v", slug, err)
	}
	return tn, u
}

func createUser(ctx context.Context, db *store.DB, tenantID int64, email string) (store.User, error) {
	var u store.User
	err := db.Tx(ctx, func(q store.Querier) error {
		var err error
		u, err = db.CreateUser(ctx, q, tenantID, store.NewUser{Email: email, PasswordHash: fakeHash})
		return err
	})
	return u, err
}

func TestMigrateTwice(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db, err := store.Open(ctx, testenv.DSN(t, b))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if db.Engine() != b.Name {
			t.Errorf("Engine() = %q, want %q", db.Engine(), b.Name)
		}
		n, err := db.Migrate(ctx)
		if err != nil {
			t.Fatalf("first migrate: %v", err)
		}
		if n < 1 {
			t.Fatalf("first migrate applied %d migrations, want at least 1", n)
		}
		n, err = db.Migrate(ctx)
		if err != nil {
			t.Fatalf("second migrate: %v", err)
		}
		if n != 0 {
			t.Fatalf("second migrate applied %d migrations, want 0", n)
		}
		if got := count(t, db, `SELECT count(*) FROM tenants`); got != 0 {
			t.Fatalf("fresh database has %d tenants", got)
		}
	})
}

func TestMigrateConcurrently(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		dsn := testenv.DSN(t, b)

		// How many migrations exist: ask a separate fresh database.
		probe, err := store.Open(ctx, testenv.DSN(t, b))
		if err != nil {
			t.Fatal(err)
		}
		total, err := probe.Migrate(ctx)
		probe.Close()
		if err != nil || total < 1 {
			t.Fatalf("probe migrate: %d, %v", total, err)
		}

		const workers = 4
		dbs := make([]*store.DB, workers)
		for i := range dbs {
			db, err := store.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			dbs[i] = db
		}
		var (
			wg      sync.WaitGroup
			start   = make(chan struct{})
			applied = make([]int, workers)
			errs    = make([]error, workers)
		)
		for i, db := range dbs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				applied[i], errs[i] = db.Migrate(ctx)
			}()
		}
		close(start)
		wg.Wait()
		sum := 0
		for i := range dbs {
			if errs[i] != nil {
				t.Errorf("migrate %d: %v", i, errs[i])
			}
			sum += applied[i]
		}
		if sum != total {
			t.Errorf("the %d concurrent runs applied %d migrations in all (%v), want %d", workers, sum, applied, total)
		}
		// The schema works, from every handle.
		tn, admin := createTenant(t, dbs[0], "concurrent", "admin@concurrent.test")
		for i, db := range dbs {
			got, err := db.TenantBySlug(ctx, "concurrent")
			if err != nil || got.ID != tn.ID {
				t.Errorf("handle %d: TenantBySlug = %+v, %v; want id %d", i, got, err, tn.ID)
			}
			u, err := db.UserByEmail(ctx, tn.ID, "admin@concurrent.test")
			if err != nil || u.ID != admin.ID {
				t.Errorf("handle %d: UserByEmail = %+v, %v; want id %d", i, u, err, admin.ID)
			}
		}
		if n, err := dbs[3].Migrate(ctx); err != nil || n != 0 {
			t.Errorf("migrate after the concurrent runs = %d, %v; want 0, nil", n, err)
		}
	})
}

func TestCreateTenant(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := testenv.OpenDB(t, b)
		tn, u, err := db.CreateTenant(ctx, "acme", "Acme Ltd", store.NewAdmin{Email: "Boss@Acme.test", PasswordHash: fakeHash})
		if err != nil {
			t.Fatal(err)
		}
		if tn.ID == 0 || tn.Slug != "acme" || tn.Name != "Acme Ltd" || tn.CreatedAt == "" {
			t.Errorf("tenant = %+v", tn)
		}
		if _, err := time.Parse(store.TimeFormat, tn.CreatedAt); err != nil {
			t.Errorf("CreatedAt %q is not in TimeFormat: %v", tn.CreatedAt, err)
		}
		if u.TenantID != tn.ID || u.ID == 0 || !u.IsAdmin || u.Email != "Boss@Acme.test" || u.PasswordHash != fakeHash {
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
		stored, err := db.UserByID(ctx, tn.ID, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if stored.Email != "Boss@Acme.test" || !stored.IsAdmin || stored.PasswordHash != fakeHash || stored.TenantID != tn.ID {
			t.Errorf("UserByID = %+v", stored)
		}
		if bytes.Contains(stored.Doc, []byte(fakeHash)) {
			t.Errorf("stored doc leaks the password hash: %s", stored.Doc)
		}
	})
}

func TestCreateTenantDuplicateSlug(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := testenv.OpenDB(t, b)
		first, _ := createTenant(t, db, "acme", "admin@acme.test")

		tn, u, err := db.CreateTenant(ctx, "acme", "Another", store.NewAdmin{Email: "someone@else.test", PasswordHash: fakeHash})
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
		createTenant(t, db, "acme-two", "admin@acme-two.test")
	})
}

func TestCreateTenantAdminEmailTaken(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := testenv.OpenDB(t, b)
		createTenant(t, db, "one", "Boss@Example.test")

		_, _, err := db.CreateTenant(ctx, "two", "Two", store.NewAdmin{Email: "bOSS@example.TEST", PasswordHash: fakeHash})
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
		three, _ := createTenant(t, db, "three", "admin@three.test")
		if _, err := createUser(ctx, db, three.ID, "Worker@Three.test"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.CreateTenant(ctx, "four", "Four", store.NewAdmin{Email: "worker@three.test", PasswordHash: fakeHash}); !errors.Is(err, store.ErrConflict) {
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
					_, _, err := db.CreateTenant(ctx, slug, slug, store.NewAdmin{Email: email, PasswordHash: fakeHash})
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
			u, err := db.UserByEmail(ctx, a.ID, q)
			if err != nil {
				t.Errorf("UserByEmail(alpha, %q): %v", q, err)
				continue
			}
			if u.ID != ann.ID || u.TenantID != a.ID || u.Email != "Ann@Example.test" {
				t.Errorf("UserByEmail(alpha, %q) = %+v, want Ann of alpha", q, u)
			}
			u, err = db.UserByEmail(ctx, bt.ID, q)
			if err != nil || u.TenantID != bt.ID || u.Email != "ann@example.test" {
				t.Errorf("UserByEmail(beta, %q) = %+v, %v; want ann of beta", q, u, err)
			}
		}
		if _, err := db.UserByEmail(ctx, a.ID, "nobody@example.test"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("UserByEmail(unknown) err = %v, want ErrNotFound", err)
		}
		if _, err := db.UserByEmail(ctx, bt.ID, "admin@alpha.test"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("UserByEmail across tenants err = %v, want ErrNotFound", err)
		}
		// Ids may repeat across tenants (SQLite counts per tenant), but a
		// lookup in beta never returns alpha's user.
		if u, err := db.UserByID(ctx, bt.ID, ann.ID); err == nil && u.TenantID != bt.ID || err != nil && !errors.Is(err, store.ErrNotFound) {
			t.Errorf("UserByID(beta, alpha's id) = %+v, %v", u, err)
		}
	})
}

func TestRecordIDsUniqueWithinTenant(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := testenv.OpenDB(t, b)
		tn, admin := createTenant(t, db, "ids", "admin@ids.test")
		other, _ := createTenant(t, db, "ids-other", "admin@ids-other.test")

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

func TestTenantBySlugUnknown(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		db := testenv.OpenDB(t, b)
		createTenant(t, db, "known", "admin@known.test")
		for _, slug := range []string{"unknown", "KNOWN", "know", ""} {
			tn, err := db.TenantBySlug(context.Background(), slug)
			if !errors.Is(err, store.ErrNotFound) {
				t.Errorf("TenantBySlug(%q) = %+v, %v; want ErrNotFound", slug, tn, err)
			}
		}
	})
}

func randomHash(t *testing.T) []byte {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return h[:]
}

type issued struct {
	store.TokenPair
}

func insertTokens(t *testing.T, db *store.DB, tenantID, userID int64, family []byte, accessTTL, refreshTTL time.Duration) issued {
	t.Helper()
	now := time.Now()
	p := store.TokenPair{
		AccessHash: randomHash(t), RefreshHash: randomHash(t), UserID: userID, FamilyID: family,
		AccessExpiry: now.Add(accessTTL), RefreshExpiry: now.Add(refreshTTL),
	}
	err := db.Tx(context.Background(), func(q store.Querier) error {
		return db.InsertTokens(context.Background(), q, tenantID, p)
	})
	if err != nil {
		t.Fatalf("insert tokens: %v", err)
	}
	return issued{p}
}

func spend(db *store.DB, tenantID int64, hash []byte) (int64, []byte, error) {
	var (
		userID int64
		family []byte
	)
	err := db.Tx(context.Background(), func(q store.Querier) error {
		var err error
		userID, family, err = db.SpendRefreshToken(context.Background(), q, tenantID, hash, time.Now())
		return err
	})
	return userID, family, err
}

func TestSpendRefreshToken(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		db := testenv.OpenDB(t, b)
		tn, admin := createTenant(t, db, "tokens", "admin@tokens.test")
		other, _ := createTenant(t, db, "tokens-other", "admin@tokens-other.test")
		family := randomHash(t)[:16]
		tok := insertTokens(t, db, tn.ID, admin.ID, family, time.Hour, 24*time.Hour)

		// Another tenant cannot spend it, and trying does not spend it.
		if _, _, err := spend(db, other.ID, tok.RefreshHash); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("spend in another tenant: err = %v, want ErrNotFound", err)
		}
		userID, fam, err := spend(db, tn.ID, tok.RefreshHash)
		if err != nil {
			t.Fatalf("first spend: %v", err)
		}
		if userID != admin.ID || !bytes.Equal(fam, family) {
			t.Errorf("first spend = user %d family %x; want %d %x", userID, fam, admin.ID, family)
		}
		userID, fam, err = spend(db, tn.ID, tok.RefreshHash)
		if !errors.Is(err, store.ErrTokenReused) {
			t.Fatalf("second spend: err = %v, want ErrTokenReused", err)
		}
		if userID != 0 || !bytes.Equal(fam, family) {
			t.Errorf("second spend = user %d family %x; want 0 and the family %x", userID, fam, family)
		}

		if _, _, err := spend(db, tn.ID, randomHash(t)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown token: err = %v, want ErrNotFound", err)
		}
		expired := insertTokens(t, db, tn.ID, admin.ID, randomHash(t)[:16], time.Hour, -time.Minute)
		if _, _, err := spend(db, tn.ID, expired.RefreshHash); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("expired token: err = %v, want ErrNotFound", err)
		}
	})
}

func TestSpendRefreshTokenConcurrently(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		db := testenv.OpenDB(t, b)
		tn, admin := createTenant(t, db, "race", "admin@race.test")
		for round := range 8 {
			tok := insertTokens(t, db, tn.ID, admin.ID, randomHash(t)[:16], time.Hour, time.Hour)
			var (
				wg    sync.WaitGroup
				start = make(chan struct{})
				errs  [2]error
				users [2]int64
			)
			for i := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					users[i], _, errs[i] = spend(db, tn.ID, tok.RefreshHash)
				}()
			}
			close(start)
			wg.Wait()
			ok, reused := 0, 0
			for i, err := range errs {
				switch {
				case err == nil:
					ok++
					if users[i] != admin.ID {
						t.Errorf("round %d: winner got user %d, want %d", round, users[i], admin.ID)
					}
				case errors.Is(err, store.ErrTokenReused):
					reused++
				default:
					t.Errorf("round %d: spend %d: unexpected error %v", round, i, err)
				}
			}
			if ok != 1 || reused != 1 {
				t.Fatalf("round %d: %d spends succeeded and %d saw reuse (%v); want exactly 1 and 1", round, ok, reused, errs)
			}
		}
	})
}

func TestRevokeFamily(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := testenv.OpenDB(t, b)
		tn, admin := createTenant(t, db, "revoke", "admin@revoke.test")
		family := randomHash(t)[:16]
		first := insertTokens(t, db, tn.ID, admin.ID, family, time.Hour, time.Hour)
		second := insertTokens(t, db, tn.ID, admin.ID, family, time.Hour, time.Hour)
		bystander := insertTokens(t, db, tn.ID, admin.ID, randomHash(t)[:16], time.Hour, time.Hour)

		before, err := db.AccessTokenByHash(ctx, tn.ID, first.AccessHash)
		if err != nil {
			t.Fatal(err)
		}
		if before.Revoked || before.UserID != admin.ID || !before.IsAdmin {
			t.Errorf("fresh access token = %+v", before)
		}
		if d := before.ExpiresAt.Sub(first.AccessExpiry); d > time.Millisecond || d < -time.Millisecond {
			t.Errorf("ExpiresAt = %v, want %v", before.ExpiresAt, first.AccessExpiry)
		}

		err = db.Tx(ctx, func(q store.Querier) error { return db.RevokeFamily(ctx, q, tn.ID, family) })
		if err != nil {
			t.Fatal(err)
		}
		for name, tok := range map[string]issued{"first": first, "second": second} {
			got, err := db.AccessTokenByHash(ctx, tn.ID, tok.AccessHash)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !got.Revoked {
				t.Errorf("%s access token not revoked after RevokeFamily", name)
			}
			if _, _, err := spend(db, tn.ID, tok.RefreshHash); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s refresh token after RevokeFamily: err = %v, want ErrNotFound", name, err)
			}
		}
		got, err := db.AccessTokenByHash(ctx, tn.ID, bystander.AccessHash)
		if err != nil || got.Revoked {
			t.Errorf("token of another family = %+v, %v; want not revoked", got, err)
		}
		if _, _, err := spend(db, tn.ID, bystander.RefreshHash); err != nil {
			t.Errorf("refresh token of another family: %v", err)
		}
	})
}

func TestAccessTokenByHashWrongTenant(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := testenv.OpenDB(t, b)
		tn, admin := createTenant(t, db, "owner", "admin@owner.test")
		other, _ := createTenant(t, db, "stranger", "admin@stranger.test")
		tok := insertTokens(t, db, tn.ID, admin.ID, randomHash(t)[:16], time.Hour, time.Hour)

		if _, err := db.AccessTokenByHash(ctx, tn.ID, tok.AccessHash); err != nil {
			t.Fatalf("own tenant: %v", err)
		}
		for _, id := range []int64{other.ID, tn.ID + other.ID + 1000} {
			got, err := db.AccessTokenByHash(ctx, id, tok.AccessHash)
			if !errors.Is(err, store.ErrNotFound) {
				t.Errorf("AccessTokenByHash(tenant %d) = %+v, %v; want ErrNotFound", id, got, err)
			}
		}
		if _, err := db.AccessTokenByHash(ctx, tn.ID, tok.RefreshHash); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a refresh token hash used as access token: err = %v, want ErrNotFound", err)
		}
	})
}
