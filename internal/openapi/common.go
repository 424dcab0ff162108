package openapi

import (
	"strconv"
	"strings"

	"planwerk/internal/query"
)

// overview is the document's description: what every operation shares.
var overview = `Planwerk manages people, projects, time, absences, expenses, invoicing, planning and skills
for many tenants. This reference is generated from the service's resource registry and route table.

## Tenants
Every request to ` + "`/v1`" + ` and to the token endpoint names its tenant in a header: ` + "`companyurl`" + `,
` + "`origin`" + `, ` + "`referrer`" + ` or ` + "`referer`" + ` (looked at in that order). A value names tenant SLUG when it is
` + "`SLUG`" + `, ` + "`SLUG.BASE-DOMAIN`" + ` or a URL whose host is ` + "`SLUG.BASE-DOMAIN`" + `. Without one: 400
` + "`tenant_required`" + ` or ` + "`unknown_tenant`" + `; on a tenant host naming another tenant: 400 ` + "`tenant_mismatch`" + `.
Every request of a tenant its operator suspended, the token endpoint's included: 403 ` + "`tenant_suspended`" + `.
Records of one tenant are invisible to every other tenant (404).

## Sign-in and tokens
OAuth 2.0 password grant: ` + "`POST /oauth2/token`" + ` (form-encoded) returns an access token and a refresh
token; refresh tokens rotate. Data requests send ` + "`Authorization: Bearer ACCESS_TOKEN`" + `. A missing,
unknown, expired or revoked token → 401 with ` + "`WWW-Authenticate: Bearer`" + `. Security schemes:
` + "`" + SchemeOAuth2 + "`" + ` and ` + "`" + SchemeBearer + "`" + `.

## Records
Resources live at ` + "`/v1/NAME`" + `: ` + "`GET`" + ` lists (a JSON array), ` + "`GET /{id}`" + ` reads, ` + "`POST`" + ` creates (201),
` + "`PATCH /{id}`" + ` (or ` + "`PUT`" + `, the same) changes, ` + "`DELETE /{id}`" + ` deletes and returns the deleted record.
Every record has ` + "`id`" + ` (integer), ` + "`createdAt`" + ` and ` + "`updatedAt`" + ` (UTC, ` + "`YYYY-MM-DDTHH:mm:ss.sssZ`" + `), owned by
the service. Declared attributes are typed and validated (400 naming the field); a date-time may be
sent as any RFC 3339 date-time and is stored and returned in UTC with milliseconds. Any other attribute
is stored and returned as sent, and can be filtered and sorted. Read-only resources answer writes
with 405; deprecated ones answer with a ` + "`Deprecation`" + ` header.

## List endpoints
- Per-attribute parameters match exactly; several values (` + "`id=1&id=2`" + ` or ` + "`id[]=1&id[]=2`" + `) match any.
- ` + "`where`" + ` is JSON (URL-encoded) Waterline-style criteria; when given, the per-attribute parameters are
  ignored. Modifiers: ` + "`<`, `<=`, `>`, `>=`, `!=`, `in`, `nin`, `startsWith`, `endsWith`, `contains`" + `, and the groups
  ` + "`or`" + ` and ` + "`and`" + `. An array value means ` + "`in`" + `; ` + "`{\"a\": null}`" + ` matches null or missing. ` + "`!=`" + ` and ` + "`nin`" + ` also
  match null or missing. Text modifiers are case-sensitive and take ` + "`%`" + ` and ` + "`_`" + ` literally.
- ` + "`createdAt`" + `, ` + "`updatedAt`" + ` and declared date-times take ` + "`YYYY-MM-DD`" + ` (a whole UTC day when matched
  exactly, its first instant in ranges) or any RFC 3339 date-time (` + "`Z`" + ` or an offset such as ` + "`+01:00`" + `).
- ` + "`limit`" + ` defaults to ` + strconv.Itoa(query.DefaultLimit) + ` and is capped at ` + strconv.Itoa(query.MaxLimit) + `; ` + "`skip`" + ` skips records; ` + "`sort`" + ` is
  ` + "`attr ASC|DESC`" + ` (comma-separated, or a JSON array of such strings or ` + "`{\"attr\": \"ASC\"}`" + ` objects), ` + "`id`" + `
  breaking ties; ` + "`populate`" + ` expands reference attributes into the records they name.

## Errors
Errors are JSON ` + "`{\"code\": \"snake_case\", \"message\": \"...\"}`" + `; validation errors add
` + "`problems: [{field, message}]`" + `. 429, 503 and 507 answers carry ` + "`Retry-After`" + ` (seconds). A dependency that
cannot be reached or answers too slowly is 503 naming it (` + "`database_unavailable`, `file_store_unavailable`" + `), a full disk 507
(` + "`insufficient_storage`" + `); both are worth retrying. The token endpoint answers
RFC 6749 errors ` + "`{error, error_description}`" + ` and adds ` + "`code`" + ` and ` + "`message`" + `.
`

