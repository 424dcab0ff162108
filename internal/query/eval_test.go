package query_test

// A reference evaluator of parsed criteria and sort keys, written from
// docs/api.md "Lists" rather than from the compiler, and a test that the
// SQL the compiler writes selects and orders the same records on SQLite
// and on PostgreSQL.

import (
	"bytes"
	"cmp"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	mrand "math/rand/v2"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // driver "pgx"
	_ "modernc.org/sqlite"             // driver "sqlite"

	"planwerk/internal/query"
	"planwerk/internal/testenv"
)

// ---------------------------------------------------------------------
// Schemas

// projectDaySchema is ProjectDay: declared only, no contains.
func projectDaySchema() query.Schema {
	return query.Schema{
		Fields: map[string]query.Field{
			"id":               {Name: "id", Type: query.Integer, Column: "id"},
			"day":              {Name: "day", Type: query.Date},
			"project":          {Name: "project", Type: query.Integer, Ref: true},
			"validationStatus": {Name: "validationStatus", Type: query.Enum, Enum: []string{"NOTAPPROVED", "APPROVED"}},
			"createdAt":        {Name: "createdAt", Type: query.Timestamp, Column: "created_at"},
			"updatedAt":        {Name: "updatedAt", Type: query.Timestamp, Column: "updated_at"},
		},
		DeclaredOnly: true,
		NoContains:   true,
	}
}

// openSchema has ProjectDay's declared fields plus a few more types, and
// accepts any other attribute.
func openSchema() query.Schema {
	s := projectDaySchema()
	s.DeclaredOnly = false
	s.NoContains = false
	s.Fields["title"] = query.Field{Name: "title", Type: query.String}
	s.Fields["hours"] = query.Field{Name: "hours", Type: query.Number}
	s.Fields["billable"] = query.Field{Name: "billable", Type: query.Boolean}
	s.Fields["user"] = query.Field{Name: "user", Type: query.Integer, Ref: true}
	s.Fields["extra"] = query.Field{Name: "extra", Type: query.Any}
	s.Params = map[string]bool{"includeSkills": true}
	return s
}

// ---------------------------------------------------------------------
// Records

type rec struct {
	ID        int64
	CreatedAt string
	UpdatedAt string
	Doc       map[string]any // decoded with UseNumber: nil, bool, string, json.Number, []any, map[string]any
	JSON      string
}

const tsLayout = "2006-01-02T15:04:05.000Z"

var (
	strPool = []string{
		"alpha", "Alpha", "ALPHA", "alpha beta", "al%pha", "al_pha", "alXpha", "a%", "%", "_", "_x", "x_",
		"100%", "50_50", `back\slash`, `quo"te`, "ümlaut", "Ümlaut", "日本語", "emoji😀", "", " ", "5", "10",
		"-3", "2.5", "true", "false", "null", "zeta", "Zeta", "b", "ab", "abc", "abd", "a", "é", "e\u0301",
	}
	numPool = []string{
		"0", "1", "2", "3", "5", "10", "100", "-1", "-5", "0.5", "-0.25", "2.5", "3.0", "1e2", "12345678901",
		"-7.75", "9007199254740993", "1.5e-3",
	}
	hoursPool = []string{"8", "7.25", "0.5", "-1.5", "0", "12", "7.5", "10.75", "3", "75"}
	titlePool = []string{"Plan", "plan", "PLAN", "pl%n", "pl_n", "Review 1", "review_2", "Ähre", "", "M", "m", "Zed"}
)

func num(s string) json.Number { return json.Number(s) }

