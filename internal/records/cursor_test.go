package records_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"planwerk/internal/testenv"
)

// nextOf is the target of a Link header's rel="next", as a path and
// query of the same server, or "".
func nextOf(t *testing.T, h http.Header) string {
	t.Helper()
	links := h.Values("Link")
	if len(links) == 0 {
		return ""
	}
	if len(links) != 1 {
		t.Fatalf("Link headers %q, want one", links)
	}
	l := links[0]
	if !strings.HasPrefix(l, "<") || !strings.HasSuffix(l, `>; rel="next"`) {
		t.Fatalf("Link %q is not <URL>; rel=\"next\"", l)
	}
	u, err := url.Parse(strings.TrimSuffix(strings.TrimPrefix(l, "<"), `>; rel="next"`))
	if err != nil || !u.IsAbs() {
		t.Fatalf("Link %q: not an absolute URL (%v)", l, err)
	}
	return u.RequestURI()
}

// page GETs one page and returns its ids and its next link.
func page(t *testing.T, c *testenv.Client, path string) ([]int64, string) {
	t.Helper()
	status, h, raw := c.Send(t, http.MethodGet, path, nil)
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, status, raw)
	}
	var ids []int64
	for _, m := range decodeArray(t, raw) {
		ids = append(ids, testenv.ID(t, m))
	}
	return ids, nextOf(t, h)
}

func decodeArray(t *testing.T, raw []byte) []M {
	t.Helper()
	var out []M
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("not a JSON array: %q", raw)
	}
	return out
}

// walk follows the next links from path and returns every id in order
// and the number of pages.
func walk(t *testing.T, c *testenv.Client, path string) ([]int64, int) {
	t.Helper()
	var all []int64
	pages := 0
	for path != "" {
		ids, next := page(t, c, path)
		pages++
		if next != "" && len(ids) == 0 {
			t.Fatalf("GET %s: an empty page with a next link", path)
		}
		all = append(all, ids...)
		path = next
		if pages > 1000 {
			t.Fatal("more than 1000 pages")
		}
	}
	return all, pages
}

