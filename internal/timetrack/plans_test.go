package timetrack_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"planwerk/internal/testenv"
)

// The indexes of time entries (migrations 00002, 00007 and 00030).
const (
	byUserDay    = "time_entries_by_user_day"
	byProjectDay = "time_entries_by_project_day"
	byDay        = "time_entries_by_day"
)

// planQuestion is one question a company asks of its time entries: the
// requests that ask it, and the indexes that may serve the statements
// the service runs on time entries for it. Any statement on records
// (time entries or not) must never read all of a tenant's records.
type planQuestion struct {
	name string
	ask  func(t *testing.T, c *testenv.Client, w planWorld)
	// entries are the indexes that serve the question's statements on
	// time entries.
	entries []string
}

// planWorld is what the questions ask about.
type planWorld struct {
	user, project int64
	day           string
}

// planQuestions are the questions, table-driven: a question added here
// is planned on both engines, with and without statistics.
var planQuestions = []planQuestion{
	{name: "a user's day (where)", entries: []string{byUserDay, byDay}, ask: func(t *testing.T, c *testenv.Client, w planWorld) {
		listWhere(t, c, M{"user": w.user, "day": w.day})
	}},
	{name: "a user's day (filters)", entries: []string{byUserDay, byDay}, ask: func(t *testing.T, c *testenv.Client, w planWorld) {
		c.List(t, fmt.Sprintf("/v1/time-entries?user=%d&day=%s", w.user, w.day))
	}},
	{name: "a user's week", entries: []string{byUserDay, byDay}, ask: func(t *testing.T, c *testenv.Client, w planWorld) {
		listWhere(t, c, M{"user": w.user, "day": M{">=": "2025-03-10", "<=": "2025-03-16"}})
	}},
	{name: "a user's month", entries: []string{byUserDay, byDay}, ask: func(t *testing.T, c *testenv.Client, w planWorld) {
		listWhere(t, c, M{"user": w.user, "day": M{">=": "2025-03-01", "<=": "2025-03-31"}})
	}},
	{name: "a project's month by day", entries: []string{byProjectDay, byDay}, ask: func(t *testing.T, c *testenv.Client, w planWorld) {
		w1, err := json.Marshal(M{"project": w.project, "day": M{">=": "2025-03-01", "<=": "2025-03-31"}})
		if err != nil {
			t.Fatal(err)
		}
		c.List(t, "/v1/time-entries?sort=day&where="+url.QueryEscape(string(w1)))
	}},
	{name: "one day of the tenant", entries: []string{byDay}, ask: func(t *testing.T, c *testenv.Client, w planWorld) {
		listWhere(t, c, M{"day": w.day})
		c.List(t, "/v1/time-entries?day="+w.day)
	}},
	// A next page (the cursor of Link) is served by the index of the
	// first page, sought to the cursor's first key.
	{name: "a project's month by day, page by page", entries: []string{byProjectDay, byDay}, ask: func(t *testing.T, c *testenv.Client, w planWorld) {
		w1, err := json.Marshal(M{"project": w.project, "day": M{">=": "2025-03-01", "<=": "2025-03-31"}})
		if err != nil {
			t.Fatal(err)
		}
		c.FollowPages(t, "/v1/time-entries?sort=day&limit=4&where="+url.QueryEscape(string(w1)))
	}},
	{name: "one day of the tenant, page by page", entries: []string{byDay}, ask: func(t *testing.T, c *testenv.Client, w planWorld) {
		c.FollowPages(t, "/v1/time-entries?limit=3&day="+w.day)
	}},
	// The totals read the entries of the range (today through the list
	// path): the day's index must serve the range.
	{name: "time totals of a month", entries: []string{byDay}, ask: func(t *testing.T, c *testenv.Client, w planWorld) {
		for _, by := range []string{"user", "project", "day"} {
			totals(t, c, "2025-03-01", "2025-03-31", by)
		}
	}},
	{name: "time totals of a year", entries: []string{byDay}, ask: func(t *testing.T, c *testenv.Client, w planWorld) {
		for _, by := range []string{"user", "project", "day"} {
			totals(t, c, "2025-01-01", "2025-12-31", by)
		}
	}},
	{name: "approving a project day", entries: []string{byProjectDay, byDay}, ask: func(t *testing.T, c *testenv.Client, w planWorld) {
		c.Array(t, http.MethodPost, "/v1/approval/bulk-approve", M{"action": "approve", "items": []M{item(w.project, w.day)}}, http.StatusOK)
	}},
	// A month at once, its days' records new and stored (one of them
	// approved by the question before): each step reads the month of the
	// project, not each day of it.
	{name: "approving a project's month", entries: []string{byProjectDay}, ask: func(t *testing.T, c *testenv.Client, w planWorld) {
		var month []M
		for _, d := range planDays {
			if strings.HasPrefix(d, "2025-03-") {
				month = append(month, item(w.project, d))
			}
		}
		for _, action := range []string{"approve", "unapprove", "approve"} {
			c.Array(t, http.MethodPost, "/v1/approval/bulk-approve", M{"action": action, "items": month}, http.StatusOK)
		}
	}},
}

