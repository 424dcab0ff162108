package httpapi

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"planwerk/internal/tenancy"
)

// CORS: the request headers Planwerk reads, the answer headers a browser
// script may read, and how long a browser may keep a preflight's answer.
const (
	corsAllowHeaders  = "authorization, content-type, companyurl, if-match, if-none-match, idempotency-key, change-reason"
	corsExposeHeaders = "ETag, Retry-After, X-Request-Id, Deprecation, Location, Idempotent-Replayed, Audit-Next, RateLimit-Policy, RateLimit"
	corsMaxAge        = "7200" // seconds; the most Chromium honours
)

// cors answers browsers' cross-origin requests from a tenant's own origin
// (http(s)://SLUG.BASE-DOMAIN[:port] of a tenant that exists) or from an
// origin of CORSOrigins; other origins get no CORS headers. A tenant's
// origin is answered only on requests of that tenant: a script of one
// tenant's pages reads no answer to a request naming another tenant. A
// preflight names no tenant (a browser sends none of the request's own
// headers with it) and is answered for every tenant's origin, here, 204,
// before anything asks for a token or counts the request against a
// tenant. No credentials: the API takes bearer tokens, never cookies.
// varyOrigin is the Vary of every answer, shared as jsonContentTypeValues is.
var varyOrigin = []string{"Origin"}

func (s *Server) cors(next http.Handler) http.Handler {
	listed := make(map[string]bool, len(s.cfg.CORSOrigins))
	for _, o := range s.cfg.CORSOrigins {
		listed[strings.TrimSuffix(strings.ToLower(o), "/")] = true
	}
	methods := strings.Join(s.methods, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		if _, ok := h["Vary"]; ok {
			h.Add("Vary", "Origin")
		} else {
			h["Vary"] = varyOrigin
		}
		origin := r.Header.Get("Origin")
		if r.Method == http.MethodOptions && origin != "" && r.Header.Get("Access-Control-Request-Method") != "" {
			if s.corsAllowed(r, listed, origin, true) {
				h.Set("Access-Control-Allow-Origin", origin)
				h.Set("Access-Control-Allow-Methods", methods)
				h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
				h.Set("Access-Control-Max-Age", corsMaxAge)
			}
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if origin != "" && s.corsAllowed(r, listed, origin, false) {
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
		}
		next.ServeHTTP(w, r)
	})
}

// corsAllowed reports whether origin is listed or is the origin of a
// tenant that exists and, unless the request is a preflight, the tenant
// the request names: as tenant resolution reads its Host, companyurl,
// Origin and Referer headers (an Origin alone names its tenant). Only a
// bare origin counts: scheme http or https, a host, an optional port,
// nothing else.
func (s *Server) corsAllowed(r *http.Request, listed map[string]bool, origin string, preflight bool) bool {
	o := strings.ToLower(origin)
	if listed[o] {
		return true
	}
	u, err := url.Parse(o)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || o != u.Scheme+"://"+u.Host {
		return false
	}
	slug, ok := tenancy.SlugFromHost(u.Host, s.cfg.BaseDomain)
	if !ok {
		return false
	}
	if !preflight {
		if named, err := tenancy.RequestedSlug(r, s.cfg.BaseDomain); err != nil || named != slug {
			return false
		}
	}
	// A suspended tenant's pages may read its refusals (403
	// tenant_suspended), to tell their users why.
	_, err = s.tenants.Lookup(r.Context(), slug)
	return err == nil || errors.Is(err, tenancy.ErrSuspended)
}
