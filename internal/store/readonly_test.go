package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// TestOpenReadOnlyMissingFile: a SQLite file that is not there is reported
// as not migrated, and not created.
func TestOpenReadOnlyMissingFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "absent", "planwerk.db")
	_, err := store.OpenReadOnly(context.Background(), "sqlite:"+path)
	if !errors.Is(err, store.ErrNotMigrated) {
		t.Fatalf("open a missing file: %v, want ErrNotMigrated", err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the folder of a missing database was created (%v)", err)
	}
}

// TestCheckSchema: never migrated, behind, and current, on a read-only
// connection that refuses writes and leaves an unmigrated database alone.
func TestCheckSchema(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		dsn := testenv.DSN(t, b)
		db, err := store.Open(ctx, dsn) // creates an empty SQLite file
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		check := func(wantVersion string) {
			t.Helper()
			ro, err := store.OpenReadOnly(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer ro.Close()
			err = ro.CheckSchema(ctx)
			switch {
			case wantVersion == "" && err != nil:
				t.Errorf("current schema: %v", err)
			case wantVersion != "" && (!errors.Is(err, store.ErrNotMigrated) || !strings.Contains(err.Error(), wantVersion)):
				t.Errorf("CheckSchema: %v, want ErrNotMigrated mentioning %q", err, wantVersion)
			}
		}
		check("never migrated")
		if tableExists(t, db, "schema_migrations") {
			t.Fatal("checking the schema created the version table")
		}
		if err := db.MigrateTo(ctx, beforePublicHoliday); err != nil {
			t.Fatal(err)
		}
		check("at version")
		if _, err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		check("")

		ro, err := store.OpenReadOnly(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		if _, err := ro.ExecContext(ctx, `INSERT INTO tenants (slug, name, created_at, updated_at) VALUES ('x', 'x', 'x', 'x')`); err == nil {
			t.Error("a read-only connection wrote")
		}
		if err := ro.Tx(ctx, func(q store.Querier) error {
			_, err := q.ExecContext(ctx, `UPDATE tenants SET name = name`)
			return err
		}); err == nil {
			t.Error("a read-only transaction wrote")
		}
	})
}

func tableExists(t *testing.T, db *store.DB, name string) bool {
	t.Helper()
	q := `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = $1`
	if db.Engine() == "postgres" {
		q = `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = $1`
	}
	return count(t, db, q, name) > 0
}

// TestBackupFailureLeavesNoFile: a copy that fails is removed, and a file
// already at the path is neither overwritten nor removed.
func TestBackupFailureLeavesNoFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testenv.DSN(t, testenv.Backend{Name: "sqlite"})
	db, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "copy.db")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := db.Backup(cancelled, out); err == nil {
		t.Fatal("backup with a cancelled context succeeded")
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed backup left %s behind (%v)", out, err)
	}
	if err := os.WriteFile(out, []byte("someone else's"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := db.Backup(ctx, out); err == nil {
		t.Fatal("backup over an existing file succeeded")
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "someone else's" {
		t.Errorf("the existing file: %q %v", b, err)
	}
}
