package app_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
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
		if f := strings.Fields(lines[2]); f[4] != "12345" || f[2] != "1" {
			t.Errorf("beta line %q: want 1 user and cap 12345", lines[2])
		}
		if f := strings.Fields(lines[1]); f[4] != "1073741824" {
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
		user, _ := db.UserByEmail(ctx, alpha.ID, "admin@alpha.test")
		if err := db.InsertTokens(ctx, db, alpha.ID, store.TokenPair{AccessHash: []byte("a-hash-of-32-bytes-aaaaaaaaaaaaa"), RefreshHash: []byte("r-hash-of-32-bytes-rrrrrrrrrrrrr"),
			UserID: user.ID, FamilyID: []byte("family"), AccessExpiry: farFuture, RefreshExpiry: farFuture}); err != nil {
			t.Fatal(err)
		}
		r = run(ctx, env, "new-password-2\n", "user", "reset-password", "--tenant", "alpha", "--email", "ADMIN@alpha.test")
		if r.err != nil {
			t.Fatalf("reset-password: %v %s", r.err, r.stderr)
		}
		user, _ = db.UserByEmail(ctx, alpha.ID, "admin@alpha.test")
		h := auth.NewHasher(1)
		if ok, _ := h.Verify(ctx, "new-password-2", user.PasswordHash); !ok {
			t.Error("the new password does not verify")
		}
		if ok, _ := h.Verify(ctx, "first-password", user.PasswordHash); ok {
			t.Error("the old password still verifies")
		}
		tok, err := db.AccessTokenByHash(ctx, alpha.ID, []byte("a-hash-of-32-bytes-aaaaaaaaaaaaa"))
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
		user, _ = db.UserByEmail(ctx, alpha.ID, "admin@alpha.test")
		if ok, _ := h.Verify(ctx, "z", user.PasswordHash); !ok {
			t.Error("the one-character password does not verify")
		}
		// An empty one is refused, and the password stays.
		if r := run(ctx, env, "\n", "user", "reset-password", "--tenant", "alpha", "--email", "admin@alpha.test"); !errors.Is(r.err, app.ErrUsage) {
			t.Errorf("reset-password to an empty password: err = %v, want ErrUsage", r.err)
		}
		user, _ = db.UserByEmail(ctx, alpha.ID, "admin@alpha.test")
		if ok, _ := h.Verify(ctx, "z", user.PasswordHash); !ok {
			t.Error("a refused reset changed the password")
		}
		// The password from PLANWERK_PASSWORD.
		env2 := map[string]string{"PLANWERK_DATABASE": dsn, "PLANWERK_FILES": env["PLANWERK_FILES"], "PLANWERK_PASSWORD": "from-the-env-3"}
		if r := run(ctx, env2, "", "user", "reset-password", "--tenant", "beta", "--email", "admin@beta.test"); r.err != nil {
			t.Fatal(r.err)
		}
		beta, _ := db.TenantBySlug(ctx, "beta")
		u, _ := db.UserByEmail(ctx, beta.ID, "admin@beta.test")
		if ok, _ := h.Verify(ctx, "from-the-env-3", u.PasswordHash); !ok {
			t.Error("PLANWERK_PASSWORD not used")
		}
	})
}

// TestBackup copies a SQLite database that another connection keeps
// writing to, and the copy opens with all tenants; PostgreSQL is refused.
func TestBackup(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dsn := "sqlite:" + filepath.Join(dir, "live.db")
	env := map[string]string{"PLANWERK_DATABASE": dsn, "PLANWERK_FILES": filepath.Join(dir, "files")}
	if r := run(ctx, env, "", "tenant", "create", "--slug", "alpha", "--admin-email", "a@alpha.test", "--admin-password", "first-password"); r.err != nil {
		t.Fatal(r.err)
	}
	live, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // a writer that does not pause for the backup
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_ = live.Tx(ctx, func(q store.Querier) error {
				id, err := live.NewID(ctx, q, 1)
				if err != nil {
					return err
				}
				_, err = live.InsertRecord(ctx, q, 1, store.Collection{Table: "records", Resource: "projects"}, id, map[string]any{"n": i})
				return err
			})
		}
	}()
	out := filepath.Join(dir, "copy.db")
	r := run(ctx, env, "", "backup", "--out", out)
	close(stop)
	<-done
	if r.err != nil {
		t.Fatalf("backup: %v %s", r.err, r.stderr)
	}
	cp, err := store.Open(ctx, "sqlite:"+out)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	if _, err := cp.TenantBySlug(ctx, "alpha"); err != nil {
		t.Errorf("the copy lacks the tenant: %v", err)
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

var farFuture = time.Now().Add(24 * time.Hour)
