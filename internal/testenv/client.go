package testenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// M is a JSON object of a request or an answer.
type M = map[string]any

// Client is a signed-in caller of one tenant: the one client of the API
// tests. Every method takes the test it reports to, so one client serves
// subtests too.
type Client struct {
	Srv    *Server
	Slug   string
	Token  string
	UserID int64
	// Header is sent with every request (besides the tenant and the token).
	Header http.Header
}

// SignIn signs the tenant's admin in with the password grant.
func (s *Server) SignIn(t testing.TB, tn Tenant) *Client {
	t.Helper()
	c := &Client{Srv: s, Slug: tn.Slug, UserID: tn.AdminID}
	c.Token = s.Token(t, tn.Slug, tn.AdminEmail, tn.Password)
	return c
}

// Token returns an access token of the password grant.
func (s *Server) Token(t testing.TB, slug, email, password string) string {
	t.Helper()
	form := url.Values{"grant_type": {"password"}, "username": {email}, "password": {password},
		"client_id": {"app"}, "client_secret": {"secret"}}
	req, err := http.NewRequest(http.MethodPost, s.URL+"/oauth2/token", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("companyurl", slug)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("password grant: %v", err)
	}
	defer resp.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
	}
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &body) != nil || body.AccessToken == "" {
		t.Fatalf("password grant for %s in %s: status %d: %s", email, slug, resp.StatusCode, raw)
	}
	return body.AccessToken
}

// Member creates a member (no admin) of c's tenant and signs them in.
func (c *Client) Member(t testing.TB, email string) *Client {
	t.Helper()
	const password = "member-password"
	u := c.Create(t, "users", M{"email": email, "password": password, "isAdmin": false})
	return &Client{Srv: c.Srv, Slug: c.Slug, UserID: ID(t, u), Token: c.Srv.Token(t, c.Slug, email, password)}
}

// Request builds a request of the client: tenant, token, its headers.
// body is nil (none), a string or []byte (sent as is), an io.Reader, or
// any other value (JSON-encoded).
func (c *Client) Request(t testing.TB, method, path string, body any) *http.Request {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	case io.Reader:
		r = b
	default:
		js, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(js)
	}
	req, err := http.NewRequest(method, c.Srv.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("companyurl", c.Slug)
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if r != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, vs := range c.Header {
		req.Header[k] = vs
	}
	return req
}

// Send makes a request and returns the status, headers and body. An
// answer with a body must say it is JSON.
func (c *Client) Send(t testing.TB, method, path string, body any) (int, http.Header, []byte) {
	t.Helper()
	status, h, raw := Do(t, c.Request(t, method, path, body))
	if ct := h.Get("Content-Type"); len(raw) > 0 && !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	return status, h, raw
}

// Do sends a request with the default client and reads the whole answer.
func Do(t testing.TB, req *http.Request) (int, http.Header, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", req.Method, req.URL.Path, err)
	}
	return resp.StatusCode, resp.Header, raw
}

// Object makes a request that must answer want with a JSON object.
func (c *Client) Object(t testing.TB, method, path string, body any, want int) M {
	t.Helper()
	status, _, raw := c.Send(t, method, path, body)
	if status != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, status, want, raw)
	}
	var m M
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		t.Fatalf("%s %s: body is not a JSON object: %q", method, path, raw)
	}
	return m
}

// Array makes a request that must answer want with a JSON array of objects.
func (c *Client) Array(t testing.TB, method, path string, body any, want int) []M {
	t.Helper()
	status, _, raw := c.Send(t, method, path, body)
	if status != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, status, want, raw)
	}
	var out []M
	if err := json.Unmarshal(raw, &out); err != nil || out == nil {
		t.Fatalf("%s %s: body is not a JSON array: %q", method, path, raw)
	}
	return out
}

// Create posts a record of the resource that must answer 201.
func (c *Client) Create(t testing.TB, res string, body any) M {
	t.Helper()
	return c.Object(t, http.MethodPost, "/v1/"+res, body, http.StatusCreated)
}

// Get reads one record that must exist.
func (c *Client) Get(t testing.TB, res string, id int64) M {
	t.Helper()
	return c.Object(t, http.MethodGet, fmt.Sprintf("/v1/%s/%d", res, id), nil, http.StatusOK)
}

// List GETs a list path that must answer 200 with a JSON array of objects.
func (c *Client) List(t testing.TB, path string) []M {
	t.Helper()
	return c.Array(t, http.MethodGet, path, nil, http.StatusOK)
}

