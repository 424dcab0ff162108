package documents_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"planwerk/internal/testenv"
)

// TestDocumentRules: a member sees a user-model Document only when it is
// about themselves and visibleToUser is true, whatever the criteria, while
// the admin sees every Document (docs/api.md "Roles"); a Document's
// category belongs to one model, and the refusal names the category, the
// model it is for and the model sent, on POST and on a PATCH that
// switches the model.
func TestDocumentRules(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		c := srv.SignIn(t, tn)
		project := testenv.ID(t, c.Create(t, "projects", testenv.M{"name": "P"}))
		records := map[string]int64{"user": tn.AdminID, "project": project}
		docPath := func(id int64) string { return fmt.Sprintf("/v1/documents/%d", id) }

		t.Run("members see only their own visible user documents", func(t *testing.T) {
			member := c.Member(t, "member@acme.test")
			doc := func(body testenv.M) int64 { return testenv.ID(t, c.Create(t, "documents", body)) }

			mine := doc(testenv.M{"model": "user", "record": member.UserID, "category": 1, "visibleToUser": true})
			hidden := doc(testenv.M{"model": "user", "record": member.UserID, "category": 3, "visibleToUser": false})
			unset := doc(testenv.M{"model": "user", "record": member.UserID, "category": 6})
			others := doc(testenv.M{"model": "user", "record": tn.AdminID, "category": 1, "visibleToUser": true})
			proj := doc(testenv.M{"model": "project", "record": project, "category": 7})

			if got, want := member.IDs(t, "/v1/documents"), []int64{mine, proj}; !slices.Equal(got, want) {
				t.Errorf("member's documents %v, want %v", got, want)
			}
			for _, id := range []int64{hidden, unset, others} {
				member.Fail(t, http.MethodGet, docPath(id), nil, http.StatusNotFound, "not_found")
			}
			if got := member.IDs(t, where("documents", `{"visibleToUser":{"!=":true}}`)); !slices.Equal(got, []int64{proj}) {
				t.Errorf("member's invisible documents by criteria: %v, want [%d]", got, proj)
			}
			if got := c.IDs(t, "/v1/documents"); len(got) != 5 {
				t.Errorf("admin sees %d documents, want 5", len(got))
			}
		})

		t.Run("another model's category is refused", func(t *testing.T) {
			n := len(c.List(t, "/v1/documents"))
			for _, tc := range []struct {
				name, model string
				category    int
				want        string
			}{
				{"project category of a user document", "user", 7, "category 7 is for project documents, not user documents"},
				{"user category of a project document", "project", 1, "category 1 is for user documents, not project documents"},
				{"client category of a project document", "project", 11, "category 11 is for client documents, not project documents"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					body := testenv.M{"model": tc.model, "record": records[tc.model], "category": tc.category}
					m := c.Fail(t, http.MethodPost, "/v1/documents", body, http.StatusBadRequest, "invalid", "category")
					if got := testenv.ProblemMessage(m, "category"); got != tc.want {
						t.Errorf("problem on category: %q, want %q", got, tc.want)
					}
				})
			}
			if got := len(c.List(t, "/v1/documents")); got != n {
				t.Errorf("documents after refused writes: %d, want %d", got, n)
			}
		})

		t.Run("switching the model leaves the category behind", func(t *testing.T) {
			for _, tc := range []struct {
				model    string
				category int
				newModel string
			}{
				{"user", 1, "project"},
				{"project", 7, "user"},
			} {
				rec := records[tc.model]
				d := c.Create(t, "documents", testenv.M{"model": tc.model, "record": rec, "category": tc.category, "name": "doc", "date": "2026-01-05", "visibleToUser": true})
				if d["category"] != float64(tc.category) || d["record"] != float64(rec) || d["model"] != tc.model {
					t.Errorf("document: %v", d)
				}
				m := c.Fail(t, http.MethodPatch, docPath(testenv.ID(t, d)), testenv.M{"model": tc.newModel, "record": records[tc.newModel]}, http.StatusBadRequest, "invalid", "category")
				if got, want := testenv.ProblemMessage(m, "category"), fmt.Sprintf("category %d is for %s documents, not %s documents", tc.category, tc.model, tc.newModel); got != want {
					t.Errorf("model switch: category problem %q, want %q", got, want)
				}
				c.Object(t, http.MethodDelete, docPath(testenv.ID(t, d)), nil, http.StatusOK)
			}
		})
	})
}
