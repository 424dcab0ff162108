package users_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"planwerk/internal/testenv"
)

// noSecrets checks that a user answer carries no password in any form.
func noSecrets(t *testing.T, what string, m testenv.M) {
	t.Helper()
	for _, k := range []string{"password", "passwordHash", "password_hash"} {
		if _, ok := m[k]; ok {
			t.Errorf("%s leaks %q: %v", what, k, m)
		}
	}
}

// TestUserAttributes: a user's e-mail address is a bare address, unique in
// the tenant ignoring case; the password is any non-empty string, is
// written only and never leaves the service; isAdmin is a boolean, false
// unless set; admins cannot delete themselves.
func TestUserAttributes(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		c := srv.SignIn(t, tn)
		users := func() int { return len(c.List(t, "/v1/users")) }
		userPath := func(id int64) string { return fmt.Sprintf("/v1/users/%d", id) }

		t.Run("refused values", func(t *testing.T) {
			n := users()
			for _, tc := range []struct {
				name  string
				body  testenv.M
				field string
			}{
				{"isAdmin text", testenv.M{"isAdmin": "yes"}, "isAdmin"},
				{"email no address", testenv.M{"email": "not an address"}, "email"},
				{"email with name", testenv.M{"email": "Someone <someone@acme.test>"}, "email"},
				{"email number", testenv.M{"email": 5}, "email"},
				{"password empty", testenv.M{"email": "short@acme.test", "password": ""}, "password"},
				{"password number", testenv.M{"email": "num@acme.test", "password": 12345678}, "password"},
				{"password null", testenv.M{"email": "null@acme.test", "password": nil}, "password"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					c.Fail(t, http.MethodPost, "/v1/users", tc.body, http.StatusBadRequest, "invalid", tc.field)
				})
			}
			if got := users(); got != n {
				t.Errorf("users after refused writes: %d, want %d", got, n)
			}
		})

		u := c.Create(t, "users", testenv.M{"email": "Person@acme.test", "password": "person-password", "isAdmin": false, "phone": "123"})
		id := testenv.ID(t, u)

		t.Run("passwords never leave the service", func(t *testing.T) {
			if u["email"] != "Person@acme.test" || u["isAdmin"] != false || u["phone"] != "123" {
				t.Errorf("created user %v", u)
			}
			noSecrets(t, "POST", u)
			noSecrets(t, "GET", c.Get(t, "users", id))
			for _, m := range c.List(t, "/v1/users") {
				noSecrets(t, "list", m)
			}
			for _, m := range c.List(t, "/v1/users?where="+url.QueryEscape(`{"password":{"!=":null}}`)) {
				noSecrets(t, "list where password", m)
			}
			noSecrets(t, "PATCH", c.Object(t, http.MethodPatch, userPath(id), testenv.M{"password": "changed-password"}, http.StatusOK))
			// The new password works for signing in, in any case of the e-mail address.
			pc := srv.SignIn(t, testenv.Tenant{Slug: tn.Slug, AdminEmail: "person@ACME.test", Password: "changed-password"})
			me := pc.Object(t, http.MethodGet, "/v1/users/me", nil, http.StatusOK)
			if testenv.Num(me["id"]) != id {
				t.Errorf("signed in as %v, want user %d", me, id)
			}
			noSecrets(t, "users/me", me)
		})

		t.Run("a password only has to be non-empty", func(t *testing.T) {
			tiny := c.Create(t, "users", testenv.M{"email": "tiny@acme.test", "password": "x"})
			noSecrets(t, "POST short password", tiny)
			tc := srv.SignIn(t, testenv.Tenant{Slug: tn.Slug, AdminEmail: "tiny@acme.test", Password: "x"})
			if tme := tc.Object(t, http.MethodGet, "/v1/users/me", nil, http.StatusOK); testenv.Num(tme["id"]) != testenv.ID(t, tiny) {
				t.Errorf("signed in with a one-character password as %v, want user %d", tme, testenv.ID(t, tiny))
			}
			c.Object(t, http.MethodPatch, userPath(testenv.ID(t, tiny)), testenv.M{"password": "é"}, http.StatusOK)
			srv.SignIn(t, testenv.Tenant{Slug: tn.Slug, AdminEmail: "tiny@acme.test", Password: "é"})
			c.Fail(t, http.MethodPatch, userPath(testenv.ID(t, tiny)), testenv.M{"password": ""}, http.StatusBadRequest, "invalid", "password")
			c.Object(t, http.MethodDelete, userPath(testenv.ID(t, tiny)), nil, http.StatusOK)
		})

		t.Run("e-mail addresses are unique ignoring case", func(t *testing.T) {
			n := users()
			for _, email := range []string{"person@acme.test", "PERSON@ACME.TEST", strings.ToUpper(tn.AdminEmail)} {
				c.Fail(t, http.MethodPost, "/v1/users", testenv.M{"email": email, "password": "another-password"}, http.StatusConflict, "conflict", "email")
			}
			second := c.Create(t, "users", testenv.M{"email": "second@acme.test"})
			if second["isAdmin"] != false {
				t.Errorf("user created without isAdmin: %v, want isAdmin false", second)
			}
			c.Fail(t, http.MethodPatch, userPath(testenv.ID(t, second)), testenv.M{"email": "PERSON@acme.test"}, http.StatusConflict, "conflict")
			if got := c.Get(t, "users", testenv.ID(t, second)); got["email"] != "second@acme.test" {
				t.Errorf("refused e-mail change applied: %v", got)
			}
			if got := users(); got != n+1 {
				t.Errorf("users: %d, want %d", got, n+1)
			}
			// Admins cannot delete themselves; other users can be deleted.
			c.Fail(t, http.MethodDelete, userPath(tn.AdminID), nil, http.StatusConflict, "conflict")
			noSecrets(t, "DELETE", c.Object(t, http.MethodDelete, userPath(testenv.ID(t, second)), nil, http.StatusOK))
		})
	})
}
