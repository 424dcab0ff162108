package skills_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"planwerk/internal/testenv"
)

// TestTagAssignments: plain tags attach to clients, projects, tasks,
// users and expense categories; skills only to skill sets.
func TestTagAssignments(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		f, other := twoTenants(t, b)
		a := f.admin
		count := func() int { return len(a.List(t, "/v1/tag-assignments")) }

		t.Run("plain tags", func(t *testing.T) {
			for _, c := range []struct {
				model  string
				record int64
			}{{"client", f.client}, {"project", f.project}, {"task", f.task}, {"user", f.member.UserID}, {"user", a.UserID}, {"expenseCategory", f.expenseCategory}} {
				rec := a.Create(t, "tag-assignments", testenv.M{"tag": f.plainTag, "model": c.model, "record": c.record})
				if rec["model"] != c.model || testenv.Num(rec["record"]) != c.record || testenv.Num(rec["tag"]) != f.plainTag {
					t.Errorf("%s: %v", c.model, rec)
				}
				if got := a.Get(t, "tag-assignments", testenv.ID(t, rec)); !reflect.DeepEqual(got, rec) {
					t.Errorf("GET %v, want %v", got, rec)
				}
			}
			n := count()
			a.Fail(t, http.MethodPost, "/v1/tag-assignments", testenv.M{"tag": f.plainTag, "model": "skillSet", "record": f.skillSet}, http.StatusBadRequest, "invalid", "model")
			a.Fail(t, http.MethodPost, "/v1/tag-assignments", testenv.M{"tag": f.plainTag, "model": "expense", "record": f.expense}, http.StatusBadRequest, "invalid", "model")
			if got := count(); got != n {
				t.Errorf("%d tag assignments after refused writes, want %d", got, n)
			}
			if got := a.IDs(t, "/v1/tag-assignments?"+where(fmt.Sprintf(`{"model":"project","record":%d}`, f.project))); len(got) != 1 {
				t.Errorf("assignments of the project: %v", got)
			}
		})

		t.Run("skills", func(t *testing.T) {
			n := count()
			m := a.Fail(t, http.MethodPost, "/v1/tag-assignments", testenv.M{"tag": f.skillA, "model": "user", "record": f.member.UserID}, http.StatusBadRequest, "invalid")
			if raw, _ := json.Marshal(m); !strings.Contains(string(raw), "SkillAssignment") {
				t.Errorf("a skill on a user should point to SkillAssignment: %s", raw)
			}
			for _, c := range []struct {
				model  string
				record int64
			}{{"project", f.project}, {"client", f.client}, {"task", f.task}, {"expenseCategory", f.expenseCategory}} {
				a.Fail(t, http.MethodPost, "/v1/tag-assignments", testenv.M{"tag": f.skillB, "model": c.model, "record": c.record}, http.StatusBadRequest, "invalid")
			}
			if got := count(); got != n {
				t.Errorf("%d tag assignments after refused writes, want %d", got, n)
			}
			for _, skill := range []int64{f.skillA, f.skillB, f.skillC} {
				rec := a.Create(t, "tag-assignments", testenv.M{"tag": skill, "model": "skillSet", "record": f.skillSet})
				if rec["model"] != "skillSet" || testenv.Num(rec["record"]) != f.skillSet {
					t.Errorf("skill on skill set: %v", rec)
				}
			}
			// A change that breaks the rules is refused too.
			rec := a.Create(t, "tag-assignments", testenv.M{"tag": f.plainTag, "model": "project", "record": f.project})
			id := testenv.ID(t, rec)
			a.Fail(t, http.MethodPatch, fmt.Sprintf("/v1/tag-assignments/%d", id), testenv.M{"tag": f.skillA}, http.StatusBadRequest, "invalid")
			a.Fail(t, http.MethodPatch, fmt.Sprintf("/v1/tag-assignments/%d", id), testenv.M{"model": "skillSet", "record": f.skillSet}, http.StatusBadRequest, "invalid", "model")
			if got := a.Get(t, "tag-assignments", id); !reflect.DeepEqual(got, rec) {
				t.Errorf("after refused changes: %v, want %v", got, rec)
			}
		})

		t.Run("the record must exist in the tenant", func(t *testing.T) {
			absent(t, a, "projects", other.project)
			absent(t, a, "skill-sets", other.skillSet)
			absent(t, a, "tags", other.plainTag)
			n := count()
			for _, body := range []testenv.M{
				{"tag": f.plainTag, "model": "project", "record": 999999},
				{"tag": f.plainTag, "model": "project", "record": other.project},
				{"tag": f.plainTag, "model": "project", "record": f.task}, // a task is not a project
				{"tag": f.plainTag, "model": "client", "record": f.project},
				{"tag": f.plainTag, "model": "user", "record": other.admin.UserID + 100000},
				{"tag": f.skillA, "model": "skillSet", "record": other.skillSet},
			} {
				a.Fail(t, http.MethodPost, "/v1/tag-assignments", body, http.StatusBadRequest, "invalid", "record")
			}
			a.Fail(t, http.MethodPost, "/v1/tag-assignments", testenv.M{"tag": other.plainTag, "model": "project", "record": f.project}, http.StatusBadRequest, "invalid", "tag")
			a.Fail(t, http.MethodPost, "/v1/tag-assignments", testenv.M{"tag": 999999, "model": "project", "record": f.project}, http.StatusBadRequest, "invalid", "tag")
			a.Fail(t, http.MethodPost, "/v1/tag-assignments", testenv.M{"tag": f.project, "model": "project", "record": f.project}, http.StatusBadRequest, "invalid", "tag")
			if got := count(); got != n {
				t.Errorf("%d tag assignments after refused writes, want %d", got, n)
			}
		})

		t.Run("tag, model and record are required", func(t *testing.T) {
			n := count()
			a.Fail(t, http.MethodPost, "/v1/tag-assignments", testenv.M{"model": "project", "record": f.project}, http.StatusBadRequest, "invalid", "tag")
			a.Fail(t, http.MethodPost, "/v1/tag-assignments", testenv.M{"tag": f.plainTag, "record": f.project}, http.StatusBadRequest, "invalid", "model")
			a.Fail(t, http.MethodPost, "/v1/tag-assignments", testenv.M{"tag": f.plainTag, "model": "project"}, http.StatusBadRequest, "invalid", "record")
			a.Fail(t, http.MethodPost, "/v1/tag-assignments", testenv.M{"tag": nil, "model": nil, "record": nil}, http.StatusBadRequest, "invalid", "tag", "model", "record")
			a.Fail(t, http.MethodPost, "/v1/tag-assignments", testenv.M{}, http.StatusBadRequest, "invalid", "tag", "model", "record")
			a.Fail(t, http.MethodPost, "/v1/tag-assignments", testenv.M{"tag": f.plainTag, "model": "invoice", "record": f.project}, http.StatusBadRequest, "invalid", "model")
			a.Fail(t, http.MethodPost, "/v1/tag-assignments", testenv.M{"tag": f.plainTag, "model": "project", "record": "x"}, http.StatusBadRequest, "invalid", "record")
			if got := count(); got != n {
				t.Errorf("%d tag assignments after refused writes, want %d", got, n)
			}
		})

		t.Run("an assignment whose tag was deleted stays editable", func(t *testing.T) {
			tag := testenv.ID(t, a.Create(t, "tags", testenv.M{"name": "short-lived"}))
			rec := a.Create(t, "tag-assignments", testenv.M{"tag": tag, "model": "client", "record": f.client})
			a.Object(t, http.MethodDelete, fmt.Sprintf("/v1/tags/%d", tag), nil, http.StatusOK)
			up := a.Object(t, http.MethodPatch, fmt.Sprintf("/v1/tag-assignments/%d", testenv.ID(t, rec)), testenv.M{"note": "tag gone"}, http.StatusOK)
			if up["note"] != "tag gone" || testenv.Num(up["tag"]) != tag {
				t.Errorf("PATCH of an assignment with a deleted tag: %v", up)
			}
		})

		t.Run("members may not tag", func(t *testing.T) {
			n := count()
			f.member.Fail(t, http.MethodPost, "/v1/tag-assignments", testenv.M{"tag": f.plainTag, "model": "user", "record": f.member.UserID}, http.StatusForbidden, "forbidden")
			if got := count(); got != n {
				t.Errorf("%d tag assignments after a refused write, want %d", got, n)
			}
		})
	})
}

