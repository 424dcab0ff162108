package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"planwerk/internal/config"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// tenantTransport names the tenant on every request, as a client of the
// neutral host must.
type tenantTransport struct {
	header, value string
}

func (tt tenantTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(tt.header, tt.value)
	return http.DefaultTransport.RoundTrip(r)
}

func oauthConfig(srv *testenv.Server, style oauth2.AuthStyle) *oauth2.Config {
	return &oauth2.Config{
		ClientID:     "test-app",
		ClientSecret: "any secret",
		Endpoint:     oauth2.Endpoint{TokenURL: srv.URL + "/oauth2/token", AuthStyle: style},
	}
}

func tenantContext(slug string) context.Context {
	return context.WithValue(context.Background(), oauth2.HTTPClient,
		&http.Client{Transport: tenantTransport{header: "companyurl", value: slug}})
}

// call sends a request with the tenant header and an optional bearer token
// and returns the status, headers and decoded JSON body.
func call(t *testing.T, method, u string, hdr map[string]string, body io.Reader) (int, http.Header, map[string]any) {
	t.Helper()
	status, h, raw := callRaw(t, method, u, hdr, body)
	var m map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s %s: body is not a JSON object: %q", method, u, raw)
		}
	}
	return status, h, m
}

// callRaw is call with the body as it came.
func callRaw(t *testing.T, method, u string, hdr map[string]string, body io.Reader) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, raw
}

func tokenRequest(t *testing.T, srv *testenv.Server, hdr map[string]string, form url.Values) (int, http.Header, map[string]any) {
	t.Helper()
	h := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	for k, v := range hdr {
		h[k] = v
	}
	return call(t, http.MethodPost, srv.URL+"/oauth2/token", h, strings.NewReader(form.Encode()))
}

func passwordForm(tn testenv.Tenant) url.Values {
	return url.Values{"grant_type": {"password"}, "username": {tn.AdminEmail}, "password": {tn.Password},
		"client_id": {"app"}, "client_secret": {"secret"}}
}

func login(t *testing.T, srv *testenv.Server, tn testenv.Tenant) *oauth2.Token {
	t.Helper()
	tok, err := oauthConfig(srv, oauth2.AuthStyleInParams).PasswordCredentialsToken(tenantContext(tn.Slug), tn.AdminEmail, tn.Password)
	if err != nil {
		t.Fatalf("password grant: %v", err)
	}
	return tok
}

func me(t *testing.T, srv *testenv.Server, slug, token string) (int, http.Header, map[string]any) {
	t.Helper()
	return call(t, http.MethodGet, srv.URL+"/v1/users/me", map[string]string{"companyurl": slug, "Authorization": "Bearer " + token}, nil)
}

func TestPasswordGrantAndUsersMe(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, func(c *config.Config) { c.TokenTTL = 1234 * time.Second })
		tn := srv.CreateTenant(t, "acme")
		for _, style := range []oauth2.AuthStyle{oauth2.AuthStyleInParams, oauth2.AuthStyleInHeader} {
			ctx := tenantContext(tn.Slug)
			cfg := oauthConfig(srv, style)
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
		status, hdr, body := tokenRequest(t, srv, map[string]string{"companyurl": tn.Slug}, passwordForm(tn))
		if status != 200 || hdr.Get("Cache-Control") != "no-store" || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
			t.Fatalf("status %d, headers %v", status, hdr)
		}
		if body["token_type"] != "Bearer" || body["expires_in"] != float64(1234) {
			t.Errorf("body = %v", body)
		}
		// E-mail addresses match whatever their letter case.
		form := passwordForm(tn)
		form.Set("username", strings.ToUpper(tn.AdminEmail))
		if status, _, body := tokenRequest(t, srv, map[string]string{"companyurl": tn.Slug}, form); status != 200 {
			t.Errorf("upper-case e-mail: %d %v", status, body)
		}
	})
}

