package openapi

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Version30 is the OpenAPI version of the 3.0 rendition.
const Version30 = "3.0.3"

// OpenAPI30 returns the document rendered as OpenAPI 3.0, for generators
// that do not read 3.1 (oapi-codegen, ogen). It is the same model: only
// the spelling of JSON Schema 2020-12 changes to 3.0's dialect:
//   - a type list with "null" becomes the type and nullable: true, and
//     null leaves the enum (3.0 marks nullability with nullable alone);
//     several non-null types become an anyOf of the types, the first
//     of which is nullable;
//   - an anyOf or oneOf alternative of type null leaves, and the first
//     other alternative is nullable;
//   - examples becomes example (its first entry), const a one-value enum;
//   - contentMediaType becomes format: binary;
//   - info.summary, which 3.0 does not have, joins the description.
func (d *Document) OpenAPI30() (*Document, error) {
	raw, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	var out Document
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	out.OpenAPI = Version30
	out.Webhooks = nil // 3.0 cannot describe the requests the service makes
	if out.Info.Summary != "" {
		out.Info.Description = out.Info.Summary + "\n\n" + out.Info.Description
		out.Info.Summary = ""
	}
	for _, s := range out.Components.Schemas {
		schema30(s)
	}
	for name, p := range out.Components.Parameters {
		out.Components.Parameters[name] = param30(p)
	}
	for _, h := range out.Components.Headers {
		schema30(h.Schema)
	}
	for _, r := range out.Components.Responses {
		response30(r)
	}
	for _, item := range out.Paths {
		for _, m := range methods {
			op := item.Operation(m)
			if op == nil {
				continue
			}
			for i, p := range op.Parameters {
				op.Parameters[i] = param30(p)
			}
			if op.RequestBody != nil {
				content30(op.RequestBody.Content)
			}
			for _, r := range op.Responses {
				response30(r)
			}
		}
	}
	return &out, nil
}

func param30(p Parameter) Parameter {
	schema30(p.Schema)
	content30(p.Content)
	return p
}

func response30(r *Response) {
	for _, h := range r.Headers {
		schema30(h.Schema)
	}
	content30(r.Content)
}

func content30(c map[string]MediaType) {
	for _, mt := range c {
		schema30(mt.Schema)
	}
}

// schema30 rewrites a schema (a JSON value as decoded) in place.
func schema30(s map[string]any) {
	if s == nil {
		return
	}
	if types, ok := s["type"].([]any); ok {
		var nonNull []any
		for _, t := range types {
			if t == "null" {
				s["nullable"] = true
			} else {
				nonNull = append(nonNull, t)
			}
		}
		delete(s, "type")
		switch len(nonNull) {
		case 0:
		case 1:
			s["type"] = nonNull[0]
		default:
			// 3.0 allows nullable only beside a type: the first
			// alternative carries it.
			var anyOf []any
			for _, t := range nonNull {
				alt := map[string]any{"type": t}
				if s["nullable"] == true {
					alt["nullable"] = true
					delete(s, "nullable")
				}
				anyOf = append(anyOf, alt)
			}
			s["anyOf"] = anyOf
		}
	}
	if enum, ok := s["enum"].([]any); ok && s["nullable"] == true {
		s["enum"] = slices.DeleteFunc(enum, func(v any) bool { return v == nil })
	}
	if ex, ok := s["examples"].([]any); ok {
		delete(s, "examples")
		if len(ex) > 0 {
			s["example"] = ex[0]
		}
	}
	if c, ok := s["const"]; ok {
		delete(s, "const")
		s["enum"] = []any{c}
	}
	if _, ok := s["contentMediaType"]; ok {
		delete(s, "contentMediaType")
		s["format"] = "binary"
	}
	for _, k := range []string{"items", "additionalProperties", "not"} {
		if sub, ok := s[k].(map[string]any); ok {
			schema30(sub)
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		// An alternative of type null: the first other one is nullable.
		list, _ := s[k].([]any)
		rest := slices.DeleteFunc(slices.Clone(list), func(v any) bool {
			m, _ := v.(map[string]any)
			return len(m) == 1 && m["type"] == "null"
		})
		if len(rest) < len(list) && len(rest) > 0 {
			if first, _ := rest[0].(map[string]any); first["type"] != nil {
				first["nullable"] = true
			}
			s[k] = rest
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		if list, ok := s[k].([]any); ok {
			for _, sub := range list {
				if m, ok := sub.(map[string]any); ok {
					schema30(m)
				}
			}
		}
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for _, sub := range props {
			if m, ok := sub.(map[string]any); ok {
				schema30(m)
			}
		}
	}
}
