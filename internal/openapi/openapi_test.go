package openapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"planwerk/internal/httpapi"
	"planwerk/internal/openapi"
	"planwerk/internal/query"
	"planwerk/internal/resource"
	"planwerk/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata/openapi.json from the current registry and route table")

const golden = "testdata/openapi.json"

// routeTable starts the real service and returns its registry, its route
// table as the document builder sees it, and the server.
func routeTable(t *testing.T) (*resource.Registry, []openapi.Route, *testenv.Server) {
	t.Helper()
	srv := testenv.Start(t, testenv.Backend{Name: "sqlite"})
	var routes []openapi.Route
	for _, rt := range srv.Service.Handler.Routes() {
		a := openapi.Public
		switch rt.Auth {
		case httpapi.Tenant:
			a = openapi.Tenant
		case httpapi.Bearer:
			a = openapi.Bearer
		}
		routes = append(routes, openapi.Route{Method: rt.Method, Path: rt.Path, Auth: a})
	}
	return resource.New(), routes, srv
}

func build(t *testing.T) ([]byte, *openapi.Document, *testenv.Server) {
	t.Helper()
	reg, routes, srv := routeTable(t)
	doc := openapi.Build(reg, routes)
	out, err := doc.JSON()
	if err != nil {
		t.Fatal(err)
	}
	return out, doc, srv
}

