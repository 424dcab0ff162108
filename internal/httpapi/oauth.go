package httpapi

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"planwerk/internal/auth"
	"planwerk/internal/ratelimit"
)

// oauthError is an RFC 6749 §5.2 error. The body also carries the
// API's code and message, so clients reading either shape understand it.
type oauthError struct {
	status      int
	err         string // RFC 6749 error code
	code        string // API error code, when more specific than err
	description string
	retryAfter  time.Duration
}

func (e *oauthError) Error() string { return e.description }

func oauthFail(status int, errCode, description string) *oauthError {
	return &oauthError{status: status, err: errCode, description: description}
}

// token is POST /oauth2/token. The grants the login brake holds note its
// buckets' states, which the answer carries as RateLimit fields.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	ctx, brake := ratelimit.WithReport(r.Context())
	g, err := s.grant(r.WithContext(ctx))
	setRateLimit(w.Header(), brake.Policies()...)
	if err != nil {
		s.writeOAuthError(w, r, err)
		return
	}
	// Every answer names the access token's scope ("read" or "read
	// write"), also when it is the one asked for (RFC 6749 §5.1 would
	// allow leaving it out then): clients need not know the defaults.
	body := map[string]any{"access_token": g.AccessToken, "token_type": "Bearer", "expires_in": g.ExpiresIn, "scope": g.Scope}
	if g.RefreshToken != "" {
		body["refresh_token"] = g.RefreshToken
	}
	writeJSON(w, http.StatusOK, body)
}

// grantTypes are the grants the token endpoint runs.
var grantTypes = map[string]bool{"password": true, "refresh_token": true, "client_credentials": true}

func (s *Server) grant(r *http.Request) (auth.Grant, error) {
	if err := parseOAuthForm(r); err != nil {
		return auth.Grant{}, err
	}
	form := r.PostForm
	grantType := form.Get("grant_type")
	switch {
	case grantType == "":
		return auth.Grant{}, oauthFail(http.StatusBadRequest, "invalid_request", "grant_type is required")
	case !grantTypes[grantType]:
		return auth.Grant{}, oauthFail(http.StatusBadRequest, "unsupported_grant_type",
			"grant_type must be password, refresh_token or client_credentials")
	}
	id, secret := clientCredentials(r)
	if id == "" || secret == "" {
		return auth.Grant{}, oauthFail(http.StatusBadRequest, "invalid_request",
			"client_id and client_secret are required")
	}
	r, tenantID, release, err := s.oauthTenant(r)
	if err != nil {
		return auth.Grant{}, err
	}
	defer release()

	var g auth.Grant
	switch grantType {
	case "password":
		username, password := form.Get("username"), form.Get("password")
		if username == "" || password == "" {
			return auth.Grant{}, oauthFail(http.StatusBadRequest, "invalid_request", "username and password are required")
		}
		g, err = s.auth.PasswordGrant(r.Context(), tenantID, username, password, form.Get("scope"), s.clientAddress(r))
	case "refresh_token":
		refresh := form.Get("refresh_token")
		if refresh == "" {
			return auth.Grant{}, oauthFail(http.StatusBadRequest, "invalid_request", "refresh_token is required")
		}
		g, err = s.auth.RefreshGrant(r.Context(), tenantID, refresh, form.Get("scope"))
	default:
		g, err = s.auth.ClientCredentialsGrant(r.Context(), tenantID, id, secret, form.Get("scope"), s.clientAddress(r))
	}
	switch {
	case errors.Is(err, auth.ErrInvalidGrant) && grantType == "password":
		return auth.Grant{}, oauthFail(http.StatusBadRequest, "invalid_grant", "wrong e-mail address or password")
	case errors.Is(err, auth.ErrInvalidGrant):
		return auth.Grant{}, oauthFail(http.StatusBadRequest, "invalid_grant", "the refresh token is unknown, expired or already used")
	case errors.Is(err, auth.ErrInvalidScope):
		return auth.Grant{}, oauthFail(http.StatusBadRequest, "invalid_scope", invalidScope[grantType])
	case errors.Is(err, auth.ErrInvalidClient):
		return auth.Grant{}, invalidClient()
	}
	return g, err
}

