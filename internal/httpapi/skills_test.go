package httpapi_test

// Black-box tests of tags, skills, skill sets and the PublicHoliday absence
// type (SPEC.md "Tag, TagAssignment, TagCategory", "SkillAssignment,
// SkillSet, SkillSetCategory", "Holiday"; CONTRACT.md "Skills";
// docs/decisions.md "Tags and skills", "PublicHoliday and holidays") on
// both database engines.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"planwerk/internal/testenv"
)

// skM is a JSON object literal.
type skM = map[string]any

// skClient is rsClient with the checks these tests add: arrays from any
// method, and errors that must name fields.
type skClient struct{ *rsClient }

func skSignIn(t *testing.T, srv *testenv.Server, tn testenv.Tenant) *skClient {
	t.Helper()
	return &skClient{rsSignIn(t, srv, tn)}
}

// skMember creates a member (no admin) of c's tenant and signs them in.
func (c *skClient) skMember(t *testing.T, email string) *skClient {
	t.Helper()
	const password = "member-password"
	u := c.create(t, "users", skM{"email": email, "password": password, "isAdmin": false})
	m := skSignIn(t, c.srv, testenv.Tenant{Slug: c.slug, AdminEmail: email, Password: password})
	m.userID = rsID(t, u)
	return m
}

// arr makes a request that must answer want with a JSON array of objects.
func (c *skClient) arr(t *testing.T, method, path string, body any, want int) []skM {
	t.Helper()
	status, _, raw := c.send(t, method, path, body)
	if status != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, status, want, raw)
	}
	var out []skM
	if err := json.Unmarshal(raw, &out); err != nil || out == nil {
		t.Fatalf("%s %s: body is not a JSON array: %q", method, path, raw)
	}
	return out
}

// fail makes a request that must answer status with the contract's JSON
// error; a 400 must name each of fields among its problems.
func (c *skClient) fail(t *testing.T, method, path string, body any, status int, fields ...string) skM {
	t.Helper()
	got, _, raw := c.send(t, method, path, body)
	var m skM
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s %s: status %d, body is not a JSON object: %q", method, path, got, raw)
	}
	if got != status {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, got, status, raw)
	}
	if code, _ := m["code"].(string); code == "" {
		t.Errorf("%s %s: error without code: %s", method, path, raw)
	}
	if msg, _ := m["message"].(string); msg == "" {
		t.Errorf("%s %s: error without message: %s", method, path, raw)
	}
	for _, f := range fields {
		if !slices.Contains(rsProblemFields(m), f) {
			t.Errorf("%s %s: problems %v do not name %q", method, path, m["problems"], f)
		}
	}
	return m
}

func skWhere(w string) string { return "where=" + url.QueryEscape(w) }

func skSorted(ids ...int64) []int64 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

// skAbsent makes sure c's tenant has no record res/id: a test's premise
// when it uses id as another tenant's record.
func skAbsent(t *testing.T, c *skClient, res string, id int64) {
	t.Helper()
	if status, _, _ := c.send(t, http.MethodGet, fmt.Sprintf("/v1/%s/%d", res, id), nil); status != http.StatusNotFound {
		t.Fatalf("premise: %s %d exists in tenant %s (status %d)", res, id, c.slug, status)
	}
}

func skCount(t *testing.T, c *skClient, path string) int {
	t.Helper()
	return len(c.list(t, path))
}