// TestOpenAPIGolden compares the document and its 3.0 rendition with
// testdata/openapi.json and testdata/openapi-3.0.json (run with -update to
// accept a change) and with what the server serves.
func TestOpenAPIGolden(t *testing.T) {
	t.Parallel()
	out, doc, srv := build(t)
	out30 := render30(t, doc)
	for _, f := range []struct {
		golden, path string
		out          []byte
	}{{golden, "/v1/openapi.json", out}, {golden30, "/v1/openapi-3.0.json", out30}} {
		if *update {
			if err := os.MkdirAll(filepath.Dir(f.golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f.golden, f.out, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(f.golden)
		if err != nil {
			t.Fatalf("%v (run go test ./internal/openapi -run OpenAPIGolden -update)", err)
		}
		if !bytes.Equal(f.out, want) {
			t.Errorf("the document differs from %s; if the change is intended, run go test ./internal/openapi -run OpenAPIGolden -update\n%s",
				f.golden, firstDifference(want, f.out))
		}
		resp, err := http.Get(srv.URL + f.path)
		if err != nil {
			t.Fatal(err)
		}
		served, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("GET %s: %d %s", f.path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if !bytes.Equal(served, f.out) {
			t.Errorf("the served %s differs from the generated one\n%s", f.path, firstDifference(f.out, served))
		}
	}
}

const golden30 = "testdata/openapi-3.0.json"

func render30(t *testing.T, doc *openapi.Document) []byte {
	t.Helper()
	d30, err := doc.OpenAPI30()
	if err != nil {
		t.Fatal(err)
	}
	out, err := d30.JSON()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func firstDifference(want, got []byte) string {
	wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n  want " + w + "\n  got  " + g
		}
	}
	return ""
}

// TestOpenAPIDescriptionsMatchRoutes fails when a route has no
// description, a description has no route, or a resource operation of the
// registry is not routed.
func TestOpenAPIDescriptionsMatchRoutes(t *testing.T) {
	t.Parallel()
	reg, routes, _ := routeTable(t)
	for _, p := range openapi.Check(reg, routes) {
		t.Error(p)
	}
}

// TestOpenAPICheckFindsDrift proves Check notices each kind of drift.
func TestOpenAPICheckFindsDrift(t *testing.T) {
	t.Parallel()
	reg, routes, _ := routeTable(t)
	extra := append(slices.Clone(routes), openapi.Route{Method: "GET", Path: "/v1/reports/{id}", Auth: openapi.Bearer})
	wantProblem(t, openapi.Check(reg, extra), "route GET /v1/reports/{id} has no description")
	// An undescribed route is still documented, with its path parameter.
	doc := openapi.Build(reg, extra)
	item := doc.Paths["/v1/reports/{id}"]
	if item == nil || item.Get == nil || len(item.Get.Parameters) == 0 || item.Get.Parameters[0].Name != "id" {
		t.Errorf("undescribed route not documented: %+v", item)
	}

	var without []openapi.Route
	for _, rt := range routes {
		if rt.Method+" "+rt.Path != "GET /healthz" && rt.Method+" "+rt.Path != "DELETE /v1/clients/{id}" {
			without = append(without, rt)
		}
	}
	problems := openapi.Check(reg, without)
	wantProblem(t, problems, "description GET /healthz has no route")
	wantProblem(t, problems, "resource operation DELETE /v1/clients/{id} (clients) has no route")
	if len(problems) != 2 {
		t.Errorf("problems = %q, want 2", problems)
	}
}

func wantProblem(t *testing.T, problems []string, want string) {
	t.Helper()
	if !slices.ContainsFunc(problems, func(p string) bool { return strings.HasPrefix(p, want) }) {
		t.Errorf("Check = %q, want it to report %q", problems, want)
	}
}

// TestOpenAPIKinValidation validates the OpenAPI 3.1 document itself (not
// a 3.0 rendering of it) with kin-openapi, which checks 3.1 documents with
// its JSON Schema 2020-12 support.
func TestOpenAPIKinValidation(t *testing.T) {
	t.Parallel()
	out, _, _ := build(t)
	doc := kinLoad(t, out)
	if !doc.IsOpenAPI31OrLater() || doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi = %q", doc.OpenAPI)
	}
	if err := kinValidate(doc); err != nil {
		t.Fatalf("kin-openapi: the document is not valid:\n%v", err)
	}
}

// TestOpenAPI30Validation validates the 3.0 rendition with kin-openapi,
// whose home dialect it is, and checks that none of 3.1's spellings is
// left in it.
func TestOpenAPI30Validation(t *testing.T) {
	t.Parallel()
	_, doc, _ := build(t)
	out := render30(t, doc)
	d := kinLoad(t, out)
	if d.OpenAPI != "3.0.3" {
		t.Fatalf("openapi = %q", d.OpenAPI)
	}
	if err := kinValidate(d); err != nil {
		t.Fatalf("kin-openapi: the 3.0 rendition is not valid:\n%v", err)
	}
	var raw any
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatal(err)
	}
	walk(raw, "", func(path string, m map[string]any) {
		if _, ok := m["type"].([]any); ok {
			t.Errorf("%s: type list in 3.0", path)
		}
		if m["type"] == "null" {
			t.Errorf("%s: type null in 3.0", path)
		}
		for _, k := range []string{"examples", "const", "contentMediaType"} {
			if _, ok := m[k]; ok && !strings.Contains(path, "/properties/"+k) && !strings.HasSuffix(path, "/content/application/json") {
				if _, isSchema := m["type"]; isSchema {
					t.Errorf("%s: %s in 3.0", path, k)
				}
			}
		}
	})
}

// walk calls f with every object of a decoded JSON value and its path.
func walk(v any, path string, f func(string, map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		f(path, x)
		for k, e := range x {
			walk(e, path+"/"+k, f)
		}
	case []any:
		for i, e := range x {
			walk(e, path+"/"+strconv.Itoa(i), f)
		}
	}
}

// TestOpenAPIGeneratorFriendly checks what made generated clients fail:
// schema names that generators use for their own types, enums holding
// null (3.0), parameters with content instead of a plain schema, property
// names that yield no identifier without a name extension, and references
// typed as "the id or the record".
func TestOpenAPIGeneratorFriendly(t *testing.T) {
	t.Parallel()
	out, doc, _ := build(t)
	reserved := map[string]bool{"Client": true, "ClientInterface": true, "ClientWithResponses": true,
		"ClientWithResponsesInterface": true, "ClientOption": true, "HttpRequestDoer": true, "RequestEditorFn": true,
		"Server": true, "Handler": true, "Invoker": true, "Option": true, "ServerOption": true, "ClientOption ": true,
		"SecuritySource": true, "SecurityHandler": true, "Labeler": true, "UnimplementedHandler": true}
	ops := map[string]bool{}
	for _, item := range doc.Paths {
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			if op := item.Operation(m); op != nil {
				id := strings.ToUpper(op.OperationID[:1]) + op.OperationID[1:]
				for _, suffix := range []string{"Response", "Params", "JSONRequestBody", "JSONBody", "FormdataRequestBody",
					"FormdataBody", "MultipartRequestBody", "MultipartBody", "Res", "Req", "OK", "Created"} {
					ops[id+suffix] = true
				}
			}
		}
	}
	for name := range doc.Components.Schemas {
		if reserved[name] || ops[name] {
			t.Errorf("schema %s has a name generated clients use for their own types", name)
		}
	}
	// oapi-codegen makes a type of every component: their names must differ.
	kinds := map[string]string{}
	seen := func(kind, name string) {
		n := strings.ToUpper(name[:1]) + name[1:]
		if k, ok := kinds[n]; ok {
			t.Errorf("%s %s and %s %s make the same type name", kind, name, k, n)
		}
		kinds[n] = kind
	}
	for name := range doc.Components.Schemas {
		seen("schema", name)
	}
	for name := range doc.Components.Parameters {
		seen("parameter", name)
	}
	for name := range doc.Components.Responses {
		seen("response", name)
	}
	d30, err := doc.OpenAPI30()
	if err != nil {
		t.Fatal(err)
	}
	raw30, err := d30.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var v30 any
	if err := json.Unmarshal(raw30, &v30); err != nil {
		t.Fatal(err)
	}
	walk(v30, "", func(path string, m map[string]any) {
		if e, ok := m["enum"].([]any); ok && slices.Contains(e, nil) {
			t.Errorf("3.0 %s: enum holds null", path)
		}
	})
	var raw any
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatal(err)
	}
	ident := regexp.MustCompile(`[A-Za-z0-9]`)
	walk(raw, "", func(path string, m map[string]any) {
		if props, ok := m["properties"].(map[string]any); ok && !strings.HasSuffix(path, "/properties") {
			for name, p := range props {
				if pm, _ := p.(map[string]any); !ident.MatchString(name) && (pm["x-go-name"] == nil || pm["x-ogen-name"] == nil) {
					t.Errorf("%s: property %q has no name extensions", path, name)
				}
			}
		}
		if _, ok := m["anyOf"]; ok && strings.Contains(path, "/properties/") {
			t.Errorf("%s: a property is a union", path)
		}
	})
	for name, p := range doc.Components.Parameters {
		if p.Content != nil {
			t.Errorf("parameter %s has content", name)
		}
	}
	for path, item := range doc.Paths {
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			if op := item.Operation(m); op != nil {
				for _, p := range op.Parameters {
					if p.Content != nil {
						t.Errorf("%s %s: parameter %s has content", m, path, p.Name)
					}
				}
			}
		}
	}
}

