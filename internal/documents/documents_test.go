package documents_test

// Black-box tests of the Document rules (docs/api.md "Documents",
// "Roles"): the category table, parent references, a parent's Documents,
// and which Documents, and which of their files, a member sees.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// where is the list path of the resource under the criteria (JSON).
func where(res, criteria string, args ...any) string {
	return "/v1/" + res + "?where=" + url.QueryEscape(fmt.Sprintf(criteria, args...))
}

// attach uploads a file to a Document, which must be accepted.
func attach(t *testing.T, c *testenv.Client, doc int64, data []byte) int64 {
	t.Helper()
	status, _, raw := c.Upload(t, testenv.UploadPath("document", doc, false), testenv.Part{Filename: "x.txt", Data: data})
	if status != http.StatusCreated {
		t.Fatalf("upload to document %d: %d %s", doc, status, raw)
	}
	var m testenv.M
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("upload answer is not a JSON object: %q", raw)
	}
	if m["model"] != "document" || m["record"] != float64(doc) || testenv.Num(m["size"]) != int64(len(data)) {
		t.Errorf("upload %v, want %d bytes on document %d", m, len(data), doc)
	}
	return testenv.ID(t, m)
}

// TestDocuments: Document fields, the category table, parent
// references, listing a parent's Documents, and the member visibility
// rule, for records and for their files.
func TestDocuments(t *testing.T) {
	t.Parallel()
	testenv.EachFileStore(t, func(t *testing.T, b testenv.Backend, fb testenv.FileBackend) {
		srv := testenv.Start(t, b, func(c *config.Config) { c.Files = testenv.Files(t, fb) })
		admin := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		member := admin.Member(t, "member@acme.test")
		beta := srv.SignIn(t, srv.OtherTenant(t, "beta"))
		create := func(t *testing.T, c *testenv.Client, res string, body testenv.M) int64 {
			t.Helper()
			return testenv.ID(t, c.Create(t, res, body))
		}
		project := create(t, admin, "projects", testenv.M{"name": "P"})
		project2 := create(t, admin, "projects", testenv.M{"name": "P2"})
		clientID := create(t, admin, "clients", testenv.M{"name": "C"})
		parents := map[string]int64{"user": member.UserID, "project": project, "client": clientID}
		table := map[int]string{1: "user", 2: "user", 3: "user", 4: "user", 5: "user", 6: "user",
			7: "project", 8: "project", 9: "project", 10: "project", 11: "client", 12: "client", 13: "client", 14: "client"}

		t.Run("category table", func(t *testing.T) {
			for cat := 1; cat <= 14; cat++ {
				for _, model := range []string{"user", "project", "client"} {
					body := testenv.M{"model": model, "record": parents[model], "category": cat, "name": "n", "date": "2026-01-05"}
					if table[cat] == model {
						m := admin.Create(t, "documents", body)
						if m["model"] != model || m["record"] != float64(parents[model]) || m["category"] != float64(cat) ||
							m["name"] != "n" || m["date"] != "2026-01-05" {
							t.Errorf("created document %v", m)
						}
						admin.Object(t, http.MethodDelete, fmt.Sprintf("/v1/documents/%d", testenv.ID(t, m)), nil, http.StatusOK)
						continue
					}
					e := admin.Fail(t, http.MethodPost, "/v1/documents", body, http.StatusBadRequest, "")
					if !slices.Contains(testenv.ProblemFields(e), "category") {
						t.Errorf("category %d on %s: problems %v", cat, model, e["problems"])
					}
				}
			}
			for _, bad := range []testenv.M{
				{"model": "project", "record": project, "category": 0},
				{"model": "project", "record": project, "category": 15},
				{"model": "project", "record": project, "category": "offer"},
			} {
				e := admin.Fail(t, http.MethodPost, "/v1/documents", bad, http.StatusBadRequest, "")
				if !slices.Contains(testenv.ProblemFields(e), "category") {
					t.Errorf("%v: problems %v", bad, e["problems"])
				}
			}
		})

		t.Run("parent must exist in the tenant", func(t *testing.T) {
			betaProject := create(t, beta, "projects", testenv.M{"name": "beta's"})
			for _, c := range []struct {
				body  testenv.M
				field string
			}{
				{testenv.M{"model": "project", "record": 999999, "category": 7}, "record"},
				{testenv.M{"model": "project", "record": betaProject, "category": 7}, "record"},
				{testenv.M{"model": "client", "record": project, "category": 11}, "record"}, // a project is no client
				{testenv.M{"model": "user", "record": 999999, "category": 1}, "record"},
				{testenv.M{"model": "expense", "record": project, "category": 7}, "model"},
				{testenv.M{"record": project, "category": 7}, "model"},
				{testenv.M{"model": "project", "category": 7}, "record"},
			} {
				e := admin.Fail(t, http.MethodPost, "/v1/documents", c.body, http.StatusBadRequest, "")
				if !slices.Contains(testenv.ProblemFields(e), c.field) {
					t.Errorf("%v: problems %v, want %s", c.body, e["problems"], c.field)
				}
			}
		})

		t.Run("list a parent's documents", func(t *testing.T) {
			d1 := create(t, admin, "documents", testenv.M{"model": "project", "record": project, "category": 7})
			d2 := create(t, admin, "documents", testenv.M{"model": "project", "record": project, "category": 10})
			create(t, admin, "documents", testenv.M{"model": "project", "record": project2, "category": 8})
			c1 := create(t, admin, "documents", testenv.M{"model": "client", "record": clientID, "category": 14})
			// A client whose id equals nothing of the project: the model matters.
			if got := admin.IDs(t, where("documents", `{"model":"project","record":%d}`, project)); !slices.Equal(got, []int64{d1, d2}) {
				t.Errorf("documents of project %d: %v, want %v", project, got, []int64{d1, d2})
			}
			if got := admin.IDs(t, where("documents", `{"model":"client","record":%d}`, clientID)); !slices.Equal(got, []int64{c1}) {
				t.Errorf("documents of client: %v", got)
			}
			if got := admin.IDs(t, where("documents", `{"model":"client","record":%d}`, project)); len(got) != 0 {
				t.Errorf("client documents under a project's id: %v", got)
			}
			// A Document without a file is listed like any other (docs/api.md "Upload flow").
			if got := admin.IDs(t, fmt.Sprintf("/v1/files/document/%d", d1)); len(got) != 0 {
				t.Errorf("uploads of a Document without a file: %v", got)
			}
		})

		t.Run("member visibility", func(t *testing.T) {
			mine := create(t, admin, "documents", testenv.M{"model": "user", "record": member.UserID, "category": 1, "visibleToUser": true})
			hidden := create(t, admin, "documents", testenv.M{"model": "user", "record": member.UserID, "category": 3, "visibleToUser": false})
			unset := create(t, admin, "documents", testenv.M{"model": "user", "record": member.UserID, "category": 6})
			others := create(t, admin, "documents", testenv.M{"model": "user", "record": admin.UserID, "category": 1, "visibleToUser": true})
			projDoc := create(t, admin, "documents", testenv.M{"model": "project", "record": project, "category": 9, "visibleToUser": false})
			clientDoc := create(t, admin, "documents", testenv.M{"model": "client", "record": clientID, "category": 12})

			// The member's list is the admin's list under the rule.
			var want []int64
			for _, m := range admin.List(t, "/v1/documents") {
				if m["model"] != "user" || (testenv.Num(m["record"]) == member.UserID && m["visibleToUser"] == true) {
					want = append(want, testenv.ID(t, m))
				}
			}
			if got := member.IDs(t, "/v1/documents"); !slices.Equal(got, want) {
				t.Errorf("member's documents %v, want %v", got, want)
			}
			for _, id := range []int64{mine, projDoc, clientDoc} {
				if !slices.Contains(want, id) {
					t.Errorf("document %d should be visible to the member", id)
				}
				member.Get(t, "documents", id)
			}
			for _, id := range []int64{hidden, unset, others} {
				if slices.Contains(want, id) {
					t.Errorf("document %d should be hidden from the member", id)
				}
				member.Fail(t, http.MethodGet, fmt.Sprintf("/v1/documents/%d", id), nil, http.StatusNotFound, "not_found")
			}
			// Criteria cannot reach around the rule.
			if got := member.IDs(t, where("documents", `{"model":"user","record":%d}`, member.UserID)); !slices.Equal(got, []int64{mine}) {
				t.Errorf("member's own user documents: %v, want [%d]", got, mine)
			}

			// Files follow their Document: hidden ones are 404 for the member.
			data := testenv.Data(1, 300)
			ups := map[int64]int64{}
			for _, id := range []int64{mine, hidden, others, projDoc} {
				ups[id] = attach(t, admin, id, data)
			}
			files := func(doc int64) string { return fmt.Sprintf("/v1/files/document/%d", doc) }
			for _, id := range []int64{mine, projDoc} {
				if got := member.IDs(t, files(id)); !slices.Equal(got, []int64{ups[id]}) {
					t.Errorf("member's uploads of document %d: %v, want [%d]", id, got, ups[id])
				}
				if got := member.Download(t, ups[id]); !bytes.Equal(got, data) {
					t.Errorf("member's download of document %d: wrong bytes", id)
				}
			}
			for _, id := range []int64{hidden, others} {
				member.Fail(t, http.MethodGet, files(id), nil, http.StatusNotFound, "not_found")
				member.Fail(t, http.MethodGet, fmt.Sprintf("/v1/files/download/%d", ups[id]), nil, http.StatusNotFound, "not_found")
				member.Fail(t, http.MethodDelete, fmt.Sprintf("/v1/files/%d", ups[id]), nil, http.StatusNotFound, "not_found")
				status, _, raw := member.Upload(t, testenv.UploadPath("document", id, true), testenv.Part{Filename: "y.txt", Data: data})
				testenv.WantError(t, "member upload to a hidden document", status, raw, http.StatusNotFound, "not_found")
				if got := admin.IDs(t, files(id)); !slices.Equal(got, []int64{ups[id]}) {
					t.Errorf("uploads of document %d after the member's refused upload: %v, want [%d]", id, got, ups[id])
				}
			}
			// Visible is not writable: members do not write Documents.
			member.Fail(t, http.MethodPost, "/v1/documents", testenv.M{"model": "user", "record": member.UserID, "category": 1}, http.StatusForbidden, "forbidden")
		})
	})
}
