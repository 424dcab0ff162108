package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

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
