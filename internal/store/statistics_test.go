package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// seedEntries stores time entries of a tenant: users × days × 3.
func seedEntries(t *testing.T, db *store.DB, tenantID int64, users, days int) {
	t.Helper()
	ctx := context.Background()
	c := store.Collection{Table: "records", Resource: "time-entries"}
	err := db.Tx(ctx, func(q store.Querier) error {
		for d := range days {
			for u := range users {
				for k := range 3 {
					id, err := db.NewID(ctx, q, tenantID)
					if err != nil {
						return err
					}
					doc := map[string]any{"user": 100 + u, "project": 200 + (u+k)%5, "day": fmt.Sprintf("2025-03-%02d", d+1), "duration": 600}
					if _, err := db.InsertRecord(ctx, q, tenantID, c, id, doc); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRefreshStatistics (SQLite): the renewal of the planner's statistics
// reaches connections that were open before it, which keep the
// statistics they read with the schema; a renewal with nothing to renew
// writes nothing.
func TestRefreshStatistics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testenv.MigratedDSN(t, testenv.Backend{Name: "sqlite"})
	db := testenv.Open(t, dsn)
	tn, err := db.InsertTenant(ctx, db, "stats", "Stats")
	if err != nil {
		t.Fatal(err)
	}
	seedEntries(t, db, tn.ID, 40, 20)

	// A reader open since before the renewal, as the service's are.
	path, _ := db.LocalFile()
	reader, err := sql.Open("sqlite", "file:"+path+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	reader.SetMaxOpenConns(1)
	const userDay = `SELECT doc FROM records WHERE tenant_id = $1 AND resource = 'time-entries'
		AND json_extract(doc, '$.day') = $2 AND json_extract(doc, '$.user') = $3 ORDER BY id LIMIT 10000`
	plan := func() string {
		t.Helper()
		// A statement that runs (EXPLAIN does not) reads a changed schema.
		var n int
		if err := reader.QueryRowContext(ctx, `SELECT count(*) FROM tenants`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		rows, err := reader.QueryContext(ctx, "EXPLAIN QUERY PLAN "+userDay, tn.ID, "2025-03-05", 107)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var lines []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, detail)
		}
		return strings.Join(lines, "; ")
	}
	before := plan()
	if strings.Contains(before, "time_entries_by_user_day") {
		t.Fatalf("without statistics the user's day is planned by (user, day) already: %s", before)
	}

	version := func() int {
		var v int
		if err := db.QueryRowContext(ctx, `PRAGMA schema_version`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	v0 := version()
	if err := db.RefreshStatistics(ctx); err != nil {
		t.Fatal(err)
	}
	if after := plan(); !strings.Contains(after, "time_entries_by_user_day") {
		t.Errorf("after the renewal, the reader open before it plans the user's day by: %s (before: %s)", after, before)
	}
	v1 := version()
	if v1 == v0 {
		t.Errorf("the renewal left the schema as it was (version %d): readers keep the statistics they have", v0)
	}
	if err := db.RefreshStatistics(ctx); err != nil {
		t.Fatal(err)
	}
	if v := version(); v != v1 {
		t.Errorf("a renewal with nothing to renew changed the schema (version %d, then %d)", v1, v)
	}
}

// TestAnalyze: Analyze renews the statistics of the tables it names, on
// both engines, and refuses a name that is not a table's.
func TestAnalyze(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := testenv.OpenDB(t, b)
		tn, err := db.InsertTenant(ctx, db, "analyze", "Analyze")
		if err != nil {
			t.Fatal(err)
		}
		seedEntries(t, db, tn.ID, 10, 10)
		if err := db.Analyze(ctx, "records; DROP TABLE records"); err == nil {
			t.Error("Analyze took a name that is not a table's")
		}
		if err := db.Analyze(ctx, "records"); err != nil {
			t.Fatal(err)
		}
		var rows int64
		q := `SELECT CAST(substr(stat, 1, instr(stat || ' ', ' ') - 1) AS INTEGER) FROM sqlite_stat1 WHERE idx = 'records_by_resource'`
		if b.Name == "postgres" {
			q = `SELECT reltuples::bigint FROM pg_class WHERE oid = 'records'::regclass`
		}
		if err := db.QueryRowContext(ctx, q).Scan(&rows); err != nil || rows != 300 {
			t.Errorf("rows of records by the statistics: %d (%v), want 300", rows, err)
		}
	})
}
