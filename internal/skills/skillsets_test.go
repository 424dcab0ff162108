package skills_test

import (
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"testing"

	"planwerk/internal/testenv"
)

// TestSkillSets: skill sets need a category; apply gives users the
// set's skills they lack, all or nothing.
func TestSkillSets(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		f, other := twoTenants(t, b)
		a := f.admin
		count := func() int { return len(a.List(t, "/v1/skill-assignments")) }

		t.Run("a skill set needs a SkillSetCategory", func(t *testing.T) {
			absent(t, a, "skill-set-categories", other.skillSetCategory)
			n := len(a.List(t, "/v1/skill-sets"))
			a.Fail(t, http.MethodPost, "/v1/skill-sets", testenv.M{"name": "no category"}, http.StatusBadRequest, "invalid", "category")
			a.Fail(t, http.MethodPost, "/v1/skill-sets", testenv.M{"name": "null", "category": nil}, http.StatusBadRequest, "invalid", "category")
			a.Fail(t, http.MethodPost, "/v1/skill-sets", testenv.M{"name": "tag category", "category": f.tagCategory}, http.StatusBadRequest, "invalid", "category")
			a.Fail(t, http.MethodPost, "/v1/skill-sets", testenv.M{"name": "foreign", "category": other.skillSetCategory}, http.StatusBadRequest, "invalid", "category")
			if got := len(a.List(t, "/v1/skill-sets")); got != n {
				t.Errorf("%d skill sets after refused writes, want %d", got, n)
			}
			a.Fail(t, http.MethodPatch, fmt.Sprintf("/v1/skill-sets/%d", f.skillSet), testenv.M{"category": nil}, http.StatusBadRequest, "invalid", "category")
			set := a.Create(t, "skill-sets", testenv.M{"name": "Frontend", "category": f.skillSetCategory})
			if testenv.Num(set["category"]) != f.skillSetCategory {
				t.Errorf("skill set %v", set)
			}
		})

		// The set holds skills A and B; C stays outside.
		set := testenv.ID(t, a.Create(t, "skill-sets", testenv.M{"name": "Backend dev", "category": f.skillSetCategory}))
		taA := testenv.ID(t, a.Create(t, "tag-assignments", testenv.M{"tag": f.skillA, "model": "skillSet", "record": set}))
		a.Create(t, "tag-assignments", testenv.M{"tag": f.skillB, "model": "skillSet", "record": set})
		// Skills of other sets do not count.
		a.Create(t, "tag-assignments", testenv.M{"tag": f.skillC, "model": "skillSet", "record": f.skillSet})
		apply := func(id int64) string { return fmt.Sprintf("/v1/skill-sets/%d/apply", id) }

		u1 := f.member.UserID
		u2 := testenv.ID(t, a.Create(t, "users", testenv.M{"email": "u2@acme.test"}))
		u3 := testenv.ID(t, a.Create(t, "users", testenv.M{"email": "u3@acme.test"}))
		// u1 holds A actively; u2 held B, archived.
		u1A := a.Create(t, "skill-assignments", testenv.M{"user": u1, "tag": f.skillA, "proficiency": 4})
		u2B := testenv.ID(t, a.Create(t, "skill-assignments", testenv.M{"user": u2, "tag": f.skillB, "proficiency": 2}))
		a.Object(t, http.MethodDelete, fmt.Sprintf("/v1/skill-assignments/%d", u2B), nil, http.StatusOK)

		var applied []testenv.M
		t.Run("apply", func(t *testing.T) {
			n := count()
			applied = a.Array(t, http.MethodPost, apply(set), testenv.M{"users": []int64{u1, u2}}, http.StatusOK)
			if len(applied) != 4 {
				t.Fatalf("apply answered %d assignments, want 4: %v", len(applied), applied)
			}
			want := [][2]int64{{u1, f.skillA}, {u1, f.skillB}, {u2, f.skillA}, {u2, f.skillB}}
			for i, w := range want {
				got := applied[i]
				if testenv.Num(got["user"]) != w[0] || testenv.Num(got["tag"]) != w[1] || testenv.Num(got["status"]) != 1 {
					t.Errorf("assignment %d = %v, want user %d skill %d active", i, got, w[0], w[1])
				}
			}
			if !reflect.DeepEqual(applied[0], u1A) {
				t.Errorf("u1's existing assignment changed: %v, want %v", applied[0], u1A)
			}
			if testenv.ID(t, applied[3]) != u2B {
				t.Errorf("u2's archived B: id %v, want %d re-activated", applied[3]["id"], u2B)
			}
			if testenv.Num(applied[3]["proficiency"]) != 2 {
				t.Errorf("u2's re-activated B lost its proficiency: %v", applied[3])
			}
			for _, i := range []int{1, 2} {
				id := testenv.ID(t, applied[i])
				if id == testenv.ID(t, u1A) || id == u2B {
					t.Errorf("assignment %d should be new: %v", i, applied[i])
				}
			}
			if got := count(); got != n+2 {
				t.Errorf("%d assignments after apply, want %d (two new)", got, n+2)
			}
			for _, rec := range applied {
				if got := a.Get(t, "skill-assignments", testenv.ID(t, rec)); !reflect.DeepEqual(got, rec) {
					t.Errorf("stored %v, answered %v", got, rec)
				}
			}
			// C is in another set: nobody got it.
			if ids := a.IDs(t, "/v1/skill-assignments?tag="+fmt.Sprint(f.skillC)); len(ids) != 0 {
				t.Errorf("assignments of C: %v", ids)
			}
		})

		t.Run("applying again changes nothing", func(t *testing.T) {
			n := count()
			again := a.Array(t, http.MethodPost, apply(set), testenv.M{"users": []int64{u1, u2}}, http.StatusOK)
			if !reflect.DeepEqual(again, applied) {
				t.Errorf("second apply %v, want %v", again, applied)
			}
			if got := count(); got != n {
				t.Errorf("%d assignments, want %d", got, n)
			}
			// Duplicates in the list count once.
			dup := a.Array(t, http.MethodPost, apply(set), testenv.M{"users": []int64{u1, u1}}, http.StatusOK)
			if !reflect.DeepEqual(dup, applied[:2]) {
				t.Errorf("apply [u1, u1] = %v, want %v", dup, applied[:2])
			}
		})

		t.Run("all or nothing", func(t *testing.T) {
			n := count()
			before := a.List(t, "/v1/skill-assignments")
			for _, users := range [][]any{
				{u3, 999999},
				{999999, u3},
				{u3, other.admin.UserID + 100000},
				{u3, f.project},
			} {
				a.Fail(t, http.MethodPost, apply(set), testenv.M{"users": users}, http.StatusBadRequest, "invalid")
			}
			m := a.Fail(t, http.MethodPost, apply(set), testenv.M{"users": []any{u3, u3, 999999}}, http.StatusBadRequest, "invalid")
			if fields := testenv.ProblemFields(m); !slices.Equal(fields, []string{"users[2]"}) {
				t.Errorf("problems name %v, want [users[2]] (the position in the request)", fields)
			}
			for _, body := range []testenv.M{{}, {"users": []any{}}, {"users": "x"}, {"users": []any{"x"}}, {"users": []any{0}}, {"users": []any{1.5}}, {"users": nil}} {
				a.Fail(t, http.MethodPost, apply(set), body, http.StatusBadRequest, "invalid")
			}
			if got := count(); got != n {
				t.Errorf("%d assignments after refused applies, want %d", got, n)
			}
			if after := a.List(t, "/v1/skill-assignments"); !reflect.DeepEqual(after, before) {
				t.Errorf("assignments changed by refused applies")
			}
			if ids := a.IDs(t, "/v1/skill-assignments?user="+fmt.Sprint(u3)); len(ids) != 0 {
				t.Errorf("u3 got assignments %v", ids)
			}
		})

		t.Run("who and which set", func(t *testing.T) {
			absent(t, a, "skill-sets", other.skillSet)
			absent(t, other.admin, "skill-sets", set)
			n := count()
			f.member.Fail(t, http.MethodPost, apply(set), testenv.M{"users": []int64{u3}}, http.StatusForbidden, "forbidden")
			f.member.Fail(t, http.MethodPost, apply(set), testenv.M{"users": []int64{f.member.UserID}}, http.StatusForbidden, "forbidden")
			a.Fail(t, http.MethodPost, apply(999999), testenv.M{"users": []int64{u3}}, http.StatusNotFound, "not_found")
			a.Fail(t, http.MethodPost, apply(other.skillSet), testenv.M{"users": []int64{u3}}, http.StatusNotFound, "not_found")
			a.Fail(t, http.MethodPost, apply(f.project), testenv.M{"users": []int64{u3}}, http.StatusNotFound, "not_found")
			a.Fail(t, http.MethodPost, "/v1/skill-sets/abc/apply", testenv.M{"users": []int64{u3}}, http.StatusNotFound, "not_found")
			other.admin.Fail(t, http.MethodPost, apply(set), testenv.M{"users": []int64{other.admin.UserID}}, http.StatusNotFound, "not_found")
			if got := count(); got != n {
				t.Errorf("%d assignments, want %d", got, n)
			}
			// A set without skills gives nothing.
			empty := testenv.ID(t, a.Create(t, "skill-sets", testenv.M{"name": "empty", "category": f.skillSetCategory}))
			if got := a.Array(t, http.MethodPost, apply(empty), testenv.M{"users": []int64{u3}}, http.StatusOK); len(got) != 0 {
				t.Errorf("empty set applied: %v", got)
			}
		})

		t.Run("changing the set later does not touch users", func(t *testing.T) {
			before := a.List(t, "/v1/skill-assignments")
			a.Object(t, http.MethodDelete, fmt.Sprintf("/v1/tag-assignments/%d", taA), nil, http.StatusOK)
			if after := a.List(t, "/v1/skill-assignments"); !reflect.DeepEqual(after, before) {
				t.Errorf("removing a skill from the set changed assignments:\n%v\n%v", after, before)
			}
			got := a.Array(t, http.MethodPost, apply(set), testenv.M{"users": []int64{u3}}, http.StatusOK)
			if len(got) != 1 || testenv.Num(got[0]["tag"]) != f.skillB || testenv.Num(got[0]["user"]) != u3 {
				t.Errorf("apply after removing A: %v, want only B for u3", got)
			}
			// u1 and u2 keep A.
			for _, rec := range applied {
				cur := a.Get(t, "skill-assignments", testenv.ID(t, rec))
				if testenv.Num(cur["status"]) != 1 {
					t.Errorf("assignment %v after the set changed: %v", rec, cur)
				}
			}
			// A deleted skill is no longer part of the set.
			gone := testenv.ID(t, a.Create(t, "tags", testenv.M{"name": "Perl", "type": 1, "category": f.tagCategory}))
			a.Create(t, "tag-assignments", testenv.M{"tag": gone, "model": "skillSet", "record": set})
			a.Object(t, http.MethodDelete, fmt.Sprintf("/v1/tags/%d", gone), nil, http.StatusOK)
			if got := a.Array(t, http.MethodPost, apply(set), testenv.M{"users": []int64{u3}}, http.StatusOK); len(got) != 1 || testenv.Num(got[0]["tag"]) != f.skillB {
				t.Errorf("apply with a deleted skill in the set: %v, want only B", got)
			}
			before = a.List(t, "/v1/skill-assignments")
			a.Object(t, http.MethodDelete, fmt.Sprintf("/v1/skill-sets/%d", set), nil, http.StatusOK)
			if after := a.List(t, "/v1/skill-assignments"); !reflect.DeepEqual(after, before) {
				t.Error("deleting the set changed assignments")
			}
		})
	})
}
