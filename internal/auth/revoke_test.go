package auth_test

// Token revocation (RFC 7009; docs/api.md "Authentication").

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// revokeForm is the form of a revocation request.
func revokeForm(token, hint string) url.Values {
	v := url.Values{"token": {token}, "client_id": {"app"}, "client_secret": {"secret"}}
	if hint != "" {
		v.Set("token_type_hint", hint)
	}
	return v
}

// revoke posts a revocation for the tenant and returns the answer.
func revoke(t *testing.T, srv *testenv.Server, slug string, form url.Values) (int, http.Header, testenv.M) {
	t.Helper()
	req := srv.TokenRequest(t, slug, form)
	req.URL.Path = "/oauth2/revoke"
	return testenv.Answer(t, req)
}

// signIn returns an access and a refresh token of the tenant's admin.
func signIn(t *testing.T, srv *testenv.Server, tn testenv.Tenant) (access, refresh string) {
	t.Helper()
	status, _, body := srv.Grant(t, tn.Slug, adminForm(tn))
	if status != http.StatusOK {
		t.Fatalf("sign in: %d %v", status, body)
	}
	return body["access_token"].(string), body["refresh_token"].(string)
}

// works reports whether an access token is accepted.
func works(t *testing.T, srv *testenv.Server, slug, token string) bool {
	t.Helper()
	status, _, _ := (&testenv.Client{Srv: srv, Slug: slug, Token: token}).Send(t, http.MethodGet, "/v1/users/me", nil)
	if status != http.StatusOK && status != http.StatusUnauthorized {
		t.Fatalf("GET /v1/users/me: %d", status)
	}
	return status == http.StatusOK
}

// TestRevoke: an access token ends alone; a refresh token ends with its
// whole family; unknown tokens and other tenants' tokens answer 200 and
// change nothing; an API client's credentials are checked.
func TestRevoke(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")

		a1, _ := signIn(t, srv, tn)
		a2, r2 := signIn(t, srv, tn)
		for _, hint := range []string{"", "refresh_token"} { // a wrong hint only slows the lookup
			a, _ := signIn(t, srv, tn)
			status, hdr, body := revoke(t, srv, tn.Slug, revokeForm(a, hint))
			if status != http.StatusOK || body != nil || hdr.Get("Cache-Control") != "no-store" {
				t.Fatalf("revoke access token (hint %q): %d %v", hint, status, body)
			}
			if works(t, srv, tn.Slug, a) {
				t.Errorf("revoked access token (hint %q) still works", hint)
			}
		}
		if !works(t, srv, tn.Slug, a1) || !works(t, srv, tn.Slug, a2) {
			t.Fatal("revoking one access token ended others")
		}

		// A refresh token: its family ends, access tokens included, and
		// the refresh token no longer renews.
		if status, _, _ := revoke(t, srv, tn.Slug, revokeForm(r2, "refresh_token")); status != http.StatusOK {
			t.Fatalf("revoke refresh token: %d", status)
		}
		if works(t, srv, tn.Slug, a2) {
			t.Error("the access token of a revoked refresh token's login still works")
		}
		if status, _, body := srv.Grant(t, tn.Slug, testenv.RefreshForm(r2)); status != http.StatusBadRequest || body["error"] != "invalid_grant" {
			t.Errorf("refresh with a revoked token: %d %v", status, body)
		}
		if !works(t, srv, tn.Slug, a1) {
			t.Error("another login ended too")
		}

		// Unknown and other tenants' tokens: 200, nothing happens.
		beta := srv.CreateTenant(t, "beta")
		ba, _ := signIn(t, srv, beta)
		for what, form := range map[string]url.Values{
			"unknown token":         revokeForm("pwa_nothing", ""),
			"another tenant's":      revokeForm(ba, ""),
			"another tenant's hint": revokeForm(ba, "access_token"),
		} {
			if status, _, body := revoke(t, srv, tn.Slug, form); status != http.StatusOK {
				t.Errorf("%s: %d %v", what, status, body)
			}
		}
		if !works(t, srv, beta.Slug, ba) {
			t.Error("acme revoked beta's token")
		}

		// Malformed requests.
		admin := srv.SignIn(t, tn)
		client := admin.APIClient(t, "sync", admin.UserID, "read write")
		wrongSecret := revokeForm(a1, "")
		wrongSecret.Set("client_id", client["clientId"].(string))
		wrongSecret.Set("client_secret", "pws_wrong")
		for _, c := range []struct {
			name   string
			form   url.Values
			status int
			err    string
		}{
			{"no token", url.Values{"client_id": {"app"}, "client_secret": {"secret"}}, http.StatusBadRequest, "invalid_request"},
			{"no client", url.Values{"token": {a1}}, http.StatusBadRequest, "invalid_request"},
			{"wrong API client secret", wrongSecret, http.StatusUnauthorized, "invalid_client"},
		} {
			if status, _, body := revoke(t, srv, tn.Slug, c.form); status != c.status || body["error"] != c.err {
				t.Errorf("%s: %d %v, want %d %s", c.name, status, body, c.status, c.err)
			}
		}
		if status, _, body := revoke(t, srv, "", revokeForm(a1, "")); status != http.StatusBadRequest || body["code"] != "tenant_required" {
			t.Errorf("no tenant: %d %v", status, body)
		}
		if !works(t, srv, tn.Slug, a1) {
			t.Error("a refused revocation revoked")
		}
		// An API client revokes its own token with its credentials.
		ct := admin.ClientSignIn(t, client)
		own := revokeForm(ct.Token, "access_token")
		own.Set("client_id", client["clientId"].(string))
		own.Set("client_secret", client["clientSecret"].(string))
		if status, _, _ := revoke(t, srv, tn.Slug, own); status != http.StatusOK || works(t, srv, tn.Slug, ct.Token) {
			t.Errorf("client revoking its token: %d", status)
		}
	})
}

