package testenv

import (
	"strings"
	"testing"
)

// TestErrorDocsCheck: the check of error answers against the document
// finds an undocumented status and an unnamed code, matches literal path
// segments before parameters, and leaves routes outside the document alone.
func TestErrorDocsCheck(t *testing.T) {
	t.Parallel()
	d, err := parseErrorDocs([]byte(`{
		"paths": {
			"/v1/users/{id}": {"parameters": [], "get": {"responses": {
				"200": {"description": "ok"},
				"404": {"$ref": "#/components/responses/NotFound"}}}},
			"/v1/users/me": {"get": {"responses": {"401": {"description": "no token (` + "`unauthorized`" + `)"}}}},
			"/oauth2/token": {"post": {"responses": {"400": {"description": "` + "`invalid_grant`" + ` or, with code, ` + "`unknown_tenant`" + `"}}}}
		},
		"components": {"responses": {"NotFound": {"description": "gone (` + "`not_found`" + `)"}}}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method, path string
		status       int
		body, want   string // want: part of the finding; "" none
	}{
		{"GET", "/v1/users/7", 404, `{"code":"not_found"}`, ""},
		{"GET", "/v1/users/7", 404, `{"code":"gone"}`, "does not name"},
		{"GET", "/v1/users/7", 409, `{"code":"conflict"}`, "does not document"},
		{"GET", "/v1/users/me", 401, `{"code":"unauthorized"}`, ""},
		{"GET", "/v1/users/me", 404, `{"code":"not_found"}`, "does not document"},
		{"DELETE", "/v1/users/7", 405, `{"code":"method_not_allowed"}`, ""},
		{"GET", "/v1/nothing", 404, `{"code":"not_found"}`, ""},
		{"POST", "/oauth2/token", 400, `{"error":"invalid_grant","code":"invalid_grant"}`, ""},
		{"POST", "/oauth2/token", 400, `{"error":"invalid_request","code":"unknown_tenant"}`, "invalid_request"},
	} {
		got := d.check(c.method, c.path, c.status, []byte(c.body))
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s %s %d %s: %q, want a finding with %q", c.method, c.path, c.status, c.body, got, c.want)
		}
	}
}
