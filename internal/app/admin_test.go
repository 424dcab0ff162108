package app_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"planwerk/internal/app"
	"planwerk/internal/auth"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// TestAdminCommands runs tenant list, tenant set-storage and user
// reset-password on both databases.
func TestAdminCommands(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		dsn := testenv.DSN(t, b)
		env := map[string]string{"PLANWERK_DATABASE": dsn, "PLANWERK_FILES": filepath.Join(t.TempDir(), "files")}
		for _, slug := range []string{"alpha", "beta"} {
			if r := run(ctx, env, "", "tenant", "create", "--slug", slug, "--admin-email", "admin@"+slug+".test", "--admin-password", "first-password"); r.err != nil {
				t.Fatalf("tenant create %s: %v %s", slug, r.err, r.stderr)
			}
		}

		r := run(ctx, env, "", "tenant", "set-storage", "--slug", "beta", "--bytes", "12345")
		if r.err != nil || !strings.Contains(r.stdout, "12345") {
			t.Fatalf("set-storage: %v %q", r.err, r.stdout)
		}
		for _, args := range [][]string{
			{"tenant", "set-storage", "--slug", "nobody", "--bytes", "1"},
			{"tenant", "set-storage", "--slug", "beta", "--bytes", "-1"},
			{"tenant", "set-storage", "--slug", "beta", "--bytes", "lots"},
			{"tenant", "set-storage", "--bytes", "1"},
		} {
			if r := run(ctx, env, "", args...); r.err == nil {
				t.Errorf("%v: accepted", args)
			}
		}

		r = run(ctx, env, "", "tenant", "list")
		if r.err != nil {
			t.Fatal(r.err)
		}
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[1], "alpha") || !strings.HasPrefix(lines[2], "beta") {
			t.Fatalf("tenant list:\n%s", r.stdout)
		}
		if f := strings.Fields(lines[2]); f[5] != "12345" || f[3] != "1" || f[2] != "active" {
			t.Errorf("beta line %q: want active, 1 user and cap 12345", lines[2])
		}
		if f := strings.Fields(lines[1]); f[5] != "1073741824" {
			t.Errorf("alpha line %q: want the default cap", lines[1])
		}

		// reset-password: a new password works, the old does not, and the
		// user's tokens are revoked.
		db, err := store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		alpha, _ := db.TenantBySlug(ctx, "alpha")
		user, _ := userTables(db).UserByEmail(ctx, alpha.ID, "admin@alpha.test")
		if err := auth.NewTables(db).InsertTokens(ctx, db, alpha.ID, auth.TokenPair{AccessHash: []byte("a-hash-of-32-bytes-aaaaaaaaaaaaa"), RefreshHash: []byte("r-hash-of-32-bytes-rrrrrrrrrrrrr"),
			UserID: user.ID, FamilyID: []byte("family"), AccessExpiry: farFuture, RefreshExpiry: farFuture}); err != nil {
			t.Fatal(err)
		}
		r = run(ctx, env, "new-password-2\n", "user", "reset-password", "--tenant", "alpha", "--email", "ADMIN@alpha.test")
		if r.err != nil {
			t.Fatalf("reset-password: %v %s", r.err, r.stderr)
		}
		user, _ = userTables(db).UserByEmail(ctx, alpha.ID, "admin@alpha.test")
		h := auth.NewHasher(1)
		if ok, _ := h.Verify(ctx, "new-password-2", user.PasswordHash); !ok {
			t.Error("the new password does not verify")
		}
		if ok, _ := h.Verify(ctx, "first-password", user.PasswordHash); ok {
			t.Error("the old password still verifies")
		}
		tok, err := auth.NewTables(db).AccessTokenByHash(ctx, alpha.ID, []byte("a-hash-of-32-bytes-aaaaaaaaaaaaa"))
		if err != nil || !tok.Revoked {
			t.Errorf("access token after reset: %+v %v, want revoked", tok, err)
		}
		for _, c := range []struct {
			env  map[string]string
			args []string
		}{
			{env, []string{"user", "reset-password", "--tenant", "alpha", "--email", "ghost@alpha.test", "--password", "whatever-1"}},
			{env, []string{"user", "reset-password", "--tenant", "nobody", "--email", "admin@alpha.test", "--password", "whatever-1"}},
			{env, []string{"user", "reset-password", "--tenant", "alpha"}},
		} {
			if r := run(ctx, c.env, "", c.args...); r.err == nil {
				t.Errorf("%v: accepted", c.args)
			}
		}
		// A password only has to be non-empty: one character will do.
		if r := run(ctx, env, "", "user", "reset-password", "--tenant", "alpha", "--email", "admin@alpha.test", "--password", "z"); r.err != nil {
			t.Fatalf("reset-password to a one-character password: %v %s", r.err, r.stderr)
		}
		user, _ = userTables(db).UserByEmail(ctx, alpha.ID, "admin@alpha.test")
		if ok, _ := h.Verify(ctx, "z", user.PasswordHash); !ok {
			t.Error("the one-character password does not verify")
		}
		// An empty one is refused, and the password stays.
		if r := run(ctx, env, "\n", "user", "reset-password", "--tenant", "alpha", "--email", "admin@alpha.test"); !errors.Is(r.err, app.ErrUsage) {
			t.Errorf("reset-password to an empty password: err = %v, want ErrUsage", r.err)
		}
		user, _ = userTables(db).UserByEmail(ctx, alpha.ID, "admin@alpha.test")
		if ok, _ := h.Verify(ctx, "z", user.PasswordHash); !ok {
			t.Error("a refused reset changed the password")
		}
		// The password from PLANWERK_PASSWORD.
		env2 := map[string]string{"PLANWERK_DATABASE": dsn, "PLANWERK_FILES": env["PLANWERK_FILES"], "PLANWERK_PASSWORD": "from-the-env-3"}
		if r := run(ctx, env2, "", "user", "reset-password", "--tenant", "beta", "--email", "admin@beta.test"); r.err != nil {
			t.Fatal(r.err)
		}
		beta, _ := db.TenantBySlug(ctx, "beta")
		u, _ := userTables(db).UserByEmail(ctx, beta.ID, "admin@beta.test")
		if ok, _ := h.Verify(ctx, "from-the-env-3", u.PasswordHash); !ok {
			t.Error("PLANWERK_PASSWORD not used")
		}
	})
}

