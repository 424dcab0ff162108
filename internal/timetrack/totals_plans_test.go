package timetrack_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"planwerk/internal/testenv"
)

// TestTotalsPlans: every statement the time totals run (the writes'
// upserts and the reports' sums) reads time_totals through its primary
// key, bounded by the tenant, the dimension, the grain and the period
// (a write: by the whole key), never a scan of the table or of a
// tenant's rows, on both engines. The statements are the service's own,
// from its statement log, planned by the engine with their parameters.
func TestTotalsPlans(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		srv, log := testenv.StartWithStatements(t, b)
		a := srv.SignIn(t, srv.CreateTenant(t, "totalplans"))
		p := testenv.ID(t, a.Create(t, "projects", M{"name": "P"}))
		task := testenv.ID(t, a.Create(t, "tasks", M{"name": "T", "project": p}))
		mark := log.Len()
		for i, day := range []string{"2026-01-30", "2026-02-02", "2026-03-31"} {
			e := a.Create(t, "time-entries", M{"project": p, "task": task, "day": day, "duration": 60 * (i + 1), "sorting": 1})
			a.Object(t, http.MethodPatch, entryPath(t, e), M{"duration": 600}, http.StatusOK)
		}
		for _, groupBy := range []string{"", "user", "project", "day"} {
			totals := "/v1/analytics/time-totals?from=2026-01-15&to=2026-12-31&groupBy=" + groupBy
			a.Object(t, http.MethodGet, totals, nil, http.StatusOK)
		}
		var stmts []testenv.Statement
		for _, st := range log.Since(mark) {
			if strings.Contains(st.SQL, "time_totals") {
				stmts = append(stmts, st)
			}
		}
		if len(stmts) < 2 {
			t.Fatalf("%d statements on time_totals in the log", len(stmts))
		}
		explain := "EXPLAIN QUERY PLAN "
		if b.Name == "postgres" {
			explain = "EXPLAIN "
		}
		db, err := sql.Open(map[string]string{"sqlite": "sqlite", "postgres": "pgx"}[b.Name],
			strings.TrimPrefix(srv.Config.Database, "sqlite:"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if b.Name == "postgres" {
			// Is there a plan that narrows the rows? (Few rows: PostgreSQL
			// would rightly rather read them all.)
			if _, err := conn.ExecContext(ctx, `SET enable_seqscan = off`); err != nil {
				t.Fatal(err)
			}
		}
		for _, st := range stmts {
			rows, err := conn.QueryContext(ctx, explain+st.SQL, st.Args...)
			if err != nil {
				t.Fatalf("explain: %v\n%s", err, st.SQL)
			}
			var plan []string
			for rows.Next() {
				cols, _ := rows.Columns()
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, fmt.Sprint(vals[len(vals)-1]))
			}
			rows.Close()
			text := strings.Join(plan, "\n")
			if bad := wholeTotals(b.Name, st.SQL, text); bad != "" {
				t.Errorf("%s\nreads %s:\n%s", st.SQL, bad, text)
			}
		}
	})
}

var (
	// SQLite: a search of the primary key bounded beyond the tenant.
	sqliteTotalsSearch = regexp.MustCompile(`SEARCH (time_totals|t)\b.*USING PRIMARY KEY \(tenant_id=\? AND dim=\? AND grain=\? AND period[>=<]`)
	sqliteTotalsScan   = regexp.MustCompile(`SCAN time_totals\b`)
	// PostgreSQL: an index scan of the primary key with the period in its condition.
	pgTotalsSeq   = regexp.MustCompile(`Seq Scan on time_totals`)
	pgTotalsIndex = regexp.MustCompile(`Index Cond: \(\(tenant_id = .*dim = .*grain = .*period >= `)
)

// wholeTotals names what a plan of a statement on time_totals reads too
// much of ("" when it reads only what its bounds allow).
func wholeTotals(engine, stmt, plan string) string {
	if strings.HasPrefix(stmt, "INSERT") {
		// An upsert finds its row by the whole key, on either engine.
		return ""
	}
	switch engine {
	case "sqlite":
		if sqliteTotalsScan.MatchString(plan) {
			return "the whole table"
		}
		if n := strings.Count(stmt, "FROM time_totals"); len(sqliteTotalsSearch.FindAllString(plan, -1)) < n {
			return "a part not bounded by the period"
		}
	case "postgres":
		if pgTotalsSeq.MatchString(plan) {
			return "the whole table"
		}
		if n := strings.Count(stmt, "FROM time_totals"); len(pgTotalsIndex.FindAllString(plan, -1)) < n {
			return "a part not bounded by the period"
		}
	}
	return ""
}
