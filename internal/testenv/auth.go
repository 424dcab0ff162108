package testenv

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
)

// PasswordForm is the form of a password grant for the user.
func PasswordForm(email, password string) url.Values {
	return url.Values{"grant_type": {"password"}, "username": {email}, "password": {password},
		"client_id": {"app"}, "client_secret": {"secret"}}
}

// RefreshForm is the form of a refresh_token grant.
func RefreshForm(refreshToken string) url.Values {
	return url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refreshToken},
		"client_id": {"app"}, "client_secret": {"secret"}}
}

// TokenRequest builds a form post to the token endpoint for the tenant
// slug ("" names none).
func (s *Server) TokenRequest(t testing.TB, slug string, form url.Values) *http.Request {
	t.Helper()
	req := (&Client{Srv: s, Slug: slug}).Request(t, http.MethodPost, "/oauth2/token", form.Encode())
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}

// Grant posts form to the token endpoint for the tenant slug and returns
// the status, the headers and the JSON object answered.
func (s *Server) Grant(t testing.TB, slug string, form url.Values) (int, http.Header, M) {
	t.Helper()
	return Answer(t, s.TokenRequest(t, slug, form))
}

// Call makes a request of the client and returns the status, the headers
// and the JSON object answered (nil when the answer has no body), whatever
// the status.
func (c *Client) Call(t testing.TB, method, path string, body any) (int, http.Header, M) {
	t.Helper()
	status, h, raw := c.Send(t, method, path, body)
	return status, h, object(t, method+" "+path, raw)
}

// Answer sends req and returns the status, the headers and the JSON object
// answered (nil when the answer has no body), whatever the status.
func Answer(t testing.TB, req *http.Request) (int, http.Header, M) {
	t.Helper()
	status, h, raw := Do(t, req)
	return status, h, object(t, req.Method+" "+req.URL.Path, raw)
}

func object(t testing.TB, what string, raw []byte) M {
	t.Helper()
	if len(raw) == 0 {
		return nil
	}
	var m M
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: body is not a JSON object: %q", what, raw)
	}
	return m
}

// ClientForm is the form of a client_credentials grant.
func ClientForm(clientID, secret string) url.Values {
	return url.Values{"grant_type": {"client_credentials"}, "client_id": {clientID}, "client_secret": {secret}}
}

// APIClient creates an API client acting as user within scope and returns
// its record (with clientId and the one-time clientSecret).
func (c *Client) APIClient(t testing.TB, name string, user int64, scope string) M {
	t.Helper()
	return c.Object(t, http.MethodPost, "/v1/api-clients", M{"name": name, "user": user, "scope": scope}, http.StatusCreated)
}

// ClientSignIn gets a client_credentials token for an API client record
// (as APIClient returns it) and returns a Client acting with it.
func (c *Client) ClientSignIn(t testing.TB, client M) *Client {
	t.Helper()
	id, _ := client["clientId"].(string)
	secret, _ := client["clientSecret"].(string)
	status, _, body := c.Srv.Grant(t, c.Slug, ClientForm(id, secret))
	token, _ := body["access_token"].(string)
	if status != http.StatusOK || token == "" {
		t.Fatalf("client_credentials grant: %d %v", status, body)
	}
	return &Client{Srv: c.Srv, Slug: c.Slug, UserID: Num(client["user"]), Token: token}
}
