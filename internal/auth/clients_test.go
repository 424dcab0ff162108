package auth_test

// API clients and the client-credentials grant (docs/api.md "API
// clients").

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"planwerk/internal/httpapi"
	"planwerk/internal/testenv"
)

// TestAPIClients: admins create, list, read and delete API clients; the
// secret is shown once and never again; bad bodies name their fields.
func TestAPIClients(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		admin := srv.SignIn(t, tn)
		member := admin.Member(t, "m@acme.test")

		status, hdr, raw := admin.Send(t, http.MethodPost, "/v1/api-clients", testenv.M{"name": "Payroll export", "user": member.UserID, "scope": "read"})
		if status != http.StatusCreated {
			t.Fatalf("create: %d %s", status, raw)
		}
		var created testenv.M
		if err := json.Unmarshal(raw, &created); err != nil {
			t.Fatal(err)
		}
		id := testenv.ID(t, created)
		clientID, _ := created["clientId"].(string)
		secret, _ := created["clientSecret"].(string)
		if !strings.HasPrefix(clientID, "pwc_") || !strings.HasPrefix(secret, "pws_") || len(secret) < 40 ||
			created["name"] != "Payroll export" || testenv.Num(created["user"]) != member.UserID || created["scope"] != "read" ||
			created["createdAt"] == nil {
			t.Errorf("created client: %v", created)
		}
		if hdr.Get("Location") != "/v1/api-clients/"+strconv.FormatInt(id, 10) || hdr.Get("Cache-Control") != "no-store" {
			t.Errorf("Location %q, Cache-Control %q", hdr.Get("Location"), hdr.Get("Cache-Control"))
		}
		// The secret is stored as a hash only.
		var n int
		if err := srv.Service.DB.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM api_clients WHERE client_id = $1 AND secret_hash = $2`,
			clientID, []byte(secret)).Scan(&n); err != nil || n != 0 {
			t.Errorf("the secret is stored as it is (%d, %v)", n, err)
		}

		got := admin.Object(t, http.MethodGet, fmt.Sprintf("/v1/api-clients/%d", id), nil, http.StatusOK)
		list := admin.Array(t, http.MethodGet, "/v1/api-clients", nil, http.StatusOK)
		if len(list) != 1 || testenv.ID(t, list[0]) != id {
			t.Fatalf("list: %v", list)
		}
		for what, c := range map[string]testenv.M{"get": got, "list": list[0]} {
			if _, ok := c["clientSecret"]; ok || c["clientId"] != clientID || c["scope"] != "read" {
				t.Errorf("%s shows %v", what, c)
			}
		}

		// Admins only.
		member.Fail(t, http.MethodGet, "/v1/api-clients", nil, http.StatusForbidden, "forbidden")
		member.Fail(t, http.MethodPost, "/v1/api-clients", testenv.M{"name": "x", "user": member.UserID, "scope": "read"}, http.StatusForbidden, "forbidden")
		member.Fail(t, http.MethodDelete, fmt.Sprintf("/v1/api-clients/%d", id), nil, http.StatusForbidden, "forbidden")

		for _, c := range []struct {
			name   string
			body   testenv.M
			fields []string
		}{
			{"nothing", testenv.M{}, []string{"name", "user", "scope"}},
			{"empty name", testenv.M{"name": " ", "user": member.UserID, "scope": "read"}, []string{"name"}},
			{"long name", testenv.M{"name": strings.Repeat("x", 201), "user": member.UserID, "scope": "read"}, []string{"name"}},
			{"unknown user", testenv.M{"name": "x", "user": 999999, "scope": "read"}, []string{"user"}},
			{"user not a number", testenv.M{"name": "x", "user": "1", "scope": "read"}, []string{"user"}},
			{"unknown scope", testenv.M{"name": "x", "user": member.UserID, "scope": "admin"}, []string{"scope"}},
			{"empty scope", testenv.M{"name": "x", "user": member.UserID, "scope": ""}, []string{"scope"}},
			{"extra key", testenv.M{"name": "x", "user": member.UserID, "scope": "read", "secret": "mine"}, []string{"secret"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				admin.Fail(t, http.MethodPost, "/v1/api-clients", c.body, http.StatusBadRequest, "invalid", c.fields...)
			})
		}
		if n := len(admin.Array(t, http.MethodGet, "/v1/api-clients", nil, http.StatusOK)); n != 1 {
			t.Errorf("refused creates left %d clients", n)
		}
		// "write" alone means read and write.
		if c := admin.APIClient(t, "w", member.UserID, "write"); c["scope"] != "read write" {
			t.Errorf("scope write → %v", c["scope"])
		}

		// Another tenant sees none of them.
		other := srv.SignIn(t, srv.CreateTenant(t, "beta"))
		other.Fail(t, http.MethodGet, fmt.Sprintf("/v1/api-clients/%d", id), nil, http.StatusNotFound, "not_found")
		other.Fail(t, http.MethodDelete, fmt.Sprintf("/v1/api-clients/%d", id), nil, http.StatusNotFound, "not_found")
		if l := other.Array(t, http.MethodGet, "/v1/api-clients", nil, http.StatusOK); len(l) != 0 {
			t.Errorf("beta lists %v", l)
		}

		deleted := admin.Object(t, http.MethodDelete, fmt.Sprintf("/v1/api-clients/%d", id), nil, http.StatusOK)
		if deleted["clientId"] != clientID {
			t.Errorf("deleted: %v", deleted)
		}
		admin.Fail(t, http.MethodGet, fmt.Sprintf("/v1/api-clients/%d", id), nil, http.StatusNotFound, "not_found")
		admin.Fail(t, http.MethodDelete, fmt.Sprintf("/v1/api-clients/%d", id), nil, http.StatusNotFound, "not_found")
		if status, _, body := srv.Grant(t, tn.Slug, testenv.ClientForm(clientID, secret)); status != http.StatusUnauthorized || body["error"] != "invalid_client" {
			t.Errorf("grant of a deleted client: %d %v", status, body)
		}
	})
}

// TestAPIClientLimit: a tenant has at most 100 clients.
func TestAPIClientLimit(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		admin := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		for i := range 100 {
			admin.APIClient(t, fmt.Sprintf("client %d", i), admin.UserID, "read")
		}
		admin.Fail(t, http.MethodPost, "/v1/api-clients", testenv.M{"name": "one more", "user": admin.UserID, "scope": "read"},
			http.StatusConflict, "too_many_clients")
	})
}

// TestClientCredentialsGrant: credentials in the form or HTTP Basic give
// an access token (no refresh token) acting as the client's user within
// its scope; wrong credentials → 401 invalid_client.
func TestClientCredentialsGrant(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		admin := srv.SignIn(t, tn)
		member := admin.Member(t, "m@acme.test")
		rw := admin.APIClient(t, "sync", member.UserID, "read write")
		id, secret := rw["clientId"].(string), rw["clientSecret"].(string)

		status, hdr, body := srv.Grant(t, tn.Slug, testenv.ClientForm(id, secret))
		if status != http.StatusOK || body["access_token"] == nil || body["token_type"] != "Bearer" || body["scope"] != "read write" ||
			testenv.Num(body["expires_in"]) <= 0 || hdr.Get("Cache-Control") != "no-store" {
			t.Fatalf("grant: %d %v", status, body)
		}
		if _, ok := body["refresh_token"]; ok {
			t.Errorf("a client got a refresh token: %v", body)
		}
		c := &testenv.Client{Srv: srv, Slug: tn.Slug, Token: body["access_token"].(string)}
		if me := c.Object(t, http.MethodGet, "/v1/users/me", nil, http.StatusOK); testenv.ID(t, me) != member.UserID {
			t.Errorf("the token acts as %v, want the client's user %d", me["id"], member.UserID)
		}
		// Acting as a member: no admin rights.
		c.Fail(t, http.MethodGet, "/v1/api-clients", nil, http.StatusForbidden, "forbidden")

		basic := func(user, pass string, form url.Values) *http.Request {
			req := srv.TokenRequest(t, tn.Slug, form)
			req.SetBasicAuth(url.QueryEscape(user), url.QueryEscape(pass))
			return req
		}
		bare := url.Values{"grant_type": {"client_credentials"}}
		if status, _, body := testenv.Answer(t, basic(id, secret, bare)); status != http.StatusOK || body["access_token"] == nil {
			t.Errorf("HTTP Basic: %d %v", status, body)
		}
		// Narrowing the scope.
		narrow := testenv.ClientForm(id, secret)
		narrow.Set("scope", "read")
		if status, _, body := srv.Grant(t, tn.Slug, narrow); status != http.StatusOK || body["scope"] != "read" {
			t.Errorf("scope read of a read write client: %d %v", status, body)
		}

		ro := admin.APIClient(t, "reader", member.UserID, "read")
		roID, roSecret := ro["clientId"].(string), ro["clientSecret"].(string)
		wider := testenv.ClientForm(roID, roSecret)
		wider.Set("scope", "read write")
		if status, _, body := srv.Grant(t, tn.Slug, wider); status != http.StatusBadRequest || body["error"] != "invalid_scope" {
			t.Errorf("scope read write of a read client: %d %v", status, body)
		}

		beta := srv.CreateTenant(t, "beta")
		for _, c := range []struct {
			name  string
			req   *http.Request
			basic bool
		}{
			{"wrong secret", srv.TokenRequest(t, tn.Slug, testenv.ClientForm(id, secret+"x")), false},
			{"another client's secret", srv.TokenRequest(t, tn.Slug, testenv.ClientForm(id, roSecret)), false},
			{"unknown client", srv.TokenRequest(t, tn.Slug, testenv.ClientForm("pwc_nobody", secret)), false},
			{"free-form client id", srv.TokenRequest(t, tn.Slug, testenv.ClientForm("app", "secret")), false},
			{"client of another tenant", srv.TokenRequest(t, beta.Slug, testenv.ClientForm(id, secret)), false},
			{"wrong secret, Basic", basic(id, "pws_wrong", bare), true},
		} {
			status, hdr, body := testenv.Answer(t, c.req)
			if status != http.StatusUnauthorized || body["error"] != "invalid_client" || body["code"] != "invalid_client" {
				t.Errorf("%s: %d %v, want 401 invalid_client", c.name, status, body)
			}
			if got, want := hdr.Get("WWW-Authenticate"), map[bool]string{true: `Basic realm="planwerk"`}[c.basic]; got != want {
				t.Errorf("%s: WWW-Authenticate %q, want %q", c.name, got, want)
			}
		}

		// A client whose user is gone gets nothing.
		gone := admin.Member(t, "gone@acme.test")
		gc := admin.APIClient(t, "orphan", gone.UserID, "read")
		admin.Object(t, http.MethodDelete, fmt.Sprintf("/v1/users/%d", gone.UserID), nil, http.StatusOK)
		if status, _, body := srv.Grant(t, tn.Slug, testenv.ClientForm(gc["clientId"].(string), gc["clientSecret"].(string))); status != http.StatusUnauthorized {
			t.Errorf("client of a deleted user: %d %v", status, body)
		}
	})
}

// TestReadScope: a token of the read scope reads, and every route that
// writes refuses it with 403 insufficient_scope and the RFC 6750
// challenge, before anything is changed.
func TestReadScope(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		admin := srv.SignIn(t, tn)
		ro := admin.ClientSignIn(t, admin.APIClient(t, "reader", admin.UserID, "read"))
		rw := admin.ClientSignIn(t, admin.APIClient(t, "writer", admin.UserID, "read write"))

		project := admin.Create(t, "projects", testenv.M{"name": "Apollo"})
		if got := ro.Get(t, "projects", testenv.ID(t, project)); got["name"] != "Apollo" {
			t.Errorf("read token reads %v", got)
		}
		// Every write route of the table, whatever its path and body.
		writes := 0
		for _, r := range srv.Service.Handler.Routes() {
			if r.Auth != httpapi.Bearer || r.Method == http.MethodGet {
				continue
			}
			writes++
			path := r.Path
			for _, p := range []string{"{id}", "{record}", "{uploadId}"} {
				path = strings.ReplaceAll(path, p, "1")
			}
			path = strings.ReplaceAll(path, "{model}", "document")
			status, hdr, raw := ro.Send(t, r.Method, path, testenv.M{"name": "x"})
			testenv.WantError(t, r.Method+" "+path, status, raw, http.StatusForbidden, "insufficient_scope")
			if got := hdr.Get("WWW-Authenticate"); got != `Bearer realm="planwerk", error="insufficient_scope", scope="read write"` {
				t.Errorf("%s %s: WWW-Authenticate %q", r.Method, path, got)
			}
		}
		if writes < 20 {
			t.Fatalf("only %d write routes found", writes)
		}
		// Nothing changed; the same user with the write scope writes.
		if ids := ro.IDs(t, "/v1/projects"); len(ids) != 1 {
			t.Errorf("projects after refused writes: %v", ids)
		}
		rw.Create(t, "projects", testenv.M{"name": "Gemini"})
	})
}
