package testenv

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
)

// Public is a caller of the public endpoints (operations, the reference,
// signed downloads): no tenant, no token.
func (s *Server) Public() *Client { return &Client{Srv: s} }

// With returns a copy of c that sends the header with every request too;
// it overrides what the client sets itself, such as the JSON
// Content-Type of a body.
func (c *Client) With(key, value string) *Client {
	d := *c
	d.Header = c.Header.Clone()
	if d.Header == nil {
		d.Header = http.Header{}
	}
	d.Header.Set(key, value)
	return &d
}

// Call makes a request whatever its answer and returns the status, the
// headers and the answer's JSON object (nil for an empty body); a body
// that is not a JSON object fails the test.
func (c *Client) Call(t testing.TB, method, path string, body any) (int, http.Header, M) {
	t.Helper()
	status, h, raw := c.Send(t, method, path, body)
	var m M
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s %s: status %d, body is not a JSON object: %q", method, path, status, raw)
		}
	}
	return status, h, m
}

// PasswordForm is the password grant of the tenant's admin.
func PasswordForm(tn Tenant) url.Values {
	return url.Values{"grant_type": {"password"}, "username": {tn.AdminEmail}, "password": {tn.Password},
		"client_id": {"app"}, "client_secret": {"secret"}}
}

// Grant posts a form to the token endpoint with the tenant header of
// slug and returns the status, the headers and the JSON answer.
func (s *Server) Grant(t testing.TB, slug string, form url.Values) (int, http.Header, M) {
	t.Helper()
	c := &Client{Srv: s, Slug: slug}
	return c.With("Content-Type", "application/x-www-form-urlencoded").Call(t, http.MethodPost, "/oauth2/token", form.Encode())
}