// TestRevokeOnAnotherInstance: a revocation on one instance reaches
// another within its token cache's 2 seconds, for a revoked token and for
// a deleted API client's tokens.
func TestRevokeOnAnotherInstance(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		one := testenv.Start(t, b)
		two := testenv.Start(t, b, func(c *config.Config) { c.Database = one.Config.Database })
		tn := one.CreateTenant(t, "acme")
		admin := one.SignIn(t, tn)
		client := admin.APIClient(t, "sync", admin.UserID, "read")
		ct := admin.ClientSignIn(t, client)
		access, _ := signIn(t, one, tn)

		// Both tokens are now in the second instance's cache.
		for _, tok := range []string{ct.Token, access} {
			if !works(t, two, tn.Slug, tok) {
				t.Fatal("token refused by the second instance")
			}
		}
		start := time.Now()
		admin.Object(t, http.MethodDelete, "/v1/api-clients/"+strconv.FormatInt(testenv.ID(t, client), 10), nil, http.StatusOK)
		if status, _, _ := revoke(t, one, tn.Slug, revokeForm(access, "")); status != http.StatusOK {
			t.Fatal("revoke")
		}
		// The first instance forgets at once.
		if works(t, one, tn.Slug, ct.Token) || works(t, one, tn.Slug, access) {
			t.Error("the revoking instance still accepts the tokens")
		}
		// The second within the cache's lifetime (2 s), measured from
		// before the revocation; the bound has a second of slack for a
		// loaded machine, the cache itself is exact.
		for _, tok := range []string{ct.Token, access} {
			for works(t, two, tn.Slug, tok) {
				if time.Since(start) > 3*time.Second {
					t.Fatalf("the second instance still accepts a revoked token after %s", time.Since(start))
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		t.Logf("revoked on the second instance after %s", time.Since(start).Round(time.Millisecond))
	})
}