// invalidScope describes a refused scope (RFC 6749 §5.2 invalid_scope)
// per grant: what it may ask for.
var invalidScope = map[string]string{
	"password":           `scope must be "read" or "read write" (space-separated scope tokens read and write)`,
	"refresh_token":      `scope must be "read" or "read write", and no wider than the scope of the refresh token's login`,
	"client_credentials": `scope must be "read" or "read write", within the client's scope`,
}

// revoke is POST /oauth2/revoke (RFC 7009): 200 whether the token was
// known or not, so that the answer tells nothing about it. An API
// client's credentials are checked under the login brake, whose states
// the answer carries as for the token endpoint.
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	ctx, brake := ratelimit.WithReport(r.Context())
	err := s.revokeToken(r.WithContext(ctx))
	setRateLimit(w.Header(), brake.Policies()...)
	if err != nil {
		s.writeOAuthError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (s *Server) revokeToken(r *http.Request) error {
	if err := parseOAuthForm(r); err != nil {
		return err
	}
	token := r.PostForm.Get("token")
	if token == "" {
		return oauthFail(http.StatusBadRequest, "invalid_request", "token is required")
	}
	id, secret := clientCredentials(r)
	if id == "" || secret == "" {
		return oauthFail(http.StatusBadRequest, "invalid_request", "client_id and client_secret are required")
	}
	r, tenantID, release, err := s.oauthTenant(r)
	if err != nil {
		return err
	}
	defer release()
	if err := s.auth.CheckClient(r.Context(), tenantID, id, secret, s.clientAddress(r)); errors.Is(err, auth.ErrInvalidClient) {
		return invalidClient()
	} else if err != nil {
		return err
	}
	return s.auth.Revoke(r.Context(), tenantID, token, r.PostForm.Get("token_type_hint"))
}

// parseOAuthForm reads the form body of the token and revocation endpoints.
func parseOAuthForm(r *http.Request) error {
	if !isFormContentType(r.Header.Get("Content-Type")) {
		return oauthFail(http.StatusBadRequest, "invalid_request", "the body must be application/x-www-form-urlencoded")
	}
	if err := r.ParseForm(); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return oauthFail(http.StatusBadRequest, "invalid_request", "the form body cannot be parsed")
	}
	for name, values := range r.PostForm {
		for _, v := range values {
			if !cleanText(name) || !cleanText(v) {
				return uncleanField(name)
			}
		}
	}
	if u, p, ok := r.BasicAuth(); ok {
		id, ierr := url.QueryUnescape(u)
		secret, serr := url.QueryUnescape(p)
		if ierr == nil && serr == nil && (!cleanText(id) || !cleanText(secret)) {
			return invalidClient()
		}
	}
	return nil
}

// uncleanField is the refusal of a form field that is not UTF-8 text
// without NUL (no credential can be such text, and PostgreSQL refuses it
// as a statement's text): a wrong credential where it is one, else a
// malformed request.
func uncleanField(name string) error {
	switch name {
	case "client_id", "client_secret":
		return invalidClient()
	case "username", "password":
		return oauthFail(http.StatusBadRequest, "invalid_grant", "wrong e-mail address or password")
	case "refresh_token":
		return oauthFail(http.StatusBadRequest, "invalid_grant", "the refresh token is unknown, expired or already used")
	}
	return oauthFail(http.StatusBadRequest, "invalid_request",
		"the form field "+strconv.Quote(strings.ToValidUTF8(name, "\uFFFD"))+" is not UTF-8 text without NUL characters")
}

// oauthTenant resolves the request's tenant and takes its turn among the
// tenant's requests; release ends it.
func (s *Server) oauthTenant(r *http.Request) (*http.Request, int64, func(), error) {
	tenant, err := s.tenants.Resolve(r)
	if err != nil {
		return r, 0, nil, err
	}
	r, release, err := s.enterTenant(r, tenant)
	if err != nil {
		return r, 0, nil, err
	}
	return r, tenant.ID, release, nil
}

// invalidClient refuses client authentication (RFC 6749 §5.2): 401, with
// a Basic challenge when the client used Basic (writeOAuthError adds it).
func invalidClient() *oauthError {
	return oauthFail(http.StatusUnauthorized, "invalid_client", "unknown client or wrong client secret")
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
	if oe.status == http.StatusUnauthorized {
		if _, _, basic := r.BasicAuth(); basic {
			w.Header().Set("WWW-Authenticate", `Basic realm="planwerk"`)
		}
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