func TestRefreshRotationAndReuse(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		ctx := tenantContext(tn.Slug)
		cfg := oauthConfig(srv, oauth2.AuthStyleInHeader)
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
		status, _, body := tokenRequest(t, srv, map[string]string{"companyurl": tn.Slug}, url.Values{
			"grant_type": {"refresh_token"}, "refresh_token": {first.RefreshToken}, "client_id": {"a"}, "client_secret": {"b"}})
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
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		other := srv.CreateTenant(t, "other")
		good := passwordForm(tn)
		with := func(mod func(v url.Values)) url.Values {
			v := url.Values{}
			for k, vs := range good {
				v[k] = append([]string(nil), vs...)
			}
			mod(v)
			return v
		}
		tenant := map[string]string{"companyurl": tn.Slug}
		cases := []struct {
			name      string
			hdr       map[string]string
			form      url.Values
			status    int
			err, code string
		}{
			{"wrong content type", map[string]string{"companyurl": tn.Slug, "Content-Type": "application/json"}, good, 400, "invalid_request", ""},
			{"missing grant_type", tenant, with(func(v url.Values) { v.Del("grant_type") }), 400, "invalid_request", ""},
			{"authorization_code", tenant, with(func(v url.Values) { v.Set("grant_type", "authorization_code"); v.Set("code", "x") }), 400, "unsupported_grant_type", ""},
			{"client_credentials", tenant, with(func(v url.Values) { v.Set("grant_type", "client_credentials") }), 400, "unsupported_grant_type", ""},
			{"missing client_id", tenant, with(func(v url.Values) { v.Del("client_id") }), 400, "invalid_request", ""},
			{"missing client_secret", tenant, with(func(v url.Values) { v.Del("client_secret") }), 400, "invalid_request", ""},
			{"missing username", tenant, with(func(v url.Values) { v.Del("username") }), 400, "invalid_request", ""},
			{"missing password", tenant, with(func(v url.Values) { v.Del("password") }), 400, "invalid_request", ""},
			{"wrong password", tenant, with(func(v url.Values) { v.Set("password", "nope-nope") }), 400, "invalid_grant", ""},
			{"unknown user", tenant, with(func(v url.Values) { v.Set("username", "ghost@acme.test") }), 400, "invalid_grant", ""},
			{"user of another tenant", tenant, with(func(v url.Values) { v.Set("username", other.AdminEmail); v.Set("password", other.Password) }), 400, "invalid_grant", ""},
			{"no tenant", map[string]string{}, good, 400, "invalid_request", "tenant_required"},
			{"unknown tenant", map[string]string{"companyurl": "nobody"}, good, 400, "invalid_request", "unknown_tenant"},
			{"tenant mismatch", map[string]string{"companyurl": tn.Slug, "Host": "other.localhost"}, good, 400, "invalid_request", "tenant_mismatch"},
			{"missing refresh_token", tenant, url.Values{"grant_type": {"refresh_token"}, "client_id": {"a"}, "client_secret": {"b"}}, 400, "invalid_request", ""},
			{"unknown refresh_token", tenant, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"pwr_nope"}, "client_id": {"a"}, "client_secret": {"b"}}, 400, "invalid_grant", ""},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				status, hdr, body := tokenRequest(t, srv, c.hdr, c.form)
				if status != c.status || body["error"] != c.err {
					t.Fatalf("got %d %v, want %d error=%s", status, body, c.status, c.err)
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
		status, _, body := tokenRequest(t, srv, map[string]string{"companyurl": other.Slug}, url.Values{
			"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {"a"}, "client_secret": {"b"}})
		if status != 400 || body["error"] != "invalid_grant" {
			t.Errorf("foreign refresh token: %d %v", status, body)
		}
		// ...and was not spent by that attempt.
		status, _, body = tokenRequest(t, srv, tenant, url.Values{
			"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {"a"}, "client_secret": {"b"}})
		if status != 200 {
			t.Errorf("own refresh token after a foreign attempt: %d %v", status, body)
		}
		// GET is not a token request.
		if status, hdr, body := call(t, http.MethodGet, srv.URL+"/oauth2/token", tenant, nil); status != 405 || body["code"] != "method_not_allowed" || !strings.Contains(hdr.Get("Allow"), "POST") {
			t.Errorf("GET /oauth2/token: %d %v %v", status, hdr, body)
		}
	})
}

func TestLoginBrake(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, func(c *config.Config) {
			c.LoginFailuresPerAccount = 3
			c.LoginFailuresPerAddress = 6
		})
		tn := srv.CreateTenant(t, "acme")
		tenant := map[string]string{"companyurl": tn.Slug}
		bad := passwordForm(tn)
		bad.Set("password", "wrong-password")
		for i := 0; i < 3; i++ {
			if status, _, body := tokenRequest(t, srv, tenant, bad); status != 400 {
				t.Fatalf("failure %d: %d %v", i, status, body)
			}
		}
		status, hdr, body := tokenRequest(t, srv, tenant, passwordForm(tn))
		if status != 429 || hdr.Get("Retry-After") == "" {
			t.Fatalf("after 3 failures, even the right password: %d %v, Retry-After %q", status, body, hdr.Get("Retry-After"))
		}
		if body["error"] == nil || body["code"] == nil {
			t.Errorf("429 body: %v", body)
		}
		// Other accounts from the same address still get in, until the
		// address's own brake holds.
		for i := 0; i < 3; i++ {
			form := passwordForm(tn)
			form.Set("username", "ghost"+string(rune('a'+i))+"@acme.test")
			if status, _, _ := tokenRequest(t, srv, tenant, form); status != 400 {
				t.Fatalf("address failure %d: %d", i, status)
			}
		}
		form := passwordForm(tn)
		form.Set("username", "someone-else@acme.test")
		if status, hdr, _ := tokenRequest(t, srv, tenant, form); status != 429 || hdr.Get("Retry-After") == "" {
			t.Errorf("after 6 failures from one address: %d", status)
		}
	})
}

