package openapi

import "strconv"

// opDesc describes a route that is not a resource's generic endpoint.
type opDesc struct {
	ID, Tag, Summary, Description string
	Deprecated                    bool
	// PathParams override the default declaration of path parameters.
	PathParams map[string]Parameter
	// Params are the query parameters.
	Params []Parameter
	Body   *RequestBody
	OK     okResp
	// Errors are error statuses beyond those every request of the route's
	// kind can get (500; 400 with a tenant; 401 with a token; 404 with
	// path parameters).
	Errors []int
	// Responses, when set, replace the default error answers (the token
	// endpoint's errors follow RFC 6749).
	Responses map[string]*Response
	// Refusals replace the shared answer of an error status with one
	// naming the operation's own error codes.
	Refusals map[int]string
	// Record: the answer carries one record (ETag, conditional requests).
	Record bool
	// RateLimited: the operation is counted by a rate limit, whose
	// RateLimit fields its successes and its 429 carry, and the refusals
	// of these statuses, which may come after the count (rateLimited).
	RateLimited []int
}

type okResp struct {
	status   string
	response *Response
}

func okJSON(status int, desc string, s Schema) okResp {
	return okResp{strconv.Itoa(status), &Response{Description: desc,
		Content: map[string]MediaType{"application/json": {Schema: s}}}}
}

func okContent(status int, desc, contentType string, s Schema) okResp {
	return okResp{strconv.Itoa(status), &Response{Description: desc,
		Content: map[string]MediaType{contentType: {Schema: s}}}}
}

func jsonBody(desc string, s Schema) *RequestBody {
	return &RequestBody{Required: true, Description: desc, Content: map[string]MediaType{"application/json": {Schema: s}}}
}

func oauthError(desc string, headers ...string) *Response {
	return answer("OAuthError", desc, headers...)
}

// oauthResponses are the error answers of the OAuth endpoints: those all
// share, and the endpoint's own.
func oauthResponses(own map[string]*Response) map[string]*Response {
	all := map[string]*Response{
		"408": oauthError("The body stopped arriving (`invalid_request`, `code` `body_timeout`)."),
		"413": oauthError("The body is too large (`invalid_request`, `code` `body_too_large`)."),
		"429": oauthError("Too many failed sign-ins for the account or address (`too_many_requests`), or the tenant has as "+
			"many requests waiting as it may (`code` `too_many_requests`).", "Retry-After"),
		"403": oauthError("The tenant is suspended (`invalid_request`, `code` `tenant_suspended`)."),
		"500": oauthError("Server error (`server_error`)."),
		"503": oauthError("The database does not answer in time, or the request waited too long for its turn "+
			"(`temporarily_unavailable`, with `code` `database_unavailable` or `overloaded`).", "Retry-After"),
		"507": oauthError("The database's disk is full (`temporarily_unavailable`, `code` `insufficient_storage`).", "Retry-After"),
	}
	for status, r := range own {
		all[status] = r
	}
	return all
}

// str is a string schema with a description.
func str(doc string) Schema { return Schema{"type": "string", "description": doc} }

// clientProperties are an API client's fields as the API shows them.
func clientProperties() map[string]Schema {
	return map[string]Schema{
		"id":        {"type": "integer", "format": "int64", "description": "The record id, for reads and deletes."},
		"clientId":  str("The `client_id` of the client_credentials grant."),
		"name":      str("What the integration is."),
		"user":      {"type": "integer", "format": "int64", "description": "The User the client acts as."},
		"scope":     {"type": "string", "enum": []string{"read", "read write"}, "description": "What its tokens may do."},
		"createdAt": {"type": "string", "format": "date-time", "pattern": timestampPattern},
		"createdBy": {"type": []string{"integer", "null"}, "format": "int64",
			"description": "The User (an admin) who created the client; when they are deleted or lose admin, the client " +
				"is deleted and its tokens revoked. Null for clients created before it was recorded."},
	}
}

// fileResponse is a download's answer: the file's bytes, with the headers
// every download carries and extra ones.
func fileResponse(desc string, extra ...string) *Response {
	str := Schema{"type": "string"}
	h := map[string]Header{
		"Content-Disposition": {Description: "attachment; filename=...", Required: true, Schema: str},
		"ETag":                {Description: "A strong entity tag of the file, for `If-Range`.", Required: true, Schema: str},
		"Last-Modified":       {Description: "When the file was uploaded.", Schema: str},
		"Accept-Ranges":       {Description: "`bytes`.", Schema: str},
	}
	for _, name := range extra {
		h[name] = downloadHeaders[name]
	}
	return &Response{Description: desc, Headers: h, Content: map[string]MediaType{
		"application/octet-stream": {Schema: Schema{"type": "string", "format": "binary", "contentMediaType": "application/octet-stream"}}}}
}

// downloadHeaders are the headers of partial and refused downloads.
var downloadHeaders = map[string]Header{
	"Content-Range": {Description: "`bytes FIRST-LAST/SIZE` on 206, `bytes */SIZE` on 416.", Required: true,
		Schema: Schema{"type": "string"}},
}

// downloadResponses are the answers of a download besides the whole file:
// the route's errors, written out since ranges and conditions add their
// own (see internal/httpapi blob).
func downloadResponses() map[string]*Response {
	errorRef := func(status int) *Response { return &Response{Ref: "#/components/responses/" + errorResponses[status]} }
	jsonError := func(desc string) *Response {
		return &Response{Description: desc, Content: map[string]MediaType{"application/json": {Schema: schemaRef("Error")}}}
	}
	unsatisfiable := jsonError("The range starts past the end of the file: `range_not_satisfiable`.")
	unsatisfiable.Headers = map[string]Header{"Content-Range": downloadHeaders["Content-Range"]}
	return map[string]*Response{
		"206": fileResponse("The byte range asked for; `Content-Range` places it in the file.", "Content-Range"),
		"304": {Description: "Not modified (`If-None-Match` or `If-Modified-Since`)."},
		"403": jsonError("The signature is expired or altered (`invalid_signature`), or the file's tenant is suspended " +
			"(`tenant_suspended`)."),
		"404": errorRef(404),
		"412": jsonError("A precondition (`If-Match` or `If-Unmodified-Since`) does not hold: `precondition_failed`."),
		"416": unsatisfiable,
		"500": errorRef(500),
		"503": errorRef(503),
	}
}

// filesModel is the {model} of the file endpoints.
var filesModel = Parameter{Description: "The kind of the owning record; anything else → 404.",
	Schema: Schema{"type": "string", "enum": []string{"document", "expense"}}}

