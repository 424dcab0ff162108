package httpapi_test

// The helpers policy_test.go still takes from the tests of tags and
// skills, which moved to internal/skills.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"planwerk/internal/testenv"
)

// skM is a JSON object literal.
type skM = map[string]any

// skClient is rsClient with the checks these tests add: arrays from any
// method, and errors that must name fields.
type skClient struct{ *rsClient }

func skSignIn(t *testing.T, srv *testenv.Server, tn testenv.Tenant) *skClient {
	t.Helper()
	return &skClient{rsSignIn(t, srv, tn)}
}

// skMember creates a member (no admin) of c's tenant and signs them in.
func (c *skClient) skMember(t *testing.T, email string) *skClient {
	t.Helper()
	const password = "member-password"
	u := c.create(t, "users", skM{"email": email, "password": password, "isAdmin": false})
	m := skSignIn(t, c.srv, testenv.Tenant{Slug: c.slug, AdminEmail: email, Password: password})
	m.userID = rsID(t, u)
	return m
}

// arr makes a request that must answer want with a JSON array of objects.
func (c *skClient) arr(t *testing.T, method, path string, body any, want int) []skM {
	t.Helper()
	status, _, raw := c.send(t, method, path, body)
	if status != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, status, want, raw)
	}
	var out []skM
	if err := json.Unmarshal(raw, &out); err != nil || out == nil {
		t.Fatalf("%s %s: body is not a JSON array: %q", method, path, raw)
	}
	return out
}

// fail makes a request that must answer status with the contract's JSON
// error; a 400 must name each of fields among its problems.
func (c *skClient) fail(t *testing.T, method, path string, body any, status int, fields ...string) skM {
	t.Helper()
	got, _, raw := c.send(t, method, path, body)
	var m skM
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s %s: status %d, body is not a JSON object: %q", method, path, got, raw)
	}
	if got != status {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, got, status, raw)
	}
	if code, _ := m["code"].(string); code == "" {
		t.Errorf("%s %s: error without code: %s", method, path, raw)
	}
	if msg, _ := m["message"].(string); msg == "" {
		t.Errorf("%s %s: error without message: %s", method, path, raw)
	}
	for _, f := range fields {
		if !slices.Contains(rsProblemFields(m), f) {
			t.Errorf("%s %s: problems %v do not name %q", method, path, m["problems"], f)
		}
	}
	return m
}

// skAbsent makes sure c's tenant has no record res/id: a test's premise
// when it uses id as another tenant's record.
func skAbsent(t *testing.T, c *skClient, res string, id int64) {
	t.Helper()
	if status, _, _ := c.send(t, http.MethodGet, fmt.Sprintf("/v1/%s/%d", res, id), nil); status != http.StatusNotFound {
		t.Fatalf("premise: %s %d exists in tenant %s (status %d)", res, id, c.slug, status)
	}
}
