package httpapi_test

import (
	"net/http"
	"testing"
	"time"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// TestBearerChallenge: a 401 names the realm, and when the request
// presented a bearer token that is not good (unknown, expired, revoked,
// of another tenant, malformed) also error="invalid_token" (RFC 6750
// §3.1). The token endpoint keeps its RFC 6749 answers.
func TestBearerChallenge(t *testing.T) {
	t.Parallel()
	const (
		realm   = `Bearer realm="planwerk"`
		invalid = `Bearer realm="planwerk", error="invalid_token"`
	)
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		other := srv.SignIn(t, srv.CreateTenant(t, "other"))

		// A revoked access token: reusing a spent refresh token revokes
		// its whole family.
		_, _, first := srv.Grant(t, tn.Slug, testenv.PasswordForm(tn.AdminEmail, tn.Password))
		if status, _, body := srv.Grant(t, tn.Slug, testenv.RefreshForm(first["refresh_token"].(string))); status != http.StatusOK {
			t.Fatalf("refresh: %d %v", status, body)
		}
		if status, _, body := srv.Grant(t, tn.Slug, testenv.RefreshForm(first["refresh_token"].(string))); status != http.StatusBadRequest {
			t.Fatalf("reuse of a spent refresh token: %d %v", status, body)
		}
		revoked := first["access_token"].(string)

		// An expired one: on a server whose tokens live a second, once a
		// wait longer than that, begun after it was issued, is over.
		short := testenv.Start(t, b, func(c *config.Config) { c.TokenTTL = time.Second })
		stale := short.SignIn(t, short.CreateTenant(t, "acme"))
		time.Sleep(1100 * time.Millisecond)

		for _, c := range []struct {
			name   string
			srv    *testenv.Server
			auth   string // the Authorization header; "" none
			status int
			want   string // the WWW-Authenticate header
		}{
			{"no token", srv, "", 401, realm},
			{"another scheme", srv, "Basic YWRtaW46c2VjcmV0", 401, realm},
			{"unknown token", srv, "Bearer pwa_unknown", 401, invalid},
			{"revoked token", srv, "Bearer " + revoked, 401, invalid},
			{"expired token", short, "Bearer " + stale.Token, 401, invalid},
			{"token of another tenant", srv, "Bearer " + other.Token, 401, invalid},
			{"scheme without a token", srv, "Bearer", 401, invalid},
			{"malformed token", srv, "bearer two words", 401, invalid},
			{"good token", srv, "Bearer " + srv.SignIn(t, tn).Token, 200, ""},
		} {
			t.Run(c.name, func(t *testing.T) {
				cl := &testenv.Client{Srv: c.srv, Slug: "acme"}
				if c.auth != "" {
					cl = cl.With("Authorization", c.auth)
				}
				status, hdr, body := cl.Call(t, http.MethodGet, "/v1/users/me", nil)
				if status != c.status || hdr.Get("WWW-Authenticate") != c.want {
					t.Errorf("%d, WWW-Authenticate %q; want %d, %q (%v)", status, hdr.Get("WWW-Authenticate"), c.status, c.want, body)
				}
				if c.status == 401 && body["code"] != "unauthorized" {
					t.Errorf("body %v", body)
				}
			})
		}

		// The token endpoint answers RFC 6749's errors, with no bearer challenge.
		status, hdr, body := srv.Grant(t, tn.Slug, testenv.PasswordForm(tn.AdminEmail, "wrong"))
		if status != http.StatusBadRequest || body["error"] != "invalid_grant" || body["error_description"] == nil ||
			hdr.Get("WWW-Authenticate") != "" {
			t.Errorf("token endpoint: %d, WWW-Authenticate %q, %v", status, hdr.Get("WWW-Authenticate"), body)
		}
	})
}