// TestSkTags: plain tags and skills share the Tag resource; the type
// decides which rules apply and whether lists show the row.
func TestSkTags(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		admin := skSignIn(t, srv, tn)

		cat := admin.create(t, "tag-categories", skM{"name": "Programming"})
		catID := rsID(t, cat)
		if got := admin.get(t, "tag-categories", catID); !reflect.DeepEqual(got, cat) {
			t.Errorf("GET tag category %v, want %v", got, cat)
		}
		if !slices.Contains(admin.ids(t, "/v1/tag-categories"), catID) {
			t.Error("tag category not listed")
		}
		ssc := rsID(t, admin.create(t, "skill-set-categories", skM{"name": "not a tag category"}))

		plain := admin.create(t, "tags", skM{"name": "urgent"})
		if v, ok := plain["type"]; ok && v != nil {
			t.Errorf("plain tag has type %v", v)
		}
		plainID := rsID(t, plain)
		plainNull := rsID(t, admin.create(t, "tags", skM{"name": "vip", "type": nil}))
		skill := admin.create(t, "tags", skM{"name": "Go", "type": 1, "category": catID})
		if rsNum(skill["type"]) != 1 || rsNum(skill["category"]) != catID {
			t.Errorf("skill %v", skill)
		}
		skillID := rsID(t, skill)
		language := rsID(t, admin.create(t, "tags", skM{"name": "German", "type": 2, "category": catID}))
		cert := rsID(t, admin.create(t, "tags", skM{"name": "CKA", "type": 3, "category": catID}))
		plains := []int64{plainID, plainNull}
		skills := []int64{skillID, language, cert}

		t.Run("type is null or 1, 2, 3", func(t *testing.T) {
			n := skCount(t, admin, "/v1/tags?includeSkills=true")
			for _, typ := range []any{0, 4, -1, 99, 1.5, "1", true, []any{1}, skM{"a": 1}} {
				admin.fail(t, http.MethodPost, "/v1/tags", skM{"name": "bad", "type": typ, "category": catID}, http.StatusBadRequest, "type")
			}
			if got := skCount(t, admin, "/v1/tags?includeSkills=true"); got != n {
				t.Errorf("%d tags after refused writes, want %d", got, n)
			}
			admin.fail(t, http.MethodPatch, fmt.Sprintf("/v1/tags/%d", skillID), skM{"type": 4}, http.StatusBadRequest, "type")
		})

		t.Run("a skill needs a category, a plain tag has none", func(t *testing.T) {
			n := skCount(t, admin, "/v1/tags?includeSkills=true")
			for _, typ := range []int{1, 2, 3} {
				m := admin.fail(t, http.MethodPost, "/v1/tags", skM{"name": "no category", "type": typ}, http.StatusBadRequest, "category")
				if m["code"] != "invalid" {
					t.Errorf("code %v", m["code"])
				}
				admin.fail(t, http.MethodPost, "/v1/tags", skM{"name": "null category", "type": typ, "category": nil}, http.StatusBadRequest, "category")
			}
			admin.fail(t, http.MethodPost, "/v1/tags", skM{"name": "plain with category", "category": catID}, http.StatusBadRequest, "category")
			admin.fail(t, http.MethodPost, "/v1/tags", skM{"name": "plain with category", "type": nil, "category": catID}, http.StatusBadRequest, "category")
			// The category must be a TagCategory of the tenant.
			admin.fail(t, http.MethodPost, "/v1/tags", skM{"name": "x", "type": 1, "category": ssc}, http.StatusBadRequest, "category")
			admin.fail(t, http.MethodPost, "/v1/tags", skM{"name": "x", "type": 1, "category": 999999}, http.StatusBadRequest, "category")
			admin.fail(t, http.MethodPost, "/v1/tags", skM{"name": "x", "type": 1, "category": "1"}, http.StatusBadRequest, "category")
			if got := skCount(t, admin, "/v1/tags?includeSkills=true"); got != n {
				t.Errorf("%d tags after refused writes, want %d", got, n)
			}
			// The rules hold for changes too.
			before := admin.get(t, "tags", skillID)
			admin.fail(t, http.MethodPatch, fmt.Sprintf("/v1/tags/%d", skillID), skM{"category": nil}, http.StatusBadRequest, "category")
			admin.fail(t, http.MethodPatch, fmt.Sprintf("/v1/tags/%d", skillID), skM{"type": nil}, http.StatusBadRequest, "category")
			if got := admin.get(t, "tags", skillID); !reflect.DeepEqual(got, before) {
				t.Errorf("skill after refused changes: %v, want %v", got, before)
			}
			admin.fail(t, http.MethodPatch, fmt.Sprintf("/v1/tags/%d", plainID), skM{"type": 1}, http.StatusBadRequest, "category")
			admin.fail(t, http.MethodPatch, fmt.Sprintf("/v1/tags/%d", plainID), skM{"category": catID}, http.StatusBadRequest, "category")
			// A tag may become a skill and back, with its category.
			tmp := rsID(t, admin.create(t, "tags", skM{"name": "temp"}))
			up := admin.object(t, http.MethodPatch, fmt.Sprintf("/v1/tags/%d", tmp), skM{"type": 2, "category": catID}, http.StatusOK)
			if rsNum(up["type"]) != 2 {
				t.Errorf("tag turned skill: %v", up)
			}
			down := admin.object(t, http.MethodPatch, fmt.Sprintf("/v1/tags/%d", tmp), skM{"type": nil, "category": nil}, http.StatusOK)
			if down["type"] != nil || down["category"] != nil {
				t.Errorf("skill turned tag: %v", down)
			}
			admin.object(t, http.MethodDelete, fmt.Sprintf("/v1/tags/%d", tmp), nil, http.StatusOK)
		})

		t.Run("lists show plain tags unless asked for skills", func(t *testing.T) {
			all := skSorted(append(slices.Clone(plains), skills...)...)
			cases := []struct {
				query string
				want  []int64
			}{
				{"", plains},
				{"?includeSkills=false", plains},
				{"?includeSkills=true", all},
				{"?includeSkills=true&limit=50000", all},
				{"?type=1", []int64{skillID}},
				{"?type=2", []int64{language}},
				{"?type=1&type=3", []int64{skillID, cert}},
				{"?" + skWhere(`{"type":1}`), []int64{skillID}},
				{"?" + skWhere(`{"type":[1,2]}`), []int64{skillID, language}},
				{"?" + skWhere(`{"type":{"!=":null}}`), skills},
				{"?" + skWhere(`{"type":{">=":2}}`), []int64{language, cert}},
				{"?" + skWhere(`{"type":null}`), plains},
				{"?" + skWhere(`{"or":[{"type":1},{"name":"urgent"}]}`), skSorted(plainID, skillID)},
				// Criteria that do not name the type still list plain tags only.
				{"?name=Go", nil},
				{"?" + skWhere(`{"name":"Go"}`), nil},
				{"?" + skWhere(`{"category":`+fmt.Sprint(catID)+`}`), nil},
				{"?includeSkills=true&name=Go", []int64{skillID}},
				{"?includeSkills=true&" + skWhere(`{"name":{"startsWith":"G"}}`), []int64{skillID, language}},
				{"?name=urgent", []int64{plainID}},
			}
			for _, c := range cases {
				got := admin.ids(t, "/v1/tags"+c.query)
				if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
					t.Errorf("GET /v1/tags%s = %v, want %v", c.query, got, c.want)
				}
			}
			// A member sees the same.
			member := admin.skMember(t, "member@acme.test")
			if got := member.ids(t, "/v1/tags"); !slices.Equal(got, plains) {
				t.Errorf("member's tags %v, want %v", got, plains)
			}
			if got := member.ids(t, "/v1/tags?includeSkills=true"); !slices.Equal(got, all) {
				t.Errorf("member's tags with skills %v, want %v", got, all)
			}
		})

		t.Run("GET by id shows any tag", func(t *testing.T) {
			for _, id := range append(slices.Clone(plains), skills...) {
				got := admin.get(t, "tags", id)
				if rsID(t, got) != id {
					t.Errorf("GET /v1/tags/%d = %v", id, got)
				}
			}
			if got := admin.get(t, "tags", skillID); !reflect.DeepEqual(got, skill) {
				t.Errorf("GET skill %v, want %v", got, skill)
			}
		})
	})
}

// skFixture is a tenant with records to tag.
type skFixture struct {
	admin, member                                      *skClient
	client, project, task, expenseCategory, expense    int64
	tagCategory, skillSetCategory, skillSet            int64
	plainTag, skillA, skillB, skillC                   int64
	tagAssignmentsPath, skillAssignmentsPath, tagsPath string
}

// skSetup signs in tn's admin, creates a member and the records. pad
// records come first: SQLite numbers records per tenant, so a second
// tenant set up with padding has ids the first one does not use.
func skSetup(t *testing.T, srv *testenv.Server, tn testenv.Tenant, pad int) *skFixture {
	t.Helper()
	a := skSignIn(t, srv, tn)
	for i := 0; i < pad; i++ {
		a.create(t, "colors", skM{"name": fmt.Sprint("padding ", i)})
	}
	f := &skFixture{admin: a, tagAssignmentsPath: "/v1/tag-assignments", skillAssignmentsPath: "/v1/skill-assignments", tagsPath: "/v1/tags"}
	f.member = a.skMember(t, "member@"+tn.Slug+".test")
	f.client = rsID(t, a.create(t, "clients", skM{"name": "Client"}))
	f.project = rsID(t, a.create(t, "projects", skM{"name": "Project", "client": f.client}))
	f.task = rsID(t, a.create(t, "tasks", skM{"name": "Task", "project": f.project}))
	f.expenseCategory = rsID(t, a.create(t, "expense-categories", skM{"name": "Travel"}))
	f.expense = rsID(t, a.create(t, "expenses", skM{"amount": 12}))
	f.tagCategory = rsID(t, a.create(t, "tag-categories", skM{"name": "Tech"}))
	f.skillSetCategory = rsID(t, a.create(t, "skill-set-categories", skM{"name": "Roles"}))
	f.skillSet = rsID(t, a.create(t, "skill-sets", skM{"name": "Backend", "category": f.skillSetCategory}))
	f.plainTag = rsID(t, a.create(t, "tags", skM{"name": "important"}))
	f.skillA = rsID(t, a.create(t, "tags", skM{"name": "Go", "type": 1, "category": f.tagCategory}))
	f.skillB = rsID(t, a.create(t, "tags", skM{"name": "SQL", "type": 1, "category": f.tagCategory}))
	f.skillC = rsID(t, a.create(t, "tags", skM{"name": "English", "type": 2, "category": f.tagCategory}))
	return f
}

