package query_test

// Tests of Dialect.Select, the statement the store runs for lists: the
// same records as the reference evaluator on both engines, each
// attribute taken out of the document once per row, and the expression
// indexes still in use.

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"planwerk/internal/auth"
	"planwerk/internal/query"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
	"planwerk/internal/users"
)

// compileSelect writes the list statement of q as the store does, over
// the test table (which has no tenants).
func compileSelect(d query.Dialect, q *query.Query) (string, []any) {
	var s query.SQL
	d.Select(&s, query.Select{
		Columns: "id",
		Table:   "records",
		Scope:   func(s *query.SQL) { s.Write("id > ", s.Arg(int64(0))) },
		Where:   q.Where,
		Sort:    q.Sort,
		Limit:   int64(q.Limit),
		Skip:    int64(q.Skip),
	})
	return s.String(), s.Args
}

func runSelect(e engine, q *query.Query) ([]int64, string, error) {
	stmt, args := compileSelect(e.dialect, q)
	return runStatement(e, stmt, args)
}

// limitCases are criteria at the limits of the language.
func limitCases() map[string]url.Values {
	loose := url.Values{}
	for i := range query.MaxValues {
		loose.Add("n", strconv.Itoa(i-5))
	}
	open := url.Values{}
	for i := range query.MaxAttributes {
		open.Add("k"+strconv.Itoa(i), strconv.Itoa(i))
	}
	attrs := []string{"name", "n", "flag", "mix", "x-y", "größe", "first name", "a.b"}
	return map[string]url.Values{
		"or of all conditions": w(`{"or":[` + many(query.MaxConditions, func(i int) string {
			return fmt.Sprintf(`{%q:{"startsWith":%q}}`, attrs[i%len(attrs)], strPool[i%len(strPool)])
		}) + `]}`),
		"and of all conditions": w(`{"and":[` + many(query.MaxConditions, func(i int) string {
			return fmt.Sprintf(`{%q:{"!=":%d}}`, attrs[i%len(attrs)], i)
		}) + `]}`),
		"all attributes": w(`{"or":[` + many(query.MaxAttributes-1, func(i int) string {
			return fmt.Sprintf(`{"k%d":{"!=":null}},{"name":{"in":[%q,%d,true,null]}}`, i, strPool[i%len(strPool)], i)
		}) + `]}`),
		"or of equalities": w(`{"or":[` + many(query.MaxValues, func(i int) string {
			switch i % 4 {
			case 0:
				return fmt.Sprintf(`{"n":%d}`, i%20-5)
			case 1:
				return fmt.Sprintf(`{"n":%q}`, numPool[i%len(numPool)])
			case 2:
				return fmt.Sprintf(`{"name":%q}`, strPool[i%len(strPool)])
			}
			return fmt.Sprintf(`{"flag":%v}`, i%8 == 3)
		}) + `]}`),
		"declared in": w(`{"project":{"in":[` + many(query.MaxValues/2, strconv.Itoa) + `]},"hours":{"nin":[` + many(query.MaxValues/2, func(i int) string { return hoursPool[i%len(hoursPool)] }) + `]}}`),
		"declared or": w(`{"or":[` + many(query.MaxConditions, func(i int) string {
			switch i % 3 {
			case 0:
				return fmt.Sprintf(`{"title":{"startsWith":%q}}`, titlePool[i%len(titlePool)])
			case 1:
				return fmt.Sprintf(`{"day":{">":"2026-01-%02d"}}`, i%12+1)
			}
			return fmt.Sprintf(`{"createdAt":%q}`, fmt.Sprintf("2026-01-%02d", i%28+1))
		}) + `]}`),
		"declared and": w(`{"and":[` + many(query.MaxConditions-8, func(i int) string {
			return fmt.Sprintf(`{"day":{">=":"2026-01-%02d"}}`, i%3+1)
		}) + `],"project":{"<":9},"hours":{">":0},"billable":true,"validationStatus":"APPROVED","title":{">=":""},"user":{"<=":3},"createdAt":{">":"2026-01-04"}}`),
		"loose filter":    loose,
		"open filters":    open,
		"sort all kinds":  qs("where", `{"n":{"!=":1}}`, "sort", "n DESC,name,mix DESC,flag,x-y,größe DESC,day,project DESC"),
		"sort and or":     qs("where", `{"or":[{"name":{"startsWith":"a"}},{"mix":{">":"b"}},{"n":{">":2}}]}`, "sort", "mix,name DESC"),
		"nothing but ids": qs("where", `{"id":{">":5,"<":150},"createdAt":{">":"2026-01-10"}}`, "sort", "createdAt DESC", "limit", "20", "skip", "3"),
		"column order":    qs("where", `{"name":{"!=":null},"id":{">":5}}`, "sort", "updatedAt DESC,id DESC", "limit", "30", "skip", "2"),
	}
}

