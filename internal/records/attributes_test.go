package records_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"planwerk/internal/testenv"
)

// openBody holds an attribute of every JSON kind; none is declared by projects.
const openBody = `{
	"text": "Grüße \"quoted\" \\ back \u2713 <b>&amp;</b>",
	"empty": "",
	"int": 42,
	"big": 9007199254740993,
	"float": 12.50,
	"negative": -7,
	"negFloat": -0.25,
	"exp": 1e3,
	"zero": 0,
	"yes": true,
	"no": false,
	"nothing": null,
	"list": [1, "two", null, false, {"x": [1.5, []]}],
	"emptyList": [],
	"object": {"a": {"b": {"c": "d"}}, "n": -1, "t": true},
	"emptyObject": {},
	"with space": "s",
	"dotted.key": "d",
	"größe": 1.5,
	"名前": "なまえ",
	"a/b:c[0]": true
}`

// TestAttributes: open attributes are stored as sent, declared attributes
// are typed and validated, references stay in the tenant, bodies are
// checked.
func TestAttributes(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		other := srv.CreateTenant(t, "other")
		c := srv.SignIn(t, tn)
		oc := srv.SignIn(t, other)

		t.Run("open attributes keep their values", func(t *testing.T) {
			var want M
			if err := json.Unmarshal([]byte(openBody), &want); err != nil {
				t.Fatal(err)
			}
			check := func(what string, got M) {
				t.Helper()
				for k, v := range want {
					gv, ok := got[k]
					if !ok || !reflect.DeepEqual(gv, v) {
						t.Errorf("%s: %q = %s (present %v), want %s", what, k, jsonText(gv), ok, jsonText(v))
					}
				}
			}
			rec := c.Create(t, "projects", openBody)
			id := testenv.ID(t, rec)
			check("POST", rec)
			check("GET", c.Get(t, "projects", id))
			listed := c.List(t, fmt.Sprintf("/v1/projects?id=%d", id))
			if len(listed) != 1 {
				t.Fatalf("list by id: %v", listed)
			}
			check("list", listed[0])
			// Names that are not identifiers are filterable like any other.
			for _, q := range []string{
				"where=" + url.QueryEscape(`{"größe":1.5}`),
				"where=" + url.QueryEscape(`{"名前":{"startsWith":"な"}}`),
				"where=" + url.QueryEscape(`{"with space":"s","dotted.key":"d"}`),
				"where=" + url.QueryEscape(`{"a/b:c[0]":true}`),
				url.QueryEscape("größe") + "=1.5",
				url.QueryEscape("with space") + "=s",
			} {
				if got := c.IDs(t, "/v1/projects?"+q); !slices.Equal(got, []int64{id}) {
					t.Errorf("GET /v1/projects?%s: %v, want [%d]", q, got, id)
				}
			}
			check("PATCH of another attribute", c.Object(t, http.MethodPatch, fmt.Sprintf("/v1/projects/%d", id), M{"other": 1}, http.StatusOK))
			check("GET after PATCH", c.Get(t, "projects", id))
			// Large integers keep every digit.
			_, _, raw := c.Send(t, http.MethodGet, fmt.Sprintf("/v1/projects/%d", id), nil)
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			var exact map[string]any
			if err := dec.Decode(&exact); err != nil {
				t.Fatal(err)
			}
			if exact["big"] != json.Number("9007199254740993") || exact["int"] != json.Number("42") {
				t.Errorf("big = %v, int = %v", exact["big"], exact["int"])
			}
			// An attribute is replaced by whatever kind is sent next, null included.
			p := c.Object(t, http.MethodPatch, fmt.Sprintf("/v1/projects/%d", id), M{"int": "now text", "text": nil, "list": M{"o": 1}}, http.StatusOK)
			if p["int"] != "now text" || p["list"].(map[string]any)["o"] != 1.0 {
				t.Errorf("PATCH changing kinds: %v", p)
			}
			if v, ok := p["text"]; !ok || v != nil {
				t.Errorf("text after PATCH to null: %v (present %v)", v, ok)
			}
		})

		t.Run("service-owned attributes are ignored", func(t *testing.T) {
			before := time.Now().UTC().Add(-time.Minute)
			rec := c.Create(t, "projects", M{"id": 424242, "createdAt": "2000-01-01T00:00:00.000Z", "updatedAt": "2000-01-02T00:00:00.000Z", "name": "owned"})
			id := testenv.ID(t, rec)
			if id == 424242 || rec["createdAt"] == "2000-01-01T00:00:00.000Z" || rec["updatedAt"] == "2000-01-02T00:00:00.000Z" {
				t.Errorf("client values taken: %v", rec)
			}
			checkStamps(t, rec)
			if ts, err := time.Parse("2006-01-02T15:04:05.000Z", rec["createdAt"].(string)); err != nil || ts.Before(before) || ts.After(time.Now().Add(time.Minute)) {
				t.Errorf("createdAt %v is not now", rec["createdAt"])
			}
			if id != 424242 {
				c.Fail(t, http.MethodGet, "/v1/projects/424242", nil, http.StatusNotFound, "not_found")
			}
			p := c.Object(t, http.MethodPatch, fmt.Sprintf("/v1/projects/%d", id), M{"id": id + 1000, "createdAt": "2001-01-01T00:00:00.000Z", "updatedAt": "2001-01-01T00:00:00.000Z", "name": "changed"}, http.StatusOK)
			if testenv.ID(t, p) != id || p["createdAt"] != rec["createdAt"] || p["updatedAt"] == "2001-01-01T00:00:00.000Z" || p["name"] != "changed" {
				t.Errorf("PATCH with owned attributes: %v", p)
			}
			// A read-only declared attribute is ignored too.
			te := c.Create(t, "time-entries", M{"day": "2026-01-05", "trackingType": "BREAK", "duration": 60, "sorting": 1, "validationStatus": "APPROVED"})
			if te["validationStatus"] == "APPROVED" {
				t.Errorf("client set validationStatus: %v", te)
			}
		})

		fx := newBodies(c)
		projectID, taskID, plainTag, skill := fx.ref(t, "projects"), fx.ref(t, "tasks"), fx.ref(t, "tags"), fx.skill(t)
		const missing = 987654321

		counts := func() map[string]int {
			m := map[string]int{}
			for _, r := range []string{"time-entries", "documents", "tags", "skill-assignments", "tag-assignments", "users", "skill-sets"} {
				m[r] = len(c.List(t, "/v1/"+r))
			}
			return m
		}
		before := counts()

		t.Run("declared attributes are validated", func(t *testing.T) {
			admin := tn.AdminID
			cases := []struct {
				name, res string
				body      any
				field     string
			}{
				{"duration text", "time-entries", M{"day": "2026-01-05", "duration": "x"}, "duration"},
				{"duration fraction", "time-entries", M{"day": "2026-01-05", "duration": 1.5}, "duration"},
				{"duration bool", "time-entries", M{"day": "2026-01-05", "duration": true}, "duration"},
				{"sorting text", "time-entries", M{"day": "2026-01-05", "sorting": "1"}, "sorting"},
				{"sorting fraction", "time-entries", M{"day": "2026-01-05", "duration": 60, "sorting": 1.5}, "sorting"},
				{"WORK without sorting under DURATION", "time-entries", M{"day": "2026-01-05", "trackingType": "WORK", "project": projectID, "task": taskID, "duration": 60}, "sorting"},
				{"BREAK without sorting under DURATION", "time-entries", M{"day": "2026-01-05", "trackingType": "BREAK", "duration": 60}, "sorting"},
				{"day month 13", "time-entries", M{"day": "2026-13-01"}, "day"},
				{"day 30 February", "time-entries", M{"day": "2026-02-30"}, "day"},
				{"day with time", "time-entries", M{"day": "2026-01-05T00:00:00.000Z"}, "day"},
				{"day number", "time-entries", M{"day": 20260105}, "day"},
				{"day missing", "time-entries", M{"duration": 60}, "day"},
				{"day null", "time-entries", M{"day": nil}, "day"},
				{"trackingType FUN", "time-entries", M{"day": "2026-01-05", "trackingType": "FUN"}, "trackingType"},
				{"trackingType lower case", "time-entries", M{"day": "2026-01-05", "trackingType": "work"}, "trackingType"},
				{"startTime without offset", "time-entries", M{"day": "2026-01-05", "startTime": "2026-01-05T10:00:00.000"}, "startTime"},
				{"endTime with an offset without colon", "time-entries", M{"day": "2026-01-05", "endTime": "2026-01-05T10:00:00.000+0100"}, "endTime"},
				{"project text", "time-entries", M{"day": "2026-01-05", "project": "P"}, "project"},
				{"documents category 99", "documents", M{"model": "user", "record": admin, "category": 99}, "category"},
				{"documents category 0", "documents", M{"model": "user", "record": admin, "category": 0}, "category"},
				{"documents category text", "documents", M{"model": "user", "record": admin, "category": "1"}, "category"},
				{"documents model invoice", "documents", M{"model": "invoice", "record": admin}, "model"},
				{"documents model missing", "documents", M{"record": admin}, "model"},
				{"documents record missing", "documents", M{"model": "user"}, "record"},
				{"documents record text", "documents", M{"model": "user", "record": "1"}, "record"},
				{"documents visibleToUser text", "documents", M{"model": "user", "record": admin, "visibleToUser": "yes"}, "visibleToUser"},
				{"documents date", "documents", M{"model": "user", "record": admin, "date": "05.01.2026"}, "date"},
				{"documents name number", "documents", M{"model": "user", "record": admin, "name": 5}, "name"},
				{"tags type 7", "tags", M{"type": 7}, "type"},
				{"tags type text", "tags", M{"type": "skill"}, "type"},
				{"tags type fraction", "tags", M{"type": 1.5}, "type"},
				{"skill-assignments status 2", "skill-assignments", M{"status": 2}, "status"},
				{"skill-assignments proficiency text", "skill-assignments", M{"proficiency": "high"}, "proficiency"},
				{"tag-assignments model unknown", "tag-assignments", M{"model": "invoice"}, "model"},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					c.Fail(t, http.MethodPost, "/v1/"+tc.res, tc.body, http.StatusBadRequest, "invalid", tc.field)
				})
			}
			// A PATCH is validated the same way, and leaves the record alone.
			te := c.Create(t, "time-entries", M{"day": "2026-01-05", "trackingType": "BREAK", "duration": 60, "sorting": 1})
			id := testenv.ID(t, te)
			for field, v := range map[string]any{"duration": "x", "day": "2026-13-01", "trackingType": "FUN", "sorting": nil} {
				c.Fail(t, http.MethodPatch, fmt.Sprintf("/v1/time-entries/%d", id), M{field: v}, http.StatusBadRequest, "invalid", field)
			}
			c.Fail(t, http.MethodPatch, fmt.Sprintf("/v1/time-entries/%d", id), M{"day": nil}, http.StatusBadRequest, "invalid", "day")
			if got := c.Get(t, "time-entries", id); !reflect.DeepEqual(got, te) {
				t.Errorf("refused PATCHes changed the record: %v → %v", te, got)
			}
			c.Object(t, http.MethodDelete, fmt.Sprintf("/v1/time-entries/%d", id), nil, http.StatusOK)
			// Valid values of every declared kind are accepted and typed.
			ok := c.Create(t, "time-entries", M{"day": "2026-01-05", "trackingType": "WORK", "project": projectID, "task": taskID,
				"duration": 3600, "sorting": 2})
			if ok["duration"] != 3600.0 || ok["sorting"] != 2.0 || ok["project"] != float64(projectID) || ok["task"] != float64(taskID) ||
				ok["user"] != float64(tn.AdminID) || ok["day"] != "2026-01-05" || ok["trackingType"] != "WORK" {
				t.Errorf("valid time entry: %v", ok)
			}
			c.Object(t, http.MethodDelete, fmt.Sprintf("/v1/time-entries/%d", testenv.ID(t, ok)), nil, http.StatusOK)
			wt := c.Create(t, "time-entries", M{"day": "2026-01-05", "trackingType": "WORKTIME",
				"startTime": "2026-01-05T08:00:00.000Z", "endTime": "2026-01-05T09:00:00.000Z"})
			if wt["startTime"] != "2026-01-05T08:00:00.000Z" || wt["endTime"] != "2026-01-05T09:00:00.000Z" {
				t.Errorf("valid worktime entry: %v", wt)
			}
			c.Object(t, http.MethodDelete, fmt.Sprintf("/v1/time-entries/%d", testenv.ID(t, wt)), nil, http.StatusOK)
		})

		t.Run("references must exist in the tenant", func(t *testing.T) {
			// A record of another tenant whose id names nothing in this one.
			var foreignProject, foreignUser int64
			for i := 0; i < 50 && (foreignProject == 0 || foreignUser == 0); i++ {
				if foreignProject == 0 {
					id := testenv.ID(t, oc.Create(t, "projects", M{"name": "theirs"}))
					if st, _, _ := c.Send(t, http.MethodGet, fmt.Sprintf("/v1/projects/%d", id), nil); st == http.StatusNotFound {
						foreignProject = id
					}
				}
				if foreignUser == 0 {
					id := testenv.ID(t, oc.Create(t, "users", M{"name": "theirs"}))
					if st, _, _ := c.Send(t, http.MethodGet, fmt.Sprintf("/v1/users/%d", id), nil); st == http.StatusNotFound {
						foreignUser = id
					}
				}
			}
			if foreignProject == 0 || foreignUser == 0 {
				t.Fatal("could not find ids of the other tenant unused in this one")
			}
			cases := []struct {
				name, res string
				body      M
				field     string
			}{
				{"missing project", "time-entries", M{"day": "2026-01-05", "project": missing}, "project"},
				{"missing task", "time-entries", M{"day": "2026-01-05", "task": missing}, "task"},
				{"missing user", "time-entries", M{"day": "2026-01-05", "user": missing}, "user"},
				{"project that is a task", "time-entries", M{"day": "2026-01-05", "project": taskID}, "project"},
				{"task that is a project", "time-entries", M{"day": "2026-01-05", "task": projectID}, "task"},
				{"document of a missing project", "documents", M{"model": "project", "record": missing}, "record"},
				{"user document about a project", "documents", M{"model": "user", "record": projectID}, "record"},
				{"missing tag", "tag-assignments", M{"tag": missing, "model": "project", "record": projectID}, "tag"},
				{"tag that is a project", "tag-assignments", M{"tag": projectID, "model": "project", "record": projectID}, "tag"},
				{"tagged record missing", "tag-assignments", M{"tag": plainTag, "model": "project", "record": missing}, "record"},
				{"tagged record of another model", "tag-assignments", M{"tag": plainTag, "model": "client", "record": projectID}, "record"},
				{"missing skill-set category", "skill-sets", M{"category": missing}, "category"},
				{"missing tag category", "tags", M{"type": 1, "category": missing}, "category"},
				{"missing skill user", "skill-assignments", M{"user": missing, "tag": skill}, "user"},
				{"missing skill", "skill-assignments", M{"user": tn.AdminID, "tag": missing}, "tag"},
				{"absence request of a missing user", "absence-requests", M{"user": missing}, "user"},
				{"expense of a missing user", "expenses", M{"user": missing}, "user"},
				{"project of another tenant", "time-entries", M{"day": "2026-01-05", "project": foreignProject}, "project"},
				{"user of another tenant", "time-entries", M{"day": "2026-01-05", "user": foreignUser}, "user"},
				{"document about another tenant's project", "documents", M{"model": "project", "record": foreignProject}, "record"},
				{"document about another tenant's user", "documents", M{"model": "user", "record": foreignUser}, "record"},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					c.Fail(t, http.MethodPost, "/v1/"+tc.res, tc.body, http.StatusBadRequest, "invalid", tc.field)
				})
			}
			// The messages name the field, the resource and the id.
			for _, tc := range []struct {
				name, res string
				body      M
				field     string
				want      string
			}{
				{"missing project", "time-entries", M{"day": "2026-01-05", "project": missing},
					"project", fmt.Sprintf("project names no projects record %d in this tenant", missing)},
				{"missing user", "time-entries", M{"day": "2026-01-05", "user": missing},
					"user", fmt.Sprintf("user names no users record %d in this tenant", missing)},
				{"task that is a project", "time-entries", M{"day": "2026-01-05", "task": projectID},
					"task", fmt.Sprintf("task names no tasks record %d in this tenant", projectID)},
				{"document of a missing project", "documents", M{"model": "project", "record": missing},
					"record", fmt.Sprintf("record names no projects record %d in this tenant", missing)},
				{"document about another tenant's user", "documents", M{"model": "user", "record": foreignUser},
					"record", fmt.Sprintf("record names no users record %d in this tenant", foreignUser)},
				{"missing tag", "tag-assignments", M{"tag": missing, "model": "project", "record": projectID},
					"tag", fmt.Sprintf("tag names no tags record %d in this tenant", missing)},
			} {
				t.Run("message/"+tc.name, func(t *testing.T) {
					m := c.Fail(t, http.MethodPost, "/v1/"+tc.res, tc.body, http.StatusBadRequest, "invalid")
					if got := testenv.ProblemMessage(m, tc.field); got != tc.want {
						t.Errorf("problem on %s: %q, want %q", tc.field, got, tc.want)
					}
				})
			}
			// A PATCH that points a reference elsewhere is checked too.
			te := c.Create(t, "time-entries", M{"day": "2026-01-05", "trackingType": "WORK", "project": projectID, "task": taskID, "duration": 60, "sorting": 1})
			id := testenv.ID(t, te)
			for _, v := range []int64{missing, foreignProject, taskID} {
				c.Fail(t, http.MethodPatch, fmt.Sprintf("/v1/time-entries/%d", id), M{"project": v}, http.StatusBadRequest, "invalid", "project")
			}
			if got := c.Get(t, "time-entries", id); got["project"] != float64(projectID) {
				t.Errorf("refused PATCH changed project: %v", got)
			}
			c.Object(t, http.MethodDelete, fmt.Sprintf("/v1/time-entries/%d", id), nil, http.StatusOK)
		})

		if after := counts(); !reflect.DeepEqual(after, before) {
			t.Errorf("refused writes changed the record counts: %v → %v", before, after)
		}

		t.Run("bodies", func(t *testing.T) {
			n := len(c.List(t, "/v1/projects"))
			for name, body := range map[string]string{
				"truncated":              `{"name":`,
				"not JSON":               `name=x`,
				"empty":                  ``,
				"array":                  `[{"name":"x"}]`,
				"string":                 `"x"`,
				"number":                 `5`,
				"null":                   `null`,
				"two objects":            `{"a":1}{"b":2}`,
				"trailing comma":         `{"a":1,}`,
				"stray brace":            `{"a":1}}`,
				"stray bracket":          `{"a":1}]`,
				"NUL in text":            `{"name":"a\u0000b"}`,
				"NUL in a key":           `{"a\u0000":1}`,
				"NUL deep down":          `{"list":[{"x":["\u0000"]}]}`,
				"huge number":            `{"n":1e400}`,
				"huge negative":          `{"n":[-1e400]}`,
				"number that underflows": `{"n":{"m":1e-400}}`,
			} {
				t.Run(name, func(t *testing.T) {
					c.Fail(t, http.MethodPost, "/v1/projects", body, http.StatusBadRequest, "invalid_json")
				})
			}
			nest := func(levels int) string { // an object holding levels-1 nested arrays
				return `{"deep":` + strings.Repeat("[", levels-1) + `1` + strings.Repeat("]", levels-1) + `}`
			}
			rec := c.Create(t, "projects", nest(32))
			if testenv.ID(t, rec) == 0 {
				t.Fatal("no id")
			}
			c.Fail(t, http.MethodPost, "/v1/projects", nest(33), http.StatusBadRequest, "too_deep")
			c.Fail(t, http.MethodPatch, fmt.Sprintf("/v1/projects/%d", testenv.ID(t, rec)), nest(33), http.StatusBadRequest, "too_deep")
			// Brackets inside strings do not count.
			c.Create(t, "projects", M{"brackets": strings.Repeat("[{", 100)})
			// The extremes of a 64-bit float are numbers like any other.
			ext := c.Create(t, "projects", `{"tiny":5e-324,"zero":0e999,"max":1.7976931348623157e308,"min":-1.7976931348623157e308}`)
			if ext["tiny"] != 5e-324 || ext["zero"] != 0.0 || ext["max"] != 1.7976931348623157e308 || ext["min"] != -1.7976931348623157e308 {
				t.Errorf("float extremes: %v", ext)
			}
			if got := c.Get(t, "projects", testenv.ID(t, ext)); !reflect.DeepEqual(got, ext) {
				t.Errorf("float extremes read back: %v, want %v", got, ext)
			}

			// 1 MiB is the cap.
			under := `{"big":"` + strings.Repeat("a", 1<<20-100) + `"}`
			big := c.Create(t, "projects", under)
			if s, _ := big["big"].(string); len(s) != 1<<20-100 {
				t.Errorf("a body just under 1 MiB was not stored whole (%d bytes)", len(s))
			}
			over := `{"big":"` + strings.Repeat("a", 1<<20) + `"}`
			c.Fail(t, http.MethodPost, "/v1/projects", over, http.StatusRequestEntityTooLarge, "body_too_large")
			c.Fail(t, http.MethodPatch, fmt.Sprintf("/v1/projects/%d", testenv.ID(t, rec)), over, http.StatusRequestEntityTooLarge, "body_too_large")
			if got := len(c.List(t, "/v1/projects")); got != n+4 {
				t.Errorf("projects: %d, want %d (four accepted bodies)", got, n+4)
			}
		})

		t.Run("unknown and malformed ids", func(t *testing.T) {
			for _, id := range []string{strconv.Itoa(missing), "abc", "0", "-1", "1.5", "1e3", "0x10", "99999999999999999999", "%20",
				"%2B" + strconv.FormatInt(projectID, 10), "0" + strconv.FormatInt(projectID, 10), strconv.FormatInt(projectID, 10) + "%20"} {
				for _, m := range []string{http.MethodGet, http.MethodPatch, http.MethodPut, http.MethodDelete} {
					c.Fail(t, m, "/v1/projects/"+id, M{"name": "x"}, http.StatusNotFound, "not_found")
				}
			}
			// An id of another resource is not a record of this one.
			c.Fail(t, http.MethodGet, fmt.Sprintf("/v1/tasks/%d", projectID), nil, http.StatusNotFound, "not_found")
			c.Fail(t, http.MethodDelete, fmt.Sprintf("/v1/tasks/%d", projectID), nil, http.StatusNotFound, "not_found")
			c.Get(t, "projects", projectID)
		})
	})
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
