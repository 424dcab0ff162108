package auth_test

import (
	"net/http"
	"net/url"
	"testing"

	"planwerk/internal/testenv"
)

// scoped is form with the scope parameter set; absent is not sent at all.
func scoped(form url.Values, scope string, absent bool) url.Values {
	if !absent {
		form.Set("scope", scope)
	}
	return form
}

// writeWith tries a write with token: 201, or 403 insufficient_scope.
func writeWith(t *testing.T, srv *testenv.Server, slug, token string) (int, string) {
	t.Helper()
	status, _, body := (&testenv.Client{Srv: srv, Slug: slug, Token: token}).Call(t, http.MethodPost, "/v1/projects", testenv.M{"name": "Apollo"})
	code, _ := body["code"].(string)
	return status, code
}

// wantToken checks a token answer: 200 with the scope, and a write that
// the scope allows (201) or refuses (403 insufficient_scope).
func wantToken(t *testing.T, srv *testenv.Server, slug, what string, status int, body testenv.M, scope string) {
	t.Helper()
	if status != http.StatusOK {
		t.Fatalf("%s: %d %v, want 200", what, status, body)
	}
	if body["scope"] != scope {
		t.Errorf("%s: scope %v, want %q", what, body["scope"], scope)
	}
	token, _ := body["access_token"].(string)
	wantStatus, wantCode := http.StatusCreated, ""
	if scope == "read" {
		wantStatus, wantCode = http.StatusForbidden, "insufficient_scope"
	}
	if got, code := writeWith(t, srv, slug, token); got != wantStatus || code != wantCode {
		t.Errorf("%s: a write with the token: %d %q, want %d %q", what, got, code, wantStatus, wantCode)
	}
}

// TestGrantScopes: each grant takes an optional scope within what it may
// give ("read", or "read write" in any order; "write" includes reading),
// refuses an unknown scope token with 400 invalid_scope, and every token
// answer names the access token's scope.
func TestGrantScopes(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		admin := srv.SignIn(t, tn)
		rw := admin.APIClient(t, "writer", admin.UserID, "read write")
		ro := admin.APIClient(t, "reader", admin.UserID, "read")
		forms := map[string]func() url.Values{
			"password": func() url.Values { return adminForm(tn) },
			"refresh_token": func() url.Values {
				status, _, body := srv.Grant(t, tn.Slug, adminForm(tn))
				refresh, _ := body["refresh_token"].(string)
				if status != http.StatusOK || refresh == "" {
					t.Fatalf("login for a refresh token: %d %v", status, body)
				}
				return testenv.RefreshForm(refresh)
			},
			"client_credentials": func() url.Values {
				return testenv.ClientForm(rw["clientId"].(string), rw["clientSecret"].(string))
			},
			"client_credentials of a read client": func() url.Values {
				return testenv.ClientForm(ro["clientId"].(string), ro["clientSecret"].(string))
			},
		}
		cases := []struct {
			grant  string
			scope  string
			absent bool   // no scope parameter
			err    string // the 400's error; "" for a token
			want   string // the answer's scope
		}{
			{grant: "password", absent: true, want: "read write"},
			{grant: "password", scope: "", want: "read write"},
			{grant: "password", scope: "read", want: "read"},
			{grant: "password", scope: "read write", want: "read write"},
			{grant: "password", scope: "write read", want: "read write"},
			{grant: "password", scope: "write", want: "read write"},
			{grant: "password", scope: "read read", want: "read"},
			{grant: "password", scope: "admin", err: "invalid_scope"},
			{grant: "password", scope: "read admin", err: "invalid_scope"},
			{grant: "password", scope: "READ", err: "invalid_scope"},
			{grant: "password", scope: "read,write", err: "invalid_scope"},
			{grant: "password", scope: " ", err: "invalid_scope"},
			{grant: "refresh_token", absent: true, want: "read write"},
			{grant: "refresh_token", scope: "read", want: "read"},
			{grant: "refresh_token", scope: "read write", want: "read write"},
			{grant: "refresh_token", scope: "write read", want: "read write"},
			{grant: "refresh_token", scope: "openid", err: "invalid_scope"},
			{grant: "client_credentials", absent: true, want: "read write"},
			{grant: "client_credentials", scope: "read", want: "read"},
			{grant: "client_credentials", scope: "read write", want: "read write"},
			{grant: "client_credentials", scope: "admin", err: "invalid_scope"},
			{grant: "client_credentials of a read client", absent: true, want: "read"},
			{grant: "client_credentials of a read client", scope: "read", want: "read"},
			{grant: "client_credentials of a read client", scope: "read write", err: "invalid_scope"},
		}
		for _, c := range cases {
			name := c.grant + " scope=" + c.scope
			if c.absent {
				name = c.grant + " without scope"
			}
			t.Run(name, func(t *testing.T) {
				status, _, body := srv.Grant(t, tn.Slug, scoped(forms[c.grant](), c.scope, c.absent))
				if c.err == "" {
					wantToken(t, srv, tn.Slug, name, status, body, c.want)
					return
				}
				if status != http.StatusBadRequest || body["error"] != c.err || body["code"] != c.err {
					t.Fatalf("%d %v, want 400 %s", status, body, c.err)
				}
				if d, _ := body["error_description"].(string); d == "" || body["message"] != d {
					t.Errorf("no description: %v", body)
				}
			})
		}
	})
}

