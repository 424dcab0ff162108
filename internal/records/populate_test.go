package records_test

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"planwerk/internal/testenv"
)

// TestPopulate: populate expands references, on lists and single records.
func TestPopulate(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		c := srv.SignIn(t, tn)
		project := c.Create(t, "projects", M{"name": "P", "budget": 12.5})
		pid := testenv.ID(t, project)
		other := c.Create(t, "projects", M{"name": "Q"})
		oid := testenv.ID(t, other)
		task := c.Create(t, "tasks", M{"name": "T", "project": pid})
		tid := testenv.ID(t, task)
		e1 := c.Create(t, "time-entries", M{"day": "2026-01-05", "trackingType": "WORK", "project": pid, "task": tid, "duration": 3600, "sorting": 1})
		e2 := c.Create(t, "time-entries", M{"day": "2026-01-06", "trackingType": "WORKTIME", "startTime": "2026-01-06T08:00:00.000Z", "endTime": "2026-01-06T16:00:00.000Z"})
		otid := testenv.ID(t, c.Create(t, "tasks", M{"name": "U", "project": oid}))
		e3 := c.Create(t, "time-entries", M{"day": "2026-01-07", "trackingType": "WORK", "project": oid, "task": otid, "duration": 60, "sorting": 1})
		id1, id2, id3 := testenv.ID(t, e1), testenv.ID(t, e2), testenv.ID(t, e3)
		admin := c.Get(t, "users", tn.AdminID)

		byID := func(list []M) map[int64]M {
			out := map[int64]M{}
			for _, m := range list {
				out[testenv.ID(t, m)] = m
			}
			return out
		}
		// Without populate, references are ids.
		plain := byID(c.List(t, "/v1/time-entries"))
		if plain[id1]["project"] != float64(pid) || plain[id1]["task"] != float64(tid) || plain[id1]["user"] != float64(tn.AdminID) {
			t.Errorf("unpopulated: %v", plain[id1])
		}
		for _, q := range []string{"populate=project", `populate=["project"]`, "populate=project&populate=project", "populate=false&populate=project"} {
			got := byID(c.List(t, "/v1/time-entries?"+strings.ReplaceAll(q, `"`, "%22")))
			if !reflect.DeepEqual(got[id1]["project"], map[string]any(project)) {
				t.Errorf("%s: project = %v, want %v", q, got[id1]["project"], project)
			}
			if got[id1]["task"] != float64(tid) || got[id1]["user"] != float64(tn.AdminID) || got[id1]["duration"] != 3600.0 {
				t.Errorf("%s: other attributes changed: %v", q, got[id1])
			}
			if v, ok := got[id2]["project"]; ok {
				t.Errorf("%s: an entry without project got %v", q, v)
			}
			if p, _ := got[id3]["project"].(map[string]any); p == nil || p["name"] != "Q" {
				t.Errorf("%s: third entry: %v", q, got[id3])
			}
		}
		for _, q := range []string{"populate=project,task,user", "populate=task,project,user", "populate=", "populate=true", `populate=["user","task","project"]`} {
			got := byID(c.List(t, "/v1/time-entries?"+strings.ReplaceAll(q, `"`, "%22")))[id1]
			if !reflect.DeepEqual(got["project"], map[string]any(project)) || !reflect.DeepEqual(got["task"], map[string]any(task)) ||
				!reflect.DeepEqual(got["user"], map[string]any(admin)) {
				t.Errorf("%s: %v", q, got)
			}
		}
		if got := byID(c.List(t, "/v1/time-entries?populate=false"))[id1]; got["project"] != float64(pid) {
			t.Errorf("populate=false: %v", got)
		}
		// populate is unaffected by where, limit and sort; where still sees ids.
		got := c.List(t, "/v1/time-entries?populate=project&where="+url.QueryEscape(fmt.Sprintf(`{"project":%d}`, pid)))
		if len(got) != 1 || testenv.ID(t, got[0]) != id1 || !reflect.DeepEqual(got[0]["project"], map[string]any(project)) {
			t.Errorf("populate with where: %v", got)
		}
		got = c.List(t, "/v1/time-entries?populate=project&sort=day%20DESC&limit=2")
		if len(got) != 2 || testenv.ID(t, got[0]) != id3 || testenv.ID(t, got[1]) != id2 {
			t.Errorf("populate with sort and limit: %v", got)
		}
		// On a single record.
		one := c.Object(t, http.MethodGet, fmt.Sprintf("/v1/time-entries/%d?populate=project", id1), nil, http.StatusOK)
		if !reflect.DeepEqual(one["project"], map[string]any(project)) || one["task"] != float64(tid) {
			t.Errorf("GET populate=project: %v", one)
		}
		one = c.Object(t, http.MethodGet, fmt.Sprintf("/v1/time-entries/%d?populate=task,user", id1), nil, http.StatusOK)
		if !reflect.DeepEqual(one["task"], map[string]any(task)) || !reflect.DeepEqual(one["user"], map[string]any(admin)) || one["project"] != float64(pid) {
			t.Errorf("GET populate=task,user: %v", one)
		}
		if u, _ := one["user"].(map[string]any); u != nil {
			if _, leak := u["password"]; leak {
				t.Errorf("populated user leaks the password: %v", u)
			}
		}
		// A task's project expands too.
		if got := byID(c.List(t, "/v1/tasks?populate=project"))[tid]; !reflect.DeepEqual(got["project"], map[string]any(project)) {
			t.Errorf("tasks populate=project: %v", got)
		}
		// Populating a polymorphic reference follows the model.
		doc := c.Create(t, "documents", M{"model": "project", "record": pid, "category": 7})
		udoc := c.Create(t, "documents", M{"model": "user", "record": tn.AdminID, "category": 1})
		docs := byID(c.List(t, "/v1/documents?populate=record"))
		if !reflect.DeepEqual(docs[testenv.ID(t, doc)]["record"], map[string]any(project)) || !reflect.DeepEqual(docs[testenv.ID(t, udoc)]["record"], map[string]any(admin)) {
			t.Errorf("documents populate=record: %v", docs)
		}
		// Only reference attributes are expanded; other names are ignored
		// (200, nothing expanded for them), but malformed JSON is refused.
		for _, q := range []string{"populate=notARef", "populate=duration", "populate=day", "populate=" + url.QueryEscape(`["notARef","sorting"]`)} {
			if got := byID(c.List(t, "/v1/time-entries?"+q)); !reflect.DeepEqual(got, plain) {
				t.Errorf("%s: %v, want the unpopulated records %v", q, got, plain)
			}
			one := c.Object(t, http.MethodGet, fmt.Sprintf("/v1/time-entries/%d?%s", id1, q), nil, http.StatusOK)
			if !reflect.DeepEqual(one, plain[id1]) {
				t.Errorf("GET ?%s: %v, want %v", q, one, plain[id1])
			}
		}
		for _, q := range []string{"populate=project,notARef", "populate=" + url.QueryEscape(`["notARef","project"]`)} {
			got := byID(c.List(t, "/v1/time-entries?"+q))[id1]
			if !reflect.DeepEqual(got["project"], map[string]any(project)) || got["task"] != float64(tid) || got["user"] != float64(tn.AdminID) {
				t.Errorf("%s: %v, want only the project expanded", q, got)
			}
		}
		if got, want := c.List(t, "/v1/projects?populate=name"), c.List(t, "/v1/projects"); !reflect.DeepEqual(got, want) {
			t.Errorf("projects?populate=name: %v, want %v", got, want)
		}
		for _, q := range []string{`populate=[1]`, "populate=%5B", "populate=" + url.QueryEscape(`["project"`), "populate=" + url.QueryEscape(`[{"a":1}]`)} {
			c.Fail(t, http.MethodGet, "/v1/time-entries?"+q, nil, http.StatusBadRequest, "invalid_query")
			c.Fail(t, http.MethodGet, fmt.Sprintf("/v1/time-entries/%d?%s", id1, q), nil, http.StatusBadRequest, "invalid_query")
		}
		// A dangling reference populates to null.
		c.Object(t, http.MethodDelete, fmt.Sprintf("/v1/projects/%d", pid), nil, http.StatusOK)
		list := byID(c.List(t, "/v1/time-entries?populate=project,task"))
		if v, ok := list[id1]["project"]; !ok || v != nil {
			t.Errorf("dangling project: %v (present %v)", v, ok)
		}
		if !reflect.DeepEqual(list[id1]["task"], map[string]any(task)) {
			t.Errorf("task beside a dangling project: %v", list[id1]["task"])
		}
		if p, _ := list[id3]["project"].(map[string]any); p == nil || p["name"] != "Q" {
			t.Errorf("live project beside a dangling one: %v", list[id3])
		}
		one = c.Object(t, http.MethodGet, fmt.Sprintf("/v1/time-entries/%d?populate=project", id1), nil, http.StatusOK)
		if v, ok := one["project"]; !ok || v != nil {
			t.Errorf("GET dangling project: %v (present %v)", v, ok)
		}
		// Without populate, the id stays.
		if got := c.Get(t, "time-entries", id1); got["project"] != float64(pid) {
			t.Errorf("unpopulated dangling reference: %v", got)
		}
	})
}
