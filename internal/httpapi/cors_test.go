package httpapi_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// TestCORS: a browser at a tenant's own origin (SLUG.BASE-DOMAIN, any
// scheme of http and https, any port) or at an origin of --cors-origins
// gets CORS headers, on preflights (answered 204 without a token) and on
// answers, errors included; any other origin gets none. Every answer
// varies by Origin, and none allows credentials.
func TestCORS(t *testing.T) {
	t.Parallel()
	const listed = "https://app.example.com"
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, func(c *config.Config) { c.CORSOrigins = []string{listed}; c.FileRate = 1 })
		admin := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		anon := admin.Anonymous()
		for _, c := range []struct {
			name, origin string
			allowed      bool
		}{
			{"tenant origin", "http://acme.localhost", true},
			{"tenant origin with https and a port", "https://acme.localhost:8443", true},
			{"tenant origin in upper case", "HTTPS://ACME.LOCALHOST", true},
			{"listed origin", listed, true},
			{"listed origin in upper case", "https://APP.example.com", true},
			{"origin of no tenant", "https://nobody.localhost", false},
			{"the base domain itself", "https://localhost", false},
			{"other site", "https://evil.example", false},
			{"listed host on another scheme", "http://app.example.com", false},
			{"tenant host with a path", "https://acme.localhost/app", false},
			{"tenant host with user info", "https://x@acme.localhost", false},
			{"tenant host on another scheme", "ftp://acme.localhost", false},
			{"bare slug", "acme", false},
			{"opaque origin", "null", false},
		} {
			t.Run(c.name, func(t *testing.T) {
				// The preflight: no token, no tenant header, as a browser sends it.
				req := (&testenv.Client{Srv: srv}).Request(t, http.MethodOptions, "/v1/projects/1", nil)
				req.Header.Del("companyurl")
				req.Header.Set("Origin", c.origin)
				req.Header.Set("Access-Control-Request-Method", "PATCH")
				req.Header.Set("Access-Control-Request-Headers", "authorization,content-type,if-match")
				status, hdr, raw := testenv.Do(t, req)
				if status != http.StatusNoContent || len(raw) != 0 {
					t.Fatalf("preflight: %d %s", status, raw)
				}
				wantList(t, "preflight", hdr, "Vary", "Origin")
				if !c.allowed {
					noCORS(t, "preflight", hdr)
				} else {
					if got := hdr.Get("Access-Control-Allow-Origin"); got != c.origin {
						t.Errorf("preflight: Access-Control-Allow-Origin %q, want %q", got, c.origin)
					}
					wantList(t, "preflight", hdr, "Access-Control-Allow-Methods", "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")
					wantList(t, "preflight", hdr, "Access-Control-Allow-Headers",
						"authorization", "content-type", "companyurl", "if-match", "if-none-match", "idempotency-key", "change-reason")
					if hdr.Get("Access-Control-Max-Age") == "" {
						t.Error("preflight without Access-Control-Max-Age")
					}
					if hdr.Get("Access-Control-Allow-Credentials") != "" {
						t.Error("preflight allows credentials")
					}
				}

				// The requests themselves: a success and a refusal.
				for _, cl := range []*testenv.Client{admin, anon} {
					status, hdr, _ := cl.With("Origin", c.origin).Send(t, http.MethodGet, "/v1/users/me", nil)
					what := "GET " + http.StatusText(status)
					wantList(t, what, hdr, "Vary", "Origin")
					if !c.allowed {
						noCORS(t, what, hdr)
						continue
					}
					if got := hdr.Get("Access-Control-Allow-Origin"); got != c.origin {
						t.Errorf("%s: Access-Control-Allow-Origin %q, want %q", what, got, c.origin)
					}
					wantList(t, what, hdr, "Access-Control-Expose-Headers", "ETag", "Retry-After", "X-Request-Id", "Deprecation", "Location", "Idempotent-Replayed", "Audit-Next", "RateLimit-Policy", "RateLimit")
					if hdr.Get("Access-Control-Allow-Credentials") != "" {
						t.Errorf("%s allows credentials", what)
					}
				}
			})
		}

		// A request with no Origin is no CORS request; an OPTIONS that is
		// no preflight is routed as any other request.
		if status, hdr, _ := admin.Send(t, http.MethodGet, "/v1/users/me", nil); status != 200 || hdr.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("no Origin: %d, Access-Control-Allow-Origin %q", status, hdr.Get("Access-Control-Allow-Origin"))
		}
		if status, _, _ := admin.With("Origin", listed).Send(t, http.MethodOptions, "/v1/users/me", nil); status != http.StatusMethodNotAllowed {
			t.Errorf("OPTIONS without Access-Control-Request-Method: %d, want 405", status)
		}

		// Preflights count against no rate limit: after many for uploads,
		// the one upload a minute of --file-rate 1 still goes through.
		_, doc := admin.Document(t)
		path := testenv.UploadPath("document", doc, false)
		for range 5 {
			req := anon.With("Origin", listed).With("Access-Control-Request-Method", "POST").Request(t, http.MethodOptions, path, nil)
			if status, _, _ := testenv.Do(t, req); status != http.StatusNoContent {
				t.Fatalf("preflight of an upload: %d", status)
			}
		}
		if status, _, raw := admin.Upload(t, path, testenv.Part{Filename: "a.txt", Data: []byte("a")}); status != http.StatusCreated {
			t.Errorf("upload after preflights: %d %s", status, raw)
		}
	})
}

// noCORS fails the test when the answer carries any CORS header.
func noCORS(t *testing.T, what string, hdr http.Header) {
	t.Helper()
	for name := range hdr {
		if strings.HasPrefix(name, "Access-Control-") {
			t.Errorf("%s: %s: %q for an origin not allowed", what, name, hdr.Get(name))
		}
	}
}

// wantList fails the test unless the comma-separated header lists every
// one of want (in any case).
func wantList(t *testing.T, what string, hdr http.Header, name string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.ContainsFunc(headerList(hdr, name), func(g string) bool { return strings.EqualFold(g, w) }) {
			t.Errorf("%s: %s %q lacks %s", what, name, hdr.Values(name), w)
		}
	}
}

// headerList is the items of a comma-separated header, over all its lines.
func headerList(hdr http.Header, name string) []string {
	var items []string
	for _, v := range hdr.Values(name) {
		for _, item := range strings.Split(v, ",") {
			items = append(items, strings.TrimSpace(item))
		}
	}
	return items
}
