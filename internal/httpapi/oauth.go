package httpapi

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"time"

	"planwerk/internal/auth"
)

// oauthError is an RFC 6749 §5.2 error. The body also carries the
// contract's code and message, so clients reading either shape understand it.
type oauthError struct {
	status      int
	err         string // RFC 6749 error code
	code        string // contract error code, when more specific than err
	description string
	retryAfter  time.Duration
}

func (e *oauthError) Error() string { return e.description }

func oauthFail(status int, errCode, description string) *oauthError {
	return &oauthError{status: status, err: errCode, description: description}
}

// token is POST /oauth2/token.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	g, err := s.grant(r)
	if err != nil {
		s.writeOAuthError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token":  g.AccessToken,
		"token_type":    "Bearer",
		"expires_in":    g.ExpiresIn,
		"refresh_token": g.RefreshToken,
	})
}

func (s *Server) grant(r *http.Request) (auth.Grant, error) {
	if !isFormContentType(r.Header.Get("Content-Type")) {
		return auth.Grant{}, oauthFail(http.StatusBadRequest, "invalid_request",
			"the body must be application/x-www-form-urlencoded")
	}
	if err := r.ParseForm(); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return auth.Grant{}, err
		}
		return auth.Grant{}, oauthFail(http.StatusBadRequest, "invalid_request", "the form body cannot be parsed")
	}
	form := r.PostForm
	grantType := form.Get("grant_type")
	switch grantType {
	case "":
		return auth.Grant{}, oauthFail(http.StatusBadRequest, "invalid_request", "grant_type is required")
	case "password", "refresh_token":
	default:
		return auth.Grant{}, oauthFail(http.StatusBadRequest, "unsupported_grant_type",
			"grant_type must be password or refresh_token")
	}
	if id, secret := clientCredentials(r); id == "" || secret == "" {
		return auth.Grant{}, oauthFail(http.StatusBadRequest, "invalid_request",
			"client_id and client_secret are required")
	}
	tenant, err := s.tenants.Resolve(r)
	if err != nil {
		return auth.Grant{}, err
	}
	r, release, err := s.enterTenant(r, tenant)
	if err != nil {
		return auth.Grant{}, err
	}
	defer release()

	var g auth.Grant
	if grantType == "password" {
		username, password := form.Get("username"), form.Get("password")
		if username == "" || password == "" {
			return auth.Grant{}, oauthFail(http.StatusBadRequest, "invalid_request", "username and password are required")
		}
		g, err = s.auth.PasswordGrant(r.Context(), tenant.ID, username, password, clientAddr(r))
	} else {
		refresh := form.Get("refresh_token")
		if refresh == "" {
			return auth.Grant{}, oauthFail(http.StatusBadRequest, "invalid_request", "refresh_token is required")
		}
		g, err = s.auth.RefreshGrant(r.Context(), tenant.ID, refresh)
	}
	if errors.Is(err, auth.ErrInvalidGrant) {
		if grantType == "password" {
			return auth.Grant{}, oauthFail(http.StatusBadRequest, "invalid_grant", "wrong e-mail address or password")
		}
		return auth.Grant{}, oauthFail(http.StatusBadRequest, "invalid_grant", "the refresh token is unknown, expired or already used")
	}
	return g, err
}

func (s *Server) writeOAuthError(w http.ResponseWriter, r *http.Request, err error) {
	var oe *oauthError
	if !errors.As(err, &oe) {
		a := errorFor(err)
		s.logFailure(r, a, err)
		oe = &oauthError{status: a.status, err: "invalid_request", code: a.Code, description: a.Message, retryAfter: a.RetryAfter}
		switch {
		case a.status == http.StatusTooManyRequests:
			oe.err = "too_many_requests"
		case a.status == http.StatusInternalServerError:
			oe.err = "server_error"
		case a.status >= 500:
			oe.err = "temporarily_unavailable"
		}
	}
	code := oe.code
	if code == "" {
		code = oe.err
	}
	if oe.retryAfter > 0 {
		w.Header().Set("Retry-After", retryAfterSeconds(oe.retryAfter))
	}
	writeJSON(w, oe.status, map[string]string{
		"error": oe.err, "error_description": oe.description, "code": code, "message": oe.description,
	})
}

// clientCredentials returns client_id and client_secret from the form or
// from HTTP Basic authentication (RFC 6749 §2.3.1, values form-encoded).
func clientCredentials(r *http.Request) (id, secret string) {
	id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	if u, p, ok := r.BasicAuth(); ok {
		if id == "" {
			id, _ = url.QueryUnescape(u)
		}
		if secret == "" {
			secret, _ = url.QueryUnescape(p)
		}
	}
	return id, secret
}

// clientAddr is the client's IP address, the key of the per-address login
// brake. Forwarding headers are not trusted: they are the client's to forge.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