// TestSkillAssignments: a user holds each skill once; deleting archives.
func TestSkillAssignments(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		f, other := twoTenants(t, b)
		a, u := f.admin, f.member.UserID
		count := func() int { return len(a.List(t, "/v1/skill-assignments")) }
		path := func(id int64) string { return fmt.Sprintf("/v1/skill-assignments/%d", id) }

		first := a.Create(t, "skill-assignments", testenv.M{"user": u, "tag": f.skillA, "proficiency": 3})
		id := testenv.ID(t, first)
		if testenv.Num(first["status"]) != 1 || testenv.Num(first["proficiency"]) != 3 || testenv.Num(first["user"]) != u || testenv.Num(first["tag"]) != f.skillA {
			t.Fatalf("created assignment %v, want status 1", first)
		}
		if got := a.Get(t, "skill-assignments", id); !reflect.DeepEqual(got, first) {
			t.Errorf("GET %v, want %v", got, first)
		}

		t.Run("the tag must be a skill", func(t *testing.T) {
			absent(t, a, "tags", other.skillA)
			n := count()
			a.Fail(t, http.MethodPost, "/v1/skill-assignments", testenv.M{"user": u, "tag": f.plainTag}, http.StatusBadRequest, "invalid", "tag")
			a.Fail(t, http.MethodPost, "/v1/skill-assignments", testenv.M{"user": u, "tag": 999999}, http.StatusBadRequest, "invalid", "tag")
			a.Fail(t, http.MethodPost, "/v1/skill-assignments", testenv.M{"user": u, "tag": other.skillA}, http.StatusBadRequest, "invalid", "tag")
			a.Fail(t, http.MethodPost, "/v1/skill-assignments", testenv.M{"user": u}, http.StatusBadRequest, "invalid", "tag")
			a.Fail(t, http.MethodPost, "/v1/skill-assignments", testenv.M{"tag": f.skillB}, http.StatusBadRequest, "invalid", "user")
			a.Fail(t, http.MethodPost, "/v1/skill-assignments", testenv.M{"user": other.admin.UserID + 100000, "tag": f.skillB}, http.StatusBadRequest, "invalid", "user")
			a.Fail(t, http.MethodPost, "/v1/skill-assignments", testenv.M{"user": f.project, "tag": f.skillB}, http.StatusBadRequest, "invalid", "user")
			if got := count(); got != n {
				t.Errorf("%d assignments after refused writes, want %d", got, n)
			}
		})

		t.Run("proficiency is 1 to 5, status 0 or 1", func(t *testing.T) {
			n := count()
			for _, p := range []any{0, 6, -1, "x", "3", 2.5, true} {
				a.Fail(t, http.MethodPost, "/v1/skill-assignments", testenv.M{"user": u, "tag": f.skillB, "proficiency": p}, http.StatusBadRequest, "invalid", "proficiency")
			}
			for _, s := range []any{2, -1, "1"} {
				a.Fail(t, http.MethodPost, "/v1/skill-assignments", testenv.M{"user": u, "tag": f.skillB, "status": s}, http.StatusBadRequest, "invalid", "status")
			}
			if got := count(); got != n {
				t.Errorf("%d assignments after refused writes, want %d", got, n)
			}
			a.Fail(t, http.MethodPatch, path(id), testenv.M{"proficiency": 6}, http.StatusBadRequest, "invalid", "proficiency")
			for p := 1; p <= 5; p++ {
				got := a.Object(t, http.MethodPatch, path(id), testenv.M{"proficiency": p}, http.StatusOK)
				if testenv.Num(got["proficiency"]) != int64(p) {
					t.Errorf("proficiency %d: %v", p, got)
				}
			}
			a.Object(t, http.MethodPatch, path(id), testenv.M{"proficiency": 3}, http.StatusOK)
		})

		t.Run("a second active assignment conflicts", func(t *testing.T) {
			n := count()
			before := a.Get(t, "skill-assignments", id)
			a.Fail(t, http.MethodPost, "/v1/skill-assignments", testenv.M{"user": u, "tag": f.skillA, "proficiency": 5}, http.StatusConflict, "conflict")
			a.Fail(t, http.MethodPost, "/v1/skill-assignments", testenv.M{"user": u, "tag": f.skillA}, http.StatusConflict, "conflict")
			if got := count(); got != n {
				t.Errorf("%d assignments after refused writes, want %d", got, n)
			}
			if got := a.Get(t, "skill-assignments", id); !reflect.DeepEqual(got, before) {
				t.Errorf("assignment after refused duplicates: %v, want %v", got, before)
			}
			// Another user may hold the same skill.
			other := a.Create(t, "skill-assignments", testenv.M{"user": a.UserID, "tag": f.skillA})
			if testenv.ID(t, other) == id || testenv.Num(other["status"]) != 1 {
				t.Errorf("admin's assignment %v", other)
			}
		})

		t.Run("delete archives, POST re-activates", func(t *testing.T) {
			n := count()
			del := a.Object(t, http.MethodDelete, path(id), nil, http.StatusOK)
			if testenv.ID(t, del) != id || testenv.Num(del["status"]) != 0 || testenv.Num(del["user"]) != u || testenv.Num(del["tag"]) != f.skillA {
				t.Errorf("DELETE answered %v, want the archived record", del)
			}
			got := a.Get(t, "skill-assignments", id)
			if testenv.Num(got["status"]) != 0 || testenv.Num(got["proficiency"]) != 3 {
				t.Errorf("archived record %v", got)
			}
			if got := count(); got != n {
				t.Errorf("%d assignments after archiving, want %d (the record is kept)", got, n)
			}
			if ids := a.IDs(t, "/v1/skill-assignments?status=0"); !slices.Equal(ids, []int64{id}) {
				t.Errorf("archived list %v, want [%d]", ids, id)
			}
			if ids := a.IDs(t, "/v1/skill-assignments?"+where(`{"status":1}`)); slices.Contains(ids, id) {
				t.Errorf("active list %v holds the archived record", ids)
			}
			if ids := f.member.IDs(t, "/v1/skill-assignments"); !slices.Contains(ids, id) {
				t.Errorf("member's list %v lacks the archived record", ids)
			}

			again := a.Create(t, "skill-assignments", testenv.M{"user": u, "tag": f.skillA, "proficiency": 5})
			if testenv.ID(t, again) != id || testenv.Num(again["status"]) != 1 || testenv.Num(again["proficiency"]) != 5 {
				t.Errorf("POST of an archived skill: %v, want record %d re-activated with proficiency 5", again, id)
			}
			if again["createdAt"] != first["createdAt"] {
				t.Errorf("re-activation changed createdAt: %v -> %v", first["createdAt"], again["createdAt"])
			}
			if got := count(); got != n {
				t.Errorf("%d assignments after re-activation, want %d", got, n)
			}
			mine := a.IDs(t, "/v1/skill-assignments?"+where(fmt.Sprintf(`{"user":%d,"tag":%d}`, u, f.skillA)))
			if !slices.Equal(mine, []int64{id}) {
				t.Errorf("assignments of (user, skill): %v, want [%d]", mine, id)
			}
			if got := a.Get(t, "skill-assignments", id); !reflect.DeepEqual(got, again) {
				t.Errorf("GET after re-activation %v, want %v", got, again)
			}
			// Active again: another POST conflicts.
			a.Fail(t, http.MethodPost, "/v1/skill-assignments", testenv.M{"user": u, "tag": f.skillA}, http.StatusConflict, "conflict")
		})

		t.Run("changing to a skill the user holds conflicts", func(t *testing.T) {
			recB := a.Create(t, "skill-assignments", testenv.M{"user": u, "tag": f.skillB, "proficiency": 2})
			idB := testenv.ID(t, recB)
			n := count()
			a.Fail(t, http.MethodPatch, path(idB), testenv.M{"tag": f.skillA}, http.StatusConflict, "conflict")
			a.Fail(t, http.MethodPut, path(idB), testenv.M{"tag": f.skillA}, http.StatusConflict, "conflict")
			if got := a.Get(t, "skill-assignments", idB); !reflect.DeepEqual(got, recB) {
				t.Errorf("after a refused change: %v, want %v", got, recB)
			}
			if got := count(); got != n {
				t.Errorf("%d assignments, want %d", got, n)
			}
			a.Fail(t, http.MethodPatch, path(idB), testenv.M{"tag": f.plainTag}, http.StatusBadRequest, "invalid", "tag")
			// A skill the user does not hold is fine.
			moved := a.Object(t, http.MethodPatch, path(idB), testenv.M{"tag": f.skillC}, http.StatusOK)
			if testenv.Num(moved["tag"]) != f.skillC || testenv.Num(moved["status"]) != 1 {
				t.Errorf("moved assignment %v", moved)
			}
			// Moving the admin's assignment onto the member is a conflict too.
			adminsA := a.IDs(t, "/v1/skill-assignments?"+where(fmt.Sprintf(`{"user":%d,"tag":%d}`, a.UserID, f.skillA)))
			if len(adminsA) != 1 {
				t.Fatalf("admin's assignments of A: %v", adminsA)
			}
			a.Fail(t, http.MethodPatch, path(adminsA[0]), testenv.M{"user": u}, http.StatusConflict, "conflict")
		})

		t.Run("an assignment whose skill was deleted stays editable", func(t *testing.T) {
			gone := testenv.ID(t, a.Create(t, "tags", testenv.M{"name": "COBOL", "type": 1, "category": f.tagCategory}))
			rec := a.Create(t, "skill-assignments", testenv.M{"user": u, "tag": gone, "proficiency": 1})
			a.Object(t, http.MethodDelete, fmt.Sprintf("/v1/tags/%d", gone), nil, http.StatusOK)
			up := a.Object(t, http.MethodPatch, path(testenv.ID(t, rec)), testenv.M{"proficiency": 2}, http.StatusOK)
			if testenv.Num(up["proficiency"]) != 2 || testenv.Num(up["tag"]) != gone {
				t.Errorf("PATCH of an assignment with a deleted skill: %v", up)
			}
			del := a.Object(t, http.MethodDelete, path(testenv.ID(t, rec)), nil, http.StatusOK)
			if testenv.Num(del["status"]) != 0 {
				t.Errorf("DELETE of an assignment with a deleted skill: %v", del)
			}
			// Moving it to a tag that is no skill is still refused.
			a.Fail(t, http.MethodPatch, path(testenv.ID(t, rec)), testenv.M{"tag": f.plainTag}, http.StatusBadRequest, "invalid", "tag")
		})

		t.Run("members may not assign skills", func(t *testing.T) {
			n := count()
			f.member.Fail(t, http.MethodPost, "/v1/skill-assignments", testenv.M{"user": u, "tag": f.skillB}, http.StatusForbidden, "forbidden")
			before := a.Get(t, "skill-assignments", id)
			f.member.Fail(t, http.MethodPatch, path(id), testenv.M{"proficiency": 1}, http.StatusForbidden, "forbidden")
			f.member.Fail(t, http.MethodDelete, path(id), nil, http.StatusForbidden, "forbidden")
			if got := a.Get(t, "skill-assignments", id); !reflect.DeepEqual(got, before) {
				t.Errorf("after refused member writes: %v, want %v", got, before)
			}
			if got := count(); got != n {
				t.Errorf("%d assignments, want %d", got, n)
			}
		})
	})
}
