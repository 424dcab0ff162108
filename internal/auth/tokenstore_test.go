package auth_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"planwerk/internal/auth"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

func count(t *testing.T, db *store.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
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
	auth.TokenPair
}

func insertTokens(t *testing.T, db *store.DB, tenantID, userID int64, family []byte, accessTTL, refreshTTL time.Duration) issued {
	t.Helper()
	now := time.Now()
	p := auth.TokenPair{
		AccessHash: randomHash(t), RefreshHash: randomHash(t), UserID: userID, FamilyID: family,
		AccessExpiry: now.Add(accessTTL), RefreshExpiry: now.Add(refreshTTL),
	}
	err := db.Tx(context.Background(), func(q store.Querier) error {
		return auth.NewTables(db).InsertTokens(context.Background(), q, tenantID, p)
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
		r, err := auth.NewTables(db).SpendRefresh(context.Background(), q, tenantID, hash, time.Now())
		userID, family = r.UserID, r.FamilyID
		return err
	})
	return userID, family, err
}

func TestSpendRefreshToken(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		db := testenv.OpenDB(t, b)
		tn, admin := testenv.TenantIn(t, db, "tokens", "admin@tokens.test")
		other, _ := testenv.TenantIn(t, db, "tokens-other", "admin@tokens-other.test")
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
		if !errors.Is(err, auth.ErrTokenReused) {
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
		tn, admin := testenv.TenantIn(t, db, "race", "admin@race.test")
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
				case errors.Is(err, auth.ErrTokenReused):
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
		tn, admin := testenv.TenantIn(t, db, "revoke", "admin@revoke.test")
		family := randomHash(t)[:16]
		first := insertTokens(t, db, tn.ID, admin.ID, family, time.Hour, time.Hour)
		second := insertTokens(t, db, tn.ID, admin.ID, family, time.Hour, time.Hour)
		bystander := insertTokens(t, db, tn.ID, admin.ID, randomHash(t)[:16], time.Hour, time.Hour)

		before, err := auth.NewTables(db).AccessTokenByHash(ctx, tn.ID, first.AccessHash)
		if err != nil {
			t.Fatal(err)
		}
		if before.Revoked || before.UserID != admin.ID || !before.IsAdmin {
			t.Errorf("fresh access token = %+v", before)
		}
		if d := before.ExpiresAt.Sub(first.AccessExpiry); d > time.Millisecond || d < -time.Millisecond {
			t.Errorf("ExpiresAt = %v, want %v", before.ExpiresAt, first.AccessExpiry)
		}

		err = db.Tx(ctx, func(q store.Querier) error { return auth.NewTables(db).RevokeFamily(ctx, q, tn.ID, family) })
		if err != nil {
			t.Fatal(err)
		}
		for name, tok := range map[string]issued{"first": first, "second": second} {
			got, err := auth.NewTables(db).AccessTokenByHash(ctx, tn.ID, tok.AccessHash)
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
		got, err := auth.NewTables(db).AccessTokenByHash(ctx, tn.ID, bystander.AccessHash)
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
		tn, admin := testenv.TenantIn(t, db, "owner", "admin@owner.test")
		other, _ := testenv.TenantIn(t, db, "stranger", "admin@stranger.test")
		tok := insertTokens(t, db, tn.ID, admin.ID, randomHash(t)[:16], time.Hour, time.Hour)

		if _, err := auth.NewTables(db).AccessTokenByHash(ctx, tn.ID, tok.AccessHash); err != nil {
			t.Fatalf("own tenant: %v", err)
		}
		for _, id := range []int64{other.ID, tn.ID + other.ID + 1000} {
			got, err := auth.NewTables(db).AccessTokenByHash(ctx, id, tok.AccessHash)
			if !errors.Is(err, store.ErrNotFound) {
				t.Errorf("AccessTokenByHash(tenant %d) = %+v, %v; want ErrNotFound", id, got, err)
			}
		}
		if _, err := auth.NewTables(db).AccessTokenByHash(ctx, tn.ID, tok.RefreshHash); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a refresh token hash used as access token: err = %v, want ErrNotFound", err)
		}
	})
}

// TestPurgeTokensAcrossTenants: the tokens that expired before the cutoff
// go in every tenant, more of them than one batch deletes; the others stay.
func TestPurgeTokensAcrossTenants(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := testenv.OpenDB(t, b)
		tenants := testenv.TenantsIn(t, db, 12)
		now := time.Now()
		for i, tn := range tenants {
			err := db.Tx(ctx, func(q store.Querier) error {
				for j := range 100 {
					expiry := now.Add(-48 * time.Hour) // long expired
					if j%4 == 0 {
						expiry = now.Add(-time.Hour) // expired, within the grace
					}
					key := fmt.Sprintf("%d-%d", i, j)
					if err := auth.NewTables(db).InsertTokens(ctx, q, tn.ID, auth.TokenPair{
						AccessHash: []byte("a" + key), RefreshHash: []byte("r" + key), UserID: 1, FamilyID: []byte(key),
						AccessExpiry: expiry, RefreshExpiry: expiry}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := auth.NewTables(db).PurgeExpiredTokens(ctx, now.Add(-24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		for _, table := range []string{"access_tokens", "refresh_tokens"} {
			for _, tn := range tenants {
				if n := count(t, db, `SELECT COUNT(*) FROM `+table+` WHERE tenant_id = $1`, tn.ID); n != 25 {
					t.Fatalf("%s of tenant %s: %d left, want the 25 within the grace", table, tn.Slug, n)
				}
			}
		}
	})
}
