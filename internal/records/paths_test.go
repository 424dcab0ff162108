package records_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"planwerk/internal/testenv"
)

// TestRegistryPaths: every resource of the registry answers at its path,
// and near misses of the paths are no resources; the generic endpoints
// create, read, change and delete records of every writable resource;
// read-only resources answer writes with 405; every answer under a
// deprecated path carries the Deprecation header.
func TestRegistryPaths(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, be testenv.Backend) {
		srv := testenv.Start(t, be)
		tn := srv.CreateTenant(t, "acme")
		c := srv.SignIn(t, tn)

		for _, p := range []string{"/v1/project", "/v1/timeEntries", "/v1/time_entries", "/v1/Projects",
			"/v1/holiday", "/v1/projects/1/tasks", "/v1/project-day"} {
			c.Fail(t, http.MethodGet, p, nil, http.StatusNotFound, "not_found")
		}

		b := newBodies(c)
		anon := &testenv.Client{Srv: srv, Slug: c.Slug, Token: "not-a-token"}
		for _, r := range registry.All() {
			path := r.Path()
			t.Run(r.Name, func(t *testing.T) {
				deprecation := func(what string, hdr http.Header) {
					t.Helper()
					if dep := hdr.Get("Deprecation"); r.Deprecated != (dep != "") {
						t.Errorf("%s: Deprecation header %q", what, dep)
					}
				}
				status, hdr, raw := c.Send(t, http.MethodGet, path, nil)
				var arr []M
				if status != http.StatusOK || json.Unmarshal(raw, &arr) != nil || arr == nil {
					t.Fatalf("GET %s: %d %q, want 200 with a JSON array", path, status, raw)
				}
				deprecation("GET "+path, hdr)

				if r.ReadOnly {
					for _, req := range []struct {
						c            *testenv.Client
						method, path string
						status       int
						code         string
					}{
						{c, http.MethodPost, path, http.StatusMethodNotAllowed, "method_not_allowed"},
						{c, http.MethodPatch, path + "/1", http.StatusMethodNotAllowed, "method_not_allowed"},
						{c, http.MethodPut, path + "/1", http.StatusMethodNotAllowed, "method_not_allowed"},
						{c, http.MethodDelete, path + "/1", http.StatusMethodNotAllowed, "method_not_allowed"},
						{c, http.MethodGet, path + "/1", http.StatusNotFound, "not_found"},
						// Errors carry the Deprecation header too: 400,
						// 401 and 404 as well as 405.
						{c, http.MethodGet, path + "?limit=-1", http.StatusBadRequest, "invalid_query"},
						{anon, http.MethodGet, path, http.StatusUnauthorized, ""},
						{anon, http.MethodGet, path + "/1", http.StatusUnauthorized, ""},
						{c, http.MethodGet, path + "/1/x", http.StatusNotFound, "not_found"},
						{c, http.MethodGet, path + "/abc", http.StatusNotFound, "not_found"},
					} {
						what := req.method + " " + req.path
						var body any
						if req.method != http.MethodGet {
							body = `{"day":"2026-01-05"}`
						}
						status, hdr, raw := req.c.Send(t, req.method, req.path, body)
						testenv.WantError(t, what, status, raw, req.status, req.code)
						if allow := hdr.Get("Allow"); status == http.StatusMethodNotAllowed &&
							(!strings.Contains(allow, "GET") || strings.Contains(allow, req.method)) {
							t.Errorf("%s: Allow %q", what, allow)
						}
						deprecation(fmt.Sprintf("%s (%d)", what, status), hdr)
					}
					if n := len(c.List(t, path)); n != 0 {
						t.Errorf("a refused write left %d records", n)
					}
					return
				}

				status, hdr, raw = c.Send(t, http.MethodPost, path, b.body(t, r, M{"label": "first", "n": 1}))
				if status != http.StatusCreated {
					t.Fatalf("POST %s: %d %s", path, status, raw)
				}
				var rec M
				if err := json.Unmarshal(raw, &rec); err != nil {
					t.Fatalf("POST %s: %q", path, raw)
				}
				id := testenv.ID(t, rec)
				recPath := fmt.Sprintf("%s/%d", path, id)
				checkStamps(t, rec)
				if rec["label"] != "first" || rec["n"] != 1.0 {
					t.Errorf("created %v", rec)
				}
				if loc := hdr.Get("Location"); loc != recPath {
					t.Errorf("Location %q", loc)
				}
				if got := c.Get(t, r.Name, id); !reflect.DeepEqual(got, rec) {
					t.Errorf("GET after POST:\n got %v\nwant %v", got, rec)
				}
				if !containsID(c.List(t, path), id) {
					t.Errorf("list lacks the new record %d", id)
				}

				patched := c.Object(t, http.MethodPatch, recPath, M{"label": "second", "extra": true}, http.StatusOK)
				if testenv.ID(t, patched) != id || patched["label"] != "second" || patched["extra"] != true || patched["n"] != 1.0 ||
					patched["createdAt"] != rec["createdAt"] {
					t.Errorf("PATCH: %v (was %v)", patched, rec)
				}
				checkStamps(t, patched)
				if patched["updatedAt"].(string) < rec["updatedAt"].(string) {
					t.Errorf("updatedAt went back: %v → %v", rec["updatedAt"], patched["updatedAt"])
				}
				if got := c.Get(t, r.Name, id); !reflect.DeepEqual(got, patched) {
					t.Errorf("GET after PATCH:\n got %v\nwant %v", got, patched)
				}

				put := c.Object(t, http.MethodPut, recPath, M{"label": "third"}, http.StatusOK)
				if testenv.ID(t, put) != id || put["label"] != "third" || put["extra"] != true || put["createdAt"] != rec["createdAt"] {
					t.Errorf("PUT (same as PATCH): %v", put)
				}
				checkStamps(t, put)
				if got := c.Get(t, r.Name, id); !reflect.DeepEqual(got, put) {
					t.Errorf("GET after PUT:\n got %v\nwant %v", got, put)
				}

				deleted := c.Object(t, http.MethodDelete, recPath, nil, http.StatusOK)
				if archivesOnDelete(r) {
					if deleted["status"] != 0.0 || deleted["label"] != "third" || testenv.ID(t, deleted) != id {
						t.Errorf("DELETE of a record that is archived: %v", deleted)
					}
					if got := c.Get(t, r.Name, id); !reflect.DeepEqual(got, deleted) {
						t.Errorf("archived record: %v, want %v", got, deleted)
					}
					return
				}
				if !reflect.DeepEqual(deleted, put) {
					t.Errorf("DELETE answered\n %v\nwant the deleted record\n %v", deleted, put)
				}
				for _, m := range []string{http.MethodGet, http.MethodPatch, http.MethodPut, http.MethodDelete} {
					c.Fail(t, m, recPath, M{"label": "again"}, http.StatusNotFound, "not_found")
				}
				if containsID(c.List(t, path), id) {
					t.Errorf("list still holds deleted record %d", id)
				}
			})
		}
	})
}
