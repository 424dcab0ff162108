package lifecycle_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"planwerk/internal/filestore"
	"planwerk/internal/lifecycle"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// TestImportAnalyzes: an import of a tenant with many time entries
// leaves the planner's statistics knowing them before the tenant is
// served, on both engines.
func TestImportAnalyzes(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "big")
		db := srv.Service.DB
		const entries = 1500
		c := store.Collection{Table: "records", Resource: "time-entries"}
		if err := db.Tx(ctx, func(q store.Querier) error {
			for i := range entries {
				id, err := db.NewID(ctx, q, tn.ID)
				if err != nil {
					return err
				}
				doc := map[string]any{"user": tn.AdminID, "trackingType": "BREAK", "day": fmt.Sprintf("2025-03-%02d", i%28+1), "duration": 60, "sorting": i}
				if _, err := db.InsertRecord(ctx, q, tn.ID, c, id, doc); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		archive := filepath.Join(dir, "big.tar.zst")
		f, err := os.Create(archive)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := lifecycle.Export(ctx, db, srv.Service.Files, "big", f, lifecycle.ExportOptions{Secrets: true, TempDir: dir}); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}

		target := testenv.OpenDB(t, b)
		rowsKnown := `SELECT coalesce(max(CAST(substr(stat, 1, instr(stat || ' ', ' ') - 1) AS INTEGER)), 0) FROM sqlite_stat1 WHERE tbl = 'records'`
		if b.Name == "postgres" {
			// Only the import may analyze the table here.
			if _, err := target.ExecContext(ctx, `ALTER TABLE records SET (autovacuum_enabled = false)`); err != nil {
				t.Fatal(err)
			}
			rowsKnown = `SELECT greatest(reltuples, 0)::bigint FROM pg_class WHERE oid = 'records'::regclass`
		}
		files, err := filestore.Open(ctx, filepath.Join(dir, "files"))
		if err != nil {
			t.Fatal(err)
		}
		in, err := os.Open(archive)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		if _, err := lifecycle.Import(ctx, target, files, in, lifecycle.ImportOptions{TempDir: dir}); err != nil {
			t.Fatal(err)
		}
		var known, stats int64
		if b.Name == "sqlite" {
			// No statistics at all: the table of them is not there yet.
			if err := target.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name = 'sqlite_stat1'`).Scan(&stats); err != nil {
				t.Fatal(err)
			}
		}
		if b.Name == "postgres" || stats > 0 {
			if err := target.QueryRowContext(ctx, rowsKnown).Scan(&known); err != nil {
				t.Fatal(err)
			}
		}
		if known < entries {
			t.Errorf("the statistics know %d rows of records after the import, want at least %d", known, entries)
		}
	})
}
