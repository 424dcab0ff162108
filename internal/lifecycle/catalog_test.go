package lifecycle_test

import (
	"context"
	"strings"
	"testing"

	"planwerk/internal/lifecycle"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// liveTables reads each table of db's schema with its columns from the
// engine's catalog.
func liveTables(t *testing.T, db *store.DB) map[string][]string {
	t.Helper()
	q := `SELECT m.name, p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table' ORDER BY m.name, p.cid`
	if db.Engine() == "postgres" {
		q = `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`
	}
	rows, err := db.QueryContext(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	live := map[string][]string{}
	for rows.Next() {
		var table, column string
		if err := rows.Scan(&table, &column); err != nil {
			t.Fatal(err)
		}
		live[table] = append(live[table], column)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return live
}

// TestCatalog: every table of either engine that holds tenant rows is
// exported, column by column, or skipped with a reason; a table or a
// column added later without a word in the catalog fails here.
func TestCatalog(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		db := testenv.OpenDB(t, b)
		if problems := lifecycle.CatalogProblems(db.Engine(), liveTables(t, db)); len(problems) > 0 {
			t.Errorf("the archive's catalog and the schema differ:\n%s", strings.Join(problems, "\n"))
		}
		// A new table of tenant rows, and a new column of an exported
		// table: both reported.
		for _, stmt := range []string{
			`CREATE TABLE gadgets (tenant_id BIGINT NOT NULL, id BIGINT NOT NULL, PRIMARY KEY (tenant_id, id))`,
			`ALTER TABLE records ADD COLUMN colour TEXT`,
		} {
			if _, err := db.ExecContext(context.Background(), stmt); err != nil {
				t.Fatal(err)
			}
		}
		problems := strings.Join(lifecycle.CatalogProblems(db.Engine(), liveTables(t, db)), "\n")
		for _, want := range []string{"table gadgets holds tenant rows", "column records.colour"} {
			if !strings.Contains(problems, want) {
				t.Errorf("no problem %q reported for a new table and column; got:\n%s", want, problems)
			}
		}
	})
}
