// Black-box tests of the rules of users over HTTP on both database
// engines.
package users_test

import (
	"fmt"
	"net/http"
	"testing"

	"planwerk/internal/testenv"
)

// TestFirstUserStaysAdmin: the tenant's first user cannot be deleted, and
// deleting users never makes someone else an admin.
func TestFirstUserStaysAdmin(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		owner := srv.SignIn(t, tn)
		// signIn signs a user of the tenant in.
		signIn := func(email, password string) *testenv.Client {
			return &testenv.Client{Srv: srv, Slug: tn.Slug, Token: srv.Token(t, tn.Slug, email, password)}
		}
		owner.Create(t, "users", testenv.M{"email": "plain@acme.test", "password": "plain-password"})
		owner.Create(t, "users", testenv.M{"email": "second@acme.test", "password": "second-password", "isAdmin": true})
		first := fmt.Sprintf("/v1/users/%d", tn.AdminID)
		signIn("second@acme.test", "second-password").Fail(t, http.MethodDelete, first, nil, http.StatusConflict, "conflict")
		// The plain user is still no admin.
		signIn("plain@acme.test", "plain-password").Fail(t, http.MethodPost, "/v1/projects", testenv.M{}, http.StatusForbidden, "forbidden")
		// The first user stays an admin even with isAdmin false.
		owner.Object(t, http.MethodPatch, first, testenv.M{"isAdmin": false}, http.StatusOK)
		srv.SignIn(t, tn).Create(t, "projects", testenv.M{})
	})
}
