package skills_test

import (
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"testing"

	"planwerk/internal/testenv"
)

// TestTags: plain tags and skills share the Tag resource; the type
// decides which rules apply and whether lists show the row.
func TestTags(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		admin := srv.SignIn(t, tn)

		cat := admin.Create(t, "tag-categories", testenv.M{"name": "Programming"})
		catID := testenv.ID(t, cat)
		if got := admin.Get(t, "tag-categories", catID); !reflect.DeepEqual(got, cat) {
			t.Errorf("GET tag category %v, want %v", got, cat)
		}
		if !slices.Contains(admin.IDs(t, "/v1/tag-categories"), catID) {
			t.Error("tag category not listed")
		}
		ssc := testenv.ID(t, admin.Create(t, "skill-set-categories", testenv.M{"name": "not a tag category"}))

		plain := admin.Create(t, "tags", testenv.M{"name": "urgent"})
		if v, ok := plain["type"]; ok && v != nil {
			t.Errorf("plain tag has type %v", v)
		}
		plainID := testenv.ID(t, plain)
		plainNull := testenv.ID(t, admin.Create(t, "tags", testenv.M{"name": "vip", "type": nil}))
		skill := admin.Create(t, "tags", testenv.M{"name": "Go", "type": 1, "category": catID})
		if testenv.Num(skill["type"]) != 1 || testenv.Num(skill["category"]) != catID {
			t.Errorf("skill %v", skill)
		}
		skillID := testenv.ID(t, skill)
		language := testenv.ID(t, admin.Create(t, "tags", testenv.M{"name": "German", "type": 2, "category": catID}))
		cert := testenv.ID(t, admin.Create(t, "tags", testenv.M{"name": "CKA", "type": 3, "category": catID}))
		plains := []int64{plainID, plainNull}
		skills := []int64{skillID, language, cert}

		t.Run("type is null or 1, 2, 3", func(t *testing.T) {
			n := len(admin.List(t, "/v1/tags?includeSkills=true"))
			for _, typ := range []any{0, 4, -1, 99, 1.5, "1", true, []any{1}, testenv.M{"a": 1}} {
				admin.Fail(t, http.MethodPost, "/v1/tags", testenv.M{"name": "bad", "type": typ, "category": catID}, http.StatusBadRequest, "invalid", "type")
			}
			if got := len(admin.List(t, "/v1/tags?includeSkills=true")); got != n {
				t.Errorf("%d tags after refused writes, want %d", got, n)
			}
			admin.Fail(t, http.MethodPatch, fmt.Sprintf("/v1/tags/%d", skillID), testenv.M{"type": 4}, http.StatusBadRequest, "invalid", "type")
		})

		t.Run("a skill needs a category, a plain tag has none", func(t *testing.T) {
			n := len(admin.List(t, "/v1/tags?includeSkills=true"))
			for _, typ := range []int{1, 2, 3} {
				m := admin.Fail(t, http.MethodPost, "/v1/tags", testenv.M{"name": "no category", "type": typ}, http.StatusBadRequest, "invalid", "category")
				if m["code"] != "invalid" {
					t.Errorf("code %v", m["code"])
				}
				admin.Fail(t, http.MethodPost, "/v1/tags", testenv.M{"name": "null category", "type": typ, "category": nil}, http.StatusBadRequest, "invalid", "category")
			}
			admin.Fail(t, http.MethodPost, "/v1/tags", testenv.M{"name": "plain with category", "category": catID}, http.StatusBadRequest, "invalid", "category")
			admin.Fail(t, http.MethodPost, "/v1/tags", testenv.M{"name": "plain with category", "type": nil, "category": catID}, http.StatusBadRequest, "invalid", "category")
			// The category must be a TagCategory of the tenant.
			admin.Fail(t, http.MethodPost, "/v1/tags", testenv.M{"name": "x", "type": 1, "category": ssc}, http.StatusBadRequest, "invalid", "category")
			admin.Fail(t, http.MethodPost, "/v1/tags", testenv.M{"name": "x", "type": 1, "category": 999999}, http.StatusBadRequest, "invalid", "category")
			admin.Fail(t, http.MethodPost, "/v1/tags", testenv.M{"name": "x", "type": 1, "category": "1"}, http.StatusBadRequest, "invalid", "category")
			if got := len(admin.List(t, "/v1/tags?includeSkills=true")); got != n {
				t.Errorf("%d tags after refused writes, want %d", got, n)
			}
			// The rules hold for changes too.
			before := admin.Get(t, "tags", skillID)
			admin.Fail(t, http.MethodPatch, fmt.Sprintf("/v1/tags/%d", skillID), testenv.M{"category": nil}, http.StatusBadRequest, "invalid", "category")
			admin.Fail(t, http.MethodPatch, fmt.Sprintf("/v1/tags/%d", skillID), testenv.M{"type": nil}, http.StatusBadRequest, "invalid", "category")
			if got := admin.Get(t, "tags", skillID); !reflect.DeepEqual(got, before) {
				t.Errorf("skill after refused changes: %v, want %v", got, before)
			}
			admin.Fail(t, http.MethodPatch, fmt.Sprintf("/v1/tags/%d", plainID), testenv.M{"type": 1}, http.StatusBadRequest, "invalid", "category")
			admin.Fail(t, http.MethodPatch, fmt.Sprintf("/v1/tags/%d", plainID), testenv.M{"category": catID}, http.StatusBadRequest, "invalid", "category")
			// A tag may become a skill and back, with its category.
			tmp := testenv.ID(t, admin.Create(t, "tags", testenv.M{"name": "temp"}))
			up := admin.Object(t, http.MethodPatch, fmt.Sprintf("/v1/tags/%d", tmp), testenv.M{"type": 2, "category": catID}, http.StatusOK)
			if testenv.Num(up["type"]) != 2 {
				t.Errorf("tag turned skill: %v", up)
			}
			down := admin.Object(t, http.MethodPatch, fmt.Sprintf("/v1/tags/%d", tmp), testenv.M{"type": nil, "category": nil}, http.StatusOK)
			if down["type"] != nil || down["category"] != nil {
				t.Errorf("skill turned tag: %v", down)
			}
			admin.Object(t, http.MethodDelete, fmt.Sprintf("/v1/tags/%d", tmp), nil, http.StatusOK)
		})

		t.Run("lists show plain tags unless asked for skills", func(t *testing.T) {
			all := sorted(append(slices.Clone(plains), skills...)...)
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
				{"?" + where(`{"type":1}`), []int64{skillID}},
				{"?" + where(`{"type":[1,2]}`), []int64{skillID, language}},
				{"?" + where(`{"type":{"!=":null}}`), skills},
				{"?" + where(`{"type":{">=":2}}`), []int64{language, cert}},
				{"?" + where(`{"type":null}`), plains},
				{"?" + where(`{"or":[{"type":1},{"name":"urgent"}]}`), sorted(plainID, skillID)},
				// Criteria that do not name the type still list plain tags only.
				{"?name=Go", nil},
				{"?" + where(`{"name":"Go"}`), nil},
				{"?" + where(`{"category":`+fmt.Sprint(catID)+`}`), nil},
				{"?includeSkills=true&name=Go", []int64{skillID}},
				{"?includeSkills=true&" + where(`{"name":{"startsWith":"G"}}`), []int64{skillID, language}},
				{"?name=urgent", []int64{plainID}},
			}
			for _, c := range cases {
				got := admin.IDs(t, "/v1/tags"+c.query)
				if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
					t.Errorf("GET /v1/tags%s = %v, want %v", c.query, got, c.want)
				}
			}
			// A member sees the same.
			member := admin.Member(t, "member@acme.test")
			if got := member.IDs(t, "/v1/tags"); !slices.Equal(got, plains) {
				t.Errorf("member's tags %v, want %v", got, plains)
			}
			if got := member.IDs(t, "/v1/tags?includeSkills=true"); !slices.Equal(got, all) {
				t.Errorf("member's tags with skills %v, want %v", got, all)
			}
		})

		t.Run("GET by id shows any tag", func(t *testing.T) {
			for _, id := range append(slices.Clone(plains), skills...) {
				got := admin.Get(t, "tags", id)
				if testenv.ID(t, got) != id {
					t.Errorf("GET /v1/tags/%d = %v", id, got)
				}
			}
			if got := admin.Get(t, "tags", skillID); !reflect.DeepEqual(got, skill) {
				t.Errorf("GET skill %v, want %v", got, skill)
			}
		})
	})
}
