// Black-box tests of the token endpoint and bearer tokens (docs/api.md
// "Authentication") over HTTP on both database engines, with the OAuth2
// library as the client where a real client would use one.
package auth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// tenantTransport names the tenant on every request, as a client of the
// neutral host must.
type tenantTransport struct{ slug string }

func (tt tenantTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("companyurl", tt.slug)
	return http.DefaultTransport.RoundTrip(r)
}

// oauthClient is the OAuth2 library's configuration for the server, with
// the client credentials sent in style, and a context whose HTTP client
// names the tenant.
func oauthClient(srv *testenv.Server, slug string, style oauth2.AuthStyle) (*oauth2.Config, context.Context) {
	cfg := &oauth2.Config{
		ClientID:     "test-app",
		ClientSecret: "any secret",
		Endpoint:     oauth2.Endpoint{TokenURL: srv.URL + "/oauth2/token", AuthStyle: style},
	}
	return cfg, context.WithValue(context.Background(), oauth2.HTTPClient, &http.Client{Transport: tenantTransport{slug: slug}})
}

// login signs tn's admin in with the library's password grant.
func login(t *testing.T, srv *testenv.Server, tn testenv.Tenant) *oauth2.Token {
	t.Helper()
	cfg, ctx := oauthClient(srv, tn.Slug, oauth2.AuthStyleInParams)
	tok, err := cfg.PasswordCredentialsToken(ctx, tn.AdminEmail, tn.Password)
	if err != nil {
		t.Fatalf("password grant: %v", err)
	}
	return tok
}

// me asks the tenant who the access token's user is.
func me(t *testing.T, srv *testenv.Server, slug, token string) (int, http.Header, testenv.M) {
	t.Helper()
	return (&testenv.Client{Srv: srv, Slug: slug, Token: token}).Call(t, http.MethodGet, "/v1/users/me", nil)
}

func adminForm(tn testenv.Tenant) url.Values { return testenv.PasswordForm(tn.AdminEmail, tn.Password) }

func TestPasswordGrantAndUsersMe(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, func(c *config.Config) { c.TokenTTL = 1234 * time.Second })
		tn := srv.CreateTenant(t, "acme")
		for _, style := range []oauth2.AuthStyle{oauth2.AuthStyleInParams, oauth2.AuthStyleInHeader} {
			cfg, ctx := oauthClient(srv, tn.Slug, style)
			tok, err := cfg.PasswordCredentialsToken(ctx, tn.AdminEmail, tn.Password)
			if err != nil {
				t.Fatalf("style %d: %v", style, err)
			}
			if tok.TokenType != "Bearer" || tok.AccessToken == "" || tok.RefreshToken == "" {
				t.Fatalf("token = %+v", tok)
			}
			if got := tok.ExpiresIn; got != 1234 {
				t.Errorf("expires_in = %d, want 1234 (--token-ttl)", got)
			}
			// The oauth2 client sends the bearer token; the tenant header comes from the transport.
			client := cfg.Client(ctx, tok)
			resp, err := client.Get(srv.URL + "/v1/users/me")
			if err != nil {
				t.Fatal(err)
			}
			var user map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&user); err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("users/me status %d: %v", resp.StatusCode, user)
			}
			if user["email"] != tn.AdminEmail || user["id"] != float64(tn.AdminID) || user["isAdmin"] != true {
				t.Errorf("users/me = %v", user)
			}
			for _, secret := range []string{"password", "passwordHash", "password_hash"} {
				if _, ok := user[secret]; ok {
					t.Errorf("users/me leaks %q", secret)
				}
			}
			for _, f := range []string{"createdAt", "updatedAt"} {
				if s, _ := user[f].(string); len(s) != len("2006-01-02T15:04:05.000Z") || !strings.HasSuffix(s, "Z") {
					t.Errorf("%s = %v, want YYYY-MM-DDTHH:mm:ss.sssZ", f, user[f])
				}
			}
		}
		// Raw response: headers and exact fields.
		status, hdr, body := srv.Grant(t, tn.Slug, adminForm(tn))
		if status != 200 || hdr.Get("Cache-Control") != "no-store" || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
			t.Fatalf("status %d, headers %v", status, hdr)
		}
		if body["token_type"] != "Bearer" || body["expires_in"] != float64(1234) {
			t.Errorf("body = %v", body)
		}
		// E-mail addresses match whatever their letter case.
		if status, _, body := srv.Grant(t, tn.Slug, testenv.PasswordForm(strings.ToUpper(tn.AdminEmail), tn.Password)); status != 200 {
			t.Errorf("upper-case e-mail: %d %v", status, body)
		}
	})
}

