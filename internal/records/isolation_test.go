package records_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"planwerk/internal/resource"
	"planwerk/internal/testenv"
)

// TestTenantIsolationAllResources: a record of one tenant is invisible to
// every other tenant, for every resource.
func TestTenantIsolationAllResources(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		ta := srv.CreateTenant(t, "alpha")
		tb := srv.CreateTenant(t, "beta")
		a, bc := srv.SignIn(t, ta), srv.SignIn(t, tb)
		fx := newBodies(a)

		type made struct {
			res *resource.Resource
			rec M
		}
		var recs []made
		for _, r := range registry.All() {
			var rec M
			if r.ReadOnly {
				rec = fx.readOnlyRecord(t, r, "secret of A")
			} else {
				rec = a.Create(t, r.Name, fx.body(t, r, M{"label": "secret of A", "amount": 7}))
			}
			recs = append(recs, made{r, rec})
		}
		for _, m := range recs {
			r, rec := m.res, m.rec
			t.Run(r.Name, func(t *testing.T) {
				id := testenv.ID(t, rec)
				path := fmt.Sprintf("%s/%d", r.Path(), id)
				// A sees it.
				if got := a.Get(t, r.Name, id); !reflect.DeepEqual(got, rec) {
					t.Fatalf("A's own GET: %v, want %v", got, rec)
				}
				// B does not: not by id, not in lists, not by criteria.
				status, _, raw := bc.Send(t, http.MethodGet, path, nil)
				testenv.WantError(t, "B GET "+path, status, raw, http.StatusNotFound, "not_found")
				if bytes.Contains(raw, []byte("secret")) {
					t.Errorf("404 leaks data: %s", raw)
				}
				writeStatus, writeCode := http.StatusNotFound, "not_found"
				if r.ReadOnly {
					writeStatus, writeCode = http.StatusMethodNotAllowed, "method_not_allowed"
				}
				for _, method := range []string{http.MethodPatch, http.MethodPut, http.MethodDelete} {
					status, _, raw := bc.Send(t, method, path, M{"label": "changed by B"})
					testenv.WantError(t, "B "+method+" "+path, status, raw, writeStatus, writeCode)
					if bytes.Contains(raw, []byte("secret")) {
						t.Errorf("%s answer leaks data: %s", method, raw)
					}
				}
				for _, q := range []string{
					"", "?where=" + url.QueryEscape(fmt.Sprintf(`{"id":%d}`, id)), fmt.Sprintf("?id=%d", id),
					"?where=" + url.QueryEscape(`{"createdAt":{">=":"2000-01-01"}}`), "?limit=50000",
				} {
					list := bc.List(t, r.Path()+q)
					if containsID(list, id) {
						t.Errorf("B's list %s holds A's record", q)
					}
					for _, m := range list {
						if m["label"] == "secret of A" {
							t.Errorf("B's list %s holds A's data: %v", q, m)
						}
					}
					if q != "" && !strings.Contains(q, "createdAt") && q != "?limit=50000" && len(list) != 0 {
						t.Errorf("B's list %s = %v, want []", q, list)
					}
				}
				if !r.DeclaredOnly {
					if list := bc.List(t, r.Path()+"?label="+url.QueryEscape("secret of A")); len(list) != 0 {
						t.Errorf("B finds A's record by attribute: %v", list)
					}
				}
				// A's record is unchanged.
				if got := a.Get(t, r.Name, id); !reflect.DeepEqual(got, rec) {
					t.Errorf("A's record after B's attempts: %v, want %v", got, rec)
				}
				if !containsID(a.List(t, r.Path()), id) {
					t.Errorf("A's list lacks its record")
				}
			})
		}
	})
}
