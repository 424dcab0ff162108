package openapi

import (
	"net/http"
	"strings"
)

// The audit log (docs/api.md "Audit log"): its page and every record's
// history, the entry's schema, and the Change-Reason header, which one
// pass adds to every write as it is put into the document, so that no
// write can miss it.

// auditNext is the header of a CSV page's cursor.
const auditNext = "Audit-Next"

// reasonRefusal is what a write's 400 says of a malformed Change-Reason.
const reasonRefusal = " A `Change-Reason` header that is not 1–500 characters of UTF-8 once percent-decoded → " +
	"`invalid_reason`, and nothing is written."

// hexHash is a SHA-256 in lowercase hex.
func hexHash(doc string) Schema {
	return Schema{"type": "string", "pattern": "^[0-9a-f]{64}$", "description": doc}
}

// nullableID is an id or null.
func nullableID(doc string) Schema {
	return Schema{"type": []string{"integer", "null"}, "format": "int64", "description": doc}
}

// auditComponents adds the audit log's schemas, the Change-Reason
// parameter, the CSV cursor's header and the answer of a write's 400.
func (b *builder) auditComponents() {
	c := &b.doc.Components
	c.Schemas["AuditActor"] = Schema{"type": "object", "description": "Who made a change.",
		"required": []string{"user", "apiClient", "via"},
		"properties": map[string]Schema{
			"user": nullableID("The User whose request made the change (signed in, or through one of their API clients); " +
				"null for a command or a change of no known user."),
			"apiClient": nullableID("The API client whose token made the request; null when the user signed in themselves."),
			"via": {"type": "string", "enum": []string{"api", "cli"},
				"description": "`api`: a request to the API; `cli`: an operator's command (`planwerk tenant create`, …)."},
		}}
	c.Schemas["AuditEntry"] = Schema{"type": "object",
		"description": "One change of one record, or of something that is not a record (`record` null: the account " +
			"settings, the tenant's storage cap). Entries form one chain per tenant: `prevHash` is the previous entry's " +
			"`hash` (64 zeros for the first), and `hash` is the lowercase hex SHA-256 of the bytes of `prevHash` followed " +
			"by the RFC 8785 canonical JSON of the entry without its `hash` member.",
		"required": []string{"seq", "at", "actor", "requestId", "reason", "resource", "record", "op", "changed",
			"before", "after", "prevHash", "hash"},
		"properties": map[string]Schema{
			"seq": {"type": "integer", "format": "int64", "minimum": 1,
				"description": "The entry's place in the tenant's log: 1, 2, 3, … without gaps (until entries are purged)."},
			"at":        {"type": "string", "format": "date-time", "pattern": timestampPattern, "description": "When the change was made."},
			"actor":     schemaRef("AuditActor"),
			"requestId": {"type": []string{"string", "null"}, "description": "The `X-Request-Id` of the request that made the change; null for a command."},
			"reason": {"type": []string{"string", "null"}, "minLength": 1, "maxLength": 500,
				"description": "The request's `Change-Reason`, percent-decoded; null when it sent none."},
			"resource": str("What changed: a resource's name as the change feed names it (`time-entries`, `users`, " +
				"`uploads`, …), or `settings`, `tenant`, `api-clients`, `webhooks`."),
			"record": nullableID("The record's id; null for what is not a record."),
			"op":     {"type": "string", "enum": []string{"create", "update", "delete"}},
			"changed": {"type": "array", "items": Schema{"type": "string"},
				"description": "The top-level attributes that differ between before and after (all of them on create and " +
					"delete; `password` when a password changed), sorted byte-wise."},
			"before": {"type": []string{"object", "null"}, "additionalProperties": true,
				"description": "The record as GET showed it before the change; null on create. Never a password or a secret."},
			"after": {"type": []string{"object", "null"}, "additionalProperties": true,
				"description": "The record as GET showed it after the change; null on delete. Never a password or a secret."},
			"prevHash": hexHash("The previous entry's `hash`; 64 zeros for the tenant's first entry."),
			"hash":     hexHash("SHA-256 of the bytes of `prevHash` followed by the RFC 8785 canonical JSON of the entry without `hash`."),
		}}
	c.Schemas["AuditPage"] = Schema{"type": "object", "required": []string{"entries", "next"},
		"properties": map[string]Schema{
			"entries": {"type": "array", "items": schemaRef("AuditEntry"), "description": "Oldest first."},
			"next": str("The cursor to read on from with `after`: past the page's last entry, or the `after` sent when " +
				"the page is empty. Opaque."),
		}}
	c.Schemas["AuditHistory"] = Schema{"type": "object", "required": []string{"entries"},
		"properties": map[string]Schema{
			"entries": {"type": "array", "items": schemaRef("AuditEntry"), "description": "The record's entries, oldest first."},
		}}
	c.Parameters["ChangeReason"] = Parameter{Name: "Change-Reason", In: "header", Schema: Schema{"type": "string"},
		Example: "Correction requested by the employee",
		Description: "Why the change is made: recorded as `reason` on every audit entry the request makes. " +
			"Percent-decoded (`%XX` sequences; a `%` that starts none stays as it is), it must be 1–500 characters of " +
			"UTF-8; otherwise → 400 `invalid_reason` and nothing is written. An empty header counts as absent."}
	c.Headers[auditNext] = Header{Description: "With `Accept: text/csv`: the cursor to read on from with `after` " +
		"(the JSON answer has it as `next`). Opaque.", Schema: Schema{"type": "string"}}
	bad := *c.Responses["BadRequest"]
	bad.Description += reasonRefusal
	c.Responses["BadWriteRequest"] = &bad
}