// Tags of the non-resource operations.
const (
	tagAuth       = "Authentication"
	tagAccount    = "Account"
	tagApproval   = "Approval"
	tagAnalytics  = "Analytics"
	tagFiles      = "Files"
	tagClients    = "ApiClients"
	tagChanges    = "Changes"
	tagWebhooks   = "Webhooks"
	tagOperations = "Operations"
	tagDocs       = "Documentation"
	tagAudit      = "AuditLog"
)

var tagDescriptions = map[string]string{
	tagAuth:       "OAuth 2.0 password, refresh-token and client-credentials grants (RFC 6749), revocation (RFC 7009).",
	tagChanges:    "The change feed: every create, change and delete, in commit order, after a cursor.",
	tagWebhooks:   "URLs that receive the change feed as signed POST requests (Standard Webhooks), at least once and in order.",
	tagClients:    "Credentials for integrations: the client-credentials grant gives them tokens of a user within a scope.",
	tagAccount:    "The tenant's account settings.",
	tagApproval:   "Approving and unapproving project days.",
	tagAnalytics:  "Time totals and reports.",
	tagFiles:      "Files attached to Documents and Expenses: upload, list, signed download links, delete.",
	tagOperations: "Health, readiness and metrics; no tenant, no token.",
	tagDocs:       "This document and the API reference page.",
	tagAudit:      "Who changed what, when, from what to what, and why: every change of the tenant, in a chain of hashes. Each record's history is under its resource.",
}

// tagGroups order the sidebar; a nil Tags is the resources' group.
var tagGroups = []TagGroup{
	{Name: "Authentication", Tags: []string{tagAuth, tagClients}},
	{Name: "Time and approval", Tags: []string{tagAccount, tagApproval, tagAnalytics}},
	{Name: "Changes", Tags: []string{tagChanges, tagWebhooks, tagAudit}},
	{Name: "Files", Tags: []string{tagFiles}},
	{Name: "Resources"},
	{Name: "Operations", Tags: []string{tagOperations, tagDocs}},
}

// tenantHeaders are the components.parameters naming the tenant.
var tenantHeaders = []string{"companyurl", "origin", "referrer", "referer"}

// suspendedRefusal is the 403 every request of a tenant may get, named in
// each description of a tenant operation's 403.
const suspendedRefusal = "A request of a suspended tenant: `tenant_suspended`."

// errorResponses names the components.responses of each error status.
var errorResponses = map[int]string{
	400: "BadRequest",
	401: "Unauthorized",
	403: "Forbidden",
	404: "NotFound",
	406: "NotAcceptable",
	408: "RequestTimeout",
	409: "Conflict",
	413: "PayloadTooLarge",
	414: "URITooLong",
	410: "Gone",
	415: "UnsupportedMediaType",
	412: "PreconditionFailed",
	422: "UnprocessableEntity",
	429: "TooManyRequests",
	500: "InternalError",
	503: "ServiceUnavailable",
	507: "InsufficientStorage",
}

func ref(kind, name string) Schema { return Schema{"$ref": "#/components/" + kind + "/" + name} }

func schemaRef(name string) Schema { return ref("schemas", name) }

func idSchema() Schema {
	return Schema{"type": "integer", "format": "int64", "minimum": 1}
}

const (
	exampleDay       = "2026-01-05"
	exampleTimestamp = "2026-01-05T09:30:00.000Z"
	datePattern      = `^\d{4}-\d{2}-\d{2}$`
	timestampPattern = `^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`

	// A date-time sent: RFC 3339, any offset, 0 to 9 fractional digits.
	exampleDateTime      = "2026-01-05T10:30:00+01:00"
	dateTimePattern      = `^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$`
	dayOrDateTimePattern = `^\d{4}-\d{2}-\d{2}([Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2}))?$`
	dateTimeNote         = "Any RFC 3339 date-time is accepted (`Z` or an offset such as `+01:00`, 0 to 9 fractional digits); " +
		"it is stored and returned in UTC with milliseconds, further digits cut off."
)

