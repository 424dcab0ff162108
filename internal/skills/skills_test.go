// Black-box tests of tags, skills and skill sets (docs/api.md "Skills";
// docs/decisions.md "Tags and skills") over HTTP on both database
// engines.
package skills_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"planwerk/internal/testenv"
)

func where(w string) string { return "where=" + url.QueryEscape(w) }

func sorted(ids ...int64) []int64 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

// absent makes sure c's tenant has no record res/id: a test's premise
// when it uses id as another tenant's record.
func absent(t *testing.T, c *testenv.Client, res string, id int64) {
	t.Helper()
	if status, _, _ := c.Send(t, http.MethodGet, fmt.Sprintf("/v1/%s/%d", res, id), nil); status != http.StatusNotFound {
		t.Fatalf("premise: %s %d exists in tenant %s (status %d)", res, id, c.Slug, status)
	}
}

// fixture is a tenant with records to tag.
type fixture struct {
	admin, member                                   *testenv.Client
	client, project, task, expenseCategory, expense int64
	tagCategory, skillSetCategory, skillSet         int64
	plainTag, skillA, skillB, skillC                int64
}

// twoTenants starts a server with the tenants acme and beta set up; beta's
// records come after padding, so its ids are none of acme's.
func twoTenants(t *testing.T, b testenv.Backend) (acme, beta *fixture) {
	t.Helper()
	srv := testenv.Start(t, b)
	acme = setUp(t, srv, srv.CreateTenant(t, "acme"), 0)
	beta = setUp(t, srv, srv.CreateTenant(t, "beta"), 80)
	return acme, beta
}

// setUp signs in tn's admin, creates a member and the records. pad
// records come first: SQLite numbers records per tenant, so a second
// tenant set up with padding has ids the first one does not use.
func setUp(t *testing.T, srv *testenv.Server, tn testenv.Tenant, pad int) *fixture {
	t.Helper()
	a := srv.SignIn(t, tn)
	for i := 0; i < pad; i++ {
		a.Create(t, "colors", testenv.M{"name": fmt.Sprint("padding ", i)})
	}
	f := &fixture{admin: a}
	f.member = a.Member(t, "member@"+tn.Slug+".test")
	f.client = testenv.ID(t, a.Create(t, "clients", testenv.M{"name": "Client"}))
	f.project = testenv.ID(t, a.Create(t, "projects", testenv.M{"name": "Project", "client": f.client}))
	f.task = testenv.ID(t, a.Create(t, "tasks", testenv.M{"name": "Task", "project": f.project}))
	f.expenseCategory = testenv.ID(t, a.Create(t, "expense-categories", testenv.M{"name": "Travel"}))
	f.expense = testenv.ID(t, a.Create(t, "expenses", testenv.M{"amount": 12}))
	f.tagCategory = testenv.ID(t, a.Create(t, "tag-categories", testenv.M{"name": "Tech"}))
	f.skillSetCategory = testenv.ID(t, a.Create(t, "skill-set-categories", testenv.M{"name": "Roles"}))
	f.skillSet = testenv.ID(t, a.Create(t, "skill-sets", testenv.M{"name": "Backend", "category": f.skillSetCategory}))
	f.plainTag = testenv.ID(t, a.Create(t, "tags", testenv.M{"name": "important"}))
	f.skillA = testenv.ID(t, a.Create(t, "tags", testenv.M{"name": "Go", "type": 1, "category": f.tagCategory}))
	f.skillB = testenv.ID(t, a.Create(t, "tags", testenv.M{"name": "SQL", "type": 1, "category": f.tagCategory}))
	f.skillC = testenv.ID(t, a.Create(t, "tags", testenv.M{"name": "English", "type": 2, "category": f.tagCategory}))
	return f
}