// descriptions are the operations of the routes that are not a resource's
// generic endpoints, keyed by "METHOD PATH" exactly as the route table
// has them. Check fails on a route missing here and on an entry without a
// route.
// webhookBadRequest is the 400 of webhook writes: the shared causes and
// a URL webhooks may not reach.
const webhookBadRequest = "Malformed request: a missing or unknown tenant (`tenant_required`, `unknown_tenant`, " +
	"`tenant_mismatch`), a body that is not valid JSON (`invalid_json`), cannot be read (`invalid_body`) or is nested " +
	"too deeply (`too_deep`), an invalid field (`invalid`; `problems` names it), a URL whose host is or resolves to a " +
	"loopback, private, link-local, CGNAT, multicast or unspecified address (`url_not_allowed`), or an " +
	"`Idempotency-Key` that is not 1–255 printable ASCII characters (`invalid_idempotency_key`)."

var descriptions = map[string]opDesc{
	"GET /healthz": {ID: "healthz", Tag: tagOperations, Summary: "Liveness",
		Description: "Answers while the process is up.",
		OK:          okJSON(200, "The process is up.", statusSchema("ok"))},
	"GET /readyz": {ID: "readyz", Tag: tagOperations, Summary: "Readiness",
		Description: "Answers 200 when the database and the file store are reachable.",
		OK:          okJSON(200, "Ready.", statusSchema("ready")), Errors: []int{503},
		Refusals: map[int]string{503: "Not ready: `code` names the first failing check (`database_unavailable`, " +
			"`file_store_unavailable`, or `insufficient_storage` when a disk is full), `checks` each one's result; " +
			"retry after the given seconds."}},
	"GET /metrics": {ID: "metrics", Tag: tagOperations, Summary: "Prometheus metrics",
		Description: "Prometheus text exposition format.",
		OK:          okContent(200, "The metrics.", "text/plain", Schema{"type": "string"})},

	"POST /oauth2/token": {ID: "issueToken", Tag: tagAuth, Summary: "Get or refresh a token",
		Description: "OAuth 2.0 token endpoint (RFC 6749), form-encoded. The password grant signs a user in and the " +
			"refresh_token grant renews a token; for both `client_id` and `client_secret` are required but not " +
			"validated. The client_credentials grant gives an API client (`/v1/api-clients`) an access token (no " +
			"refresh token) that acts as the client's user within its scope, or the narrower `scope` asked for; a " +
			"wrong id or secret → 401 `invalid_client`. Every grant takes an optional `scope`, `read` or `read write`, " +
			"and narrows only: a sign-in's default is `read write`, a refresh's the scope of its login (a narrower one " +
			"narrows the new access token; the new refresh token keeps the login's scope). The answer always carries " +
			"the access token's `scope`. Credentials come as form fields or in an HTTP Basic " +
			"`Authorization` header (RFC 6749 §2.3.1). A tenant header is required. Refresh tokens rotate: a refresh " +
			"returns a new refresh token and the old one stops working; reusing a spent refresh token revokes every " +
			"token of the same login. Other grant types, `authorization_code` included, → `unsupported_grant_type`. " +
			"Failed sign-ins (wrong password, wrong client secret) are braked per account and address; the answers of " +
			"password and client_credentials grants show the brake in `RateLimit-Policy` and `RateLimit`.",
		RateLimited: []int{400, 401},
		Body: &RequestBody{Required: true, Description: "The grant.", Content: map[string]MediaType{
			"application/x-www-form-urlencoded": {Schema: schemaRef("TokenRequest")}}},
		OK: okResp{"200", &Response{Description: "The tokens. Sent with `Cache-Control: no-store`.",
			Headers: map[string]Header{"Cache-Control": {Description: "`no-store`", Required: true, Schema: Schema{"type": "string"}}},
			Content: map[string]MediaType{"application/json": {Schema: schemaRef("TokenResponse")}}}},
		Responses: oauthResponses(map[string]*Response{
			"400": oauthError("`invalid_request` (a missing field, missing client credentials, a wrong content type; " +
				"a missing or unknown tenant, with `code` `tenant_required`, `unknown_tenant` or `tenant_mismatch`), " +
				"`invalid_grant` (wrong e-mail or password; unknown, expired or spent refresh token), `invalid_scope` " +
				"(an unknown scope token, or a scope beyond the client's or the refresh token's login) or " +
				"`unsupported_grant_type`."),
			"401": oauthError("Client authentication failed (`invalid_client`): an unknown client, a wrong secret, a "+
				"client of another tenant or whose user is gone. With `WWW-Authenticate: Basic` when Basic was used.",
				"WWW-Authenticate"),
		})},
	"POST /oauth2/revoke": {ID: "revokeToken", Tag: tagAuth, Summary: "Revoke a token",
		Description: "OAuth 2.0 token revocation (RFC 7009), form-encoded: an access token ends at once on this " +
			"instance and within 2 seconds on the others; a refresh token ends with every token of the same login. " +
			"200 whether or not the token was known (an unknown or another tenant's token changes nothing). " +
			"`client_id` and `client_secret` are required as for the grants; an API client's are checked, under the " +
			"login brake, which the answer then shows in `RateLimit-Policy` and `RateLimit`.",
		RateLimited: []int{401},
		Body: &RequestBody{Required: true, Description: "The token.", Content: map[string]MediaType{
			"application/x-www-form-urlencoded": {Schema: schemaRef("RevokeRequest")}}},
		OK: okResp{"200", &Response{Description: "Revoked, or unknown. No body."}},
		Responses: oauthResponses(map[string]*Response{
			"400": oauthError("`invalid_request` (no `token`, missing client credentials, a wrong content type; a " +
				"missing or unknown tenant, with `code` `tenant_required`, `unknown_tenant` or `tenant_mismatch`)."),
			"401": oauthError("An API client's credentials are wrong (`invalid_client`).", "WWW-Authenticate"),
		})},

	"GET /v1/changes": {ID: "listChanges", Tag: tagChanges, Summary: "Read the change feed",
		Description: "Every create, change and delete of a record, in commit order, after a cursor: follow `next` " +
			"from any cursor and every change committed after it comes exactly once, also with many writers on " +
			"several instances. Every write makes its change, including approval (the ProjectDay and each WORK " +
			"entry whose `validationStatus` moved), skill archiving and files (resource `uploads`). A member sees " +
			"only changes to records it may read. Changes are kept 30 days (`--change-retention`); an older " +
			"cursor → 410 `cursor_expired`: list the records again and follow the feed from its start.",
		Params: []Parameter{
			{Name: "after", In: "query", Description: "A cursor from an earlier answer (`next` or a change's `cursor`); " +
				"without it, from the oldest kept change.", Schema: Schema{"type": "string"}},
			{Name: "limit", In: "query", Description: "At most this many changes (default 1000). A page also ends " +
				"after the change at which its records add up to 4 MiB; `next` goes on from there.",
				Schema: Schema{"type": "integer", "minimum": 1, "maximum": 10000, "default": 1000}},
			{Name: "resources", In: "query", Description: "Only changes of these resources, comma-separated API path " +
				"names (`time-entries,projects`; `uploads` for files). A name given twice counts once; an unknown one → 400.",
				Schema: Schema{"type": "string"}},
			{Name: "wait", In: "query", Description: "Seconds (0–30) to hold the request open until a change arrives, " +
				"on any instance; the answer then has the changes so far, or none. A user or API client may hold 8 " +
				"waiting reads at once, a tenant 32; beyond that → 429.",
				Schema: Schema{"type": "number", "minimum": 0, "maximum": 30, "default": 0}},
		},
		OK:     okJSON(200, "The changes and the cursor to read on from.", schemaRef("ChangePage")),
		Errors: []int{410},
		Refusals: map[int]string{410: "The changes after the cursor are no longer kept (`cursor_expired`).",
			429: "The tenant's share of requests is in use, or (with `wait`) the user or API client already holds 8 " +
				"waiting reads of the feed, or the tenant 32 (`too_many_requests`); retry after `Retry-After`."}},

	"GET /v1/audit-log": {ID: "listAuditLog", Tag: tagAudit, Summary: "Read the audit log",
		Description: "The tenant's audit entries that match the filters, oldest first, a page at a time: who changed " +
			"what, when, from what to what, and why, in a chain of hashes an auditor can check. Follow `next` (or, " +
			"for CSV, the `" + auditNext + "` header) with `after` until a page is empty. Admins only; an API " +
			"client's token of the scope `read` acting as an admin may read it. Any other parameter, a parameter " +
			"given twice or empty, or a bad value → 400 naming it.",
		Params: auditLogParams(),
		OK:     auditLogOK(),
		Errors: []int{403, 406},
		Refusals: map[int]string{
			400: "A parameter that is unknown, given twice, empty or not valid (`invalid`; `problems` names it: a " +
				"`limit` over 10000, an `op` other than create, update or delete, a `from` or `to` that is no RFC 3339 " +
				"date-time, …), a query string that cannot be parsed (`invalid_query`), or a missing or unknown tenant " +
				"(`tenant_required`, `unknown_tenant`, `tenant_mismatch`).",
			403: "The caller is not an admin (`forbidden`).",
		}},
	"GET /v1/api-clients/{id}/history": {ID: "getApiClientHistory", Tag: tagClients, Summary: "Read the history of an API client",
		Description: historyDescription("Admins only, also after the client was deleted (404 when it has no entries then)."),
		OK:          okJSON(200, "The entries.", schemaRef("AuditHistory")),
		Errors:      []int{403}},
	"GET /v1/webhooks/{id}/history": {ID: "getWebhookHistory", Tag: tagWebhooks, Summary: "Read the history of a webhook",
		Description: historyDescription("Admins only, also after the webhook was deleted (404 when it has no entries then)."),
		OK:          okJSON(200, "The entries.", schemaRef("AuditHistory")),
		Errors:      []int{403}},

	"GET /v1/api-clients": {ID: "listApiClients", Tag: tagClients, Summary: "List the API clients",
		Description: "Every API client of the tenant, without secrets. Admins only.",
		OK:          okJSON(200, "The clients, by id.", Schema{"type": "array", "items": schemaRef("ApiClient")}),
		Errors:      []int{403}},
	"POST /v1/api-clients": {ID: "createApiClient", Record: true, Tag: tagClients, Summary: "Create an API client",
		Description: "Registers credentials for an integration: the client-credentials grant gives it tokens that act " +
			"as `user` within `scope`. The secret is in this answer only (it is stored as a hash). At most 100 per " +
			"tenant. Admins only; the caller is recorded as `createdBy`, and the client ends when they are deleted or " +
			"lose admin.",
		Body:     jsonBody("The client.", schemaRef("ApiClientCreate")),
		OK:       okJSON(201, "The client with its secret. Sent with `Cache-Control: no-store`.", schemaRef("NewApiClient")),
		Errors:   []int{403, 409, 413, 415},
		Refusals: map[int]string{409: "The tenant has 100 API clients already (`too_many_clients`)."}},
	"GET /v1/api-clients/{id}": {ID: "getApiClient", Record: true, Tag: tagClients, Summary: "Read an API client",
		Description: "Without its secret. Admins only.",
		OK:          okJSON(200, "The client.", schemaRef("ApiClient")),
		Errors:      []int{403}},
	"DELETE /v1/api-clients/{id}": {ID: "deleteApiClient", Record: true, Tag: tagClients, Summary: "Delete an API client",
		Description: "Removes the client and revokes every token it was given (on every instance within 2 seconds). " +
			"Admins only.",
		OK: okJSON(200, "The deleted client.", schemaRef("ApiClient"))},

	"GET /v1/webhooks": {ID: "listWebhooks", Tag: tagWebhooks, Summary: "List the webhooks",
		Description: "Every webhook of the tenant, without secrets. Admins only.",
		OK:          okJSON(200, "The webhooks, by id.", Schema{"type": "array", "items": schemaRef("Webhook")}),
		Errors:      []int{403}},
	"POST /v1/webhooks": {ID: "createWebhook", Record: true, Tag: tagWebhooks, Summary: "Create a webhook",
		Description: "Subscribes `url` to the tenant's changes committed from now on, of `resources` (all when left " +
			"out). Each change is POSTed as the Standard Webhooks specification says (see the document's `webhooks`), " +
			"signed with the secret in this answer, which is never shown again. At most 20 per tenant. The URL must " +
			"reach a public address. Admins only.",
		Body:   jsonBody("The webhook.", schemaRef("WebhookCreate")),
		OK:     okJSON(201, "The webhook with its secret. Sent with `Cache-Control: no-store`.", schemaRef("NewWebhook")),
		Errors: []int{403, 409, 413, 415},
		Refusals: map[int]string{
			400: webhookBadRequest,
			409: "The tenant has 20 webhooks already (`too_many_webhooks`).",
		}},
	"GET /v1/webhooks/{id}": {ID: "getWebhook", Record: true, Tag: tagWebhooks, Summary: "Read a webhook",
		Description: "Without its secret. Admins only.",
		OK:          okJSON(200, "The webhook.", schemaRef("Webhook")),
		Errors:      []int{403}},
	"PATCH /v1/webhooks/{id}": {ID: "updateWebhook", Record: true, Tag: tagWebhooks, Summary: "Change a webhook",
		Description: "Changes the fields sent: `url`, `resources`, `enabled`. Enabling a disabled webhook retries its " +
			"pending delivery at once and delivers on from where it stopped. Admins only.",
		Body:     jsonBody("The fields to change.", schemaRef("WebhookUpdate")),
		OK:       okJSON(200, "The webhook.", schemaRef("Webhook")),
		Errors:   []int{403, 413, 415},
		Refusals: map[int]string{400: webhookBadRequest}},
	"DELETE /v1/webhooks/{id}": {ID: "deleteWebhook", Record: true, Tag: tagWebhooks, Summary: "Delete a webhook",
		Description: "Removes the webhook and its deliveries log; a delivery in flight may still arrive. Admins only.",
		OK:          okJSON(200, "The deleted webhook.", schemaRef("Webhook")),
		Errors:      []int{403}},
	"GET /v1/webhooks/{id}/deliveries": {ID: "listWebhookDeliveries", Tag: tagWebhooks, Summary: "List a webhook's deliveries",
		Description: "The webhook's newest 100 deliveries, newest first: one per change sent or being sent. Admins only.",
		OK:          okJSON(200, "The deliveries.", Schema{"type": "array", "maxItems": 100, "items": schemaRef("Delivery")}),
		Errors:      []int{403}},

	"GET /v1/users/me": {ID: "getCurrentUser", Record: true, Tag: "User", Summary: "Read the current user",
		Description: "The record of the user the token belongs to.",
		OK:          okJSON(200, "The caller's User record.", schemaRef("User"))},

	"POST /v1/account/exports": {ID: "startAccountExport", Tag: tagAccount, Summary: "Export the tenant's data",
		Description: "Starts an export of everything the tenant holds (records, users, settings, files, API clients, " +
			"webhooks, the audit log), without password hashes or secrets: a zstd-compressed tar archive, described " +
			"in the service's documentation. It is made in the background; follow it with GET. One at a time per " +
			"tenant. Admins only.",
		OK:       okJSON(202, "The export, pending. `Location` names it.", schemaRef("AccountExport")),
		Errors:   []int{403, 409},
		Refusals: map[int]string{409: "An export of the tenant is pending or running (`export_in_progress`)."}},
	"GET /v1/account/exports/{id}": {ID: "getAccountExport", Tag: tagAccount, Summary: "Read an export of the tenant's data",
		Description: "The export's state; once `done`, with a signed link to its archive, valid 30 seconds. Sent with " +
			"`Cache-Control: no-store`. The archive is kept 24 hours. Admins only.",
		OK:     okJSON(200, "The export.", schemaRef("AccountExport")),
		Errors: []int{403}},
	"GET /v1/account/exports/{id}/archive": {ID: "downloadAccountExport", Tag: tagAccount, Summary: "Download an export's archive (signed URL)",
		Description: "The target of an export's signed link: no tenant header, no token. An expired or altered " +
			"signature → 403 `invalid_signature`; an archive no longer kept → 404. One byte range may be asked for " +
			"(`Range`), as for files.",
		Params: []Parameter{
			{Name: "tenant", In: "query", Required: true, Description: "The tenant's id.", Schema: Schema{"type": "integer"}},
			{Name: "expires", In: "query", Required: true, Description: "Expiry, Unix seconds.", Schema: Schema{"type": "integer"}},
			{Name: "signature", In: "query", Required: true, Description: "The signature.", Schema: Schema{"type": "string"}},
		},
		OK:        okContent(200, "The archive.", "application/zstd", Schema{"type": "string", "format": "binary"}),
		Responses: downloadResponses()},

	"GET /v1/account/settings": {ID: "getSettings", Record: true, Tag: tagAccount, Summary: "Read the account settings",
		OK: okJSON(200, "The settings (defaults when never changed).", schemaRef("Settings"))},
	"PATCH /v1/account/settings": {ID: "updateSettings", Record: true, Tag: tagAccount, Summary: "Change the account settings",
		Description: "Changes the settings sent. Admins only. The time-entry rules check new writes against the " +
			"current settings.",
		Body:   jsonBody("The settings to change.", schemaRef("SettingsUpdate")),
		OK:     okJSON(200, "The resulting settings.", schemaRef("Settings")),
		Errors: []int{403, 413, 415}},
	"PUT /v1/account/settings": {ID: "replaceSettings", Record: true, Tag: tagAccount, Summary: "Change the account settings (PUT)",
		Description: "The same as PATCH. Admins only.",
		Body:        jsonBody("The settings to change.", schemaRef("SettingsUpdate")),
		OK:          okJSON(200, "The resulting settings.", schemaRef("Settings")),
		Errors:      []int{403, 413, 415}},

	"POST /v1/approval/bulk-approve": {ID: "bulkApprove", Tag: tagApproval, Summary: "Approve or unapprove project days",
		Description: "Approves or unapproves (project, day) pairs, all or nothing. Admins only. On an approved day no " +
			"WORK time entry can be created, changed, deleted or moved in (403 `day_approved`), and its WORK entries " +
			"read `validationStatus: APPROVED`.",
		Body:   jsonBody("The action and the project days.", schemaRef("BulkApproval")),
		OK:     okJSON(200, "The resulting ProjectDay records.", Schema{"type": "array", "items": schemaRef("ProjectDay")}),
		Errors: []int{403, 409, 413, 415}},

	"GET /v1/analytics/time-totals": {ID: "getTimeTotals", Tag: tagAnalytics, Summary: "Time totals",
		Description: "Seconds of the time entries of the days from..to (inclusive), per trackingType, and per group " +
			"when groupBy names one. WORK totals never include WORKTIME or BREAK. The range may span at most five years.",
		Params: []Parameter{
			{Name: "from", In: "query", Required: true, Description: "First day, YYYY-MM-DD.",
				Schema: Schema{"type": "string", "format": "date", "pattern": datePattern}},
			{Name: "to", In: "query", Required: true, Description: "Last day, YYYY-MM-DD; not before from.",
				Schema: Schema{"type": "string", "format": "date", "pattern": datePattern}},
			{Name: "groupBy", In: "query", Description: "What to total per; left out, the answer holds the totals alone.",
				Schema: Schema{"type": "string", "enum": []string{"user", "project", "day"}}},
		},
		OK: okJSON(200, "The totals.", schemaRef("TimeTotals"))},

	"GET /v1/reports/time": {ID: "getTimeReport", Tag: tagAnalytics, Summary: "Time report",
		Description: "Seconds and entries of the time entries of the days from..to (inclusive) that the caller's list of " +
			"time entries shows, selected by `where` (the list language of /v1/time-entries), nested in up to three " +
			"groupings and rounded per entry before summing. An entry counts endTime − startTime when it has both, " +
			"else its duration; a running entry counts 0. WORK totals never include WORKTIME or BREAK. The range may " +
			"span at most five years; a report of more than 100000 groups of its deepest level (20000 groups in all " +
			"for a PDF) → 400 naming `groupBy`. The type of the answer follows `Accept`: JSON (the default), CSV, XLSX " +
			"or PDF; any other → 406.",
		Params: []Parameter{
			{Name: "from", In: "query", Required: true, Description: "First day, YYYY-MM-DD.",
				Schema: Schema{"type": "string", "format": "date", "pattern": datePattern}},
			{Name: "to", In: "query", Required: true, Description: "Last day, YYYY-MM-DD; not before from, at most five years after.",
				Schema: Schema{"type": "string", "format": "date", "pattern": datePattern}},
			{Name: "where", In: "query", Description: "Criteria on the entries, as `where` of GET /v1/time-entries " +
				"(custom attributes included).", Schema: Schema{"type": "string"}},
			{Name: "groupBy", In: "query", Description: "0 to 3 comma-separated groupings, outermost first, none twice: " +
				"`user`, `project`, `task`, `trackingType`, `validationStatus`, `day`, `week` (ISO, `2026-W05`), `month` " +
				"(`2026-01`), `year` (`2026`), or the name of any other attribute. An entry without the attribute is in " +
				"the group `null`.", Schema: Schema{"type": "string"}},
			{Name: "rounding", In: "query", Description: "`up:N`, `down:N` or `nearest:N` (halves up): each entry's " +
				"seconds rounded to a multiple of N minutes (1 to 60) before summing.",
				Schema: Schema{"type": "string", "pattern": `^(up|down|nearest):([1-9]|[1-5][0-9]|60)$`}},
		},
		OK:     timeReportOK(),
		Errors: []int{406}},

	"POST /v1/files/upload/{model}/{record}": {ID: "uploadFile", Record: true, Tag: tagFiles, Summary: "Upload a file",
		Description: "Attaches a file to a Document or Expense (which must exist): multipart/form-data with one part " +
			"named `file`. Each record holds at most one file: without `delete_others=1` a second upload → 403 " +
			"`too many uploads`. The stored filename keeps only letters, digits, `_`, `.` and äöüÄÖÜß (`file` when " +
			"nothing is left); the returned one is authoritative. Bodies sent with chunked transfer encoding are " +
			"accepted; the size cap holds while streaming. Rate-limited per user: every answer after the count shows " +
			"the `files` policy in `RateLimit-Policy` and `RateLimit`.",
		RateLimited: []int{400, 403},
		PathParams:  map[string]Parameter{"model": filesModel},
		Params: []Parameter{{Name: "delete_others", In: "query",
			Description: "`1` (or `true`): replace the record's previous file. Callers are expected to always send it.",
			Schema:      Schema{"type": "string", "enum": []string{"1", "true"}}}},
		Body: &RequestBody{Required: true, Description: "The file.", Content: map[string]MediaType{
			"multipart/form-data": {Schema: Schema{"type": "object", "required": []string{"file"},
				"properties": map[string]Schema{"file": {"type": "string", "format": "binary", "contentMediaType": "application/octet-stream",
					"description": "The file; its filename and Content-Type are kept."}}}}}},
		OK:     okJSON(201, "The upload.", schemaRef("Upload")),
		Errors: []int{403, 413, 429},
		Refusals: map[int]string{
			400: "Malformed request: a missing or unknown tenant (`tenant_required`, `unknown_tenant`, `tenant_mismatch`), " +
				"or a body that is not multipart/form-data with a readable part named `file` (`invalid_upload`).",
			403: "The record already has a file and `delete_others` was not sent (`too_many_uploads`, message " +
				"`too many uploads`), the file is larger than the size cap (`file_too_large`), the tenant's file " +
				"storage is full (`storage_full`), the caller may not write the record (`forbidden`), or the token's scope " +
				"is `read` (`insufficient_scope`).",
		}},
	"GET /v1/files/{model}/{record}": {ID: "listUploads", Tag: tagFiles, Summary: "List a record's upload",
		PathParams: map[string]Parameter{"model": filesModel},
		OK:         okJSON(200, "Zero or one upload.", Schema{"type": "array", "maxItems": 1, "items": schemaRef("Upload")})},
	"GET /v1/files/download/{uploadId}": {ID: "downloadURL", Tag: tagFiles, Summary: "Get a signed download URL",
		Description: "Returns an absolute URL valid for 30 seconds, fetched with a plain GET and no Authorization " +
			"header (the signature is the credential). Rate-limited per user: every answer after the count shows the " +
			"`files` policy in `RateLimit-Policy` and `RateLimit`.",
		RateLimited: []int{},
		OK:          okJSON(200, "The signed URL, a JSON string.", Schema{"type": "string", "format": "uri"}),
		Errors:      []int{429}},
	"DELETE /v1/files/{uploadId}": {ID: "deleteUpload", Record: true, Tag: tagFiles, Summary: "Delete an upload",
		Description: "Removes the file and its upload record; the owning Document or Expense stays.",
		OK:          okJSON(200, "The deleted upload.", schemaRef("Upload")),
		Errors:      []int{403}},
	"GET /v1/files/blob/{uploadId}": {ID: "downloadFile", Tag: tagFiles, Summary: "Download a file (signed URL)",
		Description: "The target of a signed download URL: no tenant header, no token. An expired or altered " +
			"signature → 403 `invalid_signature`; a link of a suspended tenant → 403 `tenant_suspended`, of a tenant " +
			"that is gone or being deleted → 404. `HEAD` answers the same headers without the body. A `Range` " +
			"header asking for one byte range (RFC 9110 §14) → 206 with `Content-Range`; one starting past the " +
			"end → 416 `range_not_satisfiable` with `Content-Range: bytes */SIZE`. A `Range` header that asks for " +
			"several ranges, is malformed, names another unit or comes with `HEAD` is ignored: 200 with the whole " +
			"file (no multipart/byteranges). `If-Range` with the `ETag` or `Last-Modified` of an earlier answer " +
			"keeps a range only while the file is the same; `If-None-Match` and `If-Modified-Since` → 304.",
		Params: []Parameter{
			{Name: "tenant", In: "query", Required: true, Description: "The tenant's id.", Schema: Schema{"type": "integer"}},
			{Name: "expires", In: "query", Required: true, Description: "Expiry, Unix seconds.", Schema: Schema{"type": "integer"}},
			{Name: "signature", In: "query", Required: true, Description: "The signature.", Schema: Schema{"type": "string"}},
			{Name: "Range", In: "header", Description: "One byte range, e.g. `bytes=0-1023`, `bytes=1024-` or `bytes=-500` (the last 500 bytes).",
				Schema: Schema{"type": "string", "example": "bytes=0-1023"}},
			{Name: "If-Range", In: "header", Description: "The `ETag` or `Last-Modified` of an earlier answer: the range only if the file is unchanged, else the whole file.",
				Schema: Schema{"type": "string"}},
		},
		OK:        okResp{"200", fileResponse("The file, with its Content-Type and a Content-Disposition naming it.")},
		Responses: downloadResponses()},

	"POST /v1/skill-sets/{id}/apply": {ID: "applySkillSet", Tag: "SkillSet", Summary: "Apply a skill set to users",
		Description: "Gives each user the skills of the set they lack (new or re-activated SkillAssignments), all or " +
			"nothing. Admins only. Later changes to the set do not touch them.",
		PathParams: map[string]Parameter{"id": {Description: "The SkillSet's id.", Schema: idSchema()}},
		Body:       jsonBody("The users.", schemaRef("ApplySkillSet")),
		OK: okJSON(200, "The users' SkillAssignments of the set's skills.",
			Schema{"type": "array", "items": schemaRef("SkillAssignment")}),
		Errors: []int{403, 409, 413, 415}},

	"GET /v1/openapi.json": {ID: "openapi", Tag: tagDocs, Summary: "This OpenAPI document",
		Description: "The OpenAPI 3.1 document of the whole API, generated from the resource registry and the route table.",
		OK:          okJSON(200, "The document.", Schema{"type": "object"})},
	"GET /v1/openapi-3.0.json": {ID: "openapi30", Tag: tagDocs, Summary: "This document as OpenAPI 3.0",
		Description: "The same document rendered as OpenAPI 3.0.3, for client generators that do not read 3.1 " +
			"(oapi-codegen, ogen): nullable types are `nullable: true`, `examples` is `example`, binary parts are " +
			"`format: binary`. Generated from the same model as `/v1/openapi.json`.",
		OK: okJSON(200, "The document.", Schema{"type": "object"})},
	"GET /docs": {ID: "docs", Tag: tagDocs, Summary: "API reference page",
		Description: "An HTML page rendering this document; its assets are served by the service itself.",
		OK:          okContent(200, "The page.", "text/html", Schema{"type": "string"})},
	"GET /docs/assets/{file}": {ID: "docsAsset", Tag: tagDocs, Summary: "API reference page assets",
		Description: "The renderer's files (and their licence), embedded in the binary.",
		PathParams:  map[string]Parameter{"file": {Description: "The asset's file name.", Schema: Schema{"type": "string"}}},
		OK: okResp{"200", &Response{Description: "The asset: the renderer's script or a licence text.",
			Content: map[string]MediaType{"text/javascript": {Schema: Schema{"type": "string"}}, "text/plain": {Schema: Schema{"type": "string"}}}}}},
}