// scopes are the scope tokens a token may carry.
func scopes() map[string]string {
	return map[string]string{
		"read":  "Read every resource the user may read.",
		"write": "Create, change and delete what the user may (with read: the scope `read write`).",
	}
}

func securitySchemes() map[string]SecurityScheme {
	return map[string]SecurityScheme{
		SchemeOAuth2: {
			Type: "oauth2",
			Description: "OAuth 2.0 at `" + TokenURL + "` (form-encoded; the tenant header is required there too). The " +
				"password grant signs a user in (`client_id` and `client_secret` are required but not validated, as form " +
				"fields or HTTP Basic) with the scope it asks for, `read` or `read write` (the default); a refresh keeps " +
				"its login's scope or narrows it. The client_credentials grant gives an API client " +
				"(`/v1/api-clients`) a token of its user within its scope: `read` or `read write`. A `read` token gets 403 " +
				"`insufficient_scope` on every write. Tokens end early at `" + RevokeURL + "` (RFC 7009).",
			Flows: &OAuthFlows{
				Password:          &OAuthFlow{TokenURL: TokenURL, RefreshURL: TokenURL, Scopes: scopes()},
				ClientCredentials: &OAuthFlow{TokenURL: TokenURL, Scopes: scopes()},
			},
		},
		SchemeBearer: {
			Type:         "http",
			Scheme:       "bearer",
			BearerFormat: "opaque",
			Description:  "`Authorization: Bearer ACCESS_TOKEN`, with an access token of the request's tenant.",
		},
	}
}