// TestSkTagAssignments: plain tags attach to clients, projects, tasks,
// users and expense categories; skills only to skill sets.
func TestSkTagAssignments(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		f := skSetup(t, srv, tn, 0)
		a := f.admin
		other := skSetup(t, srv, srv.CreateTenant(t, "beta"), 80)
		count := func() int { return skCount(t, a, "/v1/tag-assignments") }

		t.Run("plain tags", func(t *testing.T) {
			for _, c := range []struct {
				model  string
				record int64
			}{{"client", f.client}, {"project", f.project}, {"task", f.task}, {"user", f.member.userID}, {"user", a.userID}, {"expenseCategory", f.expenseCategory}} {
				rec := a.create(t, "tag-assignments", skM{"tag": f.plainTag, "model": c.model, "record": c.record})
				if rec["model"] != c.model || rsNum(rec["record"]) != c.record || rsNum(rec["tag"]) != f.plainTag {
					t.Errorf("%s: %v", c.model, rec)
				}
				if got := a.get(t, "tag-assignments", rsID(t, rec)); !reflect.DeepEqual(got, rec) {
					t.Errorf("GET %v, want %v", got, rec)
				}
			}
			n := count()
			a.fail(t, http.MethodPost, "/v1/tag-assignments", skM{"tag": f.plainTag, "model": "skillSet", "record": f.skillSet}, http.StatusBadRequest, "model")
			a.fail(t, http.MethodPost, "/v1/tag-assignments", skM{"tag": f.plainTag, "model": "expense", "record": f.expense}, http.StatusBadRequest, "model")
			if got := count(); got != n {
				t.Errorf("%d tag assignments after refused writes, want %d", got, n)
			}
			if got := a.ids(t, "/v1/tag-assignments?"+skWhere(fmt.Sprintf(`{"model":"project","record":%d}`, f.project))); len(got) != 1 {
				t.Errorf("assignments of the project: %v", got)
			}
		})

		t.Run("skills", func(t *testing.T) {
			n := count()
			m := a.fail(t, http.MethodPost, "/v1/tag-assignments", skM{"tag": f.skillA, "model": "user", "record": f.member.userID}, http.StatusBadRequest)
			if raw, _ := json.Marshal(m); !strings.Contains(string(raw), "SkillAssignment") {
				t.Errorf("a skill on a user should point to SkillAssignment: %s", raw)
			}
			for _, c := range []struct {
				model  string
				record int64
			}{{"project", f.project}, {"client", f.client}, {"task", f.task}, {"expenseCategory", f.expenseCategory}} {
				a.fail(t, http.MethodPost, "/v1/tag-assignments", skM{"tag": f.skillB, "model": c.model, "record": c.record}, http.StatusBadRequest)
			}
			if got := count(); got != n {
				t.Errorf("%d tag assignments after refused writes, want %d", got, n)
			}
			for _, skill := range []int64{f.skillA, f.skillB, f.skillC} {
				rec := a.create(t, "tag-assignments", skM{"tag": skill, "model": "skillSet", "record": f.skillSet})
				if rec["model"] != "skillSet" || rsNum(rec["record"]) != f.skillSet {
					t.Errorf("skill on skill set: %v", rec)
				}
			}
			// A change that breaks the rules is refused too.
			rec := a.create(t, "tag-assignments", skM{"tag": f.plainTag, "model": "project", "record": f.project})
			id := rsID(t, rec)
			a.fail(t, http.MethodPatch, fmt.Sprintf("/v1/tag-assignments/%d", id), skM{"tag": f.skillA}, http.StatusBadRequest)
			a.fail(t, http.MethodPatch, fmt.Sprintf("/v1/tag-assignments/%d", id), skM{"model": "skillSet", "record": f.skillSet}, http.StatusBadRequest, "model")
			if got := a.get(t, "tag-assignments", id); !reflect.DeepEqual(got, rec) {
				t.Errorf("after refused changes: %v, want %v", got, rec)
			}
		})

		t.Run("the record must exist in the tenant", func(t *testing.T) {
			skAbsent(t, a, "projects", other.project)
			skAbsent(t, a, "skill-sets", other.skillSet)
			skAbsent(t, a, "tags", other.plainTag)
			n := count()
			for _, body := range []skM{
				{"tag": f.plainTag, "model": "project", "record": 999999},
				{"tag": f.plainTag, "model": "project", "record": other.project},
				{"tag": f.plainTag, "model": "project", "record": f.task}, // a task is not a project
				{"tag": f.plainTag, "model": "client", "record": f.project},
				{"tag": f.plainTag, "model": "user", "record": other.admin.userID + 100000},
				{"tag": f.skillA, "model": "skillSet", "record": other.skillSet},
			} {
				a.fail(t, http.MethodPost, "/v1/tag-assignments", body, http.StatusBadRequest, "record")
			}
			a.fail(t, http.MethodPost, "/v1/tag-assignments", skM{"tag": other.plainTag, "model": "project", "record": f.project}, http.StatusBadRequest, "tag")
			a.fail(t, http.MethodPost, "/v1/tag-assignments", skM{"tag": 999999, "model": "project", "record": f.project}, http.StatusBadRequest, "tag")
			a.fail(t, http.MethodPost, "/v1/tag-assignments", skM{"tag": f.project, "model": "project", "record": f.project}, http.StatusBadRequest, "tag")
			if got := count(); got != n {
				t.Errorf("%d tag assignments after refused writes, want %d", got, n)
			}
		})

		t.Run("tag, model and record are required", func(t *testing.T) {
			n := count()
			a.fail(t, http.MethodPost, "/v1/tag-assignments", skM{"model": "project", "record": f.project}, http.StatusBadRequest, "tag")
			a.fail(t, http.MethodPost, "/v1/tag-assignments", skM{"tag": f.plainTag, "record": f.project}, http.StatusBadRequest, "model")
			a.fail(t, http.MethodPost, "/v1/tag-assignments", skM{"tag": f.plainTag, "model": "project"}, http.StatusBadRequest, "record")
			a.fail(t, http.MethodPost, "/v1/tag-assignments", skM{"tag": nil, "model": nil, "record": nil}, http.StatusBadRequest, "tag", "model", "record")
			a.fail(t, http.MethodPost, "/v1/tag-assignments", skM{}, http.StatusBadRequest, "tag", "model", "record")
			a.fail(t, http.MethodPost, "/v1/tag-assignments", skM{"tag": f.plainTag, "model": "invoice", "record": f.project}, http.StatusBadRequest, "model")
			a.fail(t, http.MethodPost, "/v1/tag-assignments", skM{"tag": f.plainTag, "model": "project", "record": "x"}, http.StatusBadRequest, "record")
			if got := count(); got != n {
				t.Errorf("%d tag assignments after refused writes, want %d", got, n)
			}
		})

		t.Run("an assignment whose tag was deleted stays editable", func(t *testing.T) {
			tag := rsID(t, a.create(t, "tags", skM{"name": "short-lived"}))
			rec := a.create(t, "tag-assignments", skM{"tag": tag, "model": "client", "record": f.client})
			a.object(t, http.MethodDelete, fmt.Sprintf("/v1/tags/%d", tag), nil, http.StatusOK)
			up := a.object(t, http.MethodPatch, fmt.Sprintf("/v1/tag-assignments/%d", rsID(t, rec)), skM{"note": "tag gone"}, http.StatusOK)
			if up["note"] != "tag gone" || rsNum(up["tag"]) != tag {
				t.Errorf("PATCH of an assignment with a deleted tag: %v", up)
			}
		})

		t.Run("members may not tag", func(t *testing.T) {
			n := count()
			f.member.fail(t, http.MethodPost, "/v1/tag-assignments", skM{"tag": f.plainTag, "model": "user", "record": f.member.userID}, http.StatusForbidden)
			if got := count(); got != n {
				t.Errorf("%d tag assignments after a refused write, want %d", got, n)
			}
		})
	})
}