func TestBearerErrors(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, func(c *config.Config) { c.TokenTTL = time.Second })
		tn := srv.CreateTenant(t, "acme")
		other := srv.CreateTenant(t, "other")
		tok := login(t, srv, tn)
		otherTok := login(t, srv, other)
		cases := []struct {
			name, slug, auth string
		}{
			{"missing", tn.Slug, ""},
			{"wrong scheme", tn.Slug, "Basic " + tok.AccessToken},
			{"scheme only", tn.Slug, "Bearer"},
			{"empty token", tn.Slug, "Bearer   "},
			{"unknown", tn.Slug, "Bearer pwa_unknown"},
			{"refresh token as access token", tn.Slug, "Bearer " + tok.RefreshToken},
			{"token of another tenant", tn.Slug, "Bearer " + otherTok.AccessToken},
			{"token presented to another tenant", other.Slug, "Bearer " + tok.AccessToken},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				hdr := map[string]string{"companyurl": c.slug}
				if c.auth != "" {
					hdr["Authorization"] = c.auth
				}
				status, h, body := call(t, http.MethodGet, srv.URL+"/v1/users/me", hdr, nil)
				if status != 401 || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
					t.Fatalf("got %d, WWW-Authenticate %q", status, h.Get("WWW-Authenticate"))
				}
				if body["code"] != "unauthorized" || body["message"] == "" {
					t.Errorf("body = %v", body)
				}
			})
		}
		// Lower-case scheme is accepted (RFC 7235: schemes are case-insensitive).
		if status, _, _ := call(t, http.MethodGet, srv.URL+"/v1/users/me", map[string]string{"companyurl": tn.Slug, "Authorization": "bearer " + tok.AccessToken}, nil); status != 200 {
			t.Errorf("lower-case bearer: %d", status)
		}
		// Expired: the token lives one second.
		time.Sleep(1100 * time.Millisecond)
		if status, _, _ := me(t, srv, tn.Slug, tok.AccessToken); status != 401 {
			t.Errorf("expired token: %d", status)
		}
	})
}

func TestTenantResolution(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		srv.CreateTenant(t, "other")
		tok := login(t, srv, tn)
		bearer := "Bearer " + tok.AccessToken
		cases := []struct {
			name   string
			hdr    map[string]string
			status int
			code   string
		}{
			{"companyurl slug", map[string]string{"companyurl": "acme"}, 200, ""},
			{"companyurl host", map[string]string{"companyurl": "acme.localhost"}, 200, ""},
			{"companyurl URL", map[string]string{"companyurl": "https://acme.localhost/app"}, 200, ""},
			{"origin with port", map[string]string{"Origin": "http://acme.localhost:3000"}, 200, ""},
			{"referer with path", map[string]string{"Referer": "https://acme.localhost:8443/some/page?x=1"}, 200, ""},
			{"referrer spelling", map[string]string{"Referrer": "https://acme.localhost/"}, 200, ""},
			{"companyurl wins over origin", map[string]string{"companyurl": "acme", "Origin": "http://other.localhost"}, 200, ""},
			{"origin wins over referer", map[string]string{"Origin": "http://acme.localhost", "Referer": "http://other.localhost/"}, 200, ""},
			{"tenant host with matching header", map[string]string{"Host": "acme.localhost", "companyurl": "acme"}, 200, ""},
			{"no header", map[string]string{}, 400, "tenant_required"},
			{"no header on tenant host", map[string]string{"Host": "acme.localhost"}, 400, "tenant_required"},
			{"unknown slug", map[string]string{"companyurl": "nobody"}, 400, "unknown_tenant"},
			{"URL of a foreign domain", map[string]string{"Origin": "https://example.com"}, 400, "unknown_tenant"},
			{"tenant host, other tenant in header", map[string]string{"Host": "other.localhost", "companyurl": "acme"}, 400, "tenant_mismatch"},
			{"token of acme presented for other", map[string]string{"companyurl": "other"}, 401, "unauthorized"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				hdr := map[string]string{"Authorization": bearer}
				for k, v := range c.hdr {
					hdr[k] = v
				}
				status, _, body := call(t, http.MethodGet, srv.URL+"/v1/users/me", hdr, nil)
				if status != c.status {
					t.Fatalf("status %d, want %d: %v", status, c.status, body)
				}
				if c.code != "" && body["code"] != c.code {
					t.Errorf("code %v, want %s", body["code"], c.code)
				}
				if status == 200 && body["email"] != tn.AdminEmail {
					t.Errorf("user %v", body)
				}
			})
		}
	})
}

