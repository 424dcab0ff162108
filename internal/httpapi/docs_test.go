package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"planwerk/internal/openapi"
	"planwerk/internal/testenv"
)

// docStart starts a server with a tenant and signs its admin in.
func docStart(t *testing.T) (*testenv.Client, testenv.Tenant) {
	t.Helper()
	srv := testenv.Start(t, testenv.Backend{Name: "sqlite"})
	tn := srv.CreateTenant(t, "docs")
	return srv.SignIn(t, tn), tn
}

// docGet GETs a path as c, whatever the answer's type.
func docGet(t *testing.T, c *testenv.Client, path string) (int, http.Header, []byte) {
	t.Helper()
	return testenv.Do(t, c.Request(t, http.MethodGet, path, nil))
}

// docFetch returns the served document, raw and loaded by kin-openapi.
func docFetch(t *testing.T, c *testenv.Client) ([]byte, *openapi3.T) {
	t.Helper()
	status, hdr, raw := docGet(t, c.Srv.Public(), "/v1/openapi.json")
	if status != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /v1/openapi.json: %d %s", status, hdr.Get("Content-Type"))
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatalf("kin-openapi cannot load the served document: %v", err)
	}
	return raw, doc
}

// docMethods are the methods an OpenAPI path item can hold that the
// service uses, in the order the walk runs them.
var docMethods = []string{"POST", "GET", "PATCH", "PUT", "DELETE"}

// TestDocsRoutesDocumented: every registered route is in the served
// document with its method, and the document has no other operations than
// the routes: the writes of read-only resources, which only answer 405,
// are not documented.
func TestDocsRoutesDocumented(t *testing.T) {
	t.Parallel()
	c, _ := docStart(t)
	_, doc := docFetch(t, c)
	routes := c.Srv.Service.Handler.Routes()
	if len(routes) < 100 {
		t.Fatalf("only %d routes", len(routes))
	}
	routed := map[string]bool{}
	for _, rt := range routes {
		p := openapi.OpenAPIPath(rt.Path)
		routed[rt.Method+" "+p] = true
		item := doc.Paths.Value(p)
		if item == nil || item.GetOperation(rt.Method) == nil {
			t.Errorf("route %s %s is not in the document", rt.Method, rt.Path)
		}
	}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			if !routed[method+" "+path] {
				t.Errorf("%s %s is documented but not routed", method, path)
			}
		}
	}
	for _, want := range []string{"GET /v1/openapi.json", "GET /v1/openapi-3.0.json", "GET /docs", "POST /oauth2/token",
		"GET /v1/project-days", "GET /v1/project-days/{id}"} {
		if !routed[want] {
			t.Errorf("%s is not routed", want)
		}
	}
}

// TestDocsPathsAnswer calls every documented operation on a real server
// and checks that the service has it (no 404 from the mux; a 404 must be a
// handler's "no such record"), that it answers a status the document
// lists, and that the body matches the documented schema.
func TestDocsPathsAnswer(t *testing.T) {
	t.Parallel()
	c, tn := docStart(t)
	_, doc := docFetch(t, c)

	paths := doc.Paths.InMatchingOrder()
	sort.Strings(paths)
	created := map[string]string{} // collection path → id of a record made by POST
	statuses := map[int]int{}
	for _, path := range paths {
		item := doc.Paths.Value(path)
		for _, method := range docMethods {
			op := item.GetOperation(method)
			if op == nil {
				continue
			}
			statuses[docCall(t, c, tn, created, path, method, op)]++
		}
	}
	t.Logf("answers by status: %v", statuses)
	if len(created) < 30 {
		t.Errorf("only %d resources accepted an empty record: %v", len(created), created)
	}
}

// docNoEndpoint is the mux's answer for a path it does not know.
var docNoEndpoint = regexp.MustCompile(`^no endpoint at `)

