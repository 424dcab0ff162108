package records_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"planwerk/internal/resource"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// listCase is one list request and the expected records, by index of creation.
type listCase struct {
	name     string
	query    url.Values
	want     []int
	noCross  bool // result depends on timing; not compared across engines
	wantNone bool // want is empty
}

// projectRows are the records of TestListLanguage (grp is added: g0, g1, g2
// by index modulo 3). Some carry attributes whose names are not plain
// identifiers ("größe", "first name", "a.b"): any text of 1 to 128 bytes
// without quotes, backslashes or control characters is a name.
var projectRows = []string{
	0:  `{"name":"Alpha","budget":100,"active":true,"tags":["a","b"],"code":"5","größe":3,"first name":"Ann","a.b":1}`,
	1:  `{"name":"alpha","budget":5,"active":false,"tags":["b"],"code":5,"größe":10,"first name":"Bob"}`,
	2:  `{"name":"Beta","budget":12.5,"active":true,"größe":"3"}`,
	3:  `{"name":"beta","budget":-3,"active":null,"a":{"b":1}}`,
	4:  `{"name":"100%","budget":0,"active":true}`,
	5:  `{"name":"100x","budget":1000}`,
	6:  `{"name":"a_b","budget":7.25,"active":false}`,
	7:  `{"name":"axb","budget":7}`,
	8:  `{"name":"Gamma","budget":null,"active":true,"tags":[]}`,
	9:  `{"name":"gamma","active":false}`,
	10: `{"name":null,"budget":"5"}`,
	11: `{}`,
	12: `{"name":"Delta","budget":50,"active":true,"code":"x"}`,
	13: `{"name":"delta%","budget":50.5}`,
	14: `{"name":"Epsilon","budget":99.99,"active":true}`,
	15: `{"name":"zeta","budget":-100.5,"active":false}`,
	16: `{"name":"Zeta","budget":1e2}`,
	17: `{"name":"ünï","budget":3}`,
	18: `{"name":"","budget":2}`,
	19: `{"name":"Eta","budget":true}`,
	20: `{"name":"theta_","budget":20,"active":true}`,
	21: `{"name":"Iota","budget":21,"active":"true"}`,
	22: `{"name":"kappa","budget":22,"tags":["a"]}`,
	23: `{"name":"Lambda","budget":23,"active":true,"nested":{"x":1}}`,
	24: `{"name":"mu","budget":24,"active":false}`,
	25: `{"name":"Nu","budget":25}`,
	26: `{"name":"xi","budget":26,"active":true}`,
	27: `{"name":"Omicron","budget":27,"active":false}`,
	28: `{"name":"pi","budget":28}`,
	29: `{"name":"Rho","budget":29,"active":true}`,
}

func span(lo, hi int) []int {
	var out []int
	for i := lo; i <= hi; i++ {
		out = append(out, i)
	}
	return out
}

// except returns 0..29 without the given indexes.
func except(skip ...int) []int {
	return filterIdx(func(i int) bool { return !slices.Contains(skip, i) })
}