// changeReason gives a write of the data API the Change-Reason header
// and names its refusal in the write's 400.
func (b *builder) changeReason(method string, op *Operation) {
	bearer := op.Security != nil && len(*op.Security) > 0
	if !bearer || method == http.MethodGet {
		return
	}
	op.Parameters = append(op.Parameters, Parameter{Ref: "#/components/parameters/ChangeReason"})
	r := op.Responses["400"]
	switch {
	case r == nil || r.Ref == "#/components/responses/BadRequest":
		op.Responses["400"] = &Response{Ref: "#/components/responses/BadWriteRequest"}
	case r.Ref == "" && !strings.Contains(r.Description, "`invalid_reason`"):
		c := *r
		c.Description += reasonRefusal
		op.Responses["400"] = &c
	}
}

// auditLogParams are the parameters of GET /v1/audit-log.
func auditLogParams() []Parameter {
	id := func(name, doc string) Parameter {
		return Parameter{Name: name, In: "query", Description: doc, Schema: idSchema()}
	}
	instant := func(name, doc string) Parameter {
		return Parameter{Name: name, In: "query", Description: doc + " " + "An RFC 3339 date-time (`Z` or an offset).",
			Schema: Schema{"type": "string", "format": "date-time", "pattern": dateTimePattern, "examples": []string{exampleDateTime}}}
	}
	return []Parameter{
		{Name: "after", In: "query", Description: "A cursor from an earlier page (`next`, or the `" + auditNext + "` header " +
			"of a CSV page): the entries after it. Without it, from the oldest entry kept.", Schema: Schema{"type": "string"}},
		{Name: "limit", In: "query", Description: "At most this many entries (default 1000, at most 10000; more → 400).",
			Schema: Schema{"type": "integer", "minimum": 1, "maximum": 10000, "default": 1000}},
		{Name: "resource", In: "query", Description: "Only entries of this resource (`time-entries`, `users`, `settings`, …).",
			Schema: Schema{"type": "string", "minLength": 1}},
		id("record", "Only entries of the record with this id (with `resource`, of one record)."),
		id("user", "Only entries of changes the User with this id made (`actor.user`)."),
		{Name: "op", In: "query", Description: "Only entries of this operation.",
			Schema: Schema{"type": "string", "enum": []string{"create", "update", "delete"}}},
		instant("from", "Only entries made at or after this instant (`at`, inclusive)."),
		instant("to", "Only entries made before this instant (`at`, exclusive)."),
	}
}

// auditLogOK is the audit log's answer: JSON, or CSV on request.
func auditLogOK() okResp {
	return okResp{"200", &Response{
		Description: "The page: JSON, or with `Accept: text/csv` (and no higher quality for application/json) the same " +
			"entries as CSV, with the cursor in the `" + auditNext + "` header.",
		Headers: map[string]Header{auditNext: {Ref: "#/components/headers/" + auditNext}},
		Content: map[string]MediaType{
			"application/json": {Schema: schemaRef("AuditPage")},
			"text/csv": {Schema: Schema{"type": "string",
				"description": "RFC 4180 (CRLF line ends), a header row, then one row per entry in the columns seq, at, " +
					"actor, requestId, reason, resource, record, op, changed, before, after, prevHash, hash; actor, " +
					"changed, before and after are JSON text (`null` for none), requestId, reason and record are empty " +
					"when null."}},
		}}}
}

// historyDescription says what a record's history is and who reads it.
func historyDescription(who string) string {
	return "The record's audit entries, oldest first: who changed it when, from what to what, and why. " + who +
		" Not paged: the whole history is streamed."
}