// genRecords makes n deterministic records of mixed data.
func genRecords(n int) []rec {
	r := mrand.New(mrand.NewPCG(20260105, 42))
	base := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	other := func() any {
		switch r.IntN(4) {
		case 0:
			return []any{}
		case 1:
			return []any{num("1"), "a", nil}
		case 2:
			return map[string]any{}
		default:
			return map[string]any{"k": []any{"v", map[string]any{"x": true}}}
		}
	}
	const missing = "\x00missing"
	anyValue := func() any {
		switch r.IntN(7) {
		case 0:
			return pick(strPool)
		case 1:
			return num(pick(numPool))
		case 2:
			return r.IntN(2) == 0
		case 3:
			return nil
		case 4:
			return missing
		case 5:
			return other()
		default:
			return pick(strPool)
		}
	}
	var out []rec
	for i := 1; i <= n; i++ {
		created := base.Add(time.Duration(i)*(7*time.Hour+13*time.Minute) + time.Duration(r.IntN(1000))*time.Millisecond)
		switch i {
		case 10:
			created = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
		case 11:
			created = time.Date(2026, 1, 5, 23, 59, 59, 999e6, time.UTC)
		case 12:
			created = time.Date(2026, 1, 6, 0, 0, 0, 0, time.UTC)
		case 13:
			created = time.Date(2026, 1, 4, 23, 59, 59, 999e6, time.UTC)
		}
		updated := created.Add(time.Duration(r.IntN(30*24*3600)) * time.Second)
		doc := map[string]any{}
		put := func(k string, v any) {
			if v != missing {
				doc[k] = v
			}
		}
		// name: mostly strings
		switch x := r.IntN(100); {
		case x < 70:
			put("name", pick(strPool))
		case x < 78:
			put("name", num(pick(numPool)))
		case x < 83:
			put("name", r.IntN(2) == 0)
		case x < 88:
			put("name", nil)
		case x < 95:
		default:
			put("name", other())
		}
		// n: mostly numbers
		switch x := r.IntN(100); {
		case x < 65:
			put("n", num(pick(numPool)))
		case x < 75:
			put("n", pick([]string{"5", "1", "3", "abc", "-1", "1e2"}))
		case x < 80:
			put("n", r.IntN(2) == 0)
		case x < 85:
			put("n", nil)
		case x < 95:
		default:
			put("n", other())
		}
		// flag: mostly booleans
		switch x := r.IntN(100); {
		case x < 45:
			put("flag", r.IntN(2) == 0)
		case x < 55:
			put("flag", nil)
		case x < 70:
		case x < 80:
			put("flag", pick([]string{"true", "false"}))
		case x < 90:
			put("flag", num(pick([]string{"1", "0"})))
		default:
			put("flag", other())
		}
		put("mix", anyValue())
		put("x-y", anyValue())
		// Open attributes whose names are no identifiers. They draw
		// nothing from r, so the other attributes stay as they were.
		if i%4 != 0 {
			put("größe", num(numPool[i%len(numPool)]))
		}
		if i%3 == 0 {
			put("first name", strPool[i%len(strPool)])
		}
		switch i % 5 {
		case 1:
			put("a.b", num(strconv.Itoa(i%3)))
		case 2:
			put("a", map[string]any{"b": num("1")}) // not "a.b"
		}
		if i%7 == 0 {
			put("it's [0]", i%2 == 0)
		}
		if r.IntN(3) > 0 {
			put("tags", other())
		}
		// declared fields, well-typed, sometimes null or missing
		if x := r.IntN(100); x < 85 {
			put("day", fmt.Sprintf("2026-01-%02d", 1+r.IntN(12)))
		} else if x < 90 {
			put("day", nil)
		}
		if x := r.IntN(100); x < 85 {
			put("project", num(strconv.Itoa(1+r.IntN(12))))
		} else if x < 92 {
			put("project", nil)
		}
		if x := r.IntN(100); x < 90 {
			put("validationStatus", pick([]string{"APPROVED", "NOTAPPROVED"}))
		}
		if r.IntN(100) < 80 {
			put("title", pick(titlePool))
		}
		if x := r.IntN(100); x < 80 {
			put("hours", num(pick(hoursPool)))
		} else if x < 85 {
			put("hours", nil)
		}
		if x := r.IntN(100); x < 80 {
			put("billable", r.IntN(2) == 0)
		} else if x < 88 {
			put("billable", nil)
		}
		if r.IntN(2) == 0 {
			put("user", num(strconv.Itoa(1+r.IntN(4))))
		}
		if r.IntN(2) == 0 {
			put("extra", anyValue())
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(doc); err != nil {
			panic(err)
		}
		js := strings.TrimSpace(buf.String())
		dec := json.NewDecoder(strings.NewReader(js))
		dec.UseNumber()
		var back map[string]any
		if err := dec.Decode(&back); err != nil {
			panic(err)
		}
		out = append(out, rec{
			ID: int64(i), CreatedAt: created.Format(tsLayout), UpdatedAt: updated.Format(tsLayout),
			Doc: back, JSON: js,
		})
	}
	return out
}

// ---------------------------------------------------------------------
// Reference evaluator

func isDeclared(f query.Field) bool {
	return f.Column != "" || (f.Type != 0 && f.Type != query.Any)
}

// lookup returns the stored value of f; missing reads as nil, which is
// what docs/api.md "Lists" makes of it everywhere.
func lookup(r rec, f query.Field) any {
	switch f.Column {
	case "id":
		return json.Number(strconv.FormatInt(r.ID, 10))
	case "created_at":
		return r.CreatedAt
	case "updated_at":
		return r.UpdatedAt
	case "":
		return r.Doc[f.Name]
	}
	panic("unknown column " + f.Column)
}

type numv struct {
	isInt bool
	i     int64
	f     float64
}

func storedNum(n json.Number) numv {
	s := string(n)
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return numv{isInt: true, i: i}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic(err)
	}
	return numv{f: f}
}

func valueNum(v query.Value) numv {
	if v.IsInt {
		return numv{isInt: true, i: v.Int}
	}
	return numv{f: v.Num}
}

// cmpNum compares two numbers exactly (an integer against a float too).
func cmpNum(a, b numv) int {
	switch {
	case a.isInt && b.isInt:
		return cmp.Compare(a.i, b.i)
	case !a.isInt && !b.isInt:
		return cmp.Compare(a.f, b.f)
	}
	toBig := func(x numv) *big.Float {
		if x.isInt {
			return new(big.Float).SetInt64(x.i)
		}
		return big.NewFloat(x.f)
	}
	return toBig(a).Cmp(toBig(b))
}

// spellsNumber reports the number a plain parameter spells in decimal.
func spellsNumber(s string) (numv, bool) {
	if s == "" || strings.Trim(s, "0123456789+-.eE") != "" {
		return numv{}, false
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return numv{isInt: true, i: i}, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return numv{}, false
	}
	return numv{f: f}, true
}