// common adds the components every operation shares.
func (b *builder) common() {
	c := &b.doc.Components
	order := map[string]string{
		"companyurl": "Looked at first.",
		"origin":     "Looked at when companyurl names no tenant.",
		"referrer":   "Looked at after companyurl and origin (as is referer).",
		"referer":    "The standard spelling of referrer, accepted too.",
	}
	for _, h := range tenantHeaders {
		c.Parameters[h] = Parameter{
			Name: h, In: "header",
			Description: "Names the tenant: `SLUG`, `SLUG.BASE-DOMAIN` or a URL whose host is `SLUG.BASE-DOMAIN`. " +
				order[h] + " One of companyurl, origin, referrer and referer must name the tenant.",
			Schema:  Schema{"type": "string"},
			Example: "acme",
		}
	}

	for name, p := range listParams() {
		name = "list" + strings.ToUpper(name[:1]) + name[1:]
		c.Parameters[name] = p
	}

	c.Headers["Retry-After"] = Header{Description: "Seconds to wait before retrying.", Required: true,
		Schema: Schema{"type": "integer", "minimum": 1}}
	c.Headers["WWW-Authenticate"] = Header{Description: "`Bearer realm=\"planwerk\"`, with `error=\"invalid_token\"` when a bearer token was presented (RFC 6750).", Required: true,
		Schema: Schema{"type": "string"}}
	c.Headers["Deprecation"] = Header{Description: "RFC 9745: the resource is deprecated, since the given date (`@UNIX-SECONDS`).",
		Required: true, Schema: Schema{"type": "string"}}
	c.Headers["Link"] = Header{Description: "RFC 8288: `<URL>; rel=\"next\"` when `limit` (or the default " +
		strconv.Itoa(query.DefaultLimit) + ") cut the list short: the URL is the same request continued after the page's " +
		"last record (an `after` cursor instead of `skip`). The last page has none.",
		Schema: Schema{"type": "string", "examples": []string{`<https://acme.planwerk.example/v1/time-entries?limit=100&after=W1tdLDEwMF0>; rel="next"`}}}
	c.Headers["Location"] = Header{Description: "The path of the created record.", Required: true, Schema: Schema{"type": "string"}}
	c.Headers["RateLimit-Policy"] = Header{Description: "The rate limits that counted the request (IETF draft " +
		"draft-ietf-httpapi-ratelimit-headers; a Structured Field list, RFC 8941): per policy its quoted name, `q` the " +
		"requests allowed at once and `w` the seconds in which they refill. Policies: `files` (uploads and download " +
		"URLs per user), `login-pair` (failed sign-ins of the account from this address), `login-address` (from this " +
		"address), `login-account` (of the account from anywhere; only on the 429 it causes).",
		Schema: Schema{"type": "string", "examples": []string{`"files";q=60;w=60`}}}
	c.Headers["RateLimit"] = Header{Description: "What is left of each policy of `RateLimit-Policy`: `r` the requests " +
		"that may still come now, `t` the seconds until one more may (left out when none is missing). On the 429 of a " +
		"policy `r` is 0 and `t` equals `Retry-After`.",
		Schema: Schema{"type": "string", "examples": []string{`"files";r=12;t=1`}}}

	c.Schemas["Error"] = Schema{
		"type":        "object",
		"description": "The body of every error answer outside the token endpoint.",
		"required":    []string{"code", "message"},
		"properties": map[string]Schema{
			"code":    {"type": "string", "description": "snake_case error code", "examples": []string{"not_found"}},
			"message": {"type": "string", "description": "human-readable text"},
			"problems": {"type": "array", "description": "the invalid fields of a request",
				"items": schemaRef("Problem")},
		},
		"example": map[string]any{"code": "invalid", "message": "day must be a date YYYY-MM-DD",
			"problems": []any{map[string]any{"field": "day", "message": "day must be a date YYYY-MM-DD"}}},
	}
	c.Schemas["Problem"] = Schema{
		"type":     "object",
		"required": []string{"field", "message"},
		"properties": map[string]Schema{
			"field":   {"type": "string", "description": "the field or query parameter at fault"},
			"message": {"type": "string"},
		},
	}
	c.Responses["BadRequest"] = errorAnswer("Malformed request: a missing or unknown tenant (`tenant_required`, " +
		"`unknown_tenant`, `tenant_mismatch`), a body that is not valid JSON (`invalid_json`), cannot be read (`invalid_body`) " +
		"or is nested too deeply (`too_deep`), an invalid field (`invalid`; `problems` names it), an invalid list query " +
		"(`invalid_query`) or an `Idempotency-Key` that is not 1–255 printable ASCII characters (`invalid_idempotency_key`).")
	c.Responses["Unauthorized"] = errorAnswer("The bearer token is missing, unknown, expired, revoked or of another tenant "+
		"(`unauthorized`).", "WWW-Authenticate")
	c.Responses["Forbidden"] = errorAnswer("The caller may not do this (`forbidden`: for example a member writing another user's " +
		"records), a WORK time entry on an approved project day (`day_approved`), or a write with a token of the scope " +
		"`read` (`insufficient_scope`, with `WWW-Authenticate: Bearer error=\"insufficient_scope\"`). " + suspendedRefusal)
	c.Responses["NotFound"] = errorAnswer("No such record in the tenant, or the caller may not see it (`not_found`).")
	c.Responses["NotAcceptable"] = errorAnswer("The `Accept` header allows none of the media types the operation answers " +
		"(`not_acceptable`), or a list asked for as CSV or XLSX has records of more than 1000 distinct attributes " +
		"(`too_many_columns`): narrow it, or ask for JSON.")
	c.Responses["Conflict"] = errorAnswer("The record conflicts with an existing one (`conflict`), or the first request " +
		"with the same `Idempotency-Key` is still running (`idempotency_key_in_use`).")
	c.Responses["PayloadTooLarge"] = errorAnswer("The request body is too large (`body_too_large`).")
	c.Responses["Gone"] = errorAnswer("What the request names is no longer kept (`cursor_expired`).")
	c.Responses["URITooLong"] = errorAnswer("The query string is too long (`query_too_long`).")
	c.Responses["UnsupportedMediaType"] = errorAnswer("The body is not JSON (`unsupported_media_type`).")
	c.Responses["TooManyRequests"] = errorAnswer("Rate limit hit (`rate_limited`), or the account has as many requests "+
		"waiting for their turn as it may (`too_many_requests`); retry after the given seconds.", "Retry-After")
	c.Responses["RateLimited"] = errorAnswer("Rate limit hit (`rate_limited`; `RateLimit` shows `r=0`), or the account "+
		"has as many requests waiting for their turn as it may (`too_many_requests`); retry after the given seconds.",
		"Retry-After", "RateLimit-Policy", "RateLimit")
	c.Responses["InternalError"] = errorAnswer("Server error (`internal_error`); the details are only logged.")
	c.Responses["RequestTimeout"] = errorAnswer("The request body stopped arriving (`body_timeout`).")
	c.Responses["ServiceUnavailable"] = errorAnswer("A dependency cannot be reached or answers too slowly "+
		"(`database_unavailable`, `file_store_unavailable`), or the request waited too long for its turn (`overloaded`); "+
		"retry after the given seconds.", "Retry-After")
	c.Responses["InsufficientStorage"] = errorAnswer("A disk is full (`insufficient_storage`); retry after the given seconds.", "Retry-After")

	for name, s := range operationSchemas() {
		c.Schemas[name] = s
	}

	// The list query language.
	// An anyOf rather than a type list: ogen reads no type list of
	// more than one type besides null.
	c.Schemas["Scalar"] = Schema{"description": "A criteria value: a string, number, boolean or null.",
		"anyOf": []Schema{{"type": "string"}, {"type": "number"}, {"type": "boolean"}, {"type": "null"}}}
	modifiers := func(contains bool) Schema {
		props := map[string]Schema{
			"<":          symbolic("Lt", "less than"),
			"<=":         symbolic("Lte", "less than or equal"),
			">":          symbolic("Gt", "greater than"),
			">=":         symbolic("Gte", "greater than or equal"),
			"!=":         symbolic("Ne", "not equal; also matches null or missing"),
			"in":         {"type": "array", "items": schemaRef("Scalar"), "description": "any of; `[]` matches nothing"},
			"nin":        {"type": "array", "items": schemaRef("Scalar"), "description": "none of; also matches null or missing; `[]` matches everything"},
			"startsWith": {"type": "string", "description": "case-sensitive prefix"},
			"endsWith":   {"type": "string", "description": "case-sensitive suffix"},
		}
		if contains {
			props["contains"] = Schema{"type": "string", "description": "case-sensitive substring"}
		}
		return Schema{
			"type":                 "object",
			"description":          "Modifiers of one attribute; all of them apply.",
			"minProperties":        1,
			"additionalProperties": false,
			"properties":           props,
		}
	}
	c.Schemas["Modifiers"] = modifiers(true)
	c.Schemas["ModifiersNoContains"] = modifiers(false)
	c.Schemas["Criterion"] = criterion("Modifiers")
	c.Schemas["CriterionNoContains"] = criterion("ModifiersNoContains")
	c.Schemas["Where"] = Schema{
		"type": "object",
		"description": "Waterline-style criteria, JSON-encoded in the `where` query parameter: attribute names map to a " +
			"value (equality), an array (`in`) or modifiers; `or` and `and` take arrays of criteria. Nesting is limited to " +
			strconv.Itoa(query.MaxDepth) + " levels, the criteria to " + strconv.Itoa(query.MaxConditions) + " conditions (equalities " +
			"and in-lists of one attribute within an `or` count as one) over at most " + strconv.Itoa(query.MaxAttributes) +
			" undeclared attributes.",
		"properties": map[string]Schema{
			"or":  {"type": "array", "items": schemaRef("Where"), "description": "any of; `[]` matches nothing"},
			"and": {"type": "array", "items": schemaRef("Where"), "description": "all of; `[]` matches everything"},
		},
		"additionalProperties": schemaRef("Criterion"),
		"examples":             []any{map[string]any{"day": map[string]any{">=": "2026-01-01", "<": "2026-02-01"}}},
	}
}