// kinValidate validates a document with formats, patterns, defaults and
// examples checked.
func kinValidate(doc *openapi3.T) error {
	return doc.Validate(context.Background(),
		openapi3.EnableSchemaFormatValidation(),
		openapi3.EnableSchemaPatternValidation(),
		openapi3.EnableSchemaDefaultsValidation(),
		openapi3.EnableExamplesValidation(),
		openapi3.EnableMultiError(),
	)
}

func kinLoad(t *testing.T, data []byte) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		t.Fatalf("kin-openapi cannot load the document: %v", err)
	}
	return doc
}

// TestOpenAPIContents checks what the document says about resources,
// security, tenants, errors and the token endpoint.
func TestOpenAPIContents(t *testing.T) {
	t.Parallel()
	out, doc, _ := build(t)
	var raw map[string]any
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q", doc.OpenAPI)
	}

	// Security schemes, as docs/api.md "Authentication" names them.
	ss := doc.Components.SecuritySchemes
	if o := ss["OAuth2Password"]; o.Type != "oauth2" || o.Flows == nil || o.Flows.Password == nil ||
		o.Flows.Password.TokenURL != "/oauth2/token" || o.Flows.Password.Scopes == nil {
		t.Errorf("OAuth2Password = %+v", o)
	}
	if b := ss["BearerAuth"]; b.Type != "http" || b.Scheme != "bearer" {
		t.Errorf("BearerAuth = %+v", b)
	}
	if o := ss["OAuth2Password"]; o.Flows == nil || o.Flows.ClientCredentials == nil ||
		o.Flows.ClientCredentials.TokenURL != "/oauth2/token" || len(o.Flows.ClientCredentials.Scopes) != 2 ||
		o.Flows.ClientCredentials.Scopes["read"] == "" || o.Flows.ClientCredentials.Scopes["write"] == "" {
		t.Errorf("OAuth2Password has no client-credentials flow with the scopes read and write: %+v", o.Flows)
	}

	// Error responses and the Error schema.
	for status, name := range map[string]string{"400": "BadRequest", "401": "Unauthorized", "403": "Forbidden",
		"404": "NotFound", "409": "Conflict", "413": "PayloadTooLarge",
		"429": "TooManyRequests", "500": "InternalError"} {
		r := doc.Components.Responses[name]
		if r == nil || r.Content["application/json"].Schema["$ref"] != "#/components/schemas/Error" {
			t.Errorf("%s (%s) = %+v", name, status, r)
		}
	}
	if h := doc.Components.Responses["TooManyRequests"].Headers["Retry-After"]; h.Ref == "" {
		t.Error("429 has no Retry-After header")
	}
	for _, h := range []string{"companyurl", "origin", "referrer", "referer"} {
		if p := doc.Components.Parameters[h]; p.In != "header" || p.Name != h {
			t.Errorf("tenant header %s = %+v", h, p)
		}
	}

	// Every resource: list, get, and unless read-only the writes.
	reg := resource.New()
	for _, r := range reg.All() {
		base, one := doc.Paths[r.Path()], doc.Paths[r.Path()+"/{id}"]
		if base == nil || one == nil || base.Get == nil || one.Get == nil {
			t.Errorf("%s: list or get missing", r.Name)
			continue
		}
		names := map[string]bool{}
		for _, p := range base.Get.Parameters {
			if p.Ref != "" {
				p = doc.Components.Parameters[strings.TrimPrefix(p.Ref, "#/components/parameters/")]
			}
			names[p.Name] = true
			if p.Name == "where" && r.DeclaredOnly && (p.Schema["type"] != "string" || !strings.Contains(p.Description, "`"+r.Model+"Where`")) {
				t.Errorf("%s list: where = %+v", r.Name, p)
			}
		}
		for _, want := range []string{"where", "limit", "skip", "sort", "id", "createdAt", "updatedAt"} {
			if !names[want] {
				t.Errorf("%s list: no parameter %s", r.Name, want)
			}
		}
		for _, a := range r.Attrs {
			if !a.WriteOnly && !names[a.Name] {
				t.Errorf("%s list: no filter parameter %s", r.Name, a.Name)
			}
		}
		for _, p := range r.Params {
			if !names[p] {
				t.Errorf("%s list: no parameter %s", r.Name, p)
			}
		}
		if base.Get.Security == nil || len(*base.Get.Security) != 2 {
			t.Errorf("%s list: security = %v", r.Name, base.Get.Security)
		}
		if base.Get.Deprecated != r.Deprecated || one.Get.Deprecated != r.Deprecated {
			t.Errorf("%s: deprecated = %v, want %v", r.Name, base.Get.Deprecated, r.Deprecated)
		}
		schema := doc.Components.Schemas[openapi.SchemaName(r.Model)]
		if schema == nil || schema["additionalProperties"] != !r.DeclaredOnly {
			t.Errorf("%s: schema %v", r.Name, schema)
		}
		if r.Deprecated && schema["deprecated"] != true {
			t.Errorf("%s: schema not deprecated", r.Name)
		}
		for _, op := range []*openapi.Operation{base.Post, one.Patch, one.Put, one.Delete} {
			switch {
			case r.ReadOnly && op != nil:
				t.Errorf("%s is read-only: %s is documented", r.Name, op.OperationID)
			case !r.ReadOnly && op == nil:
				t.Errorf("%s: a write is not documented", r.Name)
			case op != nil && op.Responses["405"] != nil:
				t.Errorf("%s: %s documents 405", r.Name, op.OperationID)
			}
		}
	}

	// ProjectDay: declared only, no contains, enums.
	pd := raw["components"].(map[string]any)["schemas"].(map[string]any)["ProjectDay"].(map[string]any)
	vs := pd["properties"].(map[string]any)["validationStatus"].(map[string]any)
	if !slices.Equal(anyStrings(vs["enum"]), []string{"NOTAPPROVED", "APPROVED", ""}) {
		t.Errorf("ProjectDay.validationStatus = %v", vs)
	}
	where := raw["components"].(map[string]any)["schemas"].(map[string]any)["ProjectDayWhere"].(map[string]any)
	if where["additionalProperties"] != false || where["properties"].(map[string]any)["day"].(map[string]any)["$ref"] != "#/components/schemas/CriterionNoContains" {
		t.Errorf("ProjectDayWhere = %v", where)
	}
	// References name their target's schema.
	// References are ids; populate says what they become.
	te := raw["components"].(map[string]any)["schemas"].(map[string]any)["TimeEntry"].(map[string]any)
	if got := jsonString(te["properties"].(map[string]any)["project"].(map[string]any)["type"]); got != `["integer","null"]` {
		t.Errorf("TimeEntry.project type = %s", got)
	}
	for _, p := range doc.Paths["/v1/time-entries"].Get.Parameters {
		if p.Name == "populate" && (p.Schema["type"] != "string" || !strings.Contains(p.Description, "(schema `Project`)")) {
			t.Errorf("time-entries populate = %+v", p)
		}
	}
	// The field rules of time entries are in its schemas.
	for _, name := range []string{"TimeEntry", "TimeEntryCreate", "TimeEntryUpdate"} {
		d, _ := raw["components"].(map[string]any)["schemas"].(map[string]any)[name].(map[string]any)["description"].(string)
		for _, want := range []string{"| WORKTIME | any | `startTime`, `endTime` | `project`, `task`, `duration`, `sorting` |",
			"timerMode START_TIME_END_TIME", "useWorktime true"} {
			if !strings.Contains(d, want) {
				t.Errorf("%s description lacks %q", name, want)
			}
		}
	}
	// The password is write-only: in the bodies, never in the record.
	users := raw["components"].(map[string]any)["schemas"].(map[string]any)
	if _, ok := users["User"].(map[string]any)["properties"].(map[string]any)["password"]; ok {
		t.Error("User record documents password")
	}
	if users["UserCreate"].(map[string]any)["properties"].(map[string]any)["password"].(map[string]any)["writeOnly"] != true {
		t.Error("UserCreate.password is not writeOnly")
	}

	// The token endpoint: form body with both grants, token response, RFC 6749 errors.
	tok := doc.Paths["/oauth2/token"]
	if tok == nil || tok.Post == nil {
		t.Fatal("POST /oauth2/token not documented")
	}
	if _, ok := tok.Post.RequestBody.Content["application/x-www-form-urlencoded"]; !ok {
		t.Errorf("token request body = %+v", tok.Post.RequestBody)
	}
	tr := users["TokenRequest"].(map[string]any)
	if gt := tr["properties"].(map[string]any)["grant_type"].(map[string]any)["enum"]; !slices.Equal(anyStrings(gt), []string{"password", "refresh_token", "client_credentials"}) {
		t.Errorf("TokenRequest.grant_type = %v", gt)
	}
	if req := anyStrings(tr["required"]); !slices.Contains(req, "client_id") || !slices.Contains(req, "client_secret") {
		t.Errorf("TokenRequest.required = %v", req)
	}
	if tok.Post.Responses["200"].Content["application/json"].Schema["$ref"] != "#/components/schemas/TokenResponse" ||
		tok.Post.Responses["400"].Content["application/json"].Schema["$ref"] != "#/components/schemas/OAuthError" ||
		tok.Post.Responses["429"].Headers["Retry-After"].Ref == "" {
		t.Errorf("token responses = %+v", tok.Post.Responses)
	}
	if tok.Post.Security == nil || len(*tok.Post.Security) != 0 {
		t.Errorf("token endpoint security = %v, want []", tok.Post.Security)
	}
	checkWebhookSecurity(t, raw)
}

