package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"planwerk/internal/auth"
	"planwerk/internal/testenv"
	"planwerk/internal/users"
)

func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		a := srv.CreateTenant(t, "alpha")
		bt := srv.CreateTenant(t, "beta")
		ctx := context.Background()
		// beta has a user with alpha's admin e-mail address and another password.
		hash, err := srv.Service.Hasher.Hash(ctx, "beta-side-password")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := users.NewTables(srv.Service.DB, auth.NewTables(srv.Service.DB)).CreateUser(ctx, srv.Service.DB, bt.ID, users.NewUser{Email: a.AdminEmail, PasswordHash: hash}); err != nil {
			t.Fatal(err)
		}
		// alpha's password does not open beta's account of the same e-mail.
		status, _, body := srv.Grant(t, bt.Slug, testenv.PasswordForm(a.AdminEmail, a.Password))
		if status != 400 || body["error"] != "invalid_grant" {
			t.Fatalf("alpha's password at beta: %d %v", status, body)
		}
		ca, cb := srv.SignIn(t, a), srv.SignIn(t, bt)
		meA := ca.Object(t, http.MethodGet, "/v1/users/me", nil, http.StatusOK)
		meB := cb.Object(t, http.MethodGet, "/v1/users/me", nil, http.StatusOK)
		if meA["email"] != a.AdminEmail || meB["email"] != bt.AdminEmail || meA["id"] == nil || meB["id"] == nil {
			t.Fatalf("me: %v / %v", meA, meB)
		}
		for _, c := range []struct{ slug, token string }{{bt.Slug, ca.Token}, {a.Slug, cb.Token}} {
			foreign := &testenv.Client{Srv: srv, Slug: c.slug, Token: c.token}
			if status, _, _ := foreign.Send(t, http.MethodGet, "/v1/users/me", nil); status != 401 {
				t.Errorf("token used in the other tenant: %d", status)
			}
		}
	})
}

func TestErrorsAndOperations(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		admin := srv.SignIn(t, tn)
		anon := &testenv.Client{Srv: srv} // names no tenant
		cases := []struct {
			name, method, path string
			client             *testenv.Client
			status             int
			code               string
		}{
			{"healthz", "GET", "/healthz", anon, 200, ""},
			{"readyz", "GET", "/readyz", anon, 200, ""},
			{"unknown path", "GET", "/nowhere", anon, 404, "not_found"},
			{"unknown /v1 path", "GET", "/v1/nothing-here", admin, 404, "not_found"},
			{"wrong method", "DELETE", "/v1/users", admin, 405, "method_not_allowed"},
			{"write to a read-only resource", "POST", "/v1/project-days", admin, 405, "method_not_allowed"},
			{"wrong method on healthz", "POST", "/healthz", anon, 405, "method_not_allowed"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				status, hdr, body := c.client.Call(t, c.method, c.path, nil)
				if status != c.status {
					t.Fatalf("status %d, want %d (%v)", status, c.status, body)
				}
				if c.code != "" && (body["code"] != c.code || body["message"] == "") {
					t.Errorf("body %v, want code %s", body, c.code)
				}
				if c.status == 405 && hdr.Get("Allow") == "" {
					t.Error("405 without Allow")
				}
				if hdr.Get("X-Request-Id") == "" {
					t.Error("no X-Request-Id")
				}
			})
		}
		// Bodies are capped.
		status, _, body := srv.Grant(t, tn.Slug, url.Values{"grant_type": {"password"}, "username": {strings.Repeat("a", 2<<20)}})
		if status != 413 {
			t.Errorf("2 MiB token request: %d %v", status, body)
		}
		// readyz says so when the database is gone.
		if err := srv.Service.DB.Close(); err != nil {
			t.Fatal(err)
		}
		if status, hdr, body := anon.Call(t, http.MethodGet, "/readyz", nil); status != 503 || body["code"] != "database_unavailable" ||
			hdr.Get("Retry-After") == "" || body["checks"].(map[string]any)["fileStore"] != "ok" {
			t.Errorf("readyz without database: %d %v", status, body)
		}
		if status, _, body := anon.Call(t, http.MethodGet, "/healthz", nil); status != 200 {
			t.Errorf("healthz without database: %d %v", status, body)
		}
		// A closed pool is the service's own failure, not the database's: a
		// generic 500, no SQL, no driver text.
		unknown := &testenv.Client{Srv: srv, Slug: "zzz-not-cached", Token: "x"}
		status, _, body = unknown.Call(t, http.MethodGet, "/v1/users/me", nil)
		if status != 500 || body["code"] != "internal_error" || body["message"] != "internal server error" {
			t.Errorf("database down: %d %v", status, body)
		}
	})
}