func docCall(t *testing.T, admin *testenv.Client, tn testenv.Tenant, created map[string]string, path, method string, op *openapi3.Operation) int {
	t.Helper()
	what := method + " " + path
	// The URL: path parameters, then the required query parameters.
	u := path
	collection, _, _ := strings.Cut(path, "/{id}")
	for _, p := range op.Parameters {
		param := p.Value
		if param.In != "path" {
			continue
		}
		v := "999999"
		switch {
		case param.Name == "id" && created[collection] != "":
			v = created[collection]
		case param.Name == "model":
			v = "document"
		case param.Name == "file":
			v = "LICENSE.txt"
		}
		u = strings.ReplaceAll(u, "{"+param.Name+"}", v)
	}
	q := url.Values{}
	tenant, secured := false, false
	for _, p := range op.Parameters {
		param := p.Value
		if param.In == "header" && param.Name == "companyurl" {
			tenant = true
		}
		if param.In != "query" || !param.Required {
			continue
		}
		s := param.Schema.Value
		switch {
		case len(s.Enum) > 0:
			q.Set(param.Name, fmt.Sprint(s.Enum[0]))
		case s.Format == "date":
			q.Set(param.Name, map[string]string{"to": "2026-01-31"}[param.Name])
			if q.Get(param.Name) == "" {
				q.Set(param.Name, "2026-01-01")
			}
		case s.Type.Is("integer"):
			q.Set(param.Name, "1")
		default:
			q.Set(param.Name, "x")
		}
	}
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	if op.Security != nil && len(*op.Security) > 0 {
		secured = true
	}

	// The caller: the tenant and the token where the operation takes them.
	c := admin.Srv.Public()
	if tenant {
		c.Slug = admin.Slug
	}
	if secured {
		c.Token = admin.Token
	}
	var body any // nil: none; a string or a reader: sent with c's Content-Type
	if op.RequestBody != nil {
		content := op.RequestBody.Value.Content
		switch {
		case content.Get("application/json") != nil:
			body = "{}"
		case content.Get("application/x-www-form-urlencoded") != nil:
			c = c.With("Content-Type", "application/x-www-form-urlencoded")
			body = testenv.PasswordForm(tn.AdminEmail, tn.Password).Encode()
		case content.Get("multipart/form-data") != nil:
			var buf bytes.Buffer
			mw := multipart.NewWriter(&buf)
			fw, err := mw.CreateFormFile("file", "a.txt")
			if err != nil {
				t.Fatal(err)
			}
			_, _ = fw.Write([]byte("hello"))
			_ = mw.Close()
			c = c.With("Content-Type", mw.FormDataContentType())
			body = &buf
		default:
			t.Errorf("%s: no body for %v", what, content)
		}
	}

	status, rh, raw := testenv.Do(t, c.Request(t, method, u, body))
	ct, _, _ := mime.ParseMediaType(rh.Get("Content-Type"))
	var value any
	if ct == "application/json" {
		if err := json.Unmarshal(raw, &value); err != nil {
			t.Errorf("%s → %d: the body is not JSON: %.200s", what, status, raw)
			return status
		}
	}

	// The route exists: no 404 from the mux, and 405 exactly where the
	// document says the method is not supported.
	if status == 404 {
		m, _ := value.(map[string]any)
		msg, _ := m["message"].(string)
		if m["code"] != "not_found" || docNoEndpoint.MatchString(msg) {
			t.Errorf("%s (%s) → 404 from the mux: %s", what, u, raw)
			return status
		}
	}
	only405 := op.Responses.Len() == 1 && op.Responses.Status(405) != nil
	if only405 != (status == 405) {
		t.Errorf("%s → %d; documented: %v", what, status, op.Responses.Map())
		return status
	}

	// The status is documented, and the body matches it.
	ref := op.Responses.Status(status)
	if ref == nil || ref.Value == nil {
		t.Errorf("%s (%s) → %d, which the document does not list: %.300s", what, u, status, raw)
		return status
	}
	if len(ref.Value.Content) == 0 {
		return status
	}
	var mt *openapi3.MediaType
	for name, m := range ref.Value.Content {
		if name == ct {
			mt = m
		}
	}
	if mt == nil {
		t.Errorf("%s → %d %s; documented content types: %v", what, status, ct, slices.Collect(maps.Keys(ref.Value.Content)))
		return status
	}
	if ct == "application/json" && mt.Schema != nil && mt.Schema.Value != nil {
		if err := mt.Schema.Value.VisitJSON(value, openapi3.EnableJSONSchema2020(), openapi3.EnableFormatValidation(),
			openapi3.DisableReadOnlyValidation()); err != nil {
			t.Errorf("%s → %d: the body does not match the documented schema: %v\n%.500s", what, status, err, raw)
		}
	}
	if method == "POST" && status == 201 && !strings.Contains(path, "{") {
		if m, ok := value.(map[string]any); ok {
			if id, ok := m["id"].(float64); ok {
				created[path] = fmt.Sprint(int64(id))
			}
		}
	}
	return status
}

// TestDocsPage checks the reference page and its assets without a browser.
func TestDocsPage(t *testing.T) {
	t.Parallel()
	c, _ := docStart(t)
	web := c.Srv.Public()
	status, hdr, page := docGet(t, web, "/docs")
	if status != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /docs: %d %s", status, hdr.Get("Content-Type"))
	}
	if csp := hdr.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}
	if m := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`).Find(page); m != nil {
		t.Errorf("the page names another host: %s", m)
	}
	for _, want := range []string{`src="docs/assets/redoc.standalone.js"`, `spec-url="v1/openapi.json"`} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("the page lacks %s", want)
		}
	}
	for name, want := range map[string]string{
		"redoc.standalone.js":             "text/javascript",
		"redoc.standalone.js.LICENSE.txt": "text/plain",
		"LICENSE.txt":                     "text/plain",
	} {
		status, hdr, body := docGet(t, web, "/docs/assets/"+name)
		if status != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), want) || len(body) == 0 {
			t.Errorf("%s: %d %s, %d bytes", name, status, hdr.Get("Content-Type"), len(body))
		}
		// Conditional and compressed answers.
		status, _, _ = docGet(t, web.With("If-None-Match", hdr.Get("ETag")), "/docs/assets/"+name)
		if status != http.StatusNotModified {
			t.Errorf("%s with If-None-Match: %d", name, status)
		}
	}
	_, _, js := docGet(t, web, "/docs/assets/redoc.standalone.js")
	if !bytes.Contains(js[:4096], []byte("ReDoc")) && !bytes.Contains(js, []byte(`"2.5.4"`)) {
		t.Error("redoc.standalone.js is not Redoc 2.5.4")
	}
	_, _, lic := docGet(t, web, "/docs/assets/LICENSE.txt")
	if !bytes.Contains(lic, []byte("MIT License")) {
		t.Errorf("LICENSE.txt = %.100s", lic)
	}
	status, hdr, gz := docGet(t, web.With("Accept-Encoding", "gzip"), "/docs/assets/redoc.standalone.js")
	if status != 200 || hdr.Get("Content-Encoding") != "gzip" || len(gz) >= len(js)/2 {
		t.Errorf("gzip: %d %q, %d of %d bytes", status, hdr.Get("Content-Encoding"), len(gz), len(js))
	}
	for _, name := range []string{"nope.js", "..%2Fdocs.go", "%2E%2E"} {
		status, _, body := docGet(t, web, "/docs/assets/"+name)
		var m map[string]any
		if status != 404 || json.Unmarshal(body, &m) != nil || m["code"] != "not_found" {
			t.Errorf("asset %s: %d %s", name, status, body)
		}
	}
}