func TestTenantIsolation(t *testing.T) {
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
		if _, err := srv.Service.DB.CreateUser(ctx, srv.Service.DB, bt.ID, store.NewUser{Email: a.AdminEmail, PasswordHash: hash}); err != nil {
			t.Fatal(err)
		}
		// alpha's password does not open beta's account of the same e-mail.
		status, _, body := tokenRequest(t, srv, map[string]string{"companyurl": bt.Slug}, passwordForm(a))
		if status != 400 || body["error"] != "invalid_grant" {
			t.Fatalf("alpha's password at beta: %d %v", status, body)
		}
		ta, tb := login(t, srv, a), login(t, srv, bt)
		_, _, meA := me(t, srv, a.Slug, ta.AccessToken)
		_, _, meB := me(t, srv, bt.Slug, tb.AccessToken)
		if meA["email"] != a.AdminEmail || meB["email"] != bt.AdminEmail || meA["id"] == nil || meB["id"] == nil {
			t.Fatalf("me: %v / %v", meA, meB)
		}
		for _, c := range []struct{ slug, token string }{{bt.Slug, ta.AccessToken}, {a.Slug, tb.AccessToken}} {
			if status, _, _ := me(t, srv, c.slug, c.token); status != 401 {
				t.Errorf("token used in the other tenant: %d", status)
			}
		}
	})
}

func TestErrorsAndOperations(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		tok := login(t, srv, tn)
		auth := map[string]string{"companyurl": tn.Slug, "Authorization": "Bearer " + tok.AccessToken}
		cases := []struct {
			name, method, path string
			hdr                map[string]string
			status             int
			code               string
		}{
			{"healthz", "GET", "/healthz", nil, 200, ""},
			{"readyz", "GET", "/readyz", nil, 200, ""},
			{"unknown path", "GET", "/nowhere", nil, 404, "not_found"},
			{"unknown /v1 path", "GET", "/v1/nothing-here", auth, 404, "not_found"},
			{"wrong method", "DELETE", "/v1/users", auth, 405, "method_not_allowed"},
			{"write to a read-only resource", "POST", "/v1/project-days", auth, 405, "method_not_allowed"},
			{"wrong method on healthz", "POST", "/healthz", nil, 405, "method_not_allowed"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				status, hdr, body := call(t, c.method, srv.URL+c.path, c.hdr, nil)
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
		big := strings.NewReader("grant_type=password&username=" + strings.Repeat("a", 2<<20))
		status, _, body := call(t, http.MethodPost, srv.URL+"/oauth2/token",
			map[string]string{"companyurl": tn.Slug, "Content-Type": "application/x-www-form-urlencoded"}, big)
		if status != 413 {
			t.Errorf("2 MiB token request: %d %v", status, body)
		}
		// readyz says so when the database is gone.
		if err := srv.Service.DB.Close(); err != nil {
			t.Fatal(err)
		}
		if status, hdr, body := call(t, http.MethodGet, srv.URL+"/readyz", nil, nil); status != 503 || body["code"] != "database_unavailable" ||
			hdr.Get("Retry-After") == "" || body["checks"].(map[string]any)["fileStore"] != "ok" {
			t.Errorf("readyz without database: %d %v", status, body)
		}
		if status, _, body := call(t, http.MethodGet, srv.URL+"/healthz", nil, nil); status != 200 {
			t.Errorf("healthz without database: %d %v", status, body)
		}
		// A closed pool is the service's own failure, not the database's: a
		// generic 500, no SQL, no driver text.
		status, _, body = call(t, http.MethodGet, srv.URL+"/v1/users/me", map[string]string{"companyurl": "zzz-not-cached", "Authorization": "Bearer x"}, nil)
		if status != 500 || body["code"] != "internal_error" || body["message"] != "internal server error" {
			t.Errorf("database down: %d %v", status, body)
		}
	})
}
