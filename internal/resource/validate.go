package resource

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"planwerk/internal/errs"
	"planwerk/internal/query"
)

// owned are the attributes the service sets on every record.
var owned = map[string]bool{"id": true, "createdAt": true, "updatedAt": true}

// Apply merges a write into a record's document: input onto old (nil for
// a create). It returns the new document, the write-only values (kept out
// of the document), and every problem found. Service-owned and read-only
// attributes sent by the client are ignored.
func (r *Resource) Apply(input, old map[string]any) (doc, writeOnly map[string]any, problems []errs.Problem) {
	doc = make(map[string]any, len(old)+len(input))
	for k, v := range old {
		if !owned[k] {
			doc[k] = v
		}
	}
	writeOnly = map[string]any{}
	keys := make([]string, 0, len(input))
	for k := range input {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := input[k]
		if owned[k] {
			continue
		}
		a, declared := r.Attr(k)
		switch {
		case !declared:
			if r.DeclaredOnly {
				problems = append(problems, errs.Problem{Field: k, Message: "unknown attribute"})
				continue
			}
			doc[k] = v
		case a.ReadOnly:
			continue
		default:
			val, msg := a.convert(v)
			if msg != "" {
				problems = append(problems, errs.Problem{Field: k, Message: msg})
				continue
			}
			if a.WriteOnly {
				writeOnly[k] = val
			} else {
				doc[k] = val
			}
		}
	}
	for _, a := range r.Attrs {
		if a.Required && doc[a.Name] == nil && !hasProblem(problems, a.Name) {
			problems = append(problems, errs.Problem{Field: a.Name, Message: "is required"})
		}
	}
	return doc, writeOnly, problems
}

func hasProblem(ps []errs.Problem, field string) bool {
	for _, p := range ps {
		if p.Field == field {
			return true
		}
	}
	return false
}

// convert checks a value against the attribute's type and returns it in
// its stored form, or a message saying what is wrong.
func (a Attr) convert(v any) (any, string) {
	if v == nil {
		if a.Required {
			return nil, "is required"
		}
		return nil, ""
	}
	switch a.Type {
	case query.Integer:
		n, ok := v.(json.Number)
		if !ok {
			return nil, "must be an integer"
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil {
			f, ferr := strconv.ParseFloat(string(n), 64)
			if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
				return nil, "must be an integer"
			}
			i = int64(f)
		}
		if len(a.Ints) > 0 && !slices.Contains(a.Ints, i) {
			return nil, "must be one of " + joinInts(a.Ints)
		}
		return i, ""
	case query.Number:
		if _, ok := v.(json.Number); !ok {
			return nil, "must be a number"
		}
		return v, ""
	case query.Boolean:
		if _, ok := v.(bool); !ok {
			return nil, "must be true or false"
		}
		return v, ""
	case query.String:
		if _, ok := v.(string); !ok {
			return nil, "must be a string"
		}
		return v, ""
	case query.Date:
		s, ok := v.(string)
		if _, err := time.Parse(time.DateOnly, s); !ok || err != nil || len(s) != 10 {
			return nil, "must be a date YYYY-MM-DD"
		}
		return s, ""
	case query.Timestamp:
		// Stored in UTC with milliseconds, whatever offset and precision
		// the client sent, so stored values sort and compare as text.
		s, ok := v.(string)
		if !ok {
			return nil, "must be " + query.TimestampHint
		}
		norm, err := query.NormalTimestamp(s)
		if err != nil {
			return nil, err.Error()
		}
		return norm, ""
	case query.Enum:
		s, ok := v.(string)
		if !ok || !slices.Contains(a.Enum, s) {
			return nil, "must be one of " + strings.Join(a.Enum, ", ")
		}
		return s, ""
	}
	return v, ""
}

func joinInts(ns []int64) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, ", ")
}

// RefTarget returns the resource an attribute's value refers to in doc,
// and whether the attribute is a reference at all.
func (r *Resource) RefTarget(a Attr, doc map[string]any) (string, bool) {
	if a.Ref != "" {
		return a.Ref, true
	}
	if a.RefByModel != "" {
		model, _ := doc[a.RefByModel].(string)
		target, ok := Models[model]
		return target, ok
	}
	return "", false
}