func sorted(s []int) []int {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// filterIdx returns the indexes 0..29 that keep accepts.
func filterIdx(keep func(i int) bool) []int {
	var out []int
	for i := range projectRows {
		if keep(i) {
			out = append(out, i)
		}
	}
	return out
}

func reversed(s []int) []int {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

// listed lists path with the query and returns the records by their
// index of creation (index maps their ids); it must list no other record.
func listed(t *testing.T, c *testenv.Client, path string, query url.Values, index map[int64]int) []int {
	t.Helper()
	var idx []int
	for _, id := range c.IDs(t, path+"?"+query.Encode()) {
		i, ok := index[id]
		if !ok {
			t.Fatalf("GET %s: record %d is not one of the records listed", path, id)
		}
		idx = append(idx, i)
	}
	return idx
}

func where(w string) url.Values { return url.Values{"where": {w}} }

// params builds query values from name, value pairs.
func params(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

// TestListLanguage runs the list query language over HTTP against a fixed
// set of projects and compares the answers of both engines.
func TestListLanguage(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	results := map[string]map[string][]int{}
	// Each's runs go side by side; the comparison waits for both.
	t.Run("engines", func(t *testing.T) {
		testenv.Each(t, func(t *testing.T, b testenv.Backend) {
			srv := testenv.Start(t, b)
			tn := srv.CreateTenant(t, "acme")
			c := srv.SignIn(t, tn)

			ids := make([]int64, len(projectRows))
			index := map[int64]int{}
			created := make([]M, len(projectRows))
			for i, row := range projectRows {
				if !json.Valid([]byte(row)) {
					t.Fatalf("row %d is not JSON", i)
				}
				// Keep the literal number forms (12.50, 1e2) of the rows.
				raw := strings.TrimSuffix(strings.TrimSpace(row), "}")
				if raw != "{" {
					raw += ","
				}
				raw += fmt.Sprintf(`"grp":"g%d"}`, i%3)
				created[i] = c.Create(t, "projects", raw)
				ids[i] = testenv.ID(t, created[i])
				index[ids[i]] = i
			}
			// Another resource's records never show up in a project list.
			c.Create(t, "tasks", M{"name": "Alpha", "budget": 100})

			all := span(0, 29)
			id := func(i int) string { return strconv.FormatInt(ids[i], 10) }
			g0 := []int{0, 3, 6, 9, 12, 15, 18, 21, 24, 27}
			g1 := []int{1, 4, 7, 10, 13, 16, 19, 22, 25, 28}
			g2 := []int{2, 5, 8, 11, 14, 17, 20, 23, 26, 29}
			nameDesc := []int{17, 15, 26, 20, 28, 24, 22, 9, 13, 3, 7, 1, 6, 16, 29, 27, 25, 23, 21, 8, 19, 14, 12, 2, 0, 5, 4, 18, 10, 11}
			nameAsc := []int{10, 11, 18, 4, 5, 0, 2, 12, 14, 19, 8, 21, 23, 25, 27, 29, 16, 6, 1, 7, 3, 13, 9, 22, 24, 28, 20, 26, 15, 17}
			grpDescNameAsc := []int{11, 5, 2, 14, 8, 23, 29, 20, 26, 17, 10, 4, 19, 25, 16, 1, 7, 13, 22, 28, 18, 0, 12, 21, 27, 6, 3, 9, 24, 15}
			budgetAsc := []int{8, 9, 11, 15, 3, 4, 18, 17, 1, 7, 6, 2, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 12, 13, 14, 0, 16, 5, 10, 19}
			activeNull := []int{3, 5, 7, 10, 11, 13, 16, 17, 18, 19, 22, 25, 28}
			activeTrue := []int{0, 2, 4, 8, 12, 14, 20, 23, 26, 29}
			activeFalse := []int{1, 6, 9, 15, 24, 27}

			// The depth of where counts nested criteria objects; the arrays of
			// or, and and in add no level. 31 nested "or" groups around
			// {"name": ["Alpha"]} are 32 levels deep.
			nestedOr := func(levels int, inner string) string {
				return strings.Repeat(`{"or":[`, levels) + inner + strings.Repeat(`]}`, levels)
			}
			nestedAnd := func(levels int, inner string) string {
				return strings.Repeat(`{"and":[`, levels) + inner + strings.Repeat(`]}`, levels)
			}
			// A name of 128 bytes (64 two-byte letters), and one of 130.
			name128, name130 := strings.Repeat("é", 64), strings.Repeat("é", 65)

			cases := []listCase{
				// Per-attribute filters.
				{name: "no criteria", query: url.Values{}, want: all},
				{name: "name exact, case-sensitive", query: params("name", "alpha"), want: []int{1}},
				{name: "name repeated", query: params("name", "Alpha", "name", "Beta"), want: []int{0, 2}},
				{name: "name bracket form", query: params("name[]", "Alpha", "name[]", "beta"), want: []int{0, 3}},
				{name: "name plain and bracket mixed", query: params("name", "Alpha", "name[]", "beta"), want: []int{0, 3}},
				{name: "name empty string", query: params("name", ""), want: []int{18}},
				{name: "name with percent is literal", query: params("name", "100%"), want: []int{4}},
				{name: "name no match", query: params("name", "ALPHA"), wantNone: true},
				{name: "loose 5 matches number and string", query: params("code", "5"), want: []int{0, 1}},
				{name: "loose budget 5", query: params("budget", "5"), want: []int{1, 10}},
				{name: "loose budget 1e2", query: params("budget", "1e2"), want: []int{0, 16}},
				{name: "loose budget 12.50", query: params("budget", "12.50"), want: []int{2}},
				{name: "loose budget negative", query: params("budget", "-100.5"), want: []int{15}},
				{name: "loose true matches bool and string", query: params("active", "true"), want: []int{0, 2, 4, 8, 12, 14, 20, 21, 23, 26, 29}},
				{name: "loose false", query: params("active", "false"), want: activeFalse},
				{name: "two attributes all apply", query: params("active", "true", "budget", "100"), want: []int{0}},
				{name: "id filter", query: params("id", id(5), "id", id(7)), want: []int{5, 7}},
				{name: "id bracket filter", query: params("id[]", id(29), "id[]", id(0)), want: []int{0, 29}},
				{name: "id of another resource", query: params("id", strconv.FormatInt(tn.AdminID, 10)), wantNone: true},
				{name: "unknown attribute filter", query: params("nothere", "x"), wantNone: true},

				// where: equality by JSON kind.
				{name: "where name", query: where(`{"name":"alpha"}`), want: []int{1}},
				{name: "where number matches numbers only", query: where(`{"budget":5}`), want: []int{1}},
				{name: "where string matches strings only", query: where(`{"budget":"5"}`), want: []int{10}},
				{name: "where 1e2 equals 100", query: where(`{"budget":100}`), want: []int{0, 16}},
				{name: "where 12.50", query: where(`{"budget":12.50}`), want: []int{2}},
				{name: "where bool", query: where(`{"active":true}`), want: activeTrue},
				{name: "where false", query: where(`{"active":false}`), want: activeFalse},
				{name: "where two attributes", query: where(`{"active":true,"grp":"g2"}`), want: []int{2, 8, 14, 20, 23, 26, 29}},
				{name: "where array means in", query: where(`{"budget":[5,7]}`), want: []int{1, 7}},
				{name: "where id as text is converted", query: where(`{"id":"` + id(3) + `"}`), want: []int{3}},
				{name: "where id in", query: where(`{"id":{"in":[` + id(0) + `,"` + id(29) + `"]}}`), want: []int{0, 29}},

				// Comparisons.
				{name: "< 0", query: where(`{"budget":{"<":0}}`), want: []int{3, 15}},
				{name: "<= 0", query: where(`{"budget":{"<=":0}}`), want: []int{3, 4, 15}},
				{name: "> 99.99", query: where(`{"budget":{">":99.99}}`), want: []int{0, 5, 16}},
				{name: ">= 99.99", query: where(`{"budget":{">=":99.99}}`), want: []int{0, 5, 14, 16}},
				{name: "range with two modifiers", query: where(`{"budget":{">":20,"<=":25}}`), want: []int{21, 22, 23, 24, 25}},
				{name: "string range", query: where(`{"budget":{"<":"6"}}`), want: []int{10}},
				{name: "names byte-wise below a", query: where(`{"name":{"<":"a"}}`), want: []int{0, 2, 4, 5, 8, 12, 14, 16, 18, 19, 21, 23, 25, 27, 29}},
				{name: "names byte-wise from x", query: where(`{"name":{">=":"x"}}`), want: []int{15, 17, 26}},
				{name: "!= number matches everything else", query: where(`{"budget":{"!=":5}}`), want: except(1)},
				{name: "!= true", query: where(`{"active":{"!=":true}}`), want: []int{1, 3, 5, 6, 7, 9, 10, 11, 13, 15, 16, 17, 18, 19, 21, 22, 24, 25, 27, 28}},
				{name: "in", query: where(`{"budget":{"in":[5,7,"5"]}}`), want: []int{1, 7, 10}},
				{name: "nin matches missing", query: where(`{"budget":{"nin":[5,7,100]}}`), want: except(0, 1, 7, 16)},
				{name: "nin true false", query: where(`{"active":{"nin":[true,false]}}`), want: sorted(append(slices.Clone(activeNull), 21))},
				{name: "in []", query: where(`{"budget":{"in":[]}}`), wantNone: true},
				{name: "array []", query: where(`{"budget":[]}`), wantNone: true},
				{name: "nin []", query: where(`{"budget":{"nin":[]}}`), want: all},

				// Text modifiers: case-sensitive, % and _ literal.
				{name: "startsWith 100%", query: where(`{"name":{"startsWith":"100%"}}`), want: []int{4}},
				{name: "startsWith 100", query: where(`{"name":{"startsWith":"100"}}`), want: []int{4, 5}},
				{name: "startsWith a", query: where(`{"name":{"startsWith":"a"}}`), want: []int{1, 6, 7}},
				{name: "startsWith a_", query: where(`{"name":{"startsWith":"a_"}}`), want: []int{6}},
				{name: "startsWith empty", query: where(`{"name":{"startsWith":""}}`), want: except(10, 11)},
				{name: "startsWith on numbers matches nothing", query: where(`{"budget":{"startsWith":"1"}}`), wantNone: true},
				{name: "endsWith _", query: where(`{"name":{"endsWith":"_"}}`), want: []int{20}},
				{name: "endsWith %", query: where(`{"name":{"endsWith":"%"}}`), want: []int{4, 13}},
				{name: "endsWith a", query: where(`{"name":{"endsWith":"a"}}`), want: []int{0, 1, 2, 3, 8, 9, 12, 15, 16, 19, 21, 22, 23}},
				{name: "endsWith non-ASCII", query: where(`{"name":{"endsWith":"nï"}}`), want: []int{17}},
				{name: "contains %", query: where(`{"name":{"contains":"%"}}`), want: []int{4, 13}},
				{name: "contains _", query: where(`{"name":{"contains":"_"}}`), want: []int{6, 20}},
				{name: "contains eta", query: where(`{"name":{"contains":"eta"}}`), want: []int{2, 3, 15, 16, 20}},
				{name: "startsWith and endsWith", query: where(`{"name":{"startsWith":"a","endsWith":"b"}}`), want: []int{6, 7}},
				{name: "startsWith on a declared integer", query: where(`{"id":{"startsWith":"` + id(3) + `"}}`), noCross: true,
					want: filterIdx(func(i int) bool { return strings.HasPrefix(id(i), id(3)) })},

				// null.
				{name: "null or missing", query: where(`{"active":null}`), want: activeNull},
				{name: "not null", query: where(`{"active":{"!=":null}}`), want: []int{0, 1, 2, 4, 6, 8, 9, 12, 14, 15, 20, 21, 23, 24, 26, 27, 29}},
				{name: "budget null", query: where(`{"budget":null}`), want: []int{8, 9, 11}},
				{name: "name null", query: where(`{"name":null}`), want: []int{10, 11}},
				{name: "attribute nobody has is null", query: where(`{"nobody":null}`), want: all},
				{name: "attribute nobody has is not non-null", query: where(`{"nobody":{"!=":null}}`), wantNone: true},
				{name: "in with null", query: where(`{"active":{"in":[null,false]}}`), want: []int{1, 3, 5, 6, 7, 9, 10, 11, 13, 15, 16, 17, 18, 19, 22, 24, 25, 27, 28}},
				{name: "nin with null", query: where(`{"active":{"nin":[null,false]}}`), want: append(slices.Clone(activeTrue[:6]), 20, 21, 23, 26, 29)},

				// or / and.
				{name: "or", query: where(`{"or":[{"name":"Alpha"},{"budget":{">":900}}]}`), want: []int{0, 5}},
				{name: "or []", query: where(`{"or":[]}`), wantNone: true},
				{name: "and []", query: where(`{"and":[]}`), want: all},
				{name: "{}", query: where(`{}`), want: all},
				{name: "and", query: where(`{"and":[{"budget":{">":20}},{"budget":{"<":24}}]}`), want: []int{21, 22, 23}},
				{name: "nested", query: where(`{"or":[{"and":[{"active":true},{"budget":{"<":20}}]},{"name":"mu"}]}`), want: []int{2, 4, 24}},
				{name: "or beside attributes", query: where(`{"grp":"g1","or":[{"active":false},{"budget":{">=":25}}]}`), want: []int{1, 13, 16, 25, 28}},
				{name: "depth 32 is fine", query: where(nestedOr(31, `{"name":["Alpha"]}`)), want: []int{0}},
				{name: "depth 32 of and is fine", query: where(nestedAnd(31, `{"name":["Alpha","Beta"]}`)), want: []int{0, 2}},
				{name: "depth 32 with a modifier object is fine", query: where(nestedAnd(30, `{"name":{"in":["Alpha","Beta"]}}`)), want: []int{0, 2}},

				// Attribute names are any text without quotes, backslashes or
				// control characters: filterable and sortable like any other.
				{name: "unicode attribute", query: where(`{"größe":3}`), want: []int{0}},
				{name: "unicode attribute range", query: where(`{"größe":{">=":3}}`), want: []int{0, 1}},
				{name: "unicode attribute string", query: where(`{"größe":"3"}`), want: []int{2}},
				{name: "unicode attribute null", query: where(`{"größe":null}`), want: except(0, 1, 2)},
				{name: "unicode attribute filter", query: params("größe", "3"), want: []int{0, 2}},
				{name: "unicode attribute in or", query: where(`{"or":[{"größe":10},{"name":"Beta"}]}`), want: []int{1, 2}},
				{name: "sort by a unicode attribute", query: params("sort", "größe DESC"), want: append([]int{2, 1, 0}, span(3, 29)...)},
				{name: "attribute name with a space", query: where(`{"first name":"Bob"}`), want: []int{1}},
				{name: "attribute name with a space as filter", query: params("first name", "Ann"), want: []int{0}},
				{name: "attribute name with a space startsWith", query: where(`{"first name":{"startsWith":"A"}}`), want: []int{0}},
				{name: "sort by a name with a space", query: params("sort", "first name DESC"), want: append([]int{1, 0}, span(2, 29)...)},
				{name: "sort by a name with a space in JSON", query: params("sort", `[{"first name":"DESC"}]`), want: append([]int{1, 0}, span(2, 29)...)},
				{name: "attribute name with a dot is one name", query: where(`{"a.b":1}`), want: []int{0}},
				{name: "attribute name with a dot is not a path", query: where(`{"a.b":{"!=":null}}`), want: []int{0}},
				{name: "attribute name with a dot as filter", query: params("a.b", "1"), want: []int{0}},
				{name: "sort by a dotted name", query: params("sort", "a.b"), want: append(span(1, 29), 0)},
				{name: "attribute name of 128 bytes", query: where(`{"` + name128 + `":null}`), want: all},

				// populate naming an attribute that is not a reference expands nothing.
				{name: "populate non-reference", query: params("populate", "name"), want: all},
				{name: "populate unknown attribute", query: params("populate", "nobody,größe"), want: all},
				{name: "populate JSON non-reference", query: params("populate", `["name","budget"]`, "where", `{"name":"Alpha"}`), want: []int{0}},

				// where is the entire criteria.
				{name: "where overrides filters", query: params("name", "Alpha", "where", `{"name":"beta"}`), want: []int{3}},
				{name: "where {} overrides filters", query: params("name", "Alpha", "where", `{}`), want: all},
				{name: "ignored filters are not checked", query: params("id", "abc", "where", `{"budget":5}`), want: []int{1}},

				// limit and skip.
				{name: "limit 0", query: params("limit", "0"), wantNone: true},
				{name: "limit 5", query: params("limit", "5"), want: span(0, 4)},
				{name: "limit above the cap", query: params("limit", "60000"), want: all},
				{name: "limit huge", query: params("limit", "99999999999999999999"), want: all},
				{name: "skip", query: params("skip", "28"), want: []int{28, 29}},
				{name: "skip beyond the end", query: params("skip", "30"), wantNone: true},
				{name: "limit and skip", query: params("limit", "2", "skip", "3"), want: []int{3, 4}},
				{name: "limit with where", query: params("where", `{"active":true}`, "limit", "3"), want: activeTrue[:3]},

				// sort.
				{name: "sort name DESC", query: params("sort", "name DESC"), want: nameDesc},
				{name: "sort name", query: params("sort", "name"), want: nameAsc},
				{name: "sort name ASC", query: params("sort", "name ASC"), want: nameAsc},
				{name: "sort budget", query: params("sort", "budget"), want: budgetAsc},
				{name: "sort budget DESC", query: params("sort", "budget DESC"), want: []int{19, 10, 5, 0, 16, 14, 13, 12, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 2, 6, 7, 1, 17, 18, 4, 3, 15, 8, 9, 11}},
				{name: "sort mixed kinds", query: params("sort", "active"), want: slices.Concat(activeNull, []int{21}, activeFalse, activeTrue)},
				{name: "sort id DESC", query: params("sort", "id DESC"), want: reversed(all)},
				{name: "sort ties broken by id", query: params("sort", "grp"), want: slices.Concat(g0, g1, g2)},
				{name: "sort ties broken by id DESC key", query: params("sort", "grp DESC"), want: slices.Concat(g2, g1, g0)},
				{name: "multi-key sort", query: params("sort", "grp DESC,name ASC"), want: grpDescNameAsc},
				{name: "multi-key sort with spaces", query: params("sort", " grp  DESC , name "), want: grpDescNameAsc},
				{name: "multi-key sort repeated", query: params("sort", "grp DESC", "sort", "name"), want: grpDescNameAsc},
				{name: "sort JSON strings", query: params("sort", `["grp DESC","name ASC"]`), want: grpDescNameAsc},
				{name: "sort JSON objects", query: params("sort", `[{"grp":"DESC"},{"name":"ASC"}]`), want: grpDescNameAsc},
				{name: "sort JSON object", query: params("sort", `{"grp":"DESC","name":"ASC"}`), want: grpDescNameAsc},
				{name: "sort where limit skip", query: params("where", `{"active":true}`, "sort", "budget DESC", "limit", "3", "skip", "1"), want: []int{14, 12, 29}},
				{name: "sort by a missing attribute", query: params("sort", "nobody DESC"), want: all},
			}
			// Paging with skip is stable.
			for _, key := range []string{"name DESC", "grp", "budget"} {
				full := map[string][]int{"name DESC": nameDesc, "grp": slices.Concat(g0, g1, g2), "budget": budgetAsc}[key]
				for skip := 0; skip < 30; skip += 7 {
					cases = append(cases, listCase{name: fmt.Sprintf("page %s skip %d", key, skip),
						query: params("sort", key, "limit", "7", "skip", strconv.Itoa(skip)), want: full[skip:min(skip+7, 30)]})
				}
			}
			// createdAt and updatedAt: expectations derived from the stored stamps.
			stamps := func(field string, keep func(ts string) bool) []int {
				var out []int
				for i, m := range created {
					if keep(m[field].(string)) {
						out = append(out, i)
					}
				}
				return out
			}
			day := created[0]["createdAt"].(string)[:10]
			d, _ := time.Parse(time.DateOnly, day)
			prevDay, nextDay := d.AddDate(0, 0, -1).Format(time.DateOnly), d.AddDate(0, 0, 1).Format(time.DateOnly)
			ts10 := created[10]["createdAt"].(string)
			onDay := stamps("createdAt", func(ts string) bool { return ts[:10] == day })
			cases = append(cases,
				listCase{name: "createdAt day", query: params("createdAt", day), want: onDay, noCross: true},
				listCase{name: "createdAt day in where", query: where(`{"createdAt":"` + day + `"}`), want: onDay, noCross: true},
				listCase{name: "updatedAt day", query: params("updatedAt", day), want: stamps("updatedAt", func(ts string) bool { return ts[:10] == day }), noCross: true},
				listCase{name: "createdAt other day", query: params("createdAt", prevDay), wantNone: true},
				listCase{name: "createdAt two days", query: params("createdAt", prevDay, "createdAt", day), want: onDay, noCross: true},
				listCase{name: "createdAt >= day", query: where(`{"createdAt":{">=":"` + day + `"}}`), want: all},
				listCase{name: "createdAt > day is after its first instant", query: where(`{"createdAt":{">":"` + day + `"}}`),
					want: stamps("createdAt", func(ts string) bool { return ts > day+"T00:00:00.000Z" }), noCross: true},
				listCase{name: "createdAt < day", query: where(`{"createdAt":{"<":"` + day + `"}}`), wantNone: true},
				listCase{name: "createdAt < next day", query: where(`{"createdAt":{"<":"` + nextDay + `"}}`), want: onDay, noCross: true},
				listCase{name: "createdAt exact timestamp", query: params("createdAt", ts10),
					want: stamps("createdAt", func(ts string) bool { return ts == ts10 }), noCross: true},
				listCase{name: "createdAt <= timestamp", query: where(`{"createdAt":{"<=":"` + ts10 + `"}}`),
					want: stamps("createdAt", func(ts string) bool { return ts <= ts10 }), noCross: true},
				listCase{name: "createdAt > timestamp", query: where(`{"createdAt":{">":"` + ts10 + `"}}`),
					want: stamps("createdAt", func(ts string) bool { return ts > ts10 }), noCross: true},
				listCase{name: "createdAt != day", query: where(`{"createdAt":{"!=":"` + prevDay + `"}}`), want: all},
				listCase{name: "createdAt startsWith", query: where(`{"createdAt":{"startsWith":"` + day + `"}}`), want: onDay, noCross: true},
			)

			got := map[string][]int{}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					idx := listed(t, c, "/v1/projects", tc.query, index)
					want := tc.want
					if tc.wantNone {
						want = nil
					} else if len(want) == 0 {
						t.Fatal("case without expectation")
					}
					if !slices.Equal(idx, want) {
						t.Errorf("%s\n got %v\nwant %v", tc.query.Encode(), idx, want)
					}
					if !tc.noCross {
						got[tc.name] = idx
					}
				})
			}
			// Declared attributes are compared as their types: documents have
			// an integer, a boolean, a date, a string and an enum.
			client := testenv.ID(t, c.Create(t, "clients", M{"name": "C"}))
			P, C, A := strconv.FormatInt(ids[0], 10), strconv.FormatInt(client, 10), strconv.FormatInt(tn.AdminID, 10)
			docRows := []M{
				{"model": "user", "record": tn.AdminID, "category": 1, "visibleToUser": true, "name": "b", "date": "2026-01-03"},
				{"model": "user", "record": tn.AdminID, "category": 2, "visibleToUser": false, "name": "A", "date": "2026-01-01"},
				{"model": "project", "record": ids[0], "category": 7, "name": "c"},
				{"model": "project", "record": ids[0], "category": 10, "visibleToUser": true, "name": "a_", "date": "2026-02-01"},
				{"model": "client", "record": client, "category": 11, "date": "2025-12-31"},
				{"model": "client", "record": client, "category": 14, "visibleToUser": false, "name": "%"},
			}
			docIndex := map[int64]int{}
			for i, d := range docRows {
				docIndex[testenv.ID(t, c.Create(t, "documents", d))] = i
			}
			docCases := []struct {
				name  string
				query url.Values
				want  []int
			}{
				{"category", params("category", "7"), []int{2}},
				{"category repeated", params("category", "7", "category[]", "11"), []int{2, 4}},
				{"category text in where", where(`{"category":"11"}`), []int{4}},
				{"category in mixed", where(`{"category":{"in":["1",2]}}`), []int{0, 1}},
				{"category range", where(`{"category":{">=":10}}`), []int{3, 4, 5}},
				{"category as text", where(`{"category":{"startsWith":"1"}}`), []int{0, 3, 4, 5}},
				{"category endsWith", where(`{"category":{"endsWith":"4"}}`), []int{5}},
				{"visibleToUser true", params("visibleToUser", "true"), []int{0, 3}},
				{"visibleToUser false", params("visibleToUser", "false"), []int{1, 5}},
				{"visibleToUser null", where(`{"visibleToUser":null}`), []int{2, 4}},
				{"visibleToUser != true", where(`{"visibleToUser":{"!=":true}}`), []int{1, 2, 4, 5}},
				{"visibleToUser nin", where(`{"visibleToUser":{"nin":[false]}}`), []int{0, 2, 3, 4}},
				{"visibleToUser text is converted", where(`{"visibleToUser":"true"}`), []int{0, 3}},
				{"visibleToUser as text", where(`{"visibleToUser":{"startsWith":"t"}}`), []int{0, 3}},
				{"model", params("model", "project"), []int{2, 3}},
				{"model startsWith", where(`{"model":{"startsWith":"cl"}}`), []int{4, 5}},
				{"model and visibleToUser", where(`{"model":"user","visibleToUser":true}`), []int{0}},
				{"record", params("record", P), []int{2, 3}},
				{"record per model", where(`{"or":[{"model":"client","record":` + C + `},{"model":"user","record":"` + A + `"}]}`), []int{0, 1, 4, 5}},
				{"date", params("date", "2025-12-31"), []int{4}},
				{"date range", where(`{"date":{">=":"2026-01-01","<":"2026-02-01"}}`), []int{0, 1}},
				{"date null", where(`{"date":null}`), []int{2, 5}},
				{"date startsWith", where(`{"date":{"startsWith":"2026-0"}}`), []int{0, 1, 3}},
				{"name byte-wise below a", where(`{"name":{"<":"a"}}`), []int{1, 5}},
				{"name contains _", where(`{"name":{"contains":"_"}}`), []int{3}},
				{"name contains %", where(`{"name":{"contains":"%"}}`), []int{5}},
				{"sort category DESC", params("sort", "category DESC"), []int{5, 4, 3, 2, 1, 0}},
				{"sort date", params("sort", "date"), []int{2, 5, 4, 1, 0, 3}},
				{"sort date DESC", params("sort", "date DESC"), []int{3, 0, 1, 4, 2, 5}},
				{"sort visibleToUser", params("sort", "visibleToUser"), []int{2, 4, 1, 5, 0, 3}},
				{"sort name", params("sort", "name"), []int{4, 5, 1, 3, 0, 2}},
				{"sort model DESC, category", params("sort", "model DESC,category"), []int{0, 1, 2, 3, 4, 5}},
			}
			for _, tc := range docCases {
				t.Run("documents/"+tc.name, func(t *testing.T) {
					idx := listed(t, c, "/v1/documents", tc.query, docIndex)
					if !slices.Equal(idx, tc.want) {
						t.Errorf("%s\n got %v\nwant %v", tc.query.Encode(), idx, tc.want)
					}
					got["documents/"+tc.name] = idx
				})
			}
			for _, q := range []url.Values{
				params("category", "x"), params("category", "1.5"), where(`{"category":true}`), params("visibleToUser", "yes"),
				where(`{"visibleToUser":"yes"}`), where(`{"visibleToUser":{"<":true}}`), params("model", "invoice"),
				params("date", "2026-13-01"), where(`{"date":{">":5}}`), where(`{"name":5}`),
			} {
				c.Fail(t, http.MethodGet, "/v1/documents?"+q.Encode(), nil, http.StatusBadRequest, "invalid_query")
			}
			mu.Lock()
			results[b.Name] = got
			mu.Unlock()

			errCases := []struct {
				name  string
				query url.Values
			}{
				{"where invalid JSON", where(`{"name":`)},
				{"where not JSON", where(`name=x`)},
				{"where text after the object", where(`{} {}`)},
				{"where array", where(`[{"name":"x"}]`)},
				{"where string", where(`"x"`)},
				{"where number", where(`5`)},
				{"where null", where(`null`)},
				{"where twice", params("where", `{}`, "where", `{}`)},
				{"unknown modifier", where(`{"name":{"like":"a%"}}`)},
				{"modifier case", where(`{"name":{"startswith":"a"}}`)},
				{"empty constraint", where(`{"a":{}}`)},
				{"in without array", where(`{"name":{"in":"Alpha"}}`)},
				{"nin without array", where(`{"name":{"nin":5}}`)},
				{"in with an object", where(`{"name":{"in":[{"x":1}]}}`)},
				{"array of arrays", where(`{"name":[["Alpha"]]}`)},
				{"or without array", where(`{"or":{"name":"Alpha"}}`)},
				{"or of non-objects", where(`{"or":[1]}`)},
				{"or of strings", where(`{"or":["name"]}`)},
				{"and without array", where(`{"and":"x"}`)},
				{"and of arrays", where(`{"and":[[]]}`)},
				{"depth 33", where(nestedOr(32, `{"name":"Alpha"}`))},
				{"depth 33 of and", where(nestedAnd(32, `{"name":"Alpha"}`))},
				{"depth 33 of mixed groups", where(nestedAnd(16, nestedOr(16, `{"name":"Alpha"}`)))},
				{"in with nested arrays", where(`{"name":{"in":` + strings.Repeat("[", 32) + strings.Repeat("]", 32) + `}}`)},
				{"range with bool", where(`{"budget":{"<":true}}`)},
				{"range with null", where(`{"budget":{">=":null}}`)},
				{"range with array", where(`{"budget":{">":[1]}}`)},
				{"startsWith number", where(`{"name":{"startsWith":5}}`)},
				{"value object", where(`{"name":{"=":"x"}}`)},
				{"id not an integer", where(`{"id":"abc"}`)},
				{"id fraction", where(`{"id":1.5}`)},
				{"createdAt not a date", where(`{"createdAt":"yesterday"}`)},
				{"createdAt without offset", params("createdAt", "2026-01-05T10:00:00.000")},
				{"createdAt month 13", params("createdAt", "2026-13-01")},
				{"attribute name with a quote", where(`{"a\"b":1}`)},
				{"attribute name with a backslash", where(`{"a\\b":1}`)},
				{"attribute name with a control character", where(`{"a\u0001b":1}`)},
				{"attribute name with a tab", where(`{"a\tb":1}`)},
				{"attribute name with DEL", where(`{"a\u007fb":1}`)},
				{"empty attribute name", where(`{"":1}`)},
				{"attribute name over 128 bytes", where(`{"` + name130 + `":1}`)},
				{"attribute name with a quote in or", where(`{"or":[{"name":"Alpha"},{"a\"b":1}]}`)},
				{"filter name with a quote", params(`a"b`, "1")},
				{"filter name with a backslash", params(`a\b`, "1")},
				{"filter name with a control character", params("a\x01b", "1")},
				{"filter name over 128 bytes", params(name130, "1")},
				{"id filter not a number", params("id", "abc")},
				{"limit -1", params("limit", "-1")},
				{"limit abc", params("limit", "abc")},
				{"limit fraction", params("limit", "1.5")},
				{"limit empty", params("limit", "")},
				{"limit twice", params("limit", "1", "limit", "2")},
				{"skip x", params("skip", "x")},
				{"skip -1", params("skip", "-1")},
				{"sort name UP", params("sort", "name UP")},
				{"sort three words", params("sort", "name ASC now")},
				{"sort JSON number", params("sort", `[1]`)},
				{"sort JSON direction", params("sort", `[{"name":"UP"}]`)},
				{"sort JSON direction not a string", params("sort", `{"name":1}`)},
				{"sort JSON broken", params("sort", `["name"`)},
				{"sort name with a quote", params("sort", `a"b`)},
				{"sort name with a backslash", params("sort", `a\b DESC`)},
				{"sort name with a control character", params("sort", "a\x01b")},
				{"sort JSON name with a quote", params("sort", `[{"a\"b":"ASC"}]`)},
				{"sort name over 128 bytes", params("sort", name130)},
				{"populate malformed JSON", params("populate", `["name"`)},
				{"populate JSON numbers", params("populate", `[1]`)},
			}
			for _, tc := range errCases {
				t.Run("error/"+tc.name, func(t *testing.T) {
					m := c.Fail(t, http.MethodGet, "/v1/projects?"+tc.query.Encode(), nil, http.StatusBadRequest, "invalid_query")
					if len(testenv.ProblemFields(m)) == 0 {
						t.Logf("no problems in %v", m)
					}
				})
			}
			// A malformed query string is refused, not guessed at.
			c.Fail(t, http.MethodGet, "/v1/projects?name=%zz", nil, http.StatusBadRequest, "invalid_query")
			// populate of attributes that are not references changes nothing in the records.
			plain := c.List(t, "/v1/projects")
			for _, q := range []string{"populate=name", "populate=" + url.QueryEscape(`["tags","größe"]`), "populate=nobody"} {
				if got := c.List(t, "/v1/projects?"+q); !reflect.DeepEqual(got, plain) {
					t.Errorf("GET /v1/projects?%s changed the records:\n got %v\nwant %v", q, got, plain)
				}
			}
			// Names that are not plain identifiers round-trip unchanged.
			if got := c.Get(t, "projects", ids[0]); got["größe"] != 3.0 || got["first name"] != "Ann" || got["a.b"] != 1.0 {
				t.Errorf("project with unusual attribute names: %v", got)
			}
			if got := c.Get(t, "projects", ids[3]); !reflect.DeepEqual(got["a"], map[string]any{"b": 1.0}) {
				t.Errorf("project with a nested object: %v", got)
			}
		})
	})

	sq, pg := results["sqlite"], results["postgres"]
	if sq == nil || pg == nil {
		t.Log("one engine did not run: no comparison")
		return
	}
	for name, a := range sq {
		if p, ok := pg[name]; ok && !slices.Equal(a, p) {
			t.Errorf("%s: engines differ: sqlite %v, postgres %v", name, a, p)
		}
	}
}