// TestSelectMatchesReference: the statement of Select selects and orders
// the records as the reference evaluator does, for every case of the
// criteria language and for criteria at its limits.
func TestSelectMatchesReference(t *testing.T) {
	t.Parallel()
	cases := evalCases()
	for name, p := range limitCases() {
		cases = append(cases, evalCase{name: "limit " + name, params: p})
	}
	matchReference(t, cases, runSelect)
}

// TestCostLimits: criteria just within the limits are accepted, one
// condition or attribute more is a *query.Error naming the parameter and
// the limit.
func TestCostLimits(t *testing.T) {
	t.Parallel()
	conds := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`{"name":{"startsWith":"%d"}}`, i)
		}
		return `{"or":[` + strings.Join(parts, ",") + `]}`
	}
	attrs := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`"k%d":{"in":[1,2]}`, i)
		}
		return `{` + strings.Join(parts, ",") + `}`
	}
	equalities := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`{"name":"%d"},{"n":{"in":[%d]}}`, i, i)
		}
		return `{"or":[` + strings.Join(parts, ",") + `]}`
	}
	filters := func(n int) url.Values {
		p := url.Values{}
		for i := range n {
			p.Add(fmt.Sprintf("k%03d", i), "1")
		}
		return p
	}
	declared := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`{"title":{"!=":"%d"}}`, i)
		}
		return `{"or":[{"name":1},{"a":2},{"and":[` + strings.Join(parts, ",") + `]}]}`
	}
	cases := []struct {
		name   string
		params url.Values
		param  string // "": accepted
		limit  int
	}{
		{"conditions at the limit", w(conds(query.MaxConditions)), "", 0},
		{"one condition more", w(conds(query.MaxConditions + 1)), "where", query.MaxConditions},
		{"declared conditions count", w(declared(query.MaxConditions - 1)), "where", query.MaxConditions},
		{"declared conditions at the limit", w(declared(query.MaxConditions - 2)), "", 0},
		{"nested conditions count", w(`{"and":[` + conds(query.MaxConditions) + `,{"x":1}]}`), "where", query.MaxConditions},
		{"equalities in an or count once", w(equalities(query.MaxValues / 2)), "", 0},
		{"equalities in an and count each", w(`{"and":` + strings.TrimPrefix(equalities(query.MaxConditions/2+1), `{"or":`)), "where", query.MaxConditions},
		{"attributes at the limit", w(attrs(query.MaxAttributes)), "", 0},
		{"one attribute more", w(attrs(query.MaxAttributes + 1)), "where", query.MaxAttributes},
		{"declared attributes do not count", w(`{"title":"a","day":"2026-01-05","hours":1,"billable":true,` + strings.TrimPrefix(attrs(query.MaxAttributes), "{")), "", 0},
		{"filters at the limit", filters(query.MaxAttributes), "", 0},
		{"one filter more", filters(query.MaxAttributes + 1), fmt.Sprintf("k%03d", query.MaxAttributes), query.MaxAttributes},
		{"where replaces filters", qs("where", attrs(3), "k1", "1", "k2", "2"), "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := query.Parse(c.params, openSchema())
			if c.param == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			qe, ok := err.(*query.Error)
			if !ok {
				t.Fatalf("error %T %v, want a *query.Error", err, err)
			}
			if qe.Param != c.param {
				t.Errorf("param %q, want %q", qe.Param, c.param)
			}
			if !strings.Contains(qe.Message, "at most "+strconv.Itoa(c.limit)) {
				t.Errorf("message %q does not name the limit %d", qe.Message, c.limit)
			}
		})
	}
}

