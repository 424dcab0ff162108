package app_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"planwerk/internal/app"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// TestCommandsNeedMigratedDatabase: on a database that was never migrated,
// or whose last migration is missing, the commands that must not migrate
// fail with a usage error telling the operator to run planwerk migrate, and
// leave the database as they found it.
func TestCommandsNeedMigratedDatabase(t *testing.T) {
	t.Parallel()
	commands := [][]string{
		{"tenant", "list"},
		{"tenant", "set-storage", "--slug", "alpha", "--bytes", "1"},
		{"user", "reset-password", "--tenant", "alpha", "--email", "a@alpha.test", "--password", "new-password"},
	}
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		dir := t.TempDir()
		dsn := testenv.DSN(t, b)
		env := map[string]string{"PLANWERK_DATABASE": dsn, "PLANWERK_FILES": filepath.Join(dir, "files")}
		cmds := commands
		if b.Name == "sqlite" {
			cmds = append(cmds, []string{"backup", "--out", filepath.Join(dir, "copy.db")})
		}
		refused := func(want string) {
			t.Helper()
			for _, args := range cmds {
				r := run(ctx, env, "", args...)
				if !errors.Is(r.err, app.ErrUsage) || !strings.Contains(r.err.Error(), `run "planwerk migrate"`) || !strings.Contains(r.err.Error(), want) {
					t.Errorf("%v: %v, want a usage error saying %q and to run planwerk migrate", args, r.err, want)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "copy.db")); err == nil {
				t.Error("backup wrote a copy of an unmigrated database")
			}
		}

		refused("")
		if path, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a command created the database file (%v)", err)
			}
			// An empty file, as an interrupted first start leaves it.
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		refused("never migrated")
		db := openStore(t, dsn)
		if n := tableCount(t, db); n != 0 {
			t.Fatalf("the commands created %d tables in a database that was never migrated", n)
		}

		// A database an earlier release migrated: its last migration missing.
		if r := run(ctx, env, "", "tenant", "create", "--slug", "alpha", "--admin-email", "a@alpha.test", "--admin-password", "first-password"); r.err != nil {
			t.Fatal(r.err)
		}
		if _, err := db.ExecContext(ctx, `DELETE FROM schema_migrations WHERE version_id = (SELECT max(version_id) FROM schema_migrations)`); err != nil {
			t.Fatal(err)
		}
		versions := count(t, db, "schema_migrations")
		refused("at version")
		if n := count(t, db, "schema_migrations"); n != versions {
			t.Fatalf("schema_migrations has %d rows after the refused commands, want %d", n, versions)
		}
		if r := run(ctx, env, "", "migrate"); r.err != nil {
			t.Fatal(r.err)
		}
		for _, args := range cmds {
			if r := run(ctx, env, "", args...); r.err != nil {
				t.Errorf("%v after planwerk migrate: %v %s", args, r.err, r.stderr)
			}
		}
	})
}

// tableCount counts the tables of the database (PostgreSQL: of its schema).
func tableCount(t *testing.T, db *store.DB) int {
	t.Helper()
	q := `SELECT count(*) FROM sqlite_master WHERE type = 'table'`
	if db.Engine() == "postgres" {
		q = `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()`
	}
	var n int
	if err := db.QueryRowContext(context.Background(), q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