// TestLoginWithoutPassword: a user created without a password cannot sign
// in, and the answer is the same as for a wrong password.
func TestLoginWithoutPassword(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		srv.SignIn(t, tn).Create(t, "users", testenv.M{"email": "nopw@acme.test"})
		status, _, body := srv.Grant(t, tn.Slug, testenv.PasswordForm("nopw@acme.test", "anything-at-all"))
		if status != 400 || body["error"] != "invalid_grant" {
			t.Errorf("login of a user without password: %d %v", status, body)
		}
	})
}

func TestRefreshRotationAndReuse(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		cfg, ctx := oauthClient(srv, tn.Slug, oauth2.AuthStyleInHeader)
		first := login(t, srv, tn)

		// Let the client refresh the way it does in production: with an expired token.
		stale := *first
		stale.Expiry = time.Now().Add(-time.Minute)
		second, err := cfg.TokenSource(ctx, &stale).Token()
		if err != nil {
			t.Fatalf("refresh: %v", err)
		}
		if second.AccessToken == first.AccessToken || second.RefreshToken == first.RefreshToken {
			t.Fatal("refresh did not rotate the tokens")
		}
		if status, _, _ := me(t, srv, tn.Slug, second.AccessToken); status != 200 {
			t.Fatalf("new access token: %d", status)
		}
		// The first refresh token is spent: its reuse fails and revokes the family.
		status, _, body := srv.Grant(t, tn.Slug, testenv.RefreshForm(first.RefreshToken))
		if status != 400 || body["error"] != "invalid_grant" {
			t.Fatalf("reuse: %d %v", status, body)
		}
		if status, hdr, _ := me(t, srv, tn.Slug, second.AccessToken); status != 401 || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("access token of a revoked family: %d", status)
		}
		if status, _, _ := me(t, srv, tn.Slug, first.AccessToken); status != 401 {
			t.Errorf("first access token after reuse: %d", status)
		}
		stale2 := *second
		stale2.Expiry = time.Now().Add(-time.Minute)
		if _, err := cfg.TokenSource(ctx, &stale2).Token(); err == nil {
			t.Error("refresh token of a revoked family still works")
		}
		// Another login is a new family and unaffected.
		third := login(t, srv, tn)
		if status, _, _ := me(t, srv, tn.Slug, third.AccessToken); status != 200 {
			t.Errorf("fresh login after revocation: %d", status)
		}
	})
}