// TestRefreshScopeNarrowing: the refresh token keeps the scope of its
// login. A refresh may narrow the new access token; the new refresh
// token keeps the login's scope (RFC 6749 §6), so a later refresh may ask
// for it again. A scope wider than the login's, or an unknown one, is
// refused with 400 invalid_scope and leaves the refresh token unspent.
func TestRefreshScopeNarrowing(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		refresh := func(what, token, scope string, absent bool, want string) string {
			t.Helper()
			status, _, body := srv.Grant(t, tn.Slug, scoped(testenv.RefreshForm(token), scope, absent))
			wantToken(t, srv, tn.Slug, what, status, body, want)
			next, _ := body["refresh_token"].(string)
			if next == "" || next == token {
				t.Fatalf("%s: no new refresh token: %v", what, body)
			}
			return next
		}
		refused := func(what, token, scope string) {
			t.Helper()
			status, _, body := srv.Grant(t, tn.Slug, scoped(testenv.RefreshForm(token), scope, false))
			if status != http.StatusBadRequest || body["error"] != "invalid_scope" {
				t.Errorf("%s: %d %v, want 400 invalid_scope", what, status, body)
			}
		}

		// A full login, narrowed on refresh, then full again.
		status, _, body := srv.Grant(t, tn.Slug, adminForm(tn))
		wantToken(t, srv, tn.Slug, "full login", status, body, "read write")
		full, _ := body["refresh_token"].(string)
		full = refresh("full family narrowed to read", full, "read", false, "read")
		full = refresh("full family after a narrowed refresh, no scope", full, "", true, "read write")
		refused("full family, unknown scope", full, "read delete")
		refresh("full family after a refused scope", full, "read write", false, "read write")

		// A read login: its refreshes stay read; a wider scope is refused
		// and spends nothing.
		status, _, body = srv.Grant(t, tn.Slug, scoped(adminForm(tn), "read", false))
		wantToken(t, srv, tn.Slug, "read login", status, body, "read")
		ro, _ := body["refresh_token"].(string)
		refused("read family asking for read write", ro, "read write")
		refused("read family asking for write", ro, "write")
		ro = refresh("read family after refused widenings, no scope", ro, "", true, "read")
		ro = refresh("read family asking for read", ro, "read", false, "read")
		refused("read family asking for read write again", ro, "write read")
		refresh("read family, last", ro, "", true, "read")
	})
}