func isDay(s string) bool {
	t, err := time.Parse(time.DateOnly, s)
	return err == nil && t.Format(time.DateOnly) == s
}

// strictEq: the value matches only stored values of its own JSON kind.
func strictEq(stored any, v query.Value) bool {
	switch v.Kind {
	case query.KindNull:
		return stored == nil
	case query.KindBool:
		b, ok := stored.(bool)
		return ok && b == v.Bool
	case query.KindNumber:
		n, ok := stored.(json.Number)
		return ok && cmpNum(storedNum(n), valueNum(v)) == 0
	case query.KindString:
		s, ok := stored.(string)
		return ok && s == v.Str
	}
	panic("kind")
}

func eqValue(f query.Field, stored any, v query.Value) bool {
	if isDeclared(f) && f.Type == query.Timestamp && v.Kind == query.KindString && isDay(v.Str) {
		// A day matches the whole UTC day.
		s, ok := stored.(string)
		return ok && len(s) == len(tsLayout) && s[:10] == v.Str
	}
	if strictEq(stored, v) {
		return true
	}
	if !v.Loose {
		return false
	}
	switch x := stored.(type) {
	case json.Number:
		n, ok := spellsNumber(v.Str)
		return ok && cmpNum(storedNum(x), n) == 0
	case bool:
		return (v.Str == "true" && x) || (v.Str == "false" && !x)
	}
	return false
}

func textForm(f query.Field, stored any) (string, bool) {
	switch x := stored.(type) {
	case string:
		return x, true
	case json.Number:
		if isDeclared(f) {
			return string(x), true
		}
	case bool:
		if isDeclared(f) {
			return strconv.FormatBool(x), true
		}
	}
	return "", false
}

func evalCond(c *query.Cond, r rec) bool {
	stored := lookup(r, c.Field)
	anyEq := func() bool {
		for _, v := range c.Values {
			if eqValue(c.Field, stored, v) {
				return true
			}
		}
		return false
	}
	switch c.Op {
	case query.Eq, query.In:
		return anyEq()
	case query.Ne, query.Nin:
		return !anyEq()
	case query.Lt, query.Le, query.Gt, query.Ge:
		v := c.Values[0]
		var d int
		switch v.Kind {
		case query.KindNumber:
			n, ok := stored.(json.Number)
			if !ok {
				return false
			}
			d = cmpNum(storedNum(n), valueNum(v))
		case query.KindString:
			s, ok := stored.(string)
			if !ok {
				return false
			}
			w := v.Str
			if isDeclared(c.Field) && c.Field.Type == query.Timestamp && isDay(w) {
				w += "T00:00:00.000Z"
			}
			d = strings.Compare(s, w)
		default:
			panic("range on " + v.String())
		}
		switch c.Op {
		case query.Lt:
			return d < 0
		case query.Le:
			return d <= 0
		case query.Gt:
			return d > 0
		}
		return d >= 0
	case query.StartsWith, query.EndsWith, query.Contains:
		s, ok := textForm(c.Field, stored)
		if !ok {
			return false
		}
		switch c.Op {
		case query.StartsWith:
			return strings.HasPrefix(s, c.Values[0].Str)
		case query.EndsWith:
			return strings.HasSuffix(s, c.Values[0].Str)
		}
		return strings.Contains(s, c.Values[0].Str)
	}
	panic("op " + string(c.Op))
}

func evalNode(n query.Node, r rec) bool {
	switch n := n.(type) {
	case nil:
		return true
	case *query.And:
		for _, t := range n.Terms {
			if !evalNode(t, r) {
				return false
			}
		}
		return true
	case *query.Or:
		for _, t := range n.Terms {
			if evalNode(t, r) {
				return true
			}
		}
		return false
	case *query.Cond:
		return evalCond(n, r)
	}
	panic(fmt.Sprintf("node %T", n))
}

func kindRank(v any) int {
	switch v.(type) {
	case nil:
		return 0
	case json.Number:
		return 1
	case string:
		return 2
	case bool:
		return 3
	}
	return 4
}

// cmpStored orders two stored values: by kind rank (missing/null first),
// then by value within numbers, strings and booleans.
func cmpStored(a, b any) int {
	if d := cmp.Compare(kindRank(a), kindRank(b)); d != 0 {
		return d
	}
	switch x := a.(type) {
	case json.Number:
		return cmpNum(storedNum(x), storedNum(b.(json.Number)))
	case string:
		return strings.Compare(x, b.(string))
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	}
	return 0
}

func refSort(rs []rec, keys []query.SortKey) {
	slices.SortStableFunc(rs, func(a, b rec) int {
		for _, k := range keys {
			// Declared fields hold one kind, so ordering by kind rank
			// (null first) then value is ordering by value, NULLs first
			// ascending and last descending.
			d := cmpStored(lookup(a, k.Field), lookup(b, k.Field))
			if k.Dir == query.Desc {
				d = -d
			}
			if d != 0 {
				return d
			}
		}
		return cmp.Compare(a.ID, b.ID)
	})
}