// FollowPages GETs a list path that a limit cuts short and then up to
// two more of its pages by their Link headers (rel="next"); it fails when
// the first has no next page. It returns the rows of each page read.
func (c *Client) FollowPages(t testing.TB, path string) [][]M {
	t.Helper()
	var pages [][]M
	for i := range 3 {
		status, h, raw := c.Send(t, http.MethodGet, path, nil)
		if status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, status, raw)
		}
		var rows []M
		if err := json.Unmarshal(raw, &rows); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		pages = append(pages, rows)
		link := h.Get("Link")
		if link == "" && i == 0 {
			t.Fatalf("GET %s: no next page", path)
		}
		if link == "" {
			break
		}
		u, err := url.Parse(strings.TrimSuffix(strings.TrimPrefix(link, "<"), `>; rel="next"`))
		if err != nil {
			t.Fatal(err)
		}
		path = u.RequestURI()
	}
	return pages
}

// IDs GETs a list path and returns the ids in order.
func (c *Client) IDs(t testing.TB, path string) []int64 {
	t.Helper()
	var out []int64
	for _, m := range c.List(t, path) {
		out = append(out, ID(t, m))
	}
	return out
}

// Fail makes a request that must answer status with the API's JSON
// error of the code; a 400 must name each of fields among its problems.
func (c *Client) Fail(t testing.TB, method, path string, body any, status int, code string, fields ...string) M {
	t.Helper()
	got, _, raw := c.Send(t, method, path, body)
	m := WantError(t, method+" "+path, got, raw, status, code)
	for _, f := range fields {
		WantProblem(t, m, f)
	}
	return m
}

// WantError checks an answer is the API's JSON error with the status
// and code (any code when code is "") and a message.
func WantError(t testing.TB, what string, status int, raw []byte, wantStatus int, wantCode string) M {
	t.Helper()
	var m M
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: status %d, body is not a JSON object: %q", what, status, raw)
	}
	code, _ := m["code"].(string)
	if status != wantStatus || code == "" || (wantCode != "" && code != wantCode) {
		t.Fatalf("%s: got %d %s, want %d with code %q", what, status, raw, wantStatus, wantCode)
	}
	if msg, _ := m["message"].(string); msg == "" {
		t.Errorf("%s: error without message: %s", what, raw)
	}
	return m
}

// ProblemFields returns the fields named by an error's problems.
func ProblemFields(m M) []string {
	var out []string
	ps, _ := m["problems"].([]any)
	for _, p := range ps {
		pm, _ := p.(map[string]any)
		f, _ := pm["field"].(string)
		out = append(out, f)
	}
	return out
}

// WantProblem checks an error names field among its problems, and every
// problem has a message.
func WantProblem(t testing.TB, m M, field string) {
	t.Helper()
	if !slices.Contains(ProblemFields(m), field) {
		t.Errorf("problems %v do not name %q (body %v)", m["problems"], field, m)
	}
	ps, _ := m["problems"].([]any)
	for _, p := range ps {
		if pm, _ := p.(map[string]any); pm["message"] == nil || pm["message"] == "" {
			t.Errorf("problem without message: %v", p)
		}
	}
}

// ProblemMessage returns the message of the problem naming field.
func ProblemMessage(m M, field string) string {
	ps, _ := m["problems"].([]any)
	for _, p := range ps {
		if pm, _ := p.(map[string]any); pm["field"] == field {
			msg, _ := pm["message"].(string)
			return msg
		}
	}
	return ""
}

// ID is the id of a record answer, which must be a positive integer.
func ID(t testing.TB, m M) int64 {
	t.Helper()
	f, ok := m["id"].(float64)
	if !ok || f != float64(int64(f)) || f <= 0 {
		t.Fatalf("id %v (%T) is not a positive integer: %v", m["id"], m["id"], m)
	}
	return int64(f)
}

// Num is a JSON number of a decoded answer as an int64.
func Num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

// Decode is a JSON object answer.
func Decode(t testing.TB, raw []byte) M {
	t.Helper()
	var m M
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		t.Fatalf("body is not a JSON object: %q", raw)
	}
	return m
}

// DecodeInto decodes a JSON answer into v.
func DecodeInto(t testing.TB, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("answer is not the JSON expected: %v: %q", err, raw)
	}
}