// symbolic is a modifier whose name is an operator: the generators' name
// extensions give its field a name (oapi-codegen's x-go-name, ogen's
// x-ogen-name), where deriving one from "<" would leave it empty.
func symbolic(name, doc string) Schema {
	return Schema{"$ref": "#/components/schemas/Scalar", "description": doc, "x-go-name": name, "x-ogen-name": name}
}

// errorAnswer is an error response: the Error schema, and headers.
func errorAnswer(desc string, headers ...string) *Response {
	return answer("Error", desc, headers...)
}

// answer is a JSON response of a schema, with headers.
func answer(schema, desc string, headers ...string) *Response {
	r := &Response{Description: desc, Content: map[string]MediaType{"application/json": {Schema: schemaRef(schema)}}}
	for _, h := range headers {
		if r.Headers == nil {
			r.Headers = map[string]Header{}
		}
		r.Headers[h] = Header{Ref: "#/components/headers/" + h}
	}
	return r
}

// errorResponse is a shared error response with an operation's own
// description (its error codes).
func errorResponse(desc string, shared *Response) *Response {
	r := errorAnswer(desc)
	for k, v := range shared.Headers {
		if r.Headers == nil {
			r.Headers = map[string]Header{}
		}
		r.Headers[k] = v
	}
	return r
}

func criterion(modifiers string) Schema {
	return Schema{
		"description": "A value (equality; null matches null or missing), an array of values (in) or modifiers.",
		"anyOf": []Schema{
			schemaRef("Scalar"),
			{"type": "array", "items": schemaRef("Scalar")},
			schemaRef(modifiers),
		},
	}
}
