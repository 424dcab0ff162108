// Package openapi builds the OpenAPI 3.1 document of the whole API from
// the two tables that define it: the resource registry (every resource's
// list, get and write operations, its schema and its list filters) and the
// HTTP route table (everything else, described by a small table of
// operation descriptions keyed by "METHOD PATH"). Nothing is written by
// hand per resource, so the document cannot drift from the service: a
// route without a description, or a description without a route, is
// reported by Check, and the tests fail on it.
package openapi

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"planwerk/internal/jsontext"
	"planwerk/internal/resource"
)

// Version is the OpenAPI version of the document.
const Version = "3.1.0"

// Auth says what a route requires of a request (the route table's
// Public, Tenant and Bearer).
type Auth int

// Route requirements.
const (
	Public Auth = iota // nothing
	Tenant             // a tenant header
	Bearer             // a tenant header and a bearer token
)

// Route is one entry of the HTTP route table.
type Route struct {
	Method string
	Path   string // with {name} wildcards
	Auth   Auth
}

func (r Route) key() string { return r.Method + " " + r.Path }

// Schema is a JSON Schema (2020-12, as OpenAPI 3.1 uses it).
type Schema = map[string]any

// Document is an OpenAPI 3.1 document.
type Document struct {
	OpenAPI   string                `json:"openapi"`
	Info      Info                  `json:"info"`
	Servers   []Server              `json:"servers,omitempty"`
	Security  []map[string][]string `json:"security"`
	Tags      []Tag                 `json:"tags,omitempty"`
	TagGroups []TagGroup            `json:"x-tagGroups,omitempty"`
	Paths     map[string]*PathItem  `json:"paths"`
	// Webhooks are the requests the service makes: webhook deliveries
	// (OpenAPI 3.1; 3.0 has no such field).
	Webhooks   map[string]*PathItem `json:"webhooks,omitempty"`
	Components Components           `json:"components"`
}

// Info is the document's info object.
type Info struct {
	Title       string `json:"title"`
	Version     string `json:"version"`
	Summary     string `json:"summary,omitempty"`
	Description string `json:"description,omitempty"`
}

// Server is a server object.
type Server struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
}

// Tag groups operations.
type Tag struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// TagGroup is Redoc's x-tagGroups entry.
type TagGroup struct {
	Name string   `json:"name"`
	Tags []string `json:"tags"`
}

// PathItem holds the operations of one path, in the order a reader
// expects them.
type PathItem struct {
	Get    *Operation `json:"get,omitempty"`
	Post   *Operation `json:"post,omitempty"`
	Put    *Operation `json:"put,omitempty"`
	Patch  *Operation `json:"patch,omitempty"`
	Delete *Operation `json:"delete,omitempty"`
}

// methods are the HTTP methods a PathItem holds.
var methods = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

// slot returns the field of a method, nil for a method a PathItem cannot hold.
func (p *PathItem) slot(method string) **Operation {
	switch method {
	case "GET":
		return &p.Get
	case "POST":
		return &p.Post
	case "PUT":
		return &p.Put
	case "PATCH":
		return &p.Patch
	case "DELETE":
		return &p.Delete
	}
	return nil
}

// Operation returns the operation of a method, or nil.
func (p *PathItem) Operation(method string) *Operation {
	if s := p.slot(method); s != nil {
		return *s
	}
	return nil
}

// Operation is one operation.
type Operation struct {
	Tags        []string               `json:"tags,omitempty"`
	Summary     string                 `json:"summary"`
	Description string                 `json:"description,omitempty"`
	OperationID string                 `json:"operationId"`
	Deprecated  bool                   `json:"deprecated,omitempty"`
	Security    *[]map[string][]string `json:"security,omitempty"`
	Parameters  []Parameter            `json:"parameters,omitempty"`
	RequestBody *RequestBody           `json:"requestBody,omitempty"`
	Responses   map[string]*Response   `json:"responses"`
	// record: the answer carries one record (ETag, conditional requests).
	record bool
}

// Parameter is a parameter, or a reference to one.
type Parameter struct {
	Ref         string               `json:"$ref,omitempty"`
	Name        string               `json:"name,omitempty"`
	In          string               `json:"in,omitempty"`
	Description string               `json:"description,omitempty"`
	Required    bool                 `json:"required,omitempty"`
	Style       string               `json:"style,omitempty"`
	Explode     *bool                `json:"explode,omitempty"`
	Schema      Schema               `json:"schema,omitempty"`
	Content     map[string]MediaType `json:"content,omitempty"`
	Example     any                  `json:"example,omitempty"`
}