// checkWebhookSecurity checks that every webhook operation of the rendered
// document says "security": [] itself. Deliveries carry no bearer token
// (they are signed), and without its own empty security an operation
// inherits the document's global one: ogen then generates a WebhookClient
// that asks for security it has no source for, and does not compile.
func checkWebhookSecurity(t *testing.T, raw map[string]any) {
	t.Helper()
	hooks, _ := raw["webhooks"].(map[string]any)
	ops := 0
	for name, item := range hooks {
		for method, op := range item.(map[string]any) {
			ops++
			sec, ok := op.(map[string]any)["security"]
			if list, isList := sec.([]any); !ok || !isList || len(list) != 0 {
				t.Errorf("webhook %s %s: security = %s, want its own []", name, method, jsonString(sec))
			}
			if d, _ := op.(map[string]any)["description"].(string); !strings.Contains(d, "signed") {
				t.Errorf("webhook %s %s: the description does not say that the request is signed", name, method)
			}
		}
	}
	if ops == 0 {
		t.Error("the document describes no webhook operation")
	}
}

func anyStrings(v any) []string {
	var out []string
	for _, e := range v.([]any) {
		s, _ := e.(string)
		out = append(out, s)
	}
	return out
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestOpenAPIWhereSchemaAgreesWithParser checks the documented criteria
// schema against the list query parser: criteria the parser takes
// validate, and criteria it refuses for their shape do not.
func TestOpenAPIWhereSchemaAgreesWithParser(t *testing.T) {
	t.Parallel()
	out, _, _ := build(t)
	doc := kinLoad(t, out)
	reg := resource.New()
	cases := []struct {
		resource, where string
		ok              bool
	}{
		{"clients", `{}`, true},
		{"clients", `{"name": "Acme"}`, true},
		{"clients", `{"name": ["Acme", "Beta"], "size": null}`, true},
		{"clients", `{"size": {">=": 5, "<": 10}, "name": {"startsWith": "A", "contains": "c"}}`, true},
		{"clients", `{"or": [{"a": 1}, {"and": [{"b": {"!=": null}}, {"c": {"nin": []}}]}]}`, true},
		{"clients", `{"a": {"in": [1, "x", true, null]}}`, true},
		{"clients", `{"a": {}}`, false},
		{"clients", `{"a": {"like": "x"}}`, false},
		{"clients", `{"a": {"in": 5}}`, false},
		{"clients", `{"or": {"a": 1}}`, false},
		{"clients", `{"or": [5]}`, false},
		{"clients", `{"a": {"startsWith": 5}}`, false},
		{"project-days", `{"day": {">=": "2026-01-01"}, "validationStatus": "APPROVED"}`, true},
		{"project-days", `{"or": [{"project": [1, 2]}, {"id": {"!=": 3}}]}`, true},
		{"project-days", `{"color": "red"}`, false},
		{"project-days", `{"day": {"contains": "2026"}}`, false},
		{"project-days", `{"and": [{"note": 1}]}`, false},
	}
	for _, c := range cases {
		r, _ := reg.Get(c.resource)
		_, perr := query.Parse(url.Values{"where": {c.where}}, r.Schema())
		if (perr == nil) != c.ok {
			t.Errorf("%s where=%s: parser error %v, want ok=%v", c.resource, c.where, perr, c.ok)
		}
		name := "Where"
		if r.DeclaredOnly {
			name = r.Model + "Where"
		}
		var v any
		if err := json.Unmarshal([]byte(c.where), &v); err != nil {
			t.Fatal(err)
		}
		serr := doc.Components.Schemas[name].Value.VisitJSON(v, openapi3.EnableJSONSchema2020())
		if (serr == nil) != c.ok {
			t.Errorf("%s where=%s: schema %s says %v, want ok=%v", c.resource, c.where, name, serr, c.ok)
		}
	}
}