// TestListCursor: a list that limit cut short links to its next page
// (Link: <URL>; rel="next"), which goes on after the page's last row in
// the list's order, whatever the sort: mixed JSON types, missing
// attributes, declared attributes, the timestamps, descending keys and
// several keys. Walking the links yields the whole list once, in order;
// the last page has no link. skip counts after the cursor. A cursor that
// is not one of the list's order is refused.
func TestListCursor(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		c := srv.SignIn(t, tn)
		for i, row := range projectRows {
			raw := strings.TrimSuffix(strings.TrimSpace(row), "}")
			if raw != "{" {
				raw += ","
			}
			c.Create(t, "projects", raw+fmt.Sprintf(`"grp":"g%d"}`, i%3))
		}
		user := testenv.ID(t, c.Create(t, "users", M{"email": "a@acme.test", "name": "A"}))
		for i := range 9 {
			c.Create(t, "users", M{"email": fmt.Sprintf("u%d@acme.test", i), "name": fmt.Sprintf("U%d", i%4), "isAdmin": i%3 == 0})
		}
		project := testenv.ID(t, c.List(t, "/v1/projects?limit=1")[0])
		task := testenv.ID(t, c.Create(t, "tasks", M{"name": "T", "project": project}))
		for i := range 23 {
			c.Create(t, "time-entries", M{"trackingType": "WORK", "user": user, "project": project, "task": task,
				"day": fmt.Sprintf("2026-03-%02d", 1+i%7), "duration": 600 * (1 + i%5), "sorting": i})
		}

		// WORKTIME entries have no duration: a declared attribute missing
		// from some records, which sort first ascending and last
		// descending.
		for i := range 3 {
			d := fmt.Sprintf("2026-03-%02d", 1+i)
			c.Create(t, "time-entries", M{"trackingType": "WORKTIME", "user": user, "day": d,
				"startTime": d + "T08:00:00.000Z", "endTime": d + "T16:00:00.000Z"})
		}
		lists := []struct{ res, query string }{
			{"projects", ""},
			{"projects", "sort=name"},
			{"projects", "sort=" + url.QueryEscape("name DESC")},
			{"projects", "sort=budget"},
			{"projects", "sort=" + url.QueryEscape("budget DESC")},
			{"projects", "sort=active"},
			{"projects", "sort=" + url.QueryEscape("active DESC,name")},
			{"projects", "sort=" + url.QueryEscape(`[{"grp":"DESC"},{"name":"ASC"}]`)},
			{"projects", "sort=tags"},
			{"projects", "sort=" + url.QueryEscape("größe DESC")},
			{"projects", "sort=" + url.QueryEscape("id DESC")},
			{"projects", "sort=" + url.QueryEscape("createdAt DESC")},
			{"projects", "sort=name&" + "where=" + url.QueryEscape(`{"budget":{">":5}}`)},
			{"users", "sort=isAdmin"},
			{"users", "sort=" + url.QueryEscape("isAdmin DESC,name DESC")},
			{"time-entries", "sort=day"},
			{"time-entries", "sort=" + url.QueryEscape("day DESC,duration")},
			{"time-entries", "sort=" + url.QueryEscape("duration DESC")},
			{"time-entries", "sort=duration"},
			{"time-entries", "sort=" + url.QueryEscape("duration DESC,day DESC")},
			{"time-entries", "sort=updatedAt&trackingType=WORK"},
		}
		for _, l := range lists {
			base := "/v1/" + l.res + "?" + l.query
			if l.query != "" {
				base += "&"
			}
			whole, _ := page(t, c, base+"limit=10000")
			if len(whole) < 5 {
				t.Fatalf("%s: %d records, too few to page", base, len(whole))
			}
			if _, next := page(t, c, base); next != "" {
				t.Errorf("%s: a next link on a list that ends on its page: %s", base, next)
			}
			for _, size := range []int{1, 3, 5, len(whole)} {
				got, pages := walk(t, c, base+"limit="+strconv.Itoa(size))
				if !slices.Equal(got, whole) {
					t.Errorf("%slimit=%d: walking the links read\n%v\nwant\n%v", base, size, got, whole)
				}
				// A last page that is full has no link either.
				if want := (len(whole) + size - 1) / size; pages != want {
					t.Errorf("%slimit=%d: %d pages of %d records, want %d", base, size, pages, len(whole), want)
				}
			}
			// skip: the first page skips, the link goes on after it
			// without skipping again; a skip beside after counts from
			// the cursor.
			ids, next := page(t, c, base+"limit=2&skip=1")
			if !slices.Equal(ids, whole[1:3]) || next == "" {
				t.Fatalf("%slimit=2&skip=1: %v (next %q), want %v", base, ids, next, whole[1:3])
			}
			if ids, _ := page(t, c, next); !slices.Equal(ids, whole[3:5]) {
				t.Errorf("%s: the page after skip=1 is %v, want %v", next, ids, whole[3:5])
			}
			if ids, _ := page(t, c, next+"&skip=1"); !slices.Equal(ids, whole[4:min(6, len(whole))]) {
				t.Errorf("%s&skip=1: %v, want %v", next, ids, whole[4:min(6, len(whole))])
			}
		}

		// The cursor holds the last row's keys, not a position: rows
		// deleted or added before it move nothing after it.
		ids, next := page(t, c, "/v1/projects?sort=name&limit=4")
		whole, _ := page(t, c, "/v1/projects?sort=name&limit=100")
		c.Object(t, http.MethodDelete, fmt.Sprintf("/v1/projects/%d", ids[3]), nil, http.StatusOK)
		c.Object(t, http.MethodDelete, fmt.Sprintf("/v1/projects/%d", ids[0]), nil, http.StatusOK)
		c.Create(t, "projects", M{"name": ""})
		if got, _ := page(t, c, next); !slices.Equal(got, whole[4:8]) {
			t.Errorf("after deletes before the cursor: %v, want %v", got, whole[4:8])
		}

		// Cursors of another order, or not cursors at all.
		_, byName := page(t, c, "/v1/projects?sort=name&limit=2")
		cursor := strings.TrimPrefix(byName[strings.Index(byName, "after="):], "after=")
		enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
		for name, q := range map[string]string{
			"another sort":          "sort=budget&after=" + cursor,
			"no sort":               "after=" + cursor,
			"after twice":           "sort=name&after=" + cursor + "&after=" + cursor,
			"not base64":            "after=" + url.QueryEscape("!!!"),
			"padded base64":         "after=" + base64.URLEncoding.EncodeToString([]byte(`[["+id"],1]`)),
			"not JSON":              "after=" + enc("[1,"),
			"an object":             "after=" + enc(`{"id":1}`),
			"two values":            "after=" + enc(`[[],1] [[],1]`),
			"a key of another type": "after=" + enc(`[[],"1"]`),
			"a key too many":        "after=" + enc(`[[],1,2]`),
			"a fraction for an id":  "after=" + enc(`[[],1.5]`),
			"an id out of range":    "after=" + enc(`[[],99999999999999999999]`),
			"a null id":             "after=" + enc(`[[],null]`),
			"an id beyond 2^53":     "after=" + enc(`[[],9007199254740993]`),
			"a NUL in a key":        "sort=createdAt&after=" + enc(`[["+createdAt"],"a\u0000",1]`),
			"a number out of range": "sort=budget&after=" + enc(`[["+budget"],1,1e400,null,null,1]`),
			"not UTF-8":             "after=" + base64.RawURLEncoding.EncodeToString([]byte("[[\"\xff\"],1]")),
			"empty":                 "after=",
			"too long":              "after=" + strings.Repeat("A", 70<<10),
		} {
			t.Run(name, func(t *testing.T) {
				c.Fail(t, http.MethodGet, "/v1/projects?"+q, nil, http.StatusBadRequest, "invalid_query", "after")
			})
		}
		// A cursor made by hand is one like any other.
		ids, _ = page(t, c, "/v1/projects?after="+enc(fmt.Sprintf(`[[],%d]`, whole[0])))
		for _, id := range ids {
			if id <= whole[0] {
				t.Errorf("after id %d: id %d", whole[0], id)
			}
		}
	})
}
