package query_test

import (
	"database/sql"
	"errors"
	"net/url"
	"slices"
	"sync"
	"testing"

	"planwerk/internal/query"
)

// The fuzz database: one in-memory SQLite database per process, loaded
// once.
var (
	fuzzOnce sync.Once
	fuzzDB   *sql.DB
	fuzzRecs []rec
	fuzzErr  error
)

func fuzzEngine(t *testing.T) (engine, []rec) {
	t.Helper()
	fuzzOnce.Do(func() {
		db, err := sql.Open("sqlite", "file::memory:")
		if err != nil {
			fuzzErr = err
			return
		}
		// One connection that never closes: the in-memory database lives
		// as long as it.
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		db.SetConnMaxLifetime(0)
		db.SetConnMaxIdleTime(0)
		if _, err := db.Exec(`CREATE TABLE records (id BIGINT PRIMARY KEY, created_at TEXT, updated_at TEXT, doc TEXT)`); err != nil {
			fuzzErr = err
			return
		}
		rs := genRecords(60)
		for _, r := range rs {
			if _, err := db.Exec(`INSERT INTO records (id, created_at, updated_at, doc) VALUES ($1, $2, $3, $4)`,
				r.ID, r.CreatedAt, r.UpdatedAt, r.JSON); err != nil {
				fuzzErr = err
				return
			}
		}
		fuzzDB, fuzzRecs = db, rs
	})
	if fuzzErr != nil {
		t.Fatal(fuzzErr)
	}
	return engine{name: "sqlite", db: fuzzDB, dialect: query.SQLite}, fuzzRecs
}

// FuzzWhere: Parse never panics, refuses only with *query.Error, and what
// it accepts compiles to SQL that SQLite runs and that selects and orders
// the records as the reference evaluator does. where is the where
// parameter (absent when empty), sort the sort parameter, extra further
// query text (per-attribute filters, limit, skip, ...).
func FuzzWhere(f *testing.F) {
	seeds := []struct{ where, sort, extra string }{
		{`{"name":"alpha"}`, "", ""},
		{`{"name":{"startsWith":"al%"}}`, "name DESC", ""},
		{`{"name":{"contains":"_"},"n":{">":1}}`, "n", ""},
		{`{"n":{">=":2.5,"<":10}}`, "n DESC,name", ""},
		{`{"n":{"in":[1,"1",true,null]}}`, `["mix DESC"]`, ""},
		{`{"n":{"nin":[]}}`, `[{"flag":"DESC"}]`, "limit=5&skip=2"},
		{`{"or":[{"name":null},{"flag":true}]}`, "flag", ""},
		{`{"and":[{"mix":{"!=":null}},{"mix":{"<":"m"}}]}`, "mix", ""},
		{`{"or":[]}`, "", ""},
		{`{"and":[]}`, "", ""},
		{`{}`, "id DESC", ""},
		{`{"day":{">=":"2026-01-04","<":"2026-01-07"}}`, "day DESC", ""},
		{`{"day":{"startsWith":"2026-01-0"}}`, "day", ""},
		{`{"createdAt":"2026-01-05"}`, "createdAt", ""},
		{`{"createdAt":{">":"2026-01-05"}}`, "createdAt DESC", ""},
		{`{"project":{"in":["1",2]},"validationStatus":"APPROVED"}`, "project DESC", ""},
		{`{"hours":{"contains":".5"}}`, "hours", ""},
		{`{"billable":{"startsWith":"t"}}`, "billable DESC", ""},
		{`{"id":{"endsWith":"0"}}`, "", ""},
		{`{"n":9007199254740993}`, "", ""},
		{`{"n":1e2}`, "", ""},
		{`{"x-y":{"!=":"a"}}`, "x-y DESC", ""},
		{`{"name":{"endsWith":"😀"}}`, "", ""},
		{`{"name":{">":"ü"}}`, "", ""},
		{`{"a.b":1}`, "a.b DESC", ""},
		{`{"größe":{">=":1},"first name":{"startsWith":"A"}}`, "first name DESC,größe", ""},
		{"", "", "populate=name"},
		{"", "", "populate=%5B%22project%22%2C%22nope%22%5D"},
		{"", "", "name=5"},
		{"", "name", "n=1e2&flag=true"},
		{"", "", "project=1&project[]=2&createdAt=2026-01-05"},
		{"", "", "mix=true&mix=null"},
		{"", "", "n=0x1p4"},
		// invalid ones
		{`{"name":`, "", ""},
		{`[1]`, "", ""},
		{`{"name":{}}`, "", ""},
		{`{"name":{"like":"a"}}`, "", ""},
		{`{"name":{"in":1}}`, "", ""},
		{`{"or":[1]}`, "", ""},
		{`{"a\"b":1}`, "", ""},
		{`{"a\u0001b":1}`, "", ""},
		{`{"project":"abc"}`, "", ""},
		{`{"day":"2026-13-01"}`, "", ""},
		{`{"validationStatus":"approved"}`, "", ""},
		{`{"n":{"<":null}}`, "", ""},
		{"", "name SIDEWAYS", ""},
		{"", `[{"name":1}]`, ""},
		{"", "", "limit=-1"},
		{"", "", "skip=x"},
		{"", "", "populate=%5B1%5D"},
		{"", `a\b`, ""},
	}
	for _, s := range seeds {
		f.Add(s.where, s.sort, s.extra)
	}
	f.Fuzz(func(t *testing.T, where, sortParam, extra string) {
		params := fuzzParams(where, sortParam, extra)
		for _, s := range []query.Schema{openSchema(), projectDaySchema()} {
			q, err := query.Parse(params, s)
			if err != nil {
				var qe *query.Error
				if !errors.As(err, &qe) {
					t.Fatalf("Parse error %T %v is not a *query.Error", err, err)
				}
				continue
			}
			e, rs := fuzzEngine(t)
			got, stmt, err := runQuery(e, q)
			if err != nil {
				t.Fatalf("params %q: SQLite: %v\n%s", params, err, stmt)
			}
			if want := refQuery(rs, q); !slices.Equal(got, want) {
				t.Fatalf("params %q:\n got %v\nwant %v\n%s", params, got, want, stmt)
			}
		}
	})
}

// fuzzParams is a list query of the fuzzers' three strings: where, sort
// and the rest as a query string.
func fuzzParams(where, sortParam, extra string) url.Values {
	params, err := url.ParseQuery(extra)
	if err != nil {
		params = url.Values{}
	}
	if where != "" {
		params.Set("where", where)
	}
	if sortParam != "" {
		params.Set("sort", sortParam)
	}
	return params
}