// TestSkSkillAssignments: a user holds each skill once; deleting archives.
func TestSkSkillAssignments(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		f := skSetup(t, srv, tn, 0)
		a, u := f.admin, f.member.userID
		other := skSetup(t, srv, srv.CreateTenant(t, "beta"), 80)
		count := func() int { return skCount(t, a, "/v1/skill-assignments") }
		path := func(id int64) string { return fmt.Sprintf("/v1/skill-assignments/%d", id) }

		first := a.create(t, "skill-assignments", skM{"user": u, "tag": f.skillA, "proficiency": 3})
		id := rsID(t, first)
		if rsNum(first["status"]) != 1 || rsNum(first["proficiency"]) != 3 || rsNum(first["user"]) != u || rsNum(first["tag"]) != f.skillA {
			t.Fatalf("created assignment %v, want status 1", first)
		}
		if got := a.get(t, "skill-assignments", id); !reflect.DeepEqual(got, first) {
			t.Errorf("GET %v, want %v", got, first)
		}

		t.Run("the tag must be a skill", func(t *testing.T) {
			skAbsent(t, a, "tags", other.skillA)
			n := count()
			a.fail(t, http.MethodPost, "/v1/skill-assignments", skM{"user": u, "tag": f.plainTag}, http.StatusBadRequest, "tag")
			a.fail(t, http.MethodPost, "/v1/skill-assignments", skM{"user": u, "tag": 999999}, http.StatusBadRequest, "tag")
			a.fail(t, http.MethodPost, "/v1/skill-assignments", skM{"user": u, "tag": other.skillA}, http.StatusBadRequest, "tag")
			a.fail(t, http.MethodPost, "/v1/skill-assignments", skM{"user": u}, http.StatusBadRequest, "tag")
			a.fail(t, http.MethodPost, "/v1/skill-assignments", skM{"tag": f.skillB}, http.StatusBadRequest, "user")
			a.fail(t, http.MethodPost, "/v1/skill-assignments", skM{"user": other.admin.userID + 100000, "tag": f.skillB}, http.StatusBadRequest, "user")
			a.fail(t, http.MethodPost, "/v1/skill-assignments", skM{"user": f.project, "tag": f.skillB}, http.StatusBadRequest, "user")
			if got := count(); got != n {
				t.Errorf("%d assignments after refused writes, want %d", got, n)
			}
		})

		t.Run("proficiency is 1 to 5, status 0 or 1", func(t *testing.T) {
			n := count()
			for _, p := range []any{0, 6, -1, "x", "3", 2.5, true} {
				a.fail(t, http.MethodPost, "/v1/skill-assignments", skM{"user": u, "tag": f.skillB, "proficiency": p}, http.StatusBadRequest, "proficiency")
			}
			for _, s := range []any{2, -1, "1"} {
				a.fail(t, http.MethodPost, "/v1/skill-assignments", skM{"user": u, "tag": f.skillB, "status": s}, http.StatusBadRequest, "status")
			}
			if got := count(); got != n {
				t.Errorf("%d assignments after refused writes, want %d", got, n)
			}
			a.fail(t, http.MethodPatch, path(id), skM{"proficiency": 6}, http.StatusBadRequest, "proficiency")
			for p := 1; p <= 5; p++ {
				got := a.object(t, http.MethodPatch, path(id), skM{"proficiency": p}, http.StatusOK)
				if rsNum(got["proficiency"]) != int64(p) {
					t.Errorf("proficiency %d: %v", p, got)
				}
			}
			a.object(t, http.MethodPatch, path(id), skM{"proficiency": 3}, http.StatusOK)
		})

		t.Run("a second active assignment conflicts", func(t *testing.T) {
			n := count()
			before := a.get(t, "skill-assignments", id)
			a.fail(t, http.MethodPost, "/v1/skill-assignments", skM{"user": u, "tag": f.skillA, "proficiency": 5}, http.StatusConflict)
			a.fail(t, http.MethodPost, "/v1/skill-assignments", skM{"user": u, "tag": f.skillA}, http.StatusConflict)
			if got := count(); got != n {
				t.Errorf("%d assignments after refused writes, want %d", got, n)
			}
			if got := a.get(t, "skill-assignments", id); !reflect.DeepEqual(got, before) {
				t.Errorf("assignment after refused duplicates: %v, want %v", got, before)
			}
			// Another user may hold the same skill.
			other := a.create(t, "skill-assignments", skM{"user": a.userID, "tag": f.skillA})
			if rsID(t, other) == id || rsNum(other["status"]) != 1 {
				t.Errorf("admin's assignment %v", other)
			}
		})

		t.Run("delete archives, POST re-activates", func(t *testing.T) {
			n := count()
			del := a.object(t, http.MethodDelete, path(id), nil, http.StatusOK)
			if rsID(t, del) != id || rsNum(del["status"]) != 0 || rsNum(del["user"]) != u || rsNum(del["tag"]) != f.skillA {
				t.Errorf("DELETE answered %v, want the archived record", del)
			}
			got := a.get(t, "skill-assignments", id)
			if rsNum(got["status"]) != 0 || rsNum(got["proficiency"]) != 3 {
				t.Errorf("archived record %v", got)
			}
			if got := count(); got != n {
				t.Errorf("%d assignments after archiving, want %d (the record is kept)", got, n)
			}
			if ids := a.ids(t, "/v1/skill-assignments?status=0"); !slices.Equal(ids, []int64{id}) {
				t.Errorf("archived list %v, want [%d]", ids, id)
			}
			if ids := a.ids(t, "/v1/skill-assignments?"+skWhere(`{"status":1}`)); slices.Contains(ids, id) {
				t.Errorf("active list %v holds the archived record", ids)
			}
			if ids := f.member.ids(t, "/v1/skill-assignments"); !slices.Contains(ids, id) {
				t.Errorf("member's list %v lacks the archived record", ids)
			}

			again := a.create(t, "skill-assignments", skM{"user": u, "tag": f.skillA, "proficiency": 5})
			if rsID(t, again) != id || rsNum(again["status"]) != 1 || rsNum(again["proficiency"]) != 5 {
				t.Errorf("POST of an archived skill: %v, want record %d re-activated with proficiency 5", again, id)
			}
			if again["createdAt"] != first["createdAt"] {
				t.Errorf("re-activation changed createdAt: %v -> %v", first["createdAt"], again["createdAt"])
			}
			if got := count(); got != n {
				t.Errorf("%d assignments after re-activation, want %d", got, n)
			}
			mine := a.ids(t, "/v1/skill-assignments?"+skWhere(fmt.Sprintf(`{"user":%d,"tag":%d}`, u, f.skillA)))
			if !slices.Equal(mine, []int64{id}) {
				t.Errorf("assignments of (user, skill): %v, want [%d]", mine, id)
			}
			if got := a.get(t, "skill-assignments", id); !reflect.DeepEqual(got, again) {
				t.Errorf("GET after re-activation %v, want %v", got, again)
			}
			// Active again: another POST conflicts.
			a.fail(t, http.MethodPost, "/v1/skill-assignments", skM{"user": u, "tag": f.skillA}, http.StatusConflict)
		})

		t.Run("changing to a skill the user holds conflicts", func(t *testing.T) {
			recB := a.create(t, "skill-assignments", skM{"user": u, "tag": f.skillB, "proficiency": 2})
			idB := rsID(t, recB)
			n := count()
			a.fail(t, http.MethodPatch, path(idB), skM{"tag": f.skillA}, http.StatusConflict)
			a.fail(t, http.MethodPut, path(idB), skM{"tag": f.skillA}, http.StatusConflict)
			if got := a.get(t, "skill-assignments", idB); !reflect.DeepEqual(got, recB) {
				t.Errorf("after a refused change: %v, want %v", got, recB)
			}
			if got := count(); got != n {
				t.Errorf("%d assignments, want %d", got, n)
			}
			a.fail(t, http.MethodPatch, path(idB), skM{"tag": f.plainTag}, http.StatusBadRequest, "tag")
			// A skill the user does not hold is fine.
			moved := a.object(t, http.MethodPatch, path(idB), skM{"tag": f.skillC}, http.StatusOK)
			if rsNum(moved["tag"]) != f.skillC || rsNum(moved["status"]) != 1 {
				t.Errorf("moved assignment %v", moved)
			}
			// Moving the admin's assignment onto the member is a conflict too.
			adminsA := a.ids(t, "/v1/skill-assignments?"+skWhere(fmt.Sprintf(`{"user":%d,"tag":%d}`, a.userID, f.skillA)))
			if len(adminsA) != 1 {
				t.Fatalf("admin's assignments of A: %v", adminsA)
			}
			a.fail(t, http.MethodPatch, path(adminsA[0]), skM{"user": u}, http.StatusConflict)
		})

		t.Run("an assignment whose skill was deleted stays editable", func(t *testing.T) {
			gone := rsID(t, a.create(t, "tags", skM{"name": "COBOL", "type": 1, "category": f.tagCategory}))
			rec := a.create(t, "skill-assignments", skM{"user": u, "tag": gone, "proficiency": 1})
			a.object(t, http.MethodDelete, fmt.Sprintf("/v1/tags/%d", gone), nil, http.StatusOK)
			up := a.object(t, http.MethodPatch, path(rsID(t, rec)), skM{"proficiency": 2}, http.StatusOK)
			if rsNum(up["proficiency"]) != 2 || rsNum(up["tag"]) != gone {
				t.Errorf("PATCH of an assignment with a deleted skill: %v", up)
			}
			del := a.object(t, http.MethodDelete, path(rsID(t, rec)), nil, http.StatusOK)
			if rsNum(del["status"]) != 0 {
				t.Errorf("DELETE of an assignment with a deleted skill: %v", del)
			}
			// Moving it to a tag that is no skill is still refused.
			a.fail(t, http.MethodPatch, path(rsID(t, rec)), skM{"tag": f.plainTag}, http.StatusBadRequest, "tag")
		})

		t.Run("members may not assign skills", func(t *testing.T) {
			n := count()
			f.member.fail(t, http.MethodPost, "/v1/skill-assignments", skM{"user": u, "tag": f.skillB}, http.StatusForbidden)
			before := a.get(t, "skill-assignments", id)
			f.member.fail(t, http.MethodPatch, path(id), skM{"proficiency": 1}, http.StatusForbidden)
			f.member.fail(t, http.MethodDelete, path(id), nil, http.StatusForbidden)
			if got := a.get(t, "skill-assignments", id); !reflect.DeepEqual(got, before) {
				t.Errorf("after refused member writes: %v, want %v", got, before)
			}
			if got := count(); got != n {
				t.Errorf("%d assignments, want %d", got, n)
			}
		})
	})
}