// refQuery runs a parsed query over records.
func refQuery(rs []rec, q *query.Query) []int64 {
	var sel []rec
	for _, r := range rs {
		if evalNode(q.Where, r) {
			sel = append(sel, r)
		}
	}
	refSort(sel, q.Sort)
	ids := []int64{}
	for i, r := range sel {
		if i < q.Skip {
			continue
		}
		if len(ids) >= q.Limit {
			break
		}
		ids = append(ids, r.ID)
	}
	return ids
}

// ---------------------------------------------------------------------
// Databases

type engine struct {
	skip    string // why this engine cannot run
	name    string
	db      *sql.DB
	dialect query.Dialect
}

// openPostgres returns a database in a fresh schema, dropped at cleanup.
func openPostgres(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", testenv.DSN(t, testenv.Backend{Name: "postgres"}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE records (id BIGINT PRIMARY KEY, created_at TEXT COLLATE "C", updated_at TEXT COLLATE "C", doc JSONB)`); err != nil {
		t.Fatal(err)
	}
	return db
}

func createSQLiteTable(t testing.TB, db *sql.DB) {
	t.Helper()
	if _, err := db.Exec(`CREATE TABLE records (id BIGINT PRIMARY KEY, created_at TEXT, updated_at TEXT, doc TEXT)`); err != nil {
		t.Fatal(err)
	}
}

func openSQLite(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "query.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	createSQLiteTable(t, db)
	return db
}