// RequestBody is a request body.
type RequestBody struct {
	Description string               `json:"description,omitempty"`
	Required    bool                 `json:"required,omitempty"`
	Content     map[string]MediaType `json:"content"`
}

// MediaType is the schema of one content type.
type MediaType struct {
	Schema  Schema `json:"schema,omitempty"`
	Example any    `json:"example,omitempty"`
}

// Response is a response, or a reference to one.
type Response struct {
	Ref         string               `json:"$ref,omitempty"`
	Description string               `json:"description,omitempty"`
	Headers     map[string]Header    `json:"headers,omitempty"`
	Content     map[string]MediaType `json:"content,omitempty"`
}

// Header is a response header, or a reference to one.
type Header struct {
	Ref         string `json:"$ref,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
	Schema      Schema `json:"schema,omitempty"`
}

// Components are the reusable parts of the document.
type Components struct {
	Schemas         map[string]Schema         `json:"schemas"`
	Parameters      map[string]Parameter      `json:"parameters"`
	Headers         map[string]Header         `json:"headers"`
	Responses       map[string]*Response      `json:"responses"`
	SecuritySchemes map[string]SecurityScheme `json:"securitySchemes"`
}

// SecurityScheme is a security scheme.
type SecurityScheme struct {
	Type         string      `json:"type"`
	Description  string      `json:"description,omitempty"`
	Scheme       string      `json:"scheme,omitempty"`
	BearerFormat string      `json:"bearerFormat,omitempty"`
	Flows        *OAuthFlows `json:"flows,omitempty"`
}

// OAuthFlows are the OAuth2 flows of a scheme.
type OAuthFlows struct {
	Password          *OAuthFlow `json:"password,omitempty"`
	ClientCredentials *OAuthFlow `json:"clientCredentials,omitempty"`
}

// OAuthFlow is one OAuth2 flow.
type OAuthFlow struct {
	TokenURL   string            `json:"tokenUrl"`
	RefreshURL string            `json:"refreshUrl,omitempty"`
	Scopes     map[string]string `json:"scopes"`
}

// Names of the security schemes (docs/api.md "Authentication").
const (
	SchemeOAuth2 = "OAuth2Password"
	SchemeBearer = "BearerAuth"
	// TokenURL is the token endpoint.
	TokenURL  = "/oauth2/token"
	RevokeURL = "/oauth2/revoke"
)

// Build returns the document of the API: the resources of reg and the
// routes of the route table. Routes that are a resource's generic
// endpoints are described from the registry; every other route from the
// description table. A route the table does not describe still appears,
// with a bare operation (Check reports it).
func Build(reg *resource.Registry, routes []Route) *Document {
	b := &builder{
		reg: reg,
		doc: &Document{
			OpenAPI: Version,
			Info: Info{
				Title:       "Planwerk API",
				Version:     "v1",
				Summary:     "Workforce, project and absence management: a multi-tenant HTTP/JSON service.",
				Description: overview,
			},
			Servers:  []Server{{URL: "/", Description: "this server"}},
			Security: bearer(),
			Paths:    map[string]*PathItem{},
			Components: Components{
				Schemas:         map[string]Schema{},
				Parameters:      map[string]Parameter{},
				Headers:         map[string]Header{},
				Responses:       map[string]*Response{},
				SecuritySchemes: securitySchemes(),
			},
		},
	}
	b.common()
	b.safeWriteComponents()
	b.auditComponents()
	resourceRoutes := b.resources(routes)
	for _, rt := range routes {
		if resourceRoutes[rt.key()] {
			continue
		}
		b.route(rt)
	}
	b.doc.Webhooks = webhookDeliveryDoc()
	b.tags()
	return b.doc
}

// JSON returns the document as indented JSON, markup as itself.
func (d *Document) JSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := jsontext.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	return buf.Bytes(), nil
}

// Check reports where the route table, the registry and the description
// table disagree: a route that is neither a resource's generic endpoint
// nor described, a description without a route, and a resource operation
// the route table does not have.
func Check(reg *resource.Registry, routes []Route) []string {
	var problems []string
	have := map[string]bool{}
	for _, rt := range routes {
		have[rt.key()] = true
	}
	generic := map[string]bool{}
	for _, r := range reg.All() {
		for _, op := range resourceOps(r) {
			k := op.method + " " + op.path
			generic[k] = true
			if !have[k] {
				problems = append(problems, fmt.Sprintf("resource operation %s (%s) has no route", k, r.Name))
			}
		}
	}
	for _, rt := range routes {
		k := rt.key()
		if generic[k] {
			continue
		}
		if _, ok := descriptions[k]; !ok {
			problems = append(problems, fmt.Sprintf("route %s has no description in the openapi description table", k))
		}
		if slot := (&PathItem{}).slot(rt.Method); slot == nil {
			problems = append(problems, fmt.Sprintf("route %s: method %s cannot be documented", k, rt.Method))
		}
	}
	for k := range descriptions {
		if !have[k] {
			problems = append(problems, fmt.Sprintf("description %s has no route", k))
		}
	}
	sort.Strings(problems)
	return problems
}

// OpenAPIPath turns a route pattern's path into an OpenAPI path template:
// "{name...}" becomes "{name}", and "{$}" is dropped.
func OpenAPIPath(p string) string {
	p = strings.ReplaceAll(p, "{$}", "")
	p = strings.ReplaceAll(p, "...}", "}")
	return p
}

// pathParams returns the names of a path template's parameters.
func pathParams(p string) []string {
	var names []string
	for {
		i := strings.IndexByte(p, '{')
		if i < 0 {
			return names
		}
		j := strings.IndexByte(p[i:], '}')
		if j < 0 {
			return names
		}
		names = append(names, p[i+1:i+j])
		p = p[i+j+1:]
	}
}

type builder struct {
	reg  *resource.Registry
	doc  *Document
	used map[string]bool // tags in use
}

// add puts an operation into the document.
func (b *builder) add(method, path string, op *Operation) {
	path = OpenAPIPath(path)
	item := b.doc.Paths[path]
	if item == nil {
		item = &PathItem{}
		b.doc.Paths[path] = item
	}
	slot := item.slot(method)
	if slot == nil {
		return
	}
	b.safeWrite(method, op)
	b.changeReason(method, op)
	*slot = op
	if b.used == nil {
		b.used = map[string]bool{}
	}
	for _, t := range op.Tags {
		b.used[t] = true
	}
}

// route documents a route that is not a resource's generic endpoint.
func (b *builder) route(rt Route) {
	d, ok := descriptions[rt.key()]
	if !ok {
		d = opDesc{
			ID:      operationID(rt.Method, rt.Path),
			Tag:     tagOperations,
			Summary: rt.Method + " " + rt.Path,
			OK:      okJSON(200, "The answer.", Schema{}),
		}
	}
	op := &Operation{
		Tags:        []string{d.Tag},
		Summary:     d.Summary,
		Description: d.Description,
		OperationID: d.ID,
		Deprecated:  d.Deprecated,
		Responses:   map[string]*Response{},
		record:      d.Record,
	}
	op.Parameters = append(op.Parameters, b.pathParameters(rt.Path, d.PathParams)...)
	op.Parameters = append(op.Parameters, d.Params...)
	b.secure(op, rt.Auth)
	op.RequestBody = d.Body
	if d.Responses != nil {
		for status, r := range d.Responses {
			op.Responses[status] = r
		}
	} else {
		errors := d.Errors
		if rt.Auth == Bearer && rt.Method != "GET" {
			errors = append(errors, 403) // a token of the read scope writes nothing
		}
		b.errors(op, rt.Auth, len(pathParams(rt.Path)) > 0, errors...)
		for status, desc := range d.Refusals {
			if status == http.StatusForbidden && rt.Auth != Public {
				desc += " " + suspendedRefusal
			}
			op.Responses[strconv.Itoa(status)] = errorResponse(desc, b.doc.Components.Responses[errorResponses[status]])
		}
	}
	op.Responses[d.OK.status] = d.OK.response
	if d.RateLimited != nil {
		rateLimited(op, d.RateLimited)
	}
	b.add(rt.Method, rt.Path, op)
}

// rateLimited names the RateLimit fields on the answers of a rate-limited
// operation: its successes, its 429 (a shared one becomes the one that
// names them) and the refusals of the given statuses that it describes
// itself.
func rateLimited(op *Operation, refusals []int) {
	for status, r := range op.Responses {
		switch {
		case status == "429" && r.Ref != "":
			op.Responses[status] = &Response{Ref: "#/components/responses/RateLimited"}
		case r.Ref != "":
		case strings.HasPrefix(status, "2"), status == "429", slices.Contains(refusals, atoi(status)):
			op.Responses[status] = withHeader(withHeader(r, "RateLimit-Policy"), "RateLimit")
		}
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// bearer is the security of data requests: a bearer token, which the
// OAuth2 password flow issues.
func bearer() []map[string][]string {
	return []map[string][]string{{SchemeBearer: {}}, {SchemeOAuth2: {}}}
}

// secure sets an operation's security (none unless it needs a token) and
// tenant headers.
func (b *builder) secure(op *Operation, a Auth) {
	sec := []map[string][]string{}
	if a == Bearer {
		sec = bearer()
	}
	op.Security = &sec
	if a == Public {
		return
	}
	for _, name := range tenantHeaders {
		op.Parameters = append(op.Parameters, Parameter{Ref: "#/components/parameters/" + name})
	}
}

// errors adds the error answers of an operation: those every request of
// its kind can get, and extra.
func (b *builder) errors(op *Operation, a Auth, hasPathParams bool, extra ...int) {
	// Any request may meet a dependency that is down; any of a tenant a
	// full disk, its tenant's share used up and its tenant suspended; any
	// with a body a client that stops sending it.
	statuses := []int{500, 503}
	if a != Public {
		statuses = append(statuses, 400, 403, 429, 507)
	}
	if op.RequestBody != nil {
		statuses = append(statuses, 408)
	}
	if a == Bearer {
		statuses = append(statuses, 401)
	}
	if hasPathParams {
		statuses = append(statuses, 404)
	}
	statuses = append(statuses, extra...)
	for _, s := range statuses {
		name, ok := errorResponses[s]
		if !ok {
			panic(fmt.Sprintf("openapi: no error response for status %d", s))
		}
		op.Responses[fmt.Sprint(s)] = &Response{Ref: "#/components/responses/" + name}
	}
}

// pathParameters declares the parameters of a path template: from the
// description's overrides, else by name.
func (b *builder) pathParameters(path string, overrides map[string]Parameter) []Parameter {
	var out []Parameter
	for _, name := range pathParams(OpenAPIPath(path)) {
		p, ok := overrides[name]
		if !ok {
			p = Parameter{Description: "identifier", Schema: Schema{"type": "string"}}
			if def, ok := defaultPathParams[name]; ok {
				p = def
			}
		}
		p.Name, p.In, p.Required = name, "path", true
		out = append(out, p)
	}
	return out
}

// defaultPathParams are the path parameters routes share.
var defaultPathParams = map[string]Parameter{
	"id":       {Description: "The record's id.", Schema: idSchema()},
	"record":   {Description: "The id of the owning record.", Schema: idSchema()},
	"uploadId": {Description: "The upload's id (not the owning record's id).", Schema: idSchema()},
}

// operationID derives an operation id from a method and path, for routes
// without a description.
func operationID(method, path string) string {
	var sb strings.Builder
	sb.WriteString(strings.ToLower(method))
	for _, seg := range strings.FieldsFunc(path, func(r rune) bool { return r == '/' || r == '-' || r == '{' || r == '}' || r == '.' }) {
		sb.WriteString(strings.ToUpper(seg[:1]) + seg[1:])
	}
	return sb.String()
}

// tags lists the tags in use, grouped for Redoc's sidebar.
func (b *builder) tags() {
	var resourceTags []string
	for _, r := range b.reg.All() {
		if b.used[r.Model] {
			resourceTags = append(resourceTags, r.Model)
		}
	}
	sort.Strings(resourceTags)
	groups := []TagGroup{}
	placed := map[string]bool{}
	for _, g := range tagGroups {
		var tags []string
		if g.Tags == nil {
			tags = resourceTags
		} else {
			for _, t := range g.Tags {
				if b.used[t] {
					tags = append(tags, t)
				}
			}
		}
		if len(tags) == 0 {
			continue
		}
		for _, t := range tags {
			placed[t] = true
		}
		groups = append(groups, TagGroup{Name: g.Name, Tags: tags})
	}
	var rest []string
	for t := range b.used {
		if !placed[t] {
			rest = append(rest, t)
		}
	}
	sort.Strings(rest)
	if len(rest) > 0 {
		groups = append(groups, TagGroup{Name: "Other", Tags: rest})
	}
	for _, g := range groups {
		for _, t := range g.Tags {
			b.doc.Tags = append(b.doc.Tags, Tag{Name: t, Description: b.tagDescription(t)})
		}
	}
	b.doc.TagGroups = groups
}

func (b *builder) tagDescription(tag string) string {
	if d, ok := tagDescriptions[tag]; ok {
		return d
	}
	for _, r := range b.reg.All() {
		if r.Model == tag {
			d := r.Doc + "\n\nPath: `" + r.Path() + "`."
			if r.Deprecated {
				d += " **Deprecated**: answers carry a `Deprecation` header."
			}
			if r.ReadOnly {
				d += " Read-only: writes answer 405."
			}
			return d
		}
	}
	return ""
}

// Operations lists the documented operations as "METHOD PATH", sorted.
func (d *Document) Operations() []string {
	var out []string
	for path, item := range d.Paths {
		for _, m := range methods {
			if item.Operation(m) != nil {
				out = append(out, m+" "+path)
			}
		}
	}
	slices.Sort(out)
	return out
}