// listWhere lists the time entries a where criterion selects.
func listWhere(t *testing.T, c *testenv.Client, where M) {
	t.Helper()
	w, err := json.Marshal(where)
	if err != nil {
		t.Fatal(err)
	}
	c.List(t, "/v1/time-entries?where="+url.QueryEscape(string(w)))
}

// planDays are the days of the seeded entries: March and April 2025,
// and a few in two years before, so that a month and a year are each a
// part of the tenant's entries.
var planDays = []string{
	"2025-03-03", "2025-03-04", "2025-03-05", "2025-03-06", "2025-03-07",
	"2025-03-10", "2025-03-11", "2025-03-12", "2025-03-13", "2025-03-14",
	"2025-04-01", "2025-04-02", "2025-04-03", "2025-04-04",
	"2024-03-04", "2024-03-05", "2024-03-06", "2024-03-07", "2024-03-08",
	"2023-06-05", "2023-06-06", "2023-06-07", "2023-06-08", "2023-06-09",
}

// TestPlans: the statements the service runs for a company's common
// questions of time (a user's day, week and month, a project's month,
// one day of the tenant, the time totals of a month and of a year, the
// approval of a project day and of a project's month) never read all of a tenant's records, and
// those on time entries use an index that narrows them to the question,
// on both engines: on a fresh database, before any statistics know the
// rows, and once the statistics do. The statements are the service's
// own, taken from its database's statement log while it answers, and
// each is planned by the engine (EXPLAIN) with its parameters.
func TestPlans(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		srv, log := testenv.StartWithStatements(t, b)
		var pg *sql.DB
		if b.Name == "postgres" {
			var err error
			if pg, err = sql.Open("pgx", srv.Config.Database); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { pg.Close() })
			// Fresh stays fresh: autovacuum would analyze records at a
			// moment of its own choosing, in the middle of the test.
			if _, err := pg.ExecContext(ctx, `ALTER TABLE records SET (autovacuum_enabled = false)`); err != nil {
				t.Fatal(err)
			}
		}
		w, admin := seedPlans(t, srv)

		// The statements of each question, taken once: their text and
		// parameters do not depend on the statistics, their plans may.
		asked := make([][]testenv.Statement, len(planQuestions))
		for i, q := range planQuestions {
			mark := log.Len()
			q.ask(t, admin, w)
			for _, st := range log.Since(mark) {
				if onRecords(st.SQL) && !slices.ContainsFunc(asked[i], func(o testenv.Statement) bool { return sameStatement(o, st) }) {
					asked[i] = append(asked[i], st)
				}
			}
			if len(asked[i]) == 0 {
				// A question answered from tables of its own (the totals
				// may be) has no plan on records to judge here.
				t.Logf("%s: no statement on records", q.name)
			}
		}
		if !slices.ContainsFunc(asked[0], func(st testenv.Statement) bool { return strings.Contains(st.SQL, "'time-entries'") }) {
			t.Fatalf("%s: no statement on time entries in the statement log", planQuestions[0].name)
		}

		// judge plans every question's statements; report is t.Errorf,
		// or t.Logf where the plans cannot be judged (PostgreSQL without
		// statistics, see below).
		judge := func(state string, plan func(st testenv.Statement) []access, report func(format string, args ...any)) {
			for i, q := range planQuestions {
				for _, st := range asked[i] {
					accesses := plan(st)
					if len(accesses) == 0 {
						t.Errorf("%s, %s: no access to records in the plan of\n%s", state, q.name, st.SQL)
					}
					entries := strings.Contains(st.SQL, "resource = 'time-entries'")
					for _, a := range accesses {
						switch {
						case a.whole:
							report("%s, %s: reads all of the tenant's records (%s) in\n%s\n%v", state, q.name, a.detail, st.SQL, st.Args)
						case entries && !slices.Contains(q.entries, a.index):
							report("%s, %s: reads the time entries by %q (%s), not by one of %v, in\n%s\n%v", state, q.name, a.index, a.detail, q.entries, st.SQL, st.Args)
						}
					}
				}
			}
		}
		switch b.Name {
		case "sqlite":
			path, _ := srv.Service.DB.LocalFile()
			// The entries came after the database was opened: no
			// statistics know them yet.
			judge("fresh", sqlitePlans(t, path), t.Errorf)
			// The statistics job's own run renews them, as it does every
			// hour.
			if err := srv.Service.DB.RefreshStatistics(ctx); err != nil {
				t.Fatal(err)
			}
			var n int
			if err := srv.Service.DB.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_stat1 WHERE tbl = 'records'`).Scan(&n); err != nil || n == 0 {
				t.Fatalf("statistics of records after the refresh: %d (%v)", n, err)
			}
			judge("with statistics", sqlitePlans(t, path), t.Errorf)
		case "postgres":
			// On a few hundred rows a sequential scan of a few pages is
			// legitimately the cheapest plan, and PostgreSQL takes it: the
			// question here is which index serves each statement once a
			// scan is not cheap. With sequential scans priced out
			// (enable_seqscan=off, in the planning session only), the
			// planner shows the index it would take.
			//
			// Before statistics know the rows, PostgreSQL prices every
			// condition at a default selectivity (0.5%): the index that
			// hands a tenant's time entries over in id order, the order of
			// a list, then looks as cheap as the narrow one, and which of
			// the two it takes says nothing about the indexes. Autovacuum
			// analyzes a table once 50 rows and a tenth of it have changed,
			// an import and a migration analyze at once (statistics.go):
			// the fresh plans are shown, and judged with statistics.
			judge("fresh", postgresPlans(t, pg), t.Logf)
			if _, err := pg.ExecContext(ctx, `ANALYZE records`); err != nil {
				t.Fatal(err)
			}
			judge("analyzed", postgresPlans(t, pg), t.Errorf)
		}
	})
}

// seedPlans creates the tenant of the questions through the API: four
// users, three projects, two WORK entries of each user on each day, a
// break on some, and a second tenant's entries on the same days.
func seedPlans(t *testing.T, srv *testenv.Server) (planWorld, *testenv.Client) {
	t.Helper()
	admin := srv.SignIn(t, srv.CreateTenant(t, "plans"))
	users := []int64{admin.UserID}
	for i := range 3 {
		users = append(users, testenv.ID(t, admin.Create(t, "users", M{"email": fmt.Sprintf("u%d@plans.test", i), "password": "member-password", "isAdmin": false})))
	}
	var projects, tasks []int64
	for i := range 3 {
		p := testenv.ID(t, admin.Create(t, "projects", M{"name": fmt.Sprintf("P%d", i)}))
		projects = append(projects, p)
		tasks = append(tasks, testenv.ID(t, admin.Create(t, "tasks", M{"name": fmt.Sprintf("T%d", i), "project": p})))
	}
	for d, day := range planDays {
		for u, user := range users {
			for k := range 2 {
				p := (d + u + k) % len(projects)
				admin.Create(t, "time-entries", M{"user": user, "project": projects[p], "task": tasks[p], "day": day, "duration": 1800 + 600*k, "sorting": k})
			}
			if (d+u)%3 == 0 {
				admin.Create(t, "time-entries", M{"user": user, "trackingType": "BREAK", "day": day, "duration": 900, "sorting": 2})
			}
		}
	}
	other := srv.SignIn(t, srv.CreateTenant(t, "plans-other"))
	p := testenv.ID(t, other.Create(t, "projects", M{"name": "Other"}))
	task := testenv.ID(t, other.Create(t, "tasks", M{"name": "Other", "project": p}))
	for _, day := range planDays[:10] {
		for k := range 3 {
			other.Create(t, "time-entries", M{"project": p, "task": task, "day": day, "duration": 600, "sorting": k})
		}
	}
	return planWorld{user: users[1], project: projects[1], day: "2025-03-12"}, admin
}

// onRecords reports whether a statement reads or changes the records
// table: a SELECT, UPDATE or DELETE naming it.
func onRecords(stmt string) bool {
	return readsOrChanges.MatchString(stmt) && namesRecords.MatchString(stmt)
}

var (
	readsOrChanges = regexp.MustCompile(`(?i)^\s*(SELECT|UPDATE|DELETE|WITH)\b`)
	namesRecords   = regexp.MustCompile(`\brecords\b`)
)

func sameStatement(a, b testenv.Statement) bool {
	return a.SQL == b.SQL && fmt.Sprint(a.Args) == fmt.Sprint(b.Args)
}

// access is how a plan reads records: through which index (none: the
// table itself), and whether it reads all of a tenant's records (or of
// its records of one resource), which no question needs.
type access struct {
	index  string
	whole  bool
	detail string
}

// SQLite's plan lines of records: "SCAN records ..." reads the table or
// an index whole; "SEARCH records USING [COVERING] INDEX name (cond)"
// reads the rows cond bounds, which must bound more than the tenant and
// the resource.
var (
	sqliteAccess = regexp.MustCompile(`^(SCAN|SEARCH) records\b(?: USING (?:COVERING )?INDEX (\S+))?(?: \((.*)\))?`)
	tenantOnly   = regexp.MustCompile(`^tenant_id=\?( AND resource=\?)?$`)
)

// sqlitePlans plans statements on a connection of its own to the
// database file, which reads the statistics as they are now.
func sqlitePlans(t *testing.T, path string) func(st testenv.Statement) []access {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=query_only(1)&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return func(st testenv.Statement) []access {
		t.Helper()
		rows, err := db.Query("EXPLAIN QUERY PLAN "+st.SQL, st.Args...)
		if err != nil {
			t.Fatalf("explain: %v\n%s", err, st.SQL)
		}
		defer rows.Close()
		var out []access
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
			m := sqliteAccess.FindStringSubmatch(detail)
			if m == nil {
				continue
			}
			out = append(out, access{index: m[2], detail: detail,
				whole: m[1] == "SCAN" || tenantOnly.MatchString(m[3])})
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if testing.Verbose() {
			t.Logf("%s\n  %s", st.SQL, strings.Join(plan, "\n  "))
		}
		return out
	}
}

// pgNode is a node of PostgreSQL's plan (EXPLAIN (FORMAT JSON)).
type pgNode struct {
	NodeType  string   `json:"Node Type"`
	Relation  string   `json:"Relation Name"`
	Index     string   `json:"Index Name"`
	IndexCond string   `json:"Index Cond"`
	Plans     []pgNode `json:"Plans"`
}

// narrows says whether an Index Cond bounds more than the tenant and the
// resource: an attribute of the document, or the record's id.
var narrows = regexp.MustCompile(`\bdoc\b|\bid\b`)

// postgresPlans plans statements in a session of their own with
// sequential scans priced out (see TestPlans).
func postgresPlans(t *testing.T, pg *sql.DB) func(st testenv.Statement) []access {
	t.Helper()
	ctx := context.Background()
	conn, err := pg.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.ExecContext(ctx, `SET enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	indexes := map[string]bool{}
	rows, err := conn.QueryContext(ctx, `SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'records'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		indexes[name] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	return func(st testenv.Statement) []access {
		t.Helper()
		var text string
		if err := conn.QueryRowContext(ctx, "EXPLAIN (FORMAT JSON) "+st.SQL, st.Args...).Scan(&text); err != nil {
			t.Fatalf("explain: %v\n%s", err, st.SQL)
		}
		var plans []struct{ Plan pgNode }
		if err := json.Unmarshal([]byte(text), &plans); err != nil || len(plans) != 1 {
			t.Fatalf("explain: %v\n%s", err, text)
		}
		var out []access
		var walk func(n pgNode)
		walk = func(n pgNode) {
			switch {
			case n.Relation == "records" && n.NodeType == "Seq Scan":
				out = append(out, access{whole: true, detail: n.NodeType})
			case indexes[n.Index]:
				out = append(out, access{index: n.Index, whole: !narrows.MatchString(n.IndexCond),
					detail: n.NodeType + " using " + n.Index + " (" + n.IndexCond + ")"})
			}
			for _, c := range n.Plans {
				walk(c)
			}
		}
		walk(plans[0].Plan)
		if testing.Verbose() {
			var lines []string
			for _, a := range out {
				lines = append(lines, a.detail)
			}
			t.Logf("%s\n  %s", st.SQL, strings.Join(lines, "\n  "))
		}
		return out
	}
}
