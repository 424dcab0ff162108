package query_test

import (
	"encoding/base64"
	"errors"
	"net/url"
	"slices"
	"testing"

	"planwerk/internal/query"
)

// cursorSorts are orders over every kind of term: open attributes of
// mixed JSON types, declared ones with missing values, the columns, and
// several keys in both directions.
var cursorSorts = []string{
	"", "name", "name DESC", "n", "n DESC", "mix", "mix DESC", "flag DESC,name",
	"title", "title DESC", "hours", "hours DESC", "billable", "billable DESC",
	"day DESC,hours", "user,id DESC", "createdAt DESC", "updatedAt", "id DESC",
	`[{"extra":"DESC"},{"mix":"ASC"},{"hours":"DESC"}]`,
}

// selectIDs runs a Select of records' ids (and their order's keys) in
// sel's order.
func selectIDs(t testing.TB, e engine, sel query.Select) ([]int64, [][]any) {
	t.Helper()
	var s query.SQL
	sel.Columns, sel.Table = "id", "records"
	sel.Scope = func(s *query.SQL) { s.Write("(1=1)") }
	e.dialect.Select(&s, sel)
	if err := checkPlaceholders(s.String(), s.Args); err != nil {
		t.Fatalf("%s: %v\n%s", e.name, err, s.String())
	}
	rows, err := e.db.Query(s.String(), s.Args...)
	if err != nil {
		t.Fatalf("%s: %v\n%s", e.name, err, s.String())
	}
	defer rows.Close()
	var ids []int64
	var keys [][]any
	n := 0
	if sel.Keys {
		n = query.Terms(sel.Sort)
	}
	for rows.Next() {
		var id int64
		k := make([]any, n)
		dest := []any{&id}
		for i := range k {
			dest = append(dest, &k[i])
		}
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		ids, keys = append(ids, id), append(keys, k)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", e.name, err)
	}
	return ids, keys
}

// TestCursorRoundTrip: on both engines, over records of every JSON type,
// the cursor of each row of a list, given back as after=, selects exactly
// the rows that follow it in the list, in order.
func TestCursorRoundTrip(t *testing.T) {
	rs := genRecords(60)
	for _, e := range engines(t, rs) {
		t.Run(e.name, func(t *testing.T) {
			if e.skip != "" {
				t.Skip(e.skip)
			}
			for _, sortParam := range cursorSorts {
				params := url.Values{}
				if sortParam != "" {
					params.Set("sort", sortParam)
				}
				q, err := query.Parse(params, openSchema())
				if err != nil {
					t.Fatalf("sort %q: %v", sortParam, err)
				}
				all, keys := selectIDs(t, e, query.Select{Sort: q.Sort, Limit: 1000, Keys: true})
				if len(all) != len(rs) {
					t.Fatalf("sort %q: %d records, want %d", sortParam, len(all), len(rs))
				}
				for i := range all {
					cursor, err := query.Cursor(q.Sort, keys[i])
					if err != nil {
						t.Fatalf("sort %q, row %d: %v (keys %#v)", sortParam, i, err, keys[i])
					}
					params.Set("after", cursor)
					qa, err := query.Parse(params, openSchema())
					if err != nil {
						t.Fatalf("sort %q, row %d: the cursor is refused: %v", sortParam, i, err)
					}
					got, _ := selectIDs(t, e, query.Select{Sort: qa.Sort, After: qa.After, Limit: 1000})
					if want := all[i+1:]; !slices.Equal(got, want) {
						t.Fatalf("sort %q, after row %d (keys %#v):\n got %v\nwant %v", sortParam, i, keys[i], got, want)
					}
				}
			}
		})
	}
}

// FuzzCursor: whatever after= holds, Parse never panics and refuses only
// with a *query.Error naming after; a cursor it accepts compiles to SQL
// that SQLite runs, and selects a suffix of the list in its order (the
// rows after some point), whatever the cursor's values.
func FuzzCursor(f *testing.F) {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, seed := range []struct{ sort, after string }{
		{"", enc(`[[],5]`)},
		{"", enc(`[[],-1]`)},
		{"name", enc(`[["+name"],2,null,"m",null,7]`)},
		{"name", enc(`[["+name"],0,null,null,null,7]`)},
		{"name DESC", enc(`[["-name"],4,null,null,null,3]`)},
		{"n", enc(`[["+n"],1,2.5,null,null,9]`)},
		{"n DESC", enc(`[["-n"],1,-1e300,null,null,9]`)},
		{"hours", enc(`[["+hours"],null,12]`)},
		{"hours DESC", enc(`[["-hours"],3.25,12]`)},
		{"billable", enc(`[["+billable"],true,1]`)},
		{"title DESC", enc(`[["-title"],"b",1]`)},
		{"createdAt", enc(`[["+createdAt"],"2026-01-05T00:00:00.000Z",1]`)},
		{"id DESC", enc(`[["-id"],30]`)},
		{"day DESC,hours", enc(`[["-day","+hours"],"2026-01-04",null,3]`)},
		// refused
		{"", enc(`[[],"5"]`)},
		{"", enc(`[["+id"],5]`)},
		{"name", enc(`[["+name"],2,null,"m",null]`)},
		{"hours", enc(`[["+hours"],"x",12]`)},
		{"billable", enc(`[["+billable"],1,1]`)},
		{"", "%%%"},
		{"", ""},
		{"", enc(`[[],5]x`)},
	} {
		f.Add(seed.sort, seed.after)
	}
	f.Fuzz(func(t *testing.T, sortParam, after string) {
		params := url.Values{"after": {after}}
		if sortParam != "" {
			params.Set("sort", sortParam)
		}
		q, err := query.Parse(params, openSchema())
		if err != nil {
			var qe *query.Error
			if !errors.As(err, &qe) {
				t.Fatalf("Parse error %T %v is not a *query.Error", err, err)
			}
			if _, serr := query.Parse(url.Values{"sort": params["sort"]}, openSchema()); serr == nil && qe.Param != "after" {
				t.Fatalf("sort %q after %q: refused for %s, not after: %v", sortParam, after, qe.Param, err)
			}
			return
		}
		e, _ := fuzzEngine(t)
		all, _ := selectIDs(t, e, query.Select{Sort: q.Sort, Limit: 1000})
		got, _ := selectIDs(t, e, query.Select{Sort: q.Sort, After: q.After, Limit: 1000})
		if len(got) > len(all) || !slices.Equal(got, all[len(all)-len(got):]) {
			t.Fatalf("sort %q after %q: %v is not a suffix of %v", sortParam, after, got, all)
		}
	})
}