func statusSchema(status string) Schema {
	return Schema{"type": "object", "required": []string{"status"},
		"properties": map[string]Schema{"status": {"type": "string", "enum": []string{status}}}}
}

// operationSchemas are the schemas of the non-resource operations.
func operationSchemas() map[string]Schema {
	seconds := Schema{"type": "object", "description": "Seconds per trackingType.",
		"required": []string{"WORK", "WORKTIME", "BREAK"},
		"properties": map[string]Schema{
			"WORK":     {"type": "integer", "description": "project time"},
			"WORKTIME": {"type": "integer", "description": "clock in / clock out"},
			"BREAK":    {"type": "integer", "description": "breaks"},
		}}
	return map[string]Schema{
		// One flat object rather than a oneOf of the grants: generators
		// encode no form body that is a union.
		"TokenRequest": {"type": "object",
			"description": "A password grant (`username` and `password` required), a refresh_token grant (`refresh_token` " +
				"required) or a client_credentials grant (an API client's `client_id` and `client_secret`), each with an " +
				"optional `scope`; the other grants' fields are ignored.",
			"required": []string{"grant_type", "client_id", "client_secret"},
			"properties": map[string]Schema{
				"grant_type": {"type": "string", "enum": []string{"password", "refresh_token", "client_credentials"},
					"description": "`password` signs a user in; `refresh_token` renews a token (the refresh token is spent); " +
						"`client_credentials` authenticates an API client."},
				"scope": {"type": "string", "enum": []string{"read", "read write"},
					"description": "The scope asked for, space-separated scope tokens (RFC 6749 §3.3, any order). password: " +
						"`read` or `read write` (default). refresh_token: within the scope of the refresh token's login " +
						"(default: that scope); it narrows the new access token only. client_credentials: within the " +
						"client's (default: the client's). Anything else → 400 `invalid_scope`."},
				"username":      {"type": "string", "format": "email", "description": "The user's e-mail address; required with the password grant."},
				"password":      {"type": "string", "format": "password", "description": "The user's password; required with the password grant."},
				"refresh_token": str("A refresh token of the tenant; required with the refresh_token grant."),
				"client_id": str("An API client's id with client_credentials; otherwise names the application, not validated. " +
					"The form field may be left out when an HTTP Basic `Authorization` header carries it."),
				"client_secret": str("An API client's secret with client_credentials; otherwise not validated. The form field " +
					"may be left out when an HTTP Basic `Authorization` header carries it."),
			}},
		"TokenResponse": {"type": "object", "required": []string{"access_token", "token_type", "expires_in", "scope"},
			"properties": map[string]Schema{
				"access_token":  str("The bearer token for data requests."),
				"token_type":    {"type": "string", "enum": []string{"Bearer"}},
				"expires_in":    {"type": "integer", "description": "Lifetime of the access token, seconds (about 3600)."},
				"refresh_token": str("Renews the access token once; rotates. Not given to API clients."),
				"scope":         {"type": "string", "enum": []string{"read", "read write"}, "description": "The access token's scope."},
			}},
		"Change": {"type": "object", "description": "One change of the feed; also the `data` of a webhook delivery.",
			"required": []string{"cursor", "resource", "id", "op", "at", "record"},
			"properties": map[string]Schema{
				"cursor":   str("Read on after this change with `after=CURSOR`. Opaque."),
				"resource": str("The resource's API path name (`time-entries`), or `uploads`."),
				"id":       {"type": "integer", "format": "int64", "description": "The record's id."},
				"op":       {"type": "string", "enum": []string{"create", "update", "delete"}},
				"at":       {"type": "string", "format": "date-time", "pattern": timestampPattern, "description": "When the change was made."},
				"record": {"type": []string{"object", "null"}, "additionalProperties": true,
					"description": "The record as GET returns it after the change; null for a delete."},
			}},
		"ChangePage": {"type": "object", "required": []string{"changes", "next"},
			"properties": map[string]Schema{
				"changes": {"type": "array", "items": schemaRef("Change")},
				"next":    str("The cursor to read on from: the last change read, or the one sent when none."),
			}},
		"RevokeRequest": {"type": "object", "required": []string{"token", "client_id", "client_secret"},
			"properties": map[string]Schema{
				"token": str("An access or refresh token of the tenant."),
				"token_type_hint": {"type": "string", "enum": []string{"access_token", "refresh_token"},
					"description": "Which kind the token is; only speeds up the lookup."},
				"client_id":     str("As for the grants; an API client's id is checked with its secret."),
				"client_secret": str("As for the grants."),
			}},
		"ApiClient": {"type": "object", "description": "Credentials of an integration (without the secret).",
			"required":   []string{"id", "clientId", "name", "user", "scope", "createdAt", "createdBy"},
			"properties": clientProperties()},
		"NewApiClient": {"type": "object", "description": "A created API client with its secret, shown this once.",
			"required": []string{"id", "clientId", "clientSecret", "name", "user", "scope", "createdAt", "createdBy"},
			"properties": func() map[string]Schema {
				p := clientProperties()
				p["clientSecret"] = str("The secret for the client_credentials grant. Keep it: it is never shown again.")
				return p
			}()},
		"ApiClientCreate": {"type": "object", "required": []string{"name", "user", "scope"}, "additionalProperties": false,
			"properties": map[string]Schema{
				"name":  {"type": "string", "minLength": 1, "maxLength": 200, "description": "What the integration is."},
				"user":  {"type": "integer", "format": "int64", "description": "The User the client acts as."},
				"scope": {"type": "string", "enum": []string{"read", "read write"}, "description": "What its tokens may do."},
			}},
		"Webhook": {"type": "object", "description": "A URL subscribed to the tenant's changes (without the secret).",
			"required":   []string{"id", "url", "resources", "enabled", "failingSince", "createdAt"},
			"properties": webhookProperties()},
		"NewWebhook": {"type": "object", "description": "A created webhook with its secret, shown this once.",
			"required": []string{"id", "url", "resources", "secret", "enabled", "failingSince", "createdAt"},
			"properties": func() map[string]Schema {
				p := webhookProperties()
				p["secret"] = Schema{"type": "string", "pattern": "^whsec_[A-Za-z0-9+/]+={0,2}$",
					"description": "`whsec_` and the base64 of 32 random bytes: the key of the deliveries' signatures " +
						"(HMAC-SHA256 with the decoded bytes). Keep it: it is never shown again."}
				return p
			}()},
		"WebhookCreate": {"type": "object", "required": []string{"url"}, "additionalProperties": false,
			"properties": map[string]Schema{
				"url":       webhookURL,
				"resources": webhookResources,
			}},
		"WebhookUpdate": {"type": "object", "additionalProperties": false, "description": "The fields to change.",
			"properties": map[string]Schema{
				"url":       webhookURL,
				"resources": webhookResources,
				"enabled":   {"type": "boolean", "description": "false stops deliveries; true resumes them from where they stopped."},
			}},
		"Delivery": {"type": "object", "description": "One change a webhook sent or is sending.",
			"required": []string{"id", "change", "status", "attempts", "lastStatusCode", "nextAttemptAt", "createdAt"},
			"properties": map[string]Schema{
				"id":     str("The message id: the `webhook-id` header, the same on every attempt."),
				"change": str("The change's feed cursor."),
				"status": {"type": "string", "enum": []string{"pending", "delivered", "failed"},
					"description": "`pending` until a 2xx answer (`delivered`) or 24 hours of failed attempts (`failed`)."},
				"attempts":       {"type": "integer", "description": "Requests made so far."},
				"lastStatusCode": {"type": []string{"integer", "null"}, "description": "The last answer's status; null when none came (no connection, a timeout, a refused address)."},
				"nextAttemptAt": {"type": []string{"string", "null"}, "format": "date-time", "pattern": timestampPattern,
					"description": "When the next attempt is due; null unless pending."},
				"createdAt": {"type": "string", "format": "date-time", "pattern": timestampPattern, "description": "The first attempt."},
			}},
		"AccountExport": {"type": "object", "description": "An export of the tenant's data.",
			"required": []string{"id", "status", "size", "sha256", "url", "expiresAt"},
			"properties": map[string]Schema{
				"id": {"type": "integer", "description": "The export's id."},
				"status": {"type": "string", "enum": []string{"pending", "running", "done", "failed"},
					"description": "`pending` until an instance makes it, `running` while it does, then `done` or `failed`."},
				"size":   {"type": []string{"integer", "null"}, "description": "The archive's bytes, once done."},
				"sha256": {"type": []string{"string", "null"}, "description": "The archive's SHA-256 (hex), once done."},
				"url": {"type": []string{"string", "null"}, "format": "uri",
					"description": "Once done: a signed link to the archive, valid 30 seconds (a fresh one on each GET)."},
				"expiresAt": {"type": []string{"string", "null"}, "format": "date-time", "pattern": timestampPattern,
					"description": "When the archive (and this export) is removed: 24 hours after it was made."},
			}},
		"WebhookMessage": {"type": "object", "description": "A webhook delivery's body (Standard Webhooks).",
			"required": []string{"type", "timestamp", "data"},
			"properties": map[string]Schema{
				"type":      str("`RESOURCE.OP`: the change's resource and operation (`time-entries.update`)."),
				"timestamp": {"type": "string", "format": "date-time", "pattern": timestampPattern, "description": "When the change was made."},
				"data":      schemaRef("Change"),
			}},
		"OAuthError": {"type": "object", "description": "RFC 6749 §5.2 error, plus the service's code and message.",
			"required": []string{"error", "error_description", "code", "message"},
			"properties": map[string]Schema{
				"error": {"type": "string", "enum": []string{"invalid_request", "invalid_client", "invalid_grant", "invalid_scope",
					"unsupported_grant_type", "too_many_requests", "server_error", "temporarily_unavailable"}},
				"error_description": str("Human-readable text."),
				"code":              str("The error code, or a more specific one (for example `tenant_required`)."),
				"message":           str("The same text as error_description."),
			}},
		"Upload": {"type": "object", "description": "A file attached to a Document or Expense.",
			"required": []string{"id", "filename", "model", "record", "size", "contentType", "createdAt"},
			"properties": map[string]Schema{
				"id":          {"type": "integer", "format": "int64", "description": "The upload id, for downloads and deletes."},
				"filename":    str("The stored (sanitised) filename."),
				"model":       {"type": "string", "enum": []string{"document", "expense"}},
				"record":      {"type": "integer", "format": "int64", "description": "The owning record's id."},
				"size":        {"type": "integer", "description": "Bytes."},
				"contentType": str("The Content-Type of the uploaded part."),
				"createdAt":   {"type": "string", "format": "date-time", "pattern": timestampPattern},
			}},
		"Settings": {"type": "object", "description": "The account settings.",
			"required": []string{"timerMode", "useWorktime"},
			"properties": map[string]Schema{
				"timerMode": {"type": "string", "enum": []string{"DURATION", "START_TIME_END_TIME"}, "default": "DURATION",
					"description": "DURATION: WORK entries send duration and sorting; START_TIME_END_TIME: startTime and endTime."},
				"useWorktime": {"type": "boolean", "default": false,
					"description": "With worktime, BREAK entries always send startTime and endTime."},
			}},
		"SettingsUpdate": {"type": "object", "description": "The settings to change.", "additionalProperties": false,
			"properties": map[string]Schema{
				"timerMode":   {"type": "string", "enum": []string{"DURATION", "START_TIME_END_TIME"}},
				"useWorktime": {"type": "boolean"},
			}},
		"BulkApproval": {"type": "object", "required": []string{"action", "items"}, "additionalProperties": false,
			"properties": map[string]Schema{
				"action": {"type": "string", "enum": []string{"approve", "unapprove"}},
				"items": {"type": "array", "minItems": 1, "maxItems": 1000, "items": Schema{
					"type": "object", "required": []string{"project", "day"},
					"properties": map[string]Schema{
						"project": {"type": "integer", "format": "int64", "description": "A project of the tenant."},
						"day":     {"type": "string", "format": "date", "pattern": datePattern},
					}}},
			}},
		"TimeTotals": {"type": "object", "required": []string{"from", "to", "totals"},
			"properties": map[string]Schema{
				"from":    {"type": "string", "format": "date"},
				"to":      {"type": "string", "format": "date"},
				"groupBy": {"type": "string", "enum": []string{"user", "project", "day"}, "description": "As asked; absent without a grouping."},
				"groups": {"type": "array", "description": "With a grouping (absent without): one entry per user, project or day, keyed by groupBy " +
					"(`{\"project\": 5, \"seconds\": {...}}`); entries without the attribute have a null key.",
					"items": Schema{"type": "object", "required": []string{"seconds"},
						"properties": map[string]Schema{
							"user":    {"type": []string{"integer", "null"}},
							"project": {"type": []string{"integer", "null"}},
							"day":     {"type": []string{"string", "null"}},
							"seconds": seconds,
						}}},
				"totals": seconds,
			}},
		"TimeReport": {"type": "object", "required": []string{"from", "to", "groupBy", "rounding", "groups", "totals"},
			"properties": map[string]Schema{
				"from":     {"type": "string", "format": "date"},
				"to":       {"type": "string", "format": "date"},
				"groupBy":  {"type": "array", "items": Schema{"type": "string"}, "description": "The groupings, as asked."},
				"rounding": {"type": []string{"string", "null"}, "description": "As asked; null for none."},
				"groups":   {"type": "array", "items": schemaRef("TimeReportGroup"), "description": "The first level's groups ordered by key (numbers, strings, booleans, then null); empty without groupings."},
				"totals": {"type": "object", "required": []string{"seconds", "entries"},
					"properties": map[string]Schema{"seconds": seconds, "entries": {"type": "integer"}}},
			}},
		"TimeReportGroup": {"type": "object", "required": []string{"key", "seconds", "entries"},
			"properties": map[string]Schema{
				"key": {"type": "object", "description": "The grouping and this group's key (`{\"project\": 3}`, `{\"week\": \"2026-W02\"}`); " +
					"periods are strings, a missing attribute null."},
				"seconds": seconds,
				"entries": {"type": "integer"},
				"groups":  {"type": "array", "items": schemaRef("TimeReportGroup"), "description": "The next level's groups; absent at the deepest level."},
			}},
		"ApplySkillSet": {"type": "object", "required": []string{"users"},
			"properties": map[string]Schema{
				"users": {"type": "array", "minItems": 1, "maxItems": 1000, "description": "User ids of the tenant.",
					"items": Schema{"type": "integer", "format": "int64"}},
			}},
	}
}