// TestBackup copies a SQLite database while another connection holds its
// write lock, with an insert not yet committed, for the whole backup: the
// copy has what was committed before and not the uncommitted row, and
// backup and tenant list leave the live database byte for byte as it was.
// PostgreSQL is refused.
func TestBackup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "live.db")
	dsn := "sqlite:" + path
	env := map[string]string{"PLANWERK_DATABASE": dsn, "PLANWERK_FILES": filepath.Join(dir, "files")}
	if r := run(ctx, env, "", "tenant", "create", "--slug", "alpha", "--admin-email", "a@alpha.test", "--admin-password", "first-password"); r.err != nil {
		t.Fatal(r.err)
	}
	live := openStore(t, dsn)
	alpha, err := live.TenantBySlug(ctx, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	const committed = 50
	for i := 0; i < committed; i++ {
		insertProject(t, live, alpha.ID, map[string]any{"state": "committed", "n": i})
	}
	unlock := holdWriteLock(t, path, alpha.ID)
	defer unlock()
	before := fileBytes(t, path, path+"-wal")

	out := filepath.Join(dir, "copy.db")
	start := time.Now()
	r := run(ctx, env, "", "backup", "--out", out)
	took := time.Since(start)
	if r.err != nil {
		t.Fatalf("backup while the write lock is held: %v %s", r.err, r.stderr)
	}
	t.Logf("backup took %v while another connection held the write lock", took)
	if !bytes.Equal(fileBytes(t, path, path+"-wal"), before) {
		t.Error("backup changed the live database")
	}
	if r := run(ctx, env, "", "tenant", "list"); r.err != nil || !strings.Contains(r.stdout, "alpha") {
		t.Errorf("tenant list while the write lock is held: %v %q", r.err, r.stdout)
	}
	if !bytes.Equal(fileBytes(t, path, path+"-wal"), before) {
		t.Error("tenant list changed the live database")
	}
	unlock()

	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the copy's mode: %v %v, want 0600: it holds every tenant's data", fi.Mode(), err)
	}
	cp := openStore(t, "sqlite:"+out)
	if _, err := cp.TenantBySlug(ctx, "alpha"); err != nil {
		t.Errorf("the copy lacks the tenant: %v", err)
	}
	var got, uncommitted int
	if err := cp.QueryRowContext(ctx, `SELECT count(*) FROM records WHERE json_extract(doc, '$.state') = 'committed'`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if err := cp.QueryRowContext(ctx, `SELECT count(*) FROM records WHERE json_extract(doc, '$.state') = 'uncommitted'`).Scan(&uncommitted); err != nil {
		t.Fatal(err)
	}
	if got != committed || uncommitted != 0 {
		t.Errorf("the copy has %d committed rows (want %d) and %d uncommitted (want 0)", got, committed, uncommitted)
	}
	if err := cp.CheckSchema(ctx); err != nil {
		t.Errorf("the copy's schema: %v", err)
	}

	if r := run(ctx, env, "", "backup", "--out", out); r.err == nil {
		t.Error("backup over an existing file accepted")
	}
	if r := run(ctx, env, "", "backup"); !errors.Is(r.err, app.ErrUsage) {
		t.Errorf("backup without --out: %v", r.err)
	}
	pg := map[string]string{"PLANWERK_DATABASE": testenv.DSN(t, testenv.Backend{Name: "postgres"}), "PLANWERK_FILES": filepath.Join(dir, "files")}
	if r := run(ctx, pg, "", "backup", "--out", filepath.Join(dir, "pg.db")); !errors.Is(r.err, store.ErrBackupUnsupported) {
		t.Errorf("backup of PostgreSQL: %v, want a pointer to pg_dump", r.err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pg.db")); err == nil {
		t.Error("a file was written for PostgreSQL")
	}
}

func insertProject(t *testing.T, db *store.DB, tenantID int64, doc map[string]any) {
	t.Helper()
	ctx := context.Background()
	err := db.Tx(ctx, func(q store.Querier) error {
		id, err := db.NewID(ctx, q, tenantID)
		if err != nil {
			return err
		}
		_, err = db.InsertRecord(ctx, q, tenantID, store.Collection{Table: "records", Resource: "projects"}, id, doc)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// holdWriteLock takes the write lock of the SQLite database at path on a
// connection of its own (BEGIN IMMEDIATE and an insert, kept open) and
// returns the function that rolls it back; a second call does nothing.
func holdWriteLock(t *testing.T, path string, tenantID int64) func() {
	t.Helper()
	ctx := context.Background()
	pool, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	conn, err := pool.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, `INSERT INTO records (tenant_id, id, resource, doc, created_at, updated_at)
		VALUES ($1, 1000000, 'projects', '{"state":"uncommitted"}', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`, tenantID); err != nil {
		t.Fatal(err)
	}
	// The lock is held: a writer that does not wait is refused at once.
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if tx, err := other.BeginTx(ctx, nil); err == nil {
		tx.Rollback()
		t.Fatal("a second writer got the write lock")
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			if _, err := conn.ExecContext(ctx, `ROLLBACK`); err != nil {
				t.Error(err)
			}
			conn.Close()
		})
	}
}

// fileBytes returns the contents of the files, a missing one as empty.
func fileBytes(t *testing.T, paths ...string) []byte {
	t.Helper()
	var all []byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		all = append(all, b...)
		all = append(all, 0xff) // a boundary, so that bytes cannot move between files unseen
	}
	return all
}

var farFuture = time.Now().Add(24 * time.Hour)
