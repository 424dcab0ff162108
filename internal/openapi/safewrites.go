package openapi

import (
	"maps"
	"net/http"
	"strings"
)

// Safe writes (docs/api.md "Safe writes"): entity tags and conditional
// requests on the answers that carry one record, Idempotency-Key on every
// POST of the data API. One pass adds them to each operation as it is put
// into the document, so no operation can miss them.

// safeWriteComponents adds the shared parameters, headers and answers.
func (b *builder) safeWriteComponents() {
	c := &b.doc.Components
	str := Schema{"type": "string"}
	c.Parameters["IfMatch"] = Parameter{Name: "If-Match", In: "header", Schema: str,
		Description: "Entity tags (the `ETag` of an earlier answer) the record must still have, or `*` for any: " +
			"otherwise 412 `precondition_failed` and nothing changes. Checked inside the write, so of two writers " +
			"that read the same version only one succeeds. Strong comparison: weak tags never match."}
	c.Parameters["IfNoneMatch"] = Parameter{Name: "If-None-Match", In: "header", Schema: str,
		Description: "Entity tags of a version the client holds: when the record still has one, 304 without a body."}
	c.Parameters["IdempotencyKey"] = Parameter{Name: "Idempotency-Key", In: "header",
		Schema: Schema{"type": "string", "minLength": 1, "maxLength": 255, "pattern": `^[\x20-\x7E]+$`},
		Description: "1–255 printable ASCII characters, unique per request the client means (a UUID). Kept 24 hours " +
			"per tenant and user: the same key with the same method, path and body replays the first answer " +
			"(`Idempotent-Replayed: true`); with another request → 422 `idempotency_key_reused`; while the first " +
			"is still running → 409 `idempotency_key_in_use`. Answers of 5xx are not kept. A kept answer is " +
			"replayed only while the caller may still make the request (role, token scope, rights on the record " +
			"the path names, the record the answer shows); otherwise the answer is the refusal a new request gets, " +
			"or 404 `not_found` when the caller may no longer read the record the answer shows."}
	c.Headers["ETag"] = Header{Description: "Strong entity tag of the record: changes whenever the record changes. " +
		"Send it in `If-Match` to write only that version, in `If-None-Match` to read only a newer one.",
		Required: true, Schema: str}
	c.Headers["Idempotent-Replayed"] = Header{Description: "`true` when the answer is the replay of an earlier " +
		"request with the same `Idempotency-Key`.", Schema: Schema{"type": "string", "enum": []string{"true"}}}
	c.Responses["NotModified"] = &Response{Description: "The record still has a tag `If-None-Match` names; no body.",
		Headers: map[string]Header{"ETag": {Ref: "#/components/headers/ETag"}}}
	c.Responses["PreconditionFailed"] = errorAnswer("The record no longer has a tag `If-Match` names " +
		"(`precondition_failed`): read it again and resend the change.")
	c.Responses["ReplayNotFound"] = errorAnswer("The answer kept for this `Idempotency-Key` shows a record the " +
		"caller may no longer read, deleted or hidden since (`not_found`): it is not replayed.")
	c.Responses["UnprocessableEntity"] = errorAnswer("The `Idempotency-Key` was used for another request " +
		"(`idempotency_key_reused`): another method, path or body.")
}

// safeWrite adds to an operation what safe writes give it: the ETag of
// the record it answers with and the conditional headers, and on POSTs
// of the data API the Idempotency-Key.
func (b *builder) safeWrite(method string, op *Operation) {
	bearer := op.Security != nil && len(*op.Security) > 0
	// The answers may be shared with the route table, and so with every
	// document built from it (one per service; tests build many at
	// once): change copies only.
	op.Responses = maps.Clone(op.Responses)
	if op.record {
		for status, r := range op.Responses {
			if strings.HasPrefix(status, "2") && r.Ref == "" {
				op.Responses[status] = withHeader(r, "ETag")
			}
		}
		switch method {
		case http.MethodGet:
			op.Parameters = append(op.Parameters, Parameter{Ref: "#/components/parameters/IfNoneMatch"})
			op.Responses["304"] = &Response{Ref: "#/components/responses/NotModified"}
		case http.MethodPatch, http.MethodPut, http.MethodDelete:
			op.Parameters = append(op.Parameters, Parameter{Ref: "#/components/parameters/IfMatch"})
			op.Responses["412"] = &Response{Ref: "#/components/responses/PreconditionFailed"}
		}
	}
	if bearer && method == http.MethodPost {
		op.Parameters = append(op.Parameters, Parameter{Ref: "#/components/parameters/IdempotencyKey"})
		for status, r := range op.Responses {
			if strings.HasPrefix(status, "2") && r.Ref == "" {
				op.Responses[status] = withHeader(r, "Idempotent-Replayed")
			}
		}
		switch r := op.Responses["409"]; {
		case r == nil:
			op.Responses["409"] = &Response{Ref: "#/components/responses/Conflict"}
		case r.Ref == "" && !strings.Contains(r.Description, "idempotency_key_in_use"):
			c := *r
			c.Description += " Or the first request with the same `Idempotency-Key` is still running (`idempotency_key_in_use`)."
			op.Responses["409"] = &c
		}
		op.Responses["422"] = &Response{Ref: "#/components/responses/UnprocessableEntity"}
		if op.record && op.Responses["404"] == nil {
			op.Responses["404"] = &Response{Ref: "#/components/responses/ReplayNotFound"}
		}
	}
}

// withHeader returns a copy of r that also names the header.
func withHeader(r *Response, name string) *Response {
	c := *r
	c.Headers = maps.Clone(r.Headers)
	if c.Headers == nil {
		c.Headers = map[string]Header{}
	}
	c.Headers[name] = Header{Ref: "#/components/headers/" + name}
	return &c
}
