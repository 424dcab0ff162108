package auth_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

func TestBearerErrors(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		other := srv.CreateTenant(t, "other")
		tok := login(t, srv, tn)
		otherTok := login(t, srv, other)
		// with presents the Authorization header auth to the tenant slug.
		with := func(slug, auth string) *testenv.Client {
			c := &testenv.Client{Srv: srv, Slug: slug}
			if auth != "" {
				c.Header = http.Header{"Authorization": {auth}}
			}
			return c
		}
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
				status, h, body := with(c.slug, c.auth).Call(t, http.MethodGet, "/v1/users/me", nil)
				if status != 401 || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
					t.Fatalf("got %d, WWW-Authenticate %q", status, h.Get("WWW-Authenticate"))
				}
				if body["code"] != "unauthorized" || body["message"] == "" {
					t.Errorf("body = %v", body)
				}
			})
		}
		// Lower-case scheme is accepted (RFC 7235: schemes are case-insensitive).
		if status, _, _ := with(tn.Slug, "bearer "+tok.AccessToken).Call(t, http.MethodGet, "/v1/users/me", nil); status != 200 {
			t.Errorf("lower-case bearer: %d", status)
		}
		// Expired: on a server whose tokens live one second, a token is
		// refused once the wait, begun after it was issued, is longer.
		short := testenv.Start(t, b, func(c *config.Config) { c.TokenTTL = time.Second })
		stn := short.CreateTenant(t, "acme")
		stok := login(t, short, stn)
		if stok.ExpiresIn != 1 {
			t.Fatalf("expires_in %d, want 1", stok.ExpiresIn)
		}
		time.Sleep(1100 * time.Millisecond)
		if status, _, _ := me(t, short, stn.Slug, stok.AccessToken); status != 401 {
			t.Errorf("expired token: %d", status)
		}
	})
}