func TestTokenEndpointErrors(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		other := srv.CreateTenant(t, "other")
		good := adminForm(tn)
		with := func(mod func(v url.Values)) url.Values {
			v := url.Values{}
			for k, vs := range good {
				v[k] = append([]string(nil), vs...)
			}
			mod(v)
			return v
		}
		noRefreshToken := testenv.RefreshForm("")
		noRefreshToken.Del("refresh_token")
		cases := []struct {
			name, slug, host, contentType string
			form                          url.Values
			err, code                     string
		}{
			{"wrong content type", tn.Slug, "", "application/json", good, "invalid_request", ""},
			{"missing grant_type", tn.Slug, "", "", with(func(v url.Values) { v.Del("grant_type") }), "invalid_request", ""},
			{"authorization_code", tn.Slug, "", "", with(func(v url.Values) { v.Set("grant_type", "authorization_code"); v.Set("code", "x") }), "unsupported_grant_type", ""},
			{"implicit", tn.Slug, "", "", with(func(v url.Values) { v.Set("grant_type", "implicit") }), "unsupported_grant_type", ""},
			{"missing client_id", tn.Slug, "", "", with(func(v url.Values) { v.Del("client_id") }), "invalid_request", ""},
			{"missing client_secret", tn.Slug, "", "", with(func(v url.Values) { v.Del("client_secret") }), "invalid_request", ""},
			{"missing username", tn.Slug, "", "", with(func(v url.Values) { v.Del("username") }), "invalid_request", ""},
			{"missing password", tn.Slug, "", "", with(func(v url.Values) { v.Del("password") }), "invalid_request", ""},
			{"wrong password", tn.Slug, "", "", with(func(v url.Values) { v.Set("password", "nope-nope") }), "invalid_grant", ""},
			{"unknown user", tn.Slug, "", "", with(func(v url.Values) { v.Set("username", "ghost@acme.test") }), "invalid_grant", ""},
			{"user of another tenant", tn.Slug, "", "", with(func(v url.Values) { v.Set("username", other.AdminEmail); v.Set("password", other.Password) }), "invalid_grant", ""},
			{"no tenant", "", "", "", good, "invalid_request", "tenant_required"},
			{"unknown tenant", "nobody", "", "", good, "invalid_request", "unknown_tenant"},
			{"tenant mismatch", tn.Slug, "other.localhost", "", good, "invalid_request", "tenant_mismatch"},
			{"missing refresh_token", tn.Slug, "", "", noRefreshToken, "invalid_request", ""},
			{"unknown refresh_token", tn.Slug, "", "", testenv.RefreshForm("pwr_nope"), "invalid_grant", ""},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				req := srv.TokenRequest(t, c.slug, c.form)
				if c.slug == "" {
					req.Header.Del("companyurl")
				}
				if c.contentType != "" {
					req.Header.Set("Content-Type", c.contentType)
				}
				if c.host != "" {
					req.Host = c.host
				}
				status, hdr, body := testenv.Answer(t, req)
				if status != 400 || body["error"] != c.err {
					t.Fatalf("got %d %v, want 400 error=%s", status, body, c.err)
				}
				if d, _ := body["error_description"].(string); d == "" {
					t.Errorf("no error_description: %v", body)
				}
				wantCode := c.code
				if wantCode == "" {
					wantCode = c.err
				}
				if body["code"] != wantCode || body["message"] != body["error_description"] {
					t.Errorf("code/message = %v/%v, want %s", body["code"], body["message"], wantCode)
				}
				if !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
					t.Errorf("content type %q", hdr.Get("Content-Type"))
				}
			})
		}
		// A refresh token of one tenant is unknown in another.
		tok := login(t, srv, tn)
		status, _, body := srv.Grant(t, other.Slug, testenv.RefreshForm(tok.RefreshToken))
		if status != 400 || body["error"] != "invalid_grant" {
			t.Errorf("foreign refresh token: %d %v", status, body)
		}
		// ...and was not spent by that attempt.
		status, _, body = srv.Grant(t, tn.Slug, testenv.RefreshForm(tok.RefreshToken))
		if status != 200 {
			t.Errorf("own refresh token after a foreign attempt: %d %v", status, body)
		}
		// GET is not a token request.
		if status, hdr, body := (&testenv.Client{Srv: srv, Slug: tn.Slug}).Call(t, http.MethodGet, "/oauth2/token", nil); status != 405 || body["code"] != "method_not_allowed" || !strings.Contains(hdr.Get("Allow"), "POST") {
			t.Errorf("GET /oauth2/token: %d %v %v", status, hdr, body)
		}
	})
}