// insertDirect stores a record of a read-only resource directly, as the
// approval endpoint does for project days, and returns it.
func insertDirect(t *testing.T, srv *testenv.Server, tenantID int64, res *resource.Resource, doc M) M {
	t.Helper()
	ctx := context.Background()
	db := srv.Service.DB
	id, err := db.NewID(ctx, db, tenantID)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := db.InsertRecord(ctx, db, tenantID, store.Collection{Table: "records", Resource: res.Name}, id, doc)
	if err != nil {
		t.Fatal(err)
	}
	var m M
	if err := json.Unmarshal(rec.Doc, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestProjectDayList: ProjectDay is read-only and has exactly its declared
// attributes.
func TestProjectDayList(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		c := srv.SignIn(t, tn)
		res, ok := srv.Service.Registry.Get("project-days")
		if !ok || !res.ReadOnly || !res.DeclaredOnly {
			t.Fatalf("project-days: %+v", res)
		}
		p1 := testenv.ID(t, c.Create(t, "projects", M{"name": "one"}))
		p2 := testenv.ID(t, c.Create(t, "projects", M{"name": "two"}))
		rows := []M{
			{"day": "2026-01-01", "project": p1, "validationStatus": "APPROVED"},
			{"day": "2026-01-02", "project": p1, "validationStatus": "NOTAPPROVED"},
			{"day": "2026-01-03", "project": p2, "validationStatus": "APPROVED"},
			{"day": "2026-01-04", "project": p1, "validationStatus": "APPROVED"},
			{"day": "2026-01-05", "project": p2, "validationStatus": "NOTAPPROVED"},
			{"day": "2026-02-01", "project": p2, "validationStatus": "APPROVED"},
		}
		ids := make([]int64, len(rows))
		index := map[int64]int{}
		for i, r := range rows {
			m := insertDirect(t, srv, tn.ID, res, r)
			ids[i] = testenv.ID(t, m)
			index[ids[i]] = i
		}
		// Records of other resources never appear here.
		task := testenv.ID(t, c.Create(t, "tasks", M{"name": "t"}))
		c.Create(t, "time-entries", M{"day": "2026-01-03", "trackingType": "WORK", "project": p1, "task": task, "duration": 60, "sorting": 1})

		got := c.Get(t, "project-days", ids[2])
		if got["day"] != "2026-01-03" || got["project"] != float64(p2) || got["validationStatus"] != "APPROVED" || testenv.ID(t, got) != ids[2] {
			t.Errorf("GET project-day: %v", got)
		}
		checkStamps(t, got)
		P1, P2 := strconv.FormatInt(p1, 10), strconv.FormatInt(p2, 10)
		cases := []struct {
			name  string
			query url.Values
			want  []int
		}{
			{"all", url.Values{}, span(0, 5)},
			{"day range", where(`{"day":{">=":"2026-01-02","<":"2026-01-05"}}`), []int{1, 2, 3}},
			{"day after", where(`{"day":{">":"2026-01-05"}}`), []int{5}},
			{"day exact", params("day", "2026-01-03"), []int{2}},
			{"day repeated", params("day", "2026-01-03", "day", "2026-01-05"), []int{2, 4}},
			{"day bracket form", params("day[]", "2026-01-01", "day[]", "2026-02-01"), []int{0, 5}},
			{"day in where", where(`{"day":["2026-01-01","2026-01-04"]}`), []int{0, 3}},
			{"day startsWith", where(`{"day":{"startsWith":"2026-01"}}`), span(0, 4)},
			{"day endsWith", where(`{"day":{"endsWith":"-01"}}`), []int{0, 5}},
			{"project", params("project", P1), []int{0, 1, 3}},
			{"project repeated", params("project", P1, "project", P2), span(0, 5)},
			{"project as text in where", where(`{"project":"` + P1 + `"}`), []int{0, 1, 3}},
			{"project in", where(`{"project":{"in":[` + P2 + `]}}`), []int{2, 4, 5}},
			{"project nin", where(`{"project":{"nin":[` + P2 + `]}}`), []int{0, 1, 3}},
			{"project startsWith", where(`{"project":{"startsWith":"` + P1 + `"}}`), []int{0, 1, 3}},
			{"validationStatus", params("validationStatus", "APPROVED"), []int{0, 2, 3, 5}},
			{"validationStatus and project", params("validationStatus", "APPROVED", "project", P2), []int{2, 5}},
			{"validationStatus !=", where(`{"validationStatus":{"!=":"APPROVED"}}`), []int{1, 4}},
			{"or", where(`{"or":[{"day":"2026-01-01"},{"validationStatus":"NOTAPPROVED"}]}`), []int{0, 1, 4}},
			{"id", params("id", strconv.FormatInt(ids[4], 10)), []int{4}},
			{"sort day DESC", params("sort", "day DESC"), []int{5, 4, 3, 2, 1, 0}},
			{"sort project then day DESC", params("sort", "project,day DESC"), []int{3, 1, 0, 5, 4, 2}},
			{"limit skip", params("sort", "day", "limit", "2", "skip", "2"), []int{2, 3}},
			{"where overrides filters", params("project", P1, "where", `{"project":`+P2+`}`), []int{2, 4, 5}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				idx := listed(t, c, "/v1/project-days", tc.query, index)
				if !slices.Equal(idx, tc.want) {
					t.Errorf("%s\n got %v\nwant %v", tc.query.Encode(), idx, tc.want)
				}
			})
		}
		none := []url.Values{
			params("day", "2026-03-01"), params("validationStatus", "NOTAPPROVED", "project", P1, "day", "2026-01-01"),
			where(`{"day":{"<":"2026-01-01"}}`), params("createdAt", "2000-01-01"),
		}
		for _, q := range none {
			if got := c.IDs(t, "/v1/project-days?"+q.Encode()); len(got) != 0 {
				t.Errorf("%s: %v, want none", q.Encode(), got)
			}
		}
		errs := []struct {
			name  string
			query url.Values
		}{
			{"where on unknown attribute", where(`{"name":"x"}`)},
			{"where on unknown attribute in or", where(`{"or":[{"day":"2026-01-01"},{"user":1}]}`)},
			{"where null on unknown attribute", where(`{"nobody":null}`)},
			{"contains", where(`{"day":{"contains":"01"}}`)},
			{"contains on project", where(`{"project":{"contains":"1"}}`)},
			{"filter on unknown attribute", params("name", "x")},
			{"bracket filter on unknown attribute", params("user[]", "1")},
			{"validationStatus BAD", params("validationStatus", "BAD")},
			{"validationStatus lower case", params("validationStatus", "approved")},
			{"validationStatus BAD in where", where(`{"validationStatus":"BAD"}`)},
			{"day not a date", params("day", "2026-13-01")},
			{"day in another format", where(`{"day":"2026-1-1"}`)},
			{"day number", where(`{"day":20260101}`)},
			{"project not a number", params("project", "one")},
			{"sort on unknown attribute", params("sort", "name")},
			{"populate malformed JSON", params("populate", `["project"`)},
		}
		for _, tc := range errs {
			t.Run("error/"+tc.name, func(t *testing.T) {
				c.Fail(t, http.MethodGet, "/v1/project-days?"+tc.query.Encode(), nil, http.StatusBadRequest, "invalid_query")
			})
		}
		// populate naming no reference (unknown, or not a reference) is
		// accepted and expands nothing.
		plain := c.List(t, "/v1/project-days")
		for _, q := range []string{"populate=user", "populate=day", "populate=" + url.QueryEscape(`["validationStatus","nobody"]`)} {
			if got := c.List(t, "/v1/project-days?"+q); !reflect.DeepEqual(got, plain) {
				t.Errorf("GET /v1/project-days?%s:\n got %v\nwant %v", q, got, plain)
			}
		}
		// populate expands the project.
		pop := c.List(t, "/v1/project-days?populate=project&where="+url.QueryEscape(`{"project":`+P2+`}`))
		if len(pop) != 3 {
			t.Fatalf("populated list: %v", pop)
		}
		for _, m := range pop {
			if p, _ := m["project"].(map[string]any); p == nil || p["name"] != "two" || testenv.Num(p["id"]) != p2 {
				t.Errorf("populated project day: %v", m)
			}
		}
		// Nothing can be written, and nothing was.
		for _, req := range []struct{ method, path string }{
			{http.MethodPost, "/v1/project-days"},
			{http.MethodPatch, fmt.Sprintf("/v1/project-days/%d", ids[0])},
			{http.MethodPut, fmt.Sprintf("/v1/project-days/%d", ids[0])},
			{http.MethodDelete, fmt.Sprintf("/v1/project-days/%d", ids[0])},
		} {
			c.Fail(t, req.method, req.path, M{"day": "2026-03-01", "project": p1, "validationStatus": "NOTAPPROVED"}, http.StatusMethodNotAllowed, "method_not_allowed")
		}
		if got := c.Get(t, "project-days", ids[0]); got["validationStatus"] != "APPROVED" || got["day"] != "2026-01-01" {
			t.Errorf("project day after refused writes: %v", got)
		}
		if n := len(c.List(t, "/v1/project-days")); n != len(rows) {
			t.Errorf("%d project days, want %d", n, len(rows))
		}
	})
}