// TestSkSkillSets: skill sets need a category; apply gives users the
// set's skills they lack, all or nothing.
func TestSkSkillSets(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		f := skSetup(t, srv, tn, 0)
		a := f.admin
		other := skSetup(t, srv, srv.CreateTenant(t, "beta"), 80)
		count := func() int { return skCount(t, a, "/v1/skill-assignments") }

		t.Run("a skill set needs a SkillSetCategory", func(t *testing.T) {
			skAbsent(t, a, "skill-set-categories", other.skillSetCategory)
			n := skCount(t, a, "/v1/skill-sets")
			a.fail(t, http.MethodPost, "/v1/skill-sets", skM{"name": "no category"}, http.StatusBadRequest, "category")
			a.fail(t, http.MethodPost, "/v1/skill-sets", skM{"name": "null", "category": nil}, http.StatusBadRequest, "category")
			a.fail(t, http.MethodPost, "/v1/skill-sets", skM{"name": "tag category", "category": f.tagCategory}, http.StatusBadRequest, "category")
			a.fail(t, http.MethodPost, "/v1/skill-sets", skM{"name": "foreign", "category": other.skillSetCategory}, http.StatusBadRequest, "category")
			if got := skCount(t, a, "/v1/skill-sets"); got != n {
				t.Errorf("%d skill sets after refused writes, want %d", got, n)
			}
			a.fail(t, http.MethodPatch, fmt.Sprintf("/v1/skill-sets/%d", f.skillSet), skM{"category": nil}, http.StatusBadRequest, "category")
			set := a.create(t, "skill-sets", skM{"name": "Frontend", "category": f.skillSetCategory})
			if rsNum(set["category"]) != f.skillSetCategory {
				t.Errorf("skill set %v", set)
			}
		})

		// The set holds skills A and B; C stays outside.
		set := rsID(t, a.create(t, "skill-sets", skM{"name": "Backend dev", "category": f.skillSetCategory}))
		taA := rsID(t, a.create(t, "tag-assignments", skM{"tag": f.skillA, "model": "skillSet", "record": set}))
		a.create(t, "tag-assignments", skM{"tag": f.skillB, "model": "skillSet", "record": set})
		// Skills of other sets do not count.
		a.create(t, "tag-assignments", skM{"tag": f.skillC, "model": "skillSet", "record": f.skillSet})
		apply := func(id int64) string { return fmt.Sprintf("/v1/skill-sets/%d/apply", id) }

		u1 := f.member.userID
		u2 := rsID(t, a.create(t, "users", skM{"email": "u2@acme.test"}))
		u3 := rsID(t, a.create(t, "users", skM{"email": "u3@acme.test"}))
		// u1 holds A actively; u2 held B, archived.
		u1A := a.create(t, "skill-assignments", skM{"user": u1, "tag": f.skillA, "proficiency": 4})
		u2B := rsID(t, a.create(t, "skill-assignments", skM{"user": u2, "tag": f.skillB, "proficiency": 2}))
		a.object(t, http.MethodDelete, fmt.Sprintf("/v1/skill-assignments/%d", u2B), nil, http.StatusOK)

		var applied []skM
		t.Run("apply", func(t *testing.T) {
			n := count()
			applied = a.arr(t, http.MethodPost, apply(set), skM{"users": []int64{u1, u2}}, http.StatusOK)
			if len(applied) != 4 {
				t.Fatalf("apply answered %d assignments, want 4: %v", len(applied), applied)
			}
			want := [][2]int64{{u1, f.skillA}, {u1, f.skillB}, {u2, f.skillA}, {u2, f.skillB}}
			for i, w := range want {
				got := applied[i]
				if rsNum(got["user"]) != w[0] || rsNum(got["tag"]) != w[1] || rsNum(got["status"]) != 1 {
					t.Errorf("assignment %d = %v, want user %d skill %d active", i, got, w[0], w[1])
				}
			}
			if !reflect.DeepEqual(applied[0], u1A) {
				t.Errorf("u1's existing assignment changed: %v, want %v", applied[0], u1A)
			}
			if rsID(t, applied[3]) != u2B {
				t.Errorf("u2's archived B: id %v, want %d re-activated", applied[3]["id"], u2B)
			}
			if rsNum(applied[3]["proficiency"]) != 2 {
				t.Errorf("u2's re-activated B lost its proficiency: %v", applied[3])
			}
			for _, i := range []int{1, 2} {
				id := rsID(t, applied[i])
				if id == rsID(t, u1A) || id == u2B {
					t.Errorf("assignment %d should be new: %v", i, applied[i])
				}
			}
			if got := count(); got != n+2 {
				t.Errorf("%d assignments after apply, want %d (two new)", got, n+2)
			}
			for _, rec := range applied {
				if got := a.get(t, "skill-assignments", rsID(t, rec)); !reflect.DeepEqual(got, rec) {
					t.Errorf("stored %v, answered %v", got, rec)
				}
			}
			// C is in another set: nobody got it.
			if ids := a.ids(t, "/v1/skill-assignments?tag="+fmt.Sprint(f.skillC)); len(ids) != 0 {
				t.Errorf("assignments of C: %v", ids)
			}
		})

		t.Run("applying again changes nothing", func(t *testing.T) {
			n := count()
			again := a.arr(t, http.MethodPost, apply(set), skM{"users": []int64{u1, u2}}, http.StatusOK)
			if !reflect.DeepEqual(again, applied) {
				t.Errorf("second apply %v, want %v", again, applied)
			}
			if got := count(); got != n {
				t.Errorf("%d assignments, want %d", got, n)
			}
			// Duplicates in the list count once.
			dup := a.arr(t, http.MethodPost, apply(set), skM{"users": []int64{u1, u1}}, http.StatusOK)
			if !reflect.DeepEqual(dup, applied[:2]) {
				t.Errorf("apply [u1, u1] = %v, want %v", dup, applied[:2])
			}
		})

		t.Run("all or nothing", func(t *testing.T) {
			n := count()
			before := a.list(t, "/v1/skill-assignments")
			for _, users := range [][]any{
				{u3, 999999},
				{999999, u3},
				{u3, other.admin.userID + 100000},
				{u3, f.project},
			} {
				a.fail(t, http.MethodPost, apply(set), skM{"users": users}, http.StatusBadRequest)
			}
			m := a.fail(t, http.MethodPost, apply(set), skM{"users": []any{u3, u3, 999999}}, http.StatusBadRequest)
			if fields := rsProblemFields(m); !slices.Equal(fields, []string{"users[2]"}) {
				t.Errorf("problems name %v, want [users[2]] (the position in the request)", fields)
			}
			for _, body := range []skM{{}, {"users": []any{}}, {"users": "x"}, {"users": []any{"x"}}, {"users": []any{0}}, {"users": []any{1.5}}, {"users": nil}} {
				a.fail(t, http.MethodPost, apply(set), body, http.StatusBadRequest)
			}
			if got := count(); got != n {
				t.Errorf("%d assignments after refused applies, want %d", got, n)
			}
			if after := a.list(t, "/v1/skill-assignments"); !reflect.DeepEqual(after, before) {
				t.Errorf("assignments changed by refused applies")
			}
			if ids := a.ids(t, "/v1/skill-assignments?user="+fmt.Sprint(u3)); len(ids) != 0 {
				t.Errorf("u3 got assignments %v", ids)
			}
		})

		t.Run("who and which set", func(t *testing.T) {
			skAbsent(t, a, "skill-sets", other.skillSet)
			skAbsent(t, other.admin, "skill-sets", set)
			n := count()
			f.member.fail(t, http.MethodPost, apply(set), skM{"users": []int64{u3}}, http.StatusForbidden)
			f.member.fail(t, http.MethodPost, apply(set), skM{"users": []int64{f.member.userID}}, http.StatusForbidden)
			a.fail(t, http.MethodPost, apply(999999), skM{"users": []int64{u3}}, http.StatusNotFound)
			a.fail(t, http.MethodPost, apply(other.skillSet), skM{"users": []int64{u3}}, http.StatusNotFound)
			a.fail(t, http.MethodPost, apply(f.project), skM{"users": []int64{u3}}, http.StatusNotFound)
			a.fail(t, http.MethodPost, "/v1/skill-sets/abc/apply", skM{"users": []int64{u3}}, http.StatusNotFound)
			other.admin.fail(t, http.MethodPost, apply(set), skM{"users": []int64{other.admin.userID}}, http.StatusNotFound)
			if got := count(); got != n {
				t.Errorf("%d assignments, want %d", got, n)
			}
			// A set without skills gives nothing.
			empty := rsID(t, a.create(t, "skill-sets", skM{"name": "empty", "category": f.skillSetCategory}))
			if got := a.arr(t, http.MethodPost, apply(empty), skM{"users": []int64{u3}}, http.StatusOK); len(got) != 0 {
				t.Errorf("empty set applied: %v", got)
			}
		})

		t.Run("changing the set later does not touch users", func(t *testing.T) {
			before := a.list(t, "/v1/skill-assignments")
			a.object(t, http.MethodDelete, fmt.Sprintf("/v1/tag-assignments/%d", taA), nil, http.StatusOK)
			if after := a.list(t, "/v1/skill-assignments"); !reflect.DeepEqual(after, before) {
				t.Errorf("removing a skill from the set changed assignments:\n%v\n%v", after, before)
			}
			got := a.arr(t, http.MethodPost, apply(set), skM{"users": []int64{u3}}, http.StatusOK)
			if len(got) != 1 || rsNum(got[0]["tag"]) != f.skillB || rsNum(got[0]["user"]) != u3 {
				t.Errorf("apply after removing A: %v, want only B for u3", got)
			}
			// u1 and u2 keep A.
			for _, rec := range applied {
				cur := a.get(t, "skill-assignments", rsID(t, rec))
				if rsNum(cur["status"]) != 1 {
					t.Errorf("assignment %v after the set changed: %v", rec, cur)
				}
			}
			// A deleted skill is no longer part of the set.
			gone := rsID(t, a.create(t, "tags", skM{"name": "Perl", "type": 1, "category": f.tagCategory}))
			a.create(t, "tag-assignments", skM{"tag": gone, "model": "skillSet", "record": set})
			a.object(t, http.MethodDelete, fmt.Sprintf("/v1/tags/%d", gone), nil, http.StatusOK)
			if got := a.arr(t, http.MethodPost, apply(set), skM{"users": []int64{u3}}, http.StatusOK); len(got) != 1 || rsNum(got[0]["tag"]) != f.skillB {
				t.Errorf("apply with a deleted skill in the set: %v, want only B", got)
			}
			before = a.list(t, "/v1/skill-assignments")
			a.object(t, http.MethodDelete, fmt.Sprintf("/v1/skill-sets/%d", set), nil, http.StatusOK)
			if after := a.list(t, "/v1/skill-assignments"); !reflect.DeepEqual(after, before) {
				t.Error("deleting the set changed assignments")
			}
		})
	})
}

