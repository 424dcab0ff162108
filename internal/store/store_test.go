package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"planwerk/internal/auth"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
	"planwerk/internal/users"
)

// etagStep names the Go step 00026 (the stored entity tags) among the
// files applyLater runs.
const etagStep = "00026 (Go)"

// applyLater gives a database migrated to an earlier version what
// today's store needs of the named later migrations of its engine: their
// CREATE and ALTER statements and their DO blocks, which run again
// harmlessly when the database migrates. Other blocks between
// StatementBegin and StatementEnd (functions) are left out.

func applyLater(t *testing.T, db *store.DB, b testenv.Backend, names ...string) {
	t.Helper()
	for _, name := range names {
		if name == etagStep {
			if err := db.AddETagColumns(context.Background()); err != nil {
				t.Fatal(err)
			}
			continue
		}
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

// tables are the users' tables on db, which create tenants with their
// first user.
func tables(db *store.DB) *users.Tables { return users.NewTables(db, auth.NewTables(db)) }

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
		tn, admin := testenv.TenantIn(t, dbs[0], "concurrent", "admin@concurrent.test")
		for i, db := range dbs {
			got, err := db.TenantBySlug(ctx, "concurrent")
			if err != nil || got.ID != tn.ID {
				t.Errorf("handle %d: TenantBySlug = %+v, %v; want id %d", i, got, err, tn.ID)
			}
			u, err := tables(db).UserByEmail(ctx, tn.ID, "admin@concurrent.test")
			if err != nil || u.ID != admin.ID {
				t.Errorf("handle %d: UserByEmail = %+v, %v; want id %d", i, u, err, admin.ID)
			}
		}
		if n, err := dbs[3].Migrate(ctx); err != nil || n != 0 {
			t.Errorf("migrate after the concurrent runs = %d, %v; want 0, nil", n, err)
		}
	})
}

func TestTenantBySlugUnknown(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		db := testenv.OpenDB(t, b)
		testenv.TenantIn(t, db, "known", "admin@known.test")
		for _, slug := range []string{"unknown", "KNOWN", "know", ""} {
			tn, err := db.TenantBySlug(context.Background(), slug)
			if !errors.Is(err, store.ErrNotFound) {
				t.Errorf("TenantBySlug(%q) = %+v, %v; want ErrNotFound", slug, tn, err)
			}
		}
	})
}
