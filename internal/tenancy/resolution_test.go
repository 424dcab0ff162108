package tenancy_test

import (
	"net/http"
	"testing"

	"planwerk/internal/testenv"
)

// TestTenantResolution: the server finds the tenant in the headers a
// browser or client sends, over HTTP on both database engines.
func TestTenantResolution(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		srv.CreateTenant(t, "other")
		admin := srv.SignIn(t, tn)
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
				// The admin's request with the case's headers instead of
				// the client's tenant header.
				req := admin.Request(t, http.MethodGet, "/v1/users/me", nil)
				req.Header.Del("companyurl")
				for k, v := range c.hdr {
					if k == "Host" {
						req.Host = v
						continue
					}
					req.Header.Set(k, v)
				}
				status, _, body := testenv.Answer(t, req)
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
