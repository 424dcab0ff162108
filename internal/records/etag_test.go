package records_test

// Entity tags and conditional requests on every resource (docs/api.md
// "Safe writes").

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"planwerk/internal/testenv"
)

// send makes a request with extra headers and returns status, headers
// and body.
func send(t *testing.T, c *testenv.Client, method, path string, body any, header ...string) (int, http.Header, []byte) {
	t.Helper()
	req := c.Request(t, method, path, body)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return testenv.Do(t, req)
}

// strongTag checks an answer carries a strong entity tag and returns it.
func strongTag(t *testing.T, what string, h http.Header) string {
	t.Helper()
	tag := h.Get("ETag")
	if !strings.HasPrefix(tag, `"`) || !strings.HasSuffix(tag, `"`) || len(tag) < 10 {
		t.Fatalf("%s: ETag %q is not a strong entity tag", what, tag)
	}
	return tag
}

// TestETagsEveryResource: every resource's single-record answers carry
// a strong ETag that a later read repeats while the record is unchanged;
// If-None-Match answers 304; If-Match refuses stale writes with 412 and
// lets current ones through.
func TestETagsEveryResource(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		admin := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		bodies := newBodies(admin)
		for _, r := range srv.Service.Registry.All() {
			if r.ReadOnly {
				continue
			}
			t.Run(r.Name, func(t *testing.T) {
				body := bodies.body(t, r, M{"label": "etag " + r.Name})
				status, h, raw := send(t, admin, http.MethodPost, r.Path(), body)
				if status != http.StatusCreated {
					t.Fatalf("POST: %d %s", status, raw)
				}
				created := strongTag(t, "POST", h)
				id := testenv.ID(t, testenv.Decode(t, raw))
				path := fmt.Sprintf("%s/%d", r.Path(), id)

				status, h, _ = send(t, admin, http.MethodGet, path, nil)
				if status != http.StatusOK || strongTag(t, "GET", h) != created {
					t.Fatalf("GET: %d, ETag %q, want the POST's %q", status, h.Get("ETag"), created)
				}
				for _, inm := range []string{created, "W/" + created, `"other", ` + created, "*"} {
					status, h, raw := send(t, admin, http.MethodGet, path, nil, "If-None-Match", inm)
					if status != http.StatusNotModified || len(raw) != 0 || h.Get("ETag") != created {
						t.Errorf("GET If-None-Match %s: %d, %d bytes, ETag %q", inm, status, len(raw), h.Get("ETag"))
					}
				}
				if status, _, _ := send(t, admin, http.MethodGet, path, nil, "If-None-Match", `"other"`); status != http.StatusOK {
					t.Errorf("GET If-None-Match another tag: %d", status)
				}

				change := M{}
				if !r.DeclaredOnly {
					change["label"] = "changed " + r.Name
				}
				for _, im := range []string{`"stale"`, "W/" + created, "garbage"} {
					status, _, raw := send(t, admin, http.MethodPatch, path, change, "If-Match", im)
					testenv.WantError(t, "PATCH If-Match "+im, status, raw, http.StatusPreconditionFailed, "precondition_failed")
				}
				if _, h, _ := send(t, admin, http.MethodGet, path, nil); h.Get("ETag") != created {
					t.Fatal("a refused PATCH changed the record")
				}
				status, h, raw = send(t, admin, http.MethodPatch, path, change, "If-Match", `"other", `+created)
				if status != http.StatusOK {
					t.Fatalf("PATCH with the current tag: %d %s", status, raw)
				}
				changed := strongTag(t, "PATCH", h)
				if !r.DeclaredOnly && changed == created {
					t.Errorf("the ETag did not change with the record")
				}
				if _, h, _ := send(t, admin, http.MethodGet, path, nil); h.Get("ETag") != changed {
					t.Errorf("GET after PATCH: ETag %q, want the PATCH's %q", h.Get("ETag"), changed)
				}
				if changed != created {
					status, _, raw = send(t, admin, http.MethodPut, path, change, "If-Match", created)
					testenv.WantError(t, "PUT with the old tag", status, raw, http.StatusPreconditionFailed, "precondition_failed")
					status, _, raw = send(t, admin, http.MethodDelete, path, nil, "If-Match", created)
					testenv.WantError(t, "DELETE with the old tag", status, raw, http.StatusPreconditionFailed, "precondition_failed")
				}
				status, h, raw = send(t, admin, http.MethodDelete, path, nil, "If-Match", "*")
				if status != http.StatusOK || strongTag(t, "DELETE", h) == "" {
					t.Fatalf("DELETE If-Match *: %d %s", status, raw)
				}
				// "*" matches any existing record, none that is gone (a
				// deleted skill assignment stays, archived).
				gone, _, _ := send(t, admin, http.MethodGet, path, nil)
				if status, _, _ := send(t, admin, http.MethodPatch, path, change, "If-Match", "*"); (gone == http.StatusNotFound) != (status == http.StatusNotFound) {
					t.Errorf("PATCH If-Match * after DELETE: %d, while GET answers %d", status, gone)
				}
			})
		}
	})
}

// TestIfMatchRace: of 16 PATCHes sent at once with the same tag, exactly
// one wins; the others get 412.
func TestIfMatchRace(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		admin := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		project := admin.Create(t, "projects", M{"name": "Apollo"})
		path := fmt.Sprintf("/v1/projects/%d", testenv.ID(t, project))
		_, h, _ := send(t, admin, http.MethodGet, path, nil)
		tag := strongTag(t, "GET", h)
		var (
			wg     sync.WaitGroup
			mu     sync.Mutex
			counts = map[int]int{}
		)
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				status, _, _ := send(t, admin, http.MethodPatch, path, M{"name": fmt.Sprintf("writer %d", i)}, "If-Match", tag)
				mu.Lock()
				counts[status]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		if counts[http.StatusOK] != 1 || counts[http.StatusPreconditionFailed] != 15 {
			t.Errorf("16 PATCHes with one tag: %v, want one 200 and fifteen 412", counts)
		}
	})
}