// explainJSON runs EXPLAIN (ANALYZE, VERBOSE, FORMAT JSON) of a statement
// on PostgreSQL and returns the plan's nodes, depth first.
func explainJSON(t *testing.T, q interface {
	QueryRow(string, ...any) *sql.Row
}, stmt string, args []any) []map[string]any {
	t.Helper()
	var out string
	if err := q.QueryRow("EXPLAIN (ANALYZE, VERBOSE, FORMAT JSON) "+stmt, args...).Scan(&out); err != nil {
		t.Fatalf("explain: %v\n%s", err, stmt)
	}
	var doc []struct {
		Plan map[string]any `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc) != 1 {
		t.Fatalf("explain output %s: %v", out, err)
	}
	var nodes []map[string]any
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		nodes = append(nodes, n)
		kids, _ := n["Plans"].([]any)
		for _, k := range kids {
			walk(k.(map[string]any))
		}
	}
	walk(doc[0].Plan)
	return nodes
}

// exprs returns the output, filter and sort expressions of a plan node.
func exprs(n map[string]any) []string {
	var out []string
	for _, k := range []string{"Output", "Sort Key"} {
		if xs, ok := n[k].([]any); ok {
			for _, x := range xs {
				out = append(out, x.(string))
			}
		}
	}
	for _, k := range []string{"Filter", "Join Filter", "Index Cond", "Recheck Cond"} {
		if x, ok := n[k].(string); ok {
			out = append(out, x)
		}
	}
	return out
}

// extractOnceQuery is criteria with many conditions on two open
// attributes, which also sort.
func extractOnceQuery(t *testing.T) *query.Query {
	t.Helper()
	parts := make([]string, 40)
	for i := range parts {
		parts[i] = fmt.Sprintf(`{"name":{"startsWith":"%d"}}`, i)
	}
	parts[0] = `{"name":{"startsWith":"a"},"n":{">":0}}`
	q, err := query.Parse(qs("where", `{"or":[`+strings.Join(parts, ",")+`]}`, "sort", "name DESC,n"), openSchema())
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestExtractOncePerRow: on PostgreSQL an open attribute that many
// conditions and a sort key use is looked up in the document by one
// expression, evaluated once per row; no condition reads the document
// itself.
func TestExtractOncePerRow(t *testing.T) {
	t.Parallel()
	if msg := testenv.PostgresUnavailable(t); msg != "" {
		t.Skip(msg)
	}
	rs := genRecords(200)
	e := engine{name: "postgres", db: openPostgres(t), dialect: query.Postgres}
	insertRecords(t, e, rs)
	stmt, args := compileSelect(e.dialect, extractOnceQuery(t))
	lookups := 0
	extraction := false
	for _, n := range explainJSON(t, e.db, stmt, args) {
		if n["Node Type"] == "Memoize" {
			t.Errorf("the plan caches by document (Memoize):\n%v", n)
		}
		for _, x := range exprs(n) {
			lookups += strings.Count(x, "->")
			if strings.Contains(x, "doc ->") {
				t.Errorf("%s reads the document itself: %s", n["Node Type"], x)
			}
		}
		if n["Node Type"] == "Subquery Scan" && n["Alias"] == "x" {
			extraction = true
			if loops := n["Actual Loops"].(float64); loops != float64(len(rs)) {
				t.Errorf("the extraction ran %v times for %d rows", loops, len(rs))
			}
		}
	}
	if !extraction {
		t.Errorf("no extraction subquery in the plan of\n%s", stmt)
	}
	if lookups != 2 {
		t.Errorf("%d expressions look attributes up in the document, want 2 (name and n)\n%s", lookups, stmt)
	}
}

// TestExtractOnceSQLite: SQLite's program calls the JSON functions twice
// per attribute (type and value), not once or more per condition.
func TestExtractOnceSQLite(t *testing.T) {
	t.Parallel()
	e := engine{name: "sqlite", db: openSQLite(t), dialect: query.SQLite}
	insertRecords(t, e, genRecords(20))
	stmt, args := compileSelect(e.dialect, extractOnceQuery(t))
	rows, err := e.db.Query("EXPLAIN "+stmt, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	calls := 0
	for rows.Next() {
		var addr, p1, p2, p3, p5 int64
		var opcode, p4, comment sql.NullString
		if err := rows.Scan(&addr, &opcode, &p1, &p2, &p3, &p4, &p5, &comment); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(p4.String, "json_") {
			calls++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if calls != 4 {
		t.Errorf("%d calls of JSON functions in the program, want 4 (type and value of name and n)\n%s", calls, stmt)
	}
}

// TestIndexesStillServe: criteria with open attributes still let the
// expression indexes of declared attributes select the rows, on both
// engines.
func TestIndexesStillServe(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := testenv.OpenDB(t, b)
		tn, _, err := users.NewTables(db, auth.NewTables(db)).CreateTenant(ctx, "idx", "Index", users.NewAdmin{Email: "a@example.com", PasswordHash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$a2V5"})
		if err != nil {
			t.Fatal(err)
		}
		c := store.Collection{Table: "records", Resource: "time-entries"}
		err = db.Tx(ctx, func(q store.Querier) error {
			for i := range 2000 {
				id, err := db.NewID(ctx, q, tn.ID)
				if err != nil {
					return err
				}
				doc := map[string]any{"project": i % 100, "day": fmt.Sprintf("2026-01-%02d", i%28+1), "user": i % 7, "note": "n" + strconv.Itoa(i%3)}
				if _, err := db.InsertRecord(ctx, q, tn.ID, c, id, doc); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, "ANALYZE"); err != nil {
			t.Fatal(err)
		}
		schema := query.Schema{Fields: map[string]query.Field{
			"project": {Name: "project", Type: query.Integer, Ref: true},
			"day":     {Name: "day", Type: query.Date},
			"user":    {Name: "user", Type: query.Integer, Ref: true},
		}}
		for _, where := range []string{
			`{"project":3,"day":"2026-01-04","note":{"!=":"n1"}}`,
			`{"project":{"in":[3,4]},"day":{">=":"2026-01-04"},"or":[{"note":"n1"},{"note":{"startsWith":"x"}}]}`,
		} {
			q, err := query.Parse(qs("where", where, "sort", "note"), schema)
			if err != nil {
				t.Fatal(err)
			}
			var s query.SQL
			dialects[b.Name].Select(&s, query.Select{
				Columns: "doc", Table: c.Table,
				Scope: func(s *query.SQL) { s.Write("tenant_id = ", s.Arg(tn.ID), " AND resource = 'time-entries'") },
				Where: q.Where, Sort: q.Sort, Limit: 100,
			})
			plan := explainText(t, ctx, db, b.Name, s.String(), s.Args)
			if !strings.Contains(plan, "time_entries_by_project_day") {
				t.Errorf("%s: the index on (project, day) is not used:\n%s\n%s", where, plan, s.String())
			}
		}
	})
}

// dialects are the list-language compilers by backend name.
var dialects = map[string]query.Dialect{"sqlite": query.SQLite, "postgres": query.Postgres}

// explainText returns the plan of a statement as text.
func explainText(t *testing.T, ctx context.Context, db *store.DB, engine, stmt string, args []any) string {
	t.Helper()
	explain := "EXPLAIN QUERY PLAN "
	if engine == "postgres" {
		explain = "EXPLAIN "
	}
	rows, err := db.QueryContext(ctx, explain+stmt, args...)
	if err != nil {
		t.Fatalf("explain: %v\n%s", err, stmt)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var b strings.Builder
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(&b, vals...)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// FuzzSelect: what Parse accepts compiles with Select to a statement that
// SQLite runs and that selects and orders the records as the reference
// evaluator does. The seeds are the cases of the criteria language.
func FuzzSelect(f *testing.F) {
	for _, c := range evalCases() {
		if c.schema != nil {
			continue
		}
		extra := url.Values{}
		for k, vs := range c.params {
			if k != "where" && k != "sort" {
				extra[k] = vs
			}
		}
		f.Add(c.params.Get("where"), c.params.Get("sort"), extra.Encode())
	}
	f.Fuzz(func(t *testing.T, where, sortParam, extra string) {
		params := fuzzParams(where, sortParam, extra)
		q, err := query.Parse(params, openSchema())
		if err != nil {
			return
		}
		e, rs := fuzzEngine(t)
		got, stmt, err := runSelect(e, q)
		if err != nil {
			t.Fatalf("params %q: SQLite: %v\n%s", params, err, stmt)
		}
		if want := refQuery(rs, q); !slices.Equal(got, want) {
			t.Fatalf("params %q:\n got %v\nwant %v\n%s", params, got, want, stmt)
		}
	})
}
