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

// TestStatisticsOfEveryTenant (SQLite): the statistics are those of the
// whole table, not of its first rows. Tenant A's rows come first in
// every index led by tenant_id: a few resources, and time entries of two
// days; tenant B's entries are of five days, each of more entries than
// SQLite's bounded analysis reads (2,000). A day of B must be planned by
// the day index, after the renewal (PRAGMA optimize) and after
// Analyze (an import's) alike: statistics of A's rows alone made a day as
// large as a whole resource, and SQLite read all of B's entries for it.
func TestStatisticsOfEveryTenant(t *testing.T) {
	t.Parallel()
	for _, renew := range []string{"refresh", "analyze"} {
		t.Run(renew, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := testenv.Open(t, testenv.MigratedDSN(t, testenv.Backend{Name: "sqlite"}))
			a, err := db.InsertTenant(ctx, db, "first", "First")
			if err != nil {
				t.Fatal(err)
			}
			b, err := db.InsertTenant(ctx, db, "second", "Second")
			if err != nil {
				t.Fatal(err)
			}
			insert := func(tenant int64, resource string, n int, doc func(i int) map[string]any) {
				t.Helper()
				docs := make([]map[string]any, n)
				for i := range docs {
					docs[i] = doc(i)
				}
				if err := db.Tx(ctx, func(q store.Querier) error {
					_, err := db.InsertRecords(ctx, q, tenant, store.Collection{Table: "records", Resource: resource}, docs)
					return err
				}); err != nil {
					t.Fatal(err)
				}
			}
			for _, r := range []string{"projects", "tasks"} {
				insert(a.ID, r, 500, func(i int) map[string]any { return map[string]any{"name": fmt.Sprint(r, i)} })
			}
			insert(a.ID, "time-entries", statsFirstDays*statsPerDay, func(i int) map[string]any {
				return map[string]any{"user": 100 + i%50, "project": 200, "day": fmt.Sprintf("2025-01-%02d", 6+i/statsPerDay), "duration": 600}
			})
			insert(b.ID, "time-entries", 5*statsPerDay, func(i int) map[string]any {
				return map[string]any{"user": 100 + i%50, "project": 200 + i%7, "day": fmt.Sprintf("2025-03-%02d", 3+i/statsPerDay), "duration": 600}
			})
			if renew == "refresh" {
				err = db.RefreshStatistics(ctx)
			} else {
				err = db.Analyze(ctx, "records")
			}
			if err != nil {
				t.Fatal(err)
			}
			rows, err := db.QueryContext(ctx, `EXPLAIN QUERY PLAN SELECT doc FROM records WHERE tenant_id = $1 AND resource = 'time-entries'
				AND json_extract(doc, '$.day') = $2 ORDER BY id LIMIT 10000`, b.ID, "2025-03-05")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var plan []string
			for rows.Next() {
				var id, parent, notused int
				var detail string
				if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			if p := strings.Join(plan, "; "); !strings.Contains(p, "time_entries_by_day") {
				t.Errorf("a day of the second tenant is planned by: %s", p)
			}
			var stat4 int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name = 'sqlite_stat4'`).Scan(&stat4); err != nil {
				t.Fatal(err)
			}
			if stat4 > 0 {
				var n int
				if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_stat4`).Scan(&n); err != nil || n > 0 {
					t.Errorf("histograms kept: %d (%v)", n, err)
				}
			}
		})
	}
}

// The days of the first tenant's time entries in
// TestStatisticsOfEveryTenant, and the entries of each of either
// tenant's days.
const statsFirstDays, statsPerDay = 2, 2500