func insertRecords(t testing.TB, e engine, rs []rec) {
	t.Helper()
	stmt := `INSERT INTO records (id, created_at, updated_at, doc) VALUES ($1, $2, $3, $4)`
	if e.name == "postgres" {
		stmt = `INSERT INTO records (id, created_at, updated_at, doc) VALUES ($1, $2, $3, $4::text::jsonb)`
	}
	tx, err := e.db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if _, err := tx.Exec(stmt, r.ID, r.CreatedAt, r.UpdatedAt, r.JSON); err != nil {
			tx.Rollback()
			t.Fatalf("insert %d %s: %v", r.ID, r.JSON, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// compile writes the list statement of q.
func compile(d query.Dialect, q *query.Query) (string, []any) {
	var s query.SQL
	s.Write("SELECT id FROM records WHERE ")
	d.Where(&s, q.Where)
	s.Write(" ORDER BY ")
	d.OrderBy(&s, q.Sort)
	s.Write(fmt.Sprintf(" LIMIT %d OFFSET %d", q.Limit, q.Skip))
	return s.String(), s.Args
}

// placeholderRE finds the $n placeholders of a statement; the statements
// hold no string literals with a '$' in them.
var placeholderRE = regexp.MustCompile(`\$([0-9]+)`)

// checkPlaceholders: the statement uses every bound argument, and no
// other. (PostgreSQL refuses unused arguments; SQLite ignores them.)
func checkPlaceholders(stmt string, args []any) error {
	used := map[int]bool{}
	for _, m := range placeholderRE.FindAllStringSubmatch(stmt, -1) {
		n, _ := strconv.Atoi(m[1])
		if n < 1 || n > len(args) {
			return fmt.Errorf("placeholder $%d with %d arguments", n, len(args))
		}
		used[n] = true
	}
	if len(used) != len(args) {
		return fmt.Errorf("%d arguments, %d of them used", len(args), len(used))
	}
	return nil
}

func runQuery(e engine, q *query.Query) ([]int64, string, error) {
	stmt, args := compile(e.dialect, q)
	return runStatement(e, stmt, args)
}

// runStatement runs a compiled list statement and returns the ids it
// selects, in order.
func runStatement(e engine, stmt string, args []any) ([]int64, string, error) {
	if err := checkPlaceholders(stmt, args); err != nil {
		return nil, stmt, err
	}
	rows, err := e.db.Query(stmt, args...)
	if err != nil {
		return nil, stmt, err
	}
	defer rows.Close()
	ids := []int64{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, stmt, err
		}
		ids = append(ids, id)
	}
	return ids, stmt, rows.Err()
}

// engines returns SQLite and PostgreSQL, each with the records loaded;
// an engine that cannot run has skip set.
func engines(t *testing.T, rs []rec) []engine {
	t.Helper()
	sq := engine{name: "sqlite", db: openSQLite(t), dialect: query.SQLite}
	insertRecords(t, sq, rs)
	pg := engine{name: "postgres", dialect: query.Postgres}
	if pg.skip = testenv.PostgresUnavailable(t); pg.skip == "" {
		pg.db = openPostgres(t)
		insertRecords(t, pg, rs)
	}
	return []engine{sq, pg}
}

// each runs fn in a subtest per engine, skipping engines that cannot run.
func each(t *testing.T, es []engine, fn func(t *testing.T, e engine)) {
	for _, e := range es {
		t.Run(e.name, func(t *testing.T) {
			if e.skip != "" {
				t.Skip(e.skip)
			}
			fn(t, e)
		})
	}
}

// ---------------------------------------------------------------------
// The cases

// qs builds a query from name, value pairs.
func qs(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

func w(where string) url.Values { return qs("where", where) }

type evalCase struct {
	name   string
	params url.Values
	schema *query.Schema // nil: openSchema
}

func evalCases() []evalCase {
	var cs []evalCase
	add := func(name string, p url.Values) { cs = append(cs, evalCase{name: name, params: p}) }
	where := func(ws ...string) {
		for _, x := range ws {
			add(x, w(x))
		}
	}
	// open attribute holding mostly strings
	where(
		`{"name":"alpha"}`, `{"name":"Alpha"}`, `{"name":{"!=":"alpha"}}`, `{"name":null}`, `{"name":{"!=":null}}`,
		`{"name":{"in":["alpha","ALPHA","5"]}}`, `{"name":{"nin":["alpha","ALPHA"]}}`, `{"name":{"in":[]}}`,
		`{"name":{"nin":[]}}`, `{"name":["a","b",null]}`, `{"name":[]}`, `{"name":{"in":[null]}}`, `{"name":{"nin":[null,"a"]}}`,
		`{"name":{"startsWith":"al"}}`, `{"name":{"startsWith":"al%"}}`, `{"name":{"startsWith":"al_"}}`,
		`{"name":{"startsWith":"A"}}`, `{"name":{"startsWith":""}}`, `{"name":{"endsWith":"%"}}`, `{"name":{"endsWith":"_"}}`,
		`{"name":{"endsWith":"pha"}}`, `{"name":{"endsWith":""}}`, `{"name":{"contains":"%"}}`, `{"name":{"contains":"_"}}`,
		`{"name":{"contains":"LPH"}}`, `{"name":{"contains":"lph"}}`, `{"name":{"contains":""}}`, `{"name":{"contains":"\\"}}`,
		`{"name":{"contains":"\""}}`, `{"name":{"startsWith":"ü"}}`, `{"name":{"startsWith":"Ü"}}`, `{"name":{"startsWith":"日"}}`,
		`{"name":{"endsWith":"😀"}}`, `{"name":{"contains":"\u0301"}}`, `{"name":"é"}`, `{"name":"e\u0301"}`,
		`{"name":{">":"a"}}`, `{"name":{"<":"a"}}`, `{"name":{">=":"Z","<":"b"}}`, `{"name":{">":"z"}}`, `{"name":{"<=":"ALPHA"}}`,
		`{"name":{">":""}}`, `{"name":{"<":"ü"}}`, `{"name":5}`, `{"name":"5"}`, `{"name":{">":3}}`, `{"name":{"<=":5}}`,
		`{"name":true}`, `{"name":false}`, `{"name":{"!=":"5"}}`, `{"name":{"!=":true}}`, `{"name":{"startsWith":"al","endsWith":"ha"}}`,
		`{"name":{"startsWith":"a","!=":"alpha","nin":["abc"]}}`,
	)
	// open attribute holding mostly numbers
	where(
		`{"n":5}`, `{"n":3}`, `{"n":3.0}`, `{"n":100}`, `{"n":1e2}`, `{"n":"5"}`, `{"n":"1e2"}`, `{"n":{">":2}}`,
		`{"n":{">=":2.5,"<":10}}`, `{"n":{"<":0}}`, `{"n":{"<=":-0.25}}`, `{"n":{"!=":1}}`, `{"n":{"in":[1,2,"1"]}}`,
		`{"n":{"nin":[0,1]}}`, `{"n":9007199254740993}`, `{"n":{">":9007199254740992}}`, `{"n":{">=":9007199254740993}}`,
		`{"n":0.5}`, `{"n":-0}`, `{"n":0.0015}`, `{"n":{"<":0.0016,">":0}}`, `{"n":{">":"1"}}`, `{"n":{"<":"a"}}`,
		`{"n":{"startsWith":"1"}}`, `{"n":{"contains":"e"}}`, `{"n":12345678901}`, `{"n":{">":1e10}}`, `{"n":-7.75}`,
		`{"n":{"<":-5}}`, `{"n":{"<=":-5}}`, `{"n":true}`, `{"n":null}`, `{"n":{"!=":null}}`,
	)
	// booleans and other kinds
	where(
		`{"flag":true}`, `{"flag":false}`, `{"flag":{"!=":true}}`, `{"flag":{"in":[true,null]}}`, `{"flag":{"nin":[true,false]}}`,
		`{"flag":"true"}`, `{"flag":1}`, `{"flag":0}`, `{"flag":{">":0}}`,
		`{"mix":null}`, `{"mix":{"!=":null}}`, `{"mix":{"nin":[null]}}`, `{"mix":{"in":[null,1,"alpha",true]}}`, `{"mix":{"<":"b"}}`,
		`{"mix":{">=":0}}`, `{"tags":null}`, `{"tags":{"!=":null}}`, `{"tags":"a"}`, `{"tags":{"!=":"a"}}`, `{"tags":1}`,
		`{"x-y":"alpha"}`, `{"x-y":{"startsWith":"a"}}`, `{"x-y":{"<":5}}`, `{"x-y":null}`,
		`{"extra":null}`, `{"extra":{"!=":null}}`, `{"extra":"5"}`, `{"extra":5}`, `{"extra":{"contains":"a"}}`,
		`{"nope":null}`, `{"nope":{"!=":null}}`, `{"nope":{"!=":1}}`, `{"nope":1}`, `{"nope":{"nin":[1]}}`,
	)
	// open attributes whose names are any text without quotes,
	// backslashes or control characters
	where(
		`{"größe":3}`, `{"größe":{">=":2,"<":100}}`, `{"größe":null}`, `{"größe":{"!=":null}}`, `{"größe":{"in":[1,"1",0.5]}}`,
		`{"größe":{"startsWith":"1"}}`, `{"first name":"alpha"}`, `{"first name":{"startsWith":"al"}}`,
		`{"first name":{"contains":"%"}}`, `{"first name":{">":"a"}}`, `{"first name":null}`,
		`{"a.b":1}`, `{"a.b":{"!=":null}}`, `{"a.b":null}`, `{"a.b":{"<":2}}`, `{"a":{"!=":null}}`,
		`{"it's [0]":true}`, `{"it's [0]":{"!=":true}}`,
		`{"or":[{"größe":{">":10}},{"first name":"Alpha","a.b":{"!=":0}}]}`,
	)
	// groups
	where(
		`{}`, `{"or":[]}`, `{"and":[]}`, `{"or":[{"name":"alpha"},{"n":5}]}`, `{"and":[{"n":{">":0}},{"n":{"<":10}}]}`,
		`{"or":[{"and":[{"flag":true},{"n":{">":1}}]},{"name":{"startsWith":"A"}}]}`,
		`{"name":{"startsWith":"a"},"or":[{"n":1},{"n":2},{"n":{">":50}}]}`, `{"or":[{"and":[]}]}`, `{"and":[{"or":[]}]}`,
		`{"or":[{}]}`, `{"and":[{}],"or":[{"flag":false},{"billable":false}]}`,
		`{"or":[{"or":[{"or":[{"or":[{"or":[{"and":[{"and":[{"n":{"!=":1}}]}]}]}]}]}]}]}`,
		`{"or":[{"name":{"!=":null},"n":{"!=":null}},{"flag":null,"mix":null}]}`,
	)
	// declared fields
	where(
		`{"day":"2026-01-05"}`, `{"day":{">=":"2026-01-04","<":"2026-01-07"}}`, `{"day":null}`, `{"day":{"!=":"2026-01-05"}}`,
		`{"day":{"in":["2026-01-05","2026-01-08"]}}`, `{"day":{"nin":["2026-01-05","2026-01-08"]}}`, `{"day":{"!=":null}}`,
		`{"day":{"startsWith":"2026-01-0"}}`, `{"day":{"endsWith":"5"}}`, `{"day":{"contains":"-1"}}`, `{"day":{"<=":"2026-01-03"}}`,
		`{"project":3}`, `{"project":"3"}`, `{"project":{">":2}}`, `{"project":{"in":["1",2]}}`, `{"project":{"nin":[1,2]}}`,
		`{"project":null}`, `{"project":{"!=":1}}`, `{"project":{"startsWith":"1"}}`, `{"project":{"contains":"0"}}`,
		`{"project":{"endsWith":"2"}}`, `{"project":{"<=":"4",">=":2}}`, `{"project":3.0}`, `{"project":[]}`,
		`{"validationStatus":"APPROVED"}`, `{"validationStatus":{"!=":"APPROVED"}}`, `{"validationStatus":null}`,
		`{"validationStatus":{"startsWith":"NOT"}}`, `{"validationStatus":{"endsWith":"APPROVED"}}`, `{"validationStatus":{">":"APPROVED"}}`,
		`{"validationStatus":["APPROVED",null]}`,
		`{"title":"Plan"}`, `{"title":"plan"}`, `{"title":{"contains":"%"}}`, `{"title":{"contains":"_"}}`, `{"title":{">":"M"}}`,
		`{"title":{"<":"m"}}`, `{"title":""}`, `{"title":{"startsWith":"Ä"}}`, `{"title":{"endsWith":"n"}}`, `{"title":null}`,
		`{"hours":8}`, `{"hours":"8"}`, `{"hours":{">":7}}`, `{"hours":{"<=":0.5}}`, `{"hours":7.25}`, `{"hours":{"<":0}}`,
		`{"hours":{"startsWith":"7"}}`, `{"hours":{"contains":".5"}}`, `{"hours":{"endsWith":"5"}}`, `{"hours":{"startsWith":"-"}}`,
		`{"hours":{"in":[8,12,0.5]}}`, `{"hours":{"!=":8}}`, `{"hours":null}`,
		`{"billable":true}`, `{"billable":false}`, `{"billable":"true"}`, `{"billable":{"!=":true}}`, `{"billable":null}`,
		`{"billable":{"in":[false,null]}}`, `{"billable":{"startsWith":"t"}}`, `{"billable":{"contains":"als"}}`,
		`{"user":2}`, `{"user":{"!=":2}}`,
		`{"id":5}`, `{"id":"5"}`, `{"id":{">":190}}`, `{"id":{"in":[1,2,3,500]}}`, `{"id":{"nin":[1,2,3]}}`, `{"id":{"startsWith":"1"}}`,
		`{"id":{"endsWith":"0"}}`, `{"id":{"contains":"9"}}`, `{"id":{">=":"100","<":"110"}}`, `{"id":null}`, `{"id":{"!=":null}}`,
		`{"createdAt":"2026-01-05"}`, `{"createdAt":{"!=":"2026-01-05"}}`, `{"createdAt":{"<":"2026-01-05"}}`,
		`{"createdAt":{"<=":"2026-01-05"}}`, `{"createdAt":{">":"2026-01-05"}}`, `{"createdAt":{">=":"2026-01-05"}}`,
		`{"createdAt":"2026-01-05T00:00:00.000Z"}`, `{"createdAt":"2026-01-05T23:59:59.999Z"}`,
		`{"createdAt":{"in":["2026-01-05","2026-01-09"]}}`, `{"createdAt":{"nin":["2026-01-05","2026-01-09"]}}`,
		`{"createdAt":{"startsWith":"2026-01-1"}}`, `{"createdAt":{"endsWith":".000Z"}}`, `{"createdAt":{">=":"2026-01-04","<":"2026-01-06"}}`,
		`{"createdAt":{">":"2026-01-04T23:59:59.999Z","<=":"2026-01-06T00:00:00.000Z"}}`,
		`{"createdAt":{">":"2026-01-05T00:59:59.9999+01:00","<=":"2026-01-05T19:00:00-05:00"}}`, `{"createdAt":"2026-01-05T01:00:00+01:00"}`,
		`{"updatedAt":{">":"2026-02-01T00:00:00.000Z"}}`, `{"updatedAt":"2026-02-01"}`,
		`{"or":[{"project":1},{"validationStatus":"APPROVED","day":{">":"2026-01-10"}}]}`,
	)
	// per-attribute filters
	for _, p := range [][]string{
		{"name", "alpha"}, {"name", "5"}, {"name", "true"}, {"name", "null"}, {"name", ""}, {"name", "al%pha"},
		{"n", "5"}, {"n", "1e2"}, {"n", "100"}, {"n", "3"}, {"n", "-0.25"}, {"n", "abc"}, {"n", "9007199254740993"}, {"n", "0x1p0"}, {"n", "0x1.4p1"}, {"n", "+5"}, {"n", ".5"}, {"n", "5."},
		{"n", "-0"}, {"n", "01"}, {"n", " 5"}, {"n", "Inf"},
		{"flag", "true"}, {"flag", "false"}, {"flag", "1"},
		{"name", "alpha", "name", "ALPHA"}, {"name[]", "alpha", "name[]", "b"}, {"name", "alpha", "name[]", "5"},
		{"project", "3"}, {"project", "1", "project", "2"}, {"project[]", "4"}, {"day", "2026-01-05"},
		{"createdAt", "2026-01-05"}, {"createdAt", "2026-01-05T23:59:59.999Z"}, {"createdAt", "2026-01-05", "createdAt", "2026-01-07"},
		{"updatedAt", "2026-02-01"}, {"validationStatus", "APPROVED"}, {"billable", "true"}, {"hours", "7.25"}, {"hours", "8"},
		{"title", "plan"}, {"id", "1", "id[]", "2", "id", "7"}, {"name", "alpha", "flag", "true"}, {"mix", "null"},
		{"extra", "5"}, {"extra", "true"}, {"x-y", "a"}, {"includeSkills", "true"}, {"includeSkills", "true", "n", "5"},
		{"größe", "3"}, {"größe", "1e2", "größe", "0.5"}, {"first name", "alpha"}, {"a.b", "1"}, {"it's [0]", "true"},
		{"name", "alpha", "where", `{"n":5}`}, {"project", "3", "where", `{}`},
	} {
		add(strings.Join(p, " "), qs(p...))
	}
	// sort, alone and with criteria, limit and skip
	for _, s := range []string{
		"name", "name DESC", "n", "n DESC", "flag", "flag desc", "mix", "mix DESC", "tags DESC", "x-y", "extra DESC",
		"day DESC", "day", "project", "project DESC,name", "hours DESC", "hours", "billable", "billable DESC", "title",
		"title DESC", "createdAt DESC", "updatedAt", "id DESC", "id", "validationStatus", "user,project DESC,day",
		`["project DESC","n"]`, `[{"day":"DESC"},{"id":"ASC"}]`, `[{"validationStatus":"ASC","hours":"DESC"}]`, "nope", "nope DESC",
		"name,n,mix,flag", "mix DESC,n DESC",
		"größe", "größe DESC", "first name DESC", "first name ASC,größe DESC", "a.b DESC", `[{"it's [0]":"DESC"},"a.b"]`,
	} {
		add("sort "+s, qs("sort", s))
	}
	add("page1", qs("where", `{"n":{"!=":null}}`, "sort", "n DESC", "limit", "7", "skip", "0"))
	add("page2", qs("where", `{"n":{"!=":null}}`, "sort", "n DESC", "limit", "7", "skip", "7"))
	add("page-past-end", qs("sort", "name", "limit", "5", "skip", "1000"))
	add("limit0", qs("limit", "0"))
	add("limit1", qs("limit", "1", "sort", "mix DESC"))
	add("skip only", qs("skip", "190"))
	add("filter+sort", qs("project", "3", "sort", "hours DESC"))
	add("where+sort+populate", qs("where", `{"day":{">=":"2026-01-06"}}`, "sort", "day,project DESC", "populate", "project"))
	// ProjectDay itself
	pd := projectDaySchema()
	for _, p := range [][]string{
		{"where", `{"day":"2026-01-05"}`}, {"where", `{"validationStatus":{"startsWith":"APP"}}`},
		{"where", `{"createdAt":{">":"2026-01-05"},"project":{"in":["1","2","3"]}}`, "sort", "day DESC"},
		{"project", "3", "validationStatus", "APPROVED"}, {"sort", "createdAt DESC", "limit", "20"},
		{"where", `{"id":{"startsWith":"1"}}`, "sort", "project,id DESC"},
	} {
		cs = append(cs, evalCase{name: "projectDay " + strings.Join(p, " "), params: qs(p...), schema: &pd})
	}
	return cs
}

func TestCompiledMatchesReference(t *testing.T) {
	t.Parallel()
	matchReference(t, evalCases(), runQuery)
}

// matchReference runs every case on both engines through run and
// compares the ids with the reference evaluator's.
func matchReference(t *testing.T, cases []evalCase, run func(engine, *query.Query) ([]int64, string, error)) {
	rs := genRecords(200)
	es := engines(t, rs)
	t.Logf("%d cases", len(cases))
	each(t, es, func(t *testing.T, e engine) {
		for _, c := range cases {
			s := openSchema()
			if c.schema != nil {
				s = *c.schema
			}
			q, err := query.Parse(c.params, s)
			if err != nil {
				t.Errorf("%s: Parse: %v", c.name, err)
				continue
			}
			want := refQuery(rs, q)
			got, stmt, err := run(e, q)
			if err != nil {
				t.Errorf("%s: %v\n%.2000s", c.name, err, stmt)
				continue
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s:\n got %v\nwant %v\n%.2000s", c.name, got, want, stmt)
			}
		}
	})
}

// TestManyValues: criteria with as many values as a request may hold
// compile to SQL both engines accept.
func TestManyValues(t *testing.T) {
	t.Parallel()
	rs := genRecords(30)
	es := engines(t, rs)
	filter := url.Values{}
	for i := range query.MaxValues {
		filter.Add("n", strconv.Itoa(i-5))
	}
	declFilter := url.Values{}
	for i := range query.MaxValues {
		declFilter.Add("createdAt", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i).Format(time.DateOnly))
	}
	// As many keys as a request may read, holding as many values as it may.
	keyValues := many(query.MaxValues/query.MaxAttributes, strconv.Itoa)
	cases := map[string]url.Values{
		"in numbers":   w(`{"n":{"in":[` + many(query.MaxValues, func(i int) string { return strconv.Itoa(i - 5) }) + `]}}`),
		"nin strings":  w(`{"name":{"nin":[` + many(query.MaxValues, func(i int) string { return strconv.Quote(strPool[i%len(strPool)] + strconv.Itoa(i/len(strPool))) }) + `]}}`),
		"in ids":       w(`{"id":[` + many(query.MaxValues, strconv.Itoa) + `]}`),
		"many keys":    w(`{` + many(query.MaxAttributes, func(i int) string { return fmt.Sprintf(`"k%d":{"nin":[%s]}`, i, keyValues) }) + `}`),
		"or of many":   w(`{"or":[` + many(query.MaxValues, func(i int) string { return fmt.Sprintf(`{"n":%d}`, i-5) }) + `]}`),
		"loose filter": filter,
		"day filter":   declFilter,
	}
	each(t, es, func(t *testing.T, e engine) {
		for name, p := range cases {
			q, err := query.Parse(p, openSchema())
			if err != nil {
				t.Errorf("%s: Parse: %v", name, err)
				continue
			}
			want := refQuery(rs, q)
			got, _, err := runQuery(e, q)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s:\n got %v\nwant %v", name, got, want)
			}
		}
	})
}

// TestUnstorableText: text no JSON document can hold (NUL) or that is
// not UTF-8 is refused by Parse (400) rather than failing in the
// database (500).
func TestUnstorableText(t *testing.T) {
	t.Parallel()
	rs := genRecords(10)
	es := engines(t, rs)
	cases := map[string]url.Values{
		"NUL in where":          w(`{"name":"a\u0000b"}`),
		"NUL in where modifier": w(`{"name":{"contains":"\u0000"}}`),
		"NUL in where declared": w(`{"title":{"in":["\u0000"]}}`),
		"NUL in filter":         qs("name", "a\x00b"),
		"bad UTF-8 in filter":   qs("name", "a\xffb"),
		"bad UTF-8 declared":    qs("title", "a\xffb"),
	}
	each(t, es, func(t *testing.T, e engine) {
		for name, p := range cases {
			q, err := query.Parse(p, openSchema())
			if err != nil {
				var qe *query.Error
				if !errors.As(err, &qe) {
					t.Errorf("%s: error %T is not *query.Error", name, err)
				}
				continue
			}
			if _, _, err := runQuery(e, q); err != nil {
				t.Errorf("%s: Parse accepted it, and the query fails: %v", name, err)
			}
		}
	})
}

// many joins f(0) … f(n-1) with commas: a JSON list of n generated items.
func many(n int, f func(i int) string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = f(i)
	}
	return strings.Join(parts, ",")
}
