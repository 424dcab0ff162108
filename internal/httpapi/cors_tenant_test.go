package httpapi_test

import (
	"net/http"
	"testing"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// TestCORSTenantOfRequest: a tenant's origin gets CORS headers only on
// requests of that tenant, as the request names it (companyurl, Host,
// Origin, Referer, in the order tenant resolution reads them); an origin
// of --cors-origins on requests of any tenant. A preflight names no
// tenant and is answered for every tenant's origin. Every answer varies
// by Origin.
func TestCORSTenantOfRequest(t *testing.T) {
	t.Parallel()
	const listed = "https://app.example.com"
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, func(c *config.Config) { c.CORSOrigins = []string{listed} })
		acme := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		srv.CreateTenant(t, "other")
		const acmeOrigin, otherOrigin = "https://acme.localhost", "https://other.localhost:8443"

		for _, c := range []struct {
			name    string
			path    string
			token   bool
			headers map[string]string // "" deletes the header; "Host" sets the request's host
			origin  string
			allowed bool
		}{
			{"own tenant in companyurl", "/v1/users/me", true, nil, acmeOrigin, true},
			{"another tenant's origin", "/v1/users/me", true, nil, otherOrigin, false},
			{"another tenant's origin, refused", "/v1/users/me", false, nil, otherOrigin, false},
			{"listed origin", "/v1/users/me", true, nil, listed, true},
			{"the origin names the tenant", "/v1/users/me", true, map[string]string{"companyurl": ""}, acmeOrigin, true},
			{"the origin wins over the referer", "/v1/users/me", false,
				map[string]string{"companyurl": "", "Referer": "https://acme.localhost/app"}, otherOrigin, true},
			{"companyurl of the other tenant", "/v1/users/me", false, map[string]string{"companyurl": "other"}, acmeOrigin, false},
			{"host of the other tenant", "/v1/users/me", true, map[string]string{"companyurl": "", "Host": "other.localhost"}, acmeOrigin, false},
			{"public endpoint, origin alone", "/v1/openapi.json", false, map[string]string{"companyurl": ""}, acmeOrigin, true},
			{"public endpoint, other tenant named", "/v1/openapi.json", false, map[string]string{"companyurl": "other"}, acmeOrigin, false},
			{"public endpoint, listed origin", "/v1/openapi.json", false, map[string]string{"companyurl": "other"}, listed, true},
		} {
			t.Run(c.name, func(t *testing.T) {
				cl := acme
				if !c.token {
					cl = acme.Anonymous()
				}
				req := cl.Request(t, http.MethodGet, c.path, nil)
				req.Header.Set("Origin", c.origin)
				for k, v := range c.headers {
					switch {
					case k == "Host":
						req.Host = v
					case v == "":
						req.Header.Del(k)
					default:
						req.Header.Set(k, v)
					}
				}
				status, hdr, _ := testenv.Do(t, req)
				what := "GET " + c.path + " " + http.StatusText(status)
				wantList(t, what, hdr, "Vary", "Origin")
				if !c.allowed {
					noCORS(t, what, hdr)
					return
				}
				if got := hdr.Get("Access-Control-Allow-Origin"); got != c.origin {
					t.Errorf("%s: Access-Control-Allow-Origin %q, want %q", what, got, c.origin)
				}
				wantList(t, what, hdr, "Access-Control-Expose-Headers", "ETag", "X-Request-Id", "Idempotent-Replayed")
			})
		}

		// Preflights carry no tenant header: every tenant's origin is answered.
		for _, origin := range []string{acmeOrigin, otherOrigin} {
			req := (&testenv.Client{Srv: srv}).Request(t, http.MethodOptions, "/v1/projects", nil)
			req.Header.Del("companyurl")
			req.Header.Set("Origin", origin)
			req.Header.Set("Access-Control-Request-Method", "POST")
			status, hdr, _ := testenv.Do(t, req)
			if status != http.StatusNoContent || hdr.Get("Access-Control-Allow-Origin") != origin {
				t.Errorf("preflight from %s: %d, Access-Control-Allow-Origin %q", origin, status, hdr.Get("Access-Control-Allow-Origin"))
			}
			wantList(t, "preflight", hdr, "Vary", "Origin")
		}
	})
}