// TestSkPublicHoliday: every tenant has one fixed PublicHoliday absence
// type; /v1/holidays shows the absences of that type, read-only.
func TestSkPublicHoliday(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		ta := srv.CreateTenant(t, "acme")
		tb := srv.CreateTenant(t, "beta")
		a, bc := skSignIn(t, srv, ta), skSignIn(t, srv, tb)
		member := a.skMember(t, "member@acme.test")

		typesA := a.list(t, "/v1/absence-types")
		typesB := bc.list(t, "/v1/absence-types")
		if len(typesA) != 1 || typesA[0]["name"] != "PublicHoliday" || len(typesB) != 1 || typesB[0]["name"] != "PublicHoliday" {
			t.Fatalf("absence types of new tenants: %v / %v", typesA, typesB)
		}
		ph, phB := rsID(t, typesA[0]), rsID(t, typesB[0])
		if ph == phB && b.Name == "postgres" {
			t.Errorf("tenants share the PublicHoliday type %d", ph)
		}
		if got := a.ids(t, "/v1/absence-types?name=PublicHoliday"); !slices.Equal(got, []int64{ph}) {
			t.Errorf("PublicHoliday by name: %v", got)
		}
		phRec := typesA[0]
		typePath := fmt.Sprintf("/v1/absence-types/%d", ph)

		t.Run("PublicHoliday is fixed", func(t *testing.T) {
			a.fail(t, http.MethodDelete, typePath, nil, http.StatusConflict)
			a.fail(t, http.MethodPatch, typePath, skM{"name": "Holiday"}, http.StatusBadRequest, "name")
			a.fail(t, http.MethodPut, typePath, skM{"name": "publicholiday"}, http.StatusBadRequest, "name")
			a.fail(t, http.MethodPatch, typePath, skM{"name": nil}, http.StatusBadRequest, "name")
			a.fail(t, http.MethodPatch, typePath, skM{"name": 5}, http.StatusBadRequest, "name")
			member.fail(t, http.MethodDelete, typePath, nil, http.StatusForbidden)
			if got := a.get(t, "absence-types", ph); !reflect.DeepEqual(got, phRec) {
				t.Errorf("PublicHoliday after refused writes: %v, want %v", got, phRec)
			}
			a.fail(t, http.MethodPost, "/v1/absence-types", skM{"name": "PublicHoliday"}, http.StatusConflict)
			a.fail(t, http.MethodPost, "/v1/absence-types", skM{"name": "PublicHoliday", "color": "red"}, http.StatusConflict)
			vac := a.create(t, "absence-types", skM{"name": "Vacation"})
			a.fail(t, http.MethodPatch, fmt.Sprintf("/v1/absence-types/%d", rsID(t, vac)), skM{"name": "PublicHoliday"}, http.StatusConflict)
			if got := a.get(t, "absence-types", rsID(t, vac)); !reflect.DeepEqual(got, vac) {
				t.Errorf("Vacation after a refused rename: %v", got)
			}
			if got := a.ids(t, "/v1/absence-types?name=PublicHoliday"); !slices.Equal(got, []int64{ph}) {
				t.Errorf("PublicHoliday types: %v", got)
			}
			// Its other attributes may change; the name stays.
			up := a.object(t, http.MethodPatch, typePath, skM{"color": "#ff0000", "name": "PublicHoliday"}, http.StatusOK)
			if up["name"] != "PublicHoliday" || up["color"] != "#ff0000" {
				t.Errorf("PATCH color: %v", up)
			}
			phRec = up
			// Another tenant's type is its own.
			if got := bc.list(t, "/v1/absence-types"); len(got) != 1 || rsID(t, got[0]) != phB || got[0]["color"] != nil {
				t.Errorf("beta's types after acme's changes: %v", got)
			}
			if b.Name == "postgres" {
				bc.fail(t, http.MethodGet, typePath, nil, http.StatusNotFound)
				bc.fail(t, http.MethodDelete, typePath, nil, http.StatusNotFound)
			}
		})

		vacation := rsID(t, a.create(t, "absence-types", skM{"name": "Sick"}))
		xmas := a.create(t, "absences", skM{"absenceType": ph, "name": "Christmas", "day": "2026-12-25", "region": "all"})
		newYear := a.create(t, "absences", skM{"absenceType": ph, "name": "New Year", "day": "2026-01-01"})
		sick := a.create(t, "absences", skM{"absenceType": vacation, "name": "flu", "day": "2026-02-02", "user": member.userID})
		untyped := a.create(t, "absences", skM{"name": "untyped", "day": "2026-03-03"})
		bHoliday := bc.create(t, "absences", skM{"absenceType": phB, "name": "beta's holiday", "day": "2026-05-01"})
		holidayIDs := []int64{rsID(t, xmas), rsID(t, newYear)}

		t.Run("holidays are absences of the PublicHoliday type", func(t *testing.T) {
			for _, c := range []*skClient{a, member} {
				status, hdr, raw := c.send(t, http.MethodGet, "/v1/holidays", nil)
				if status != 200 || hdr.Get("Deprecation") == "" {
					t.Fatalf("GET /v1/holidays: %d, Deprecation %q: %s", status, hdr.Get("Deprecation"), raw)
				}
				var got []skM
				if err := json.Unmarshal(raw, &got); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, []skM{xmas, newYear}) {
					t.Errorf("holidays %v, want %v", got, []skM{xmas, newYear})
				}
			}
			status, hdr, raw := a.send(t, http.MethodGet, fmt.Sprintf("/v1/holidays/%d", rsID(t, xmas)), nil)
			var got skM
			_ = json.Unmarshal(raw, &got)
			if status != 200 || hdr.Get("Deprecation") == "" || !reflect.DeepEqual(got, xmas) {
				t.Errorf("GET holiday: %d, Deprecation %q, %s", status, hdr.Get("Deprecation"), raw)
			}
			for _, id := range []int64{rsID(t, sick), rsID(t, untyped), ph, rsID(t, bHoliday), 999999} {
				if id == rsID(t, xmas) || id == rsID(t, newYear) {
					continue // the per-tenant counter of SQLite may repeat ids in beta
				}
				a.fail(t, http.MethodGet, fmt.Sprintf("/v1/holidays/%d", id), nil, http.StatusNotFound)
				if status, hdr, _ := a.send(t, http.MethodGet, fmt.Sprintf("/v1/holidays/%d", id), nil); status != http.StatusNotFound || hdr.Get("Deprecation") == "" {
					t.Errorf("GET /v1/holidays/%d: %d, Deprecation %q", id, status, hdr.Get("Deprecation"))
				}
			}
			// Without a valid token: 401, still marked deprecated.
			anon := &skClient{&rsClient{srv: a.srv, slug: a.slug, token: "expired-or-unknown"}}
			for _, p := range []string{"/v1/holidays", fmt.Sprintf("/v1/holidays/%d", rsID(t, xmas))} {
				if status, hdr, raw := anon.send(t, http.MethodGet, p, nil); status != http.StatusUnauthorized || hdr.Get("Deprecation") == "" {
					t.Errorf("GET %s without a valid token: %d, Deprecation %q: %s", p, status, hdr.Get("Deprecation"), raw)
				}
			}
			// Other resources are not deprecated.
			if _, hdr, _ := anon.send(t, http.MethodGet, "/v1/absences", nil); hdr.Get("Deprecation") != "" {
				t.Errorf("GET /v1/absences: Deprecation %q", hdr.Get("Deprecation"))
			}
			// The absences are still absences.
			if got := a.ids(t, "/v1/absences"); len(got) != 4 {
				t.Errorf("absences %v", got)
			}
			// Each tenant sees its own holidays.
			if got := bc.ids(t, "/v1/holidays"); !slices.Equal(got, []int64{rsID(t, bHoliday)}) {
				t.Errorf("beta's holidays %v", got)
			}
			if b.Name == "postgres" {
				bc.fail(t, http.MethodGet, fmt.Sprintf("/v1/holidays/%d", rsID(t, xmas)), nil, http.StatusNotFound)
			}
		})

		t.Run("holidays are read-only", func(t *testing.T) {
			hp := fmt.Sprintf("/v1/holidays/%d", rsID(t, xmas))
			n := skCount(t, a, "/v1/absences")
			a.fail(t, http.MethodPost, "/v1/holidays", skM{"absenceType": ph, "name": "new", "day": "2026-10-03"}, http.StatusMethodNotAllowed)
			// The 405 answers are answers of a deprecated resource too.
			if status, hdr, raw := a.send(t, http.MethodPost, "/v1/holidays", skM{"name": "new"}); status != http.StatusMethodNotAllowed || hdr.Get("Deprecation") == "" {
				t.Errorf("POST /v1/holidays: %d, Deprecation %q: %s", status, hdr.Get("Deprecation"), raw)
			}
			for _, m := range []string{http.MethodPatch, http.MethodPut, http.MethodDelete} {
				status, hdr, raw := a.send(t, m, hp, skM{"name": "changed"})
				if status != http.StatusMethodNotAllowed || hdr.Get("Allow") == "" || hdr.Get("Deprecation") == "" {
					t.Errorf("%s %s: %d, Allow %q, Deprecation %q: %s", m, hp, status, hdr.Get("Allow"), hdr.Get("Deprecation"), raw)
				}
			}
			if got := a.get(t, "absences", rsID(t, xmas)); !reflect.DeepEqual(got, xmas) {
				t.Errorf("holiday after refused writes: %v", got)
			}
			if got := skCount(t, a, "/v1/absences"); got != n {
				t.Errorf("%d absences, want %d", got, n)
			}
		})

		t.Run("the list language works on holidays", func(t *testing.T) {
			x, ny := rsID(t, xmas), rsID(t, newYear)
			cases := []struct {
				query string
				want  []int64
			}{
				{"?" + skWhere(`{"day":{">=":"2026-06-01"}}`), []int64{x}},
				{"?" + skWhere(`{"day":{"<":"2026-06-01"}}`), []int64{ny}},
				{"?" + skWhere(`{"name":{"startsWith":"New"}}`), []int64{ny}},
				{"?" + skWhere(`{"name":{"contains":"flu"}}`), nil},
				{"?" + skWhere(`{"region":"all"}`), []int64{x}},
				{"?" + skWhere(`{"region":null}`), []int64{ny}},
				{"?" + skWhere(fmt.Sprintf(`{"absenceType":%d}`, vacation)), nil},
				{"?" + skWhere(fmt.Sprintf(`{"absenceType":%d}`, ph)), holidayIDs},
				{"?" + skWhere(`{"day":"2026-02-02"}`), nil},
				{"?" + skWhere(fmt.Sprintf(`{"or":[{"id":%d},{"id":%d}]}`, rsID(t, sick), x)), []int64{x}},
				{"?name=Christmas", []int64{x}},
				{"?name=flu", nil},
				{"?day=2026-01-01", []int64{ny}},
				{"?sort=day%20ASC", []int64{ny, x}},
				{"?sort=day%20DESC", []int64{x, ny}},
				{"?sort=name%20DESC&limit=1", []int64{ny}},
				{"?sort=name%20ASC&skip=1", []int64{ny}},
				{"?limit=0", nil},
				{"?" + skWhere(`{}`), holidayIDs},
			}
			for _, c := range cases {
				got := a.ids(t, "/v1/holidays"+c.query)
				if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
					t.Errorf("GET /v1/holidays%s = %v, want %v", c.query, got, c.want)
				}
			}
			a.fail(t, http.MethodGet, "/v1/holidays?"+skWhere(`{"day":{"like":"x"}}`), nil, http.StatusBadRequest)
			a.fail(t, http.MethodGet, "/v1/holidays?limit=-1", nil, http.StatusBadRequest)
			// populate expands the type.
			got := a.list(t, "/v1/holidays?populate=absenceType&"+skWhere(fmt.Sprintf(`{"id":%d}`, x)))
			if len(got) != 1 {
				t.Fatalf("populated holidays: %v", got)
			}
			if pt, _ := got[0]["absenceType"].(map[string]any); pt == nil || pt["name"] != "PublicHoliday" {
				t.Errorf("populated absenceType: %v", got[0]["absenceType"])
			}
		})

		t.Run("an absence leaves the holidays when its type changes", func(t *testing.T) {
			a.object(t, http.MethodPatch, fmt.Sprintf("/v1/absences/%d", rsID(t, newYear)), skM{"absenceType": vacation}, http.StatusOK)
			if got := a.ids(t, "/v1/holidays"); !slices.Equal(got, []int64{rsID(t, xmas)}) {
				t.Errorf("holidays %v after the type change", got)
			}
			a.fail(t, http.MethodGet, fmt.Sprintf("/v1/holidays/%d", rsID(t, newYear)), nil, http.StatusNotFound)
			a.object(t, http.MethodPatch, fmt.Sprintf("/v1/absences/%d", rsID(t, sick)), skM{"absenceType": ph}, http.StatusOK)
			if got := a.ids(t, "/v1/holidays"); !slices.Equal(got, skSorted(rsID(t, xmas), rsID(t, sick))) {
				t.Errorf("holidays %v after the type change", got)
			}
			a.fail(t, http.MethodPost, "/v1/absences", skM{"absenceType": 999999, "day": "2026-01-01"}, http.StatusBadRequest, "absenceType")
			a.fail(t, http.MethodPost, "/v1/absences", skM{"absenceType": "PublicHoliday"}, http.StatusBadRequest, "absenceType")
		})
	})
}