var webhookURL = Schema{"type": "string", "format": "uri", "maxLength": 2000,
	"description": "An http or https URL without user name or password, reaching a public address."}

var webhookResources = Schema{"type": []string{"array", "null"}, "minItems": 1, "uniqueItems": true,
	"items":       Schema{"type": "string"},
	"description": "The resources whose changes to deliver (API path names, `uploads` for files); null or left out: all, also those added later."}

func webhookProperties() map[string]Schema {
	return map[string]Schema{
		"id":        {"type": "integer", "format": "int64", "description": "The webhook's id."},
		"url":       webhookURL,
		"resources": webhookResources,
		"enabled": {"type": "boolean", "description": "false after 72 hours (`--webhook-disable-after`) of failing " +
			"deliveries, or when an admin disabled it."},
		"failingSince": {"type": []string{"string", "null"}, "format": "date-time", "pattern": timestampPattern,
			"description": "Since when its deliveries fail without a success between; null while they succeed."},
		"createdAt": {"type": "string", "format": "date-time", "pattern": timestampPattern},
	}
}

// signatureHeaders are the Standard Webhooks headers of a delivery.
var signatureHeaders = []Parameter{
	{Name: "webhook-id", In: "header", Required: true, Schema: Schema{"type": "string"},
		Description: "The message id, the same on every attempt: receivers drop deliveries whose id they have seen."},
	{Name: "webhook-timestamp", In: "header", Required: true, Schema: Schema{"type": "string", "pattern": "^[0-9]+$"},
		Description: "Unix seconds of this attempt; receivers refuse ones far from their clock (replays)."},
	{Name: "webhook-signature", In: "header", Required: true, Schema: Schema{"type": "string"},
		Description: "`v1,` and the base64 HMAC-SHA256 of `webhook-id.webhook-timestamp.body` keyed with the bytes of " +
			"the secret after `whsec_`, base64-decoded."},
}

// webhookDeliveryDoc describes the request that delivers a change.
func webhookDeliveryDoc() map[string]*PathItem {
	return map[string]*PathItem{"change": {Post: &Operation{
		Tags: []string{tagWebhooks}, OperationID: "deliverChange", Summary: "A change, delivered to a webhook's URL",
		Description: "One POST per change, in order per webhook: the next after this one was answered 2xx within 10 " +
			"seconds or failed for good. Any other answer (redirects are not followed), a timeout or no connection is " +
			"retried after about 5 seconds, then at doubling intervals up to an hour, for 24 hours; then the delivery " +
			"is `failed` and the next change follows. The request carries no bearer token: it is signed with the " +
			"webhook's secret (the `webhook-signature` header). Verify the signature, then deduplicate by `webhook-id`.",
		// Its own empty security: the document's global one (a bearer
		// token) is for requests to the service, not for its deliveries.
		Security:    &[]map[string][]string{},
		Parameters:  signatureHeaders,
		RequestBody: jsonBody("The change.", schemaRef("WebhookMessage")),
		Responses: map[string]*Response{
			"2XX":     {Description: "Delivered."},
			"default": {Description: "Not delivered: retried."},
		},
	}}}
}
