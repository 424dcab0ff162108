// Package documents holds the rules of Documents (docs/api.md
// "Documents", "Roles"): a category belongs to one model, and members see
// a user's document only when it is their own and visible to them.
package documents

import (
	"context"
	"fmt"

	"planwerk/internal/auth"
	"planwerk/internal/errs"
	"planwerk/internal/query"
	"planwerk/internal/records"
	"planwerk/internal/resource"
)

// Categories maps each Document category to the model it is valid for.
var Categories = map[int64]string{
	1: "user", 2: "user", 3: "user", 4: "user", 5: "user", 6: "user",
	7: "project", 8: "project", 9: "project", 10: "project",
	11: "client", 12: "client", 13: "client", 14: "client",
}

// Hooks are the rules of the documents resource.
func Hooks() records.Hooks {
	return records.Hooks{Check: check, Visible: visible, ReadFilter: filter}
}

// check: a Document's category must belong to its model.
func check(_ context.Context, w *records.Write) error {
	cat, ok := records.AsID(w.New["category"])
	if !ok {
		return nil
	}
	model, _ := w.New["model"].(string)
	if want := Categories[cat]; want != model {
		return errs.Field("category", fmt.Sprintf("%d is for %s documents, not %s documents", cat, want, model))
	}
	return nil
}

// visible: members see a user-model Document only when it is about
// themselves and visibleToUser is true.
func visible(_ context.Context, caller auth.Principal, doc map[string]any) (bool, error) {
	if caller.IsAdmin || doc["model"] != "user" {
		return true, nil
	}
	record, _ := records.AsID(doc["record"])
	return record == caller.UserID && doc["visibleToUser"] == true, nil
}

// filter is visible as list criteria.
func filter(_ context.Context, caller auth.Principal, r *resource.Resource, _ *query.Query) (query.Node, error) {
	if caller.IsAdmin {
		return nil, nil
	}
	f := r.Schema().Fields
	return &query.Or{Terms: []query.Node{
		query.NotEqual(f["model"], query.Str("user")),
		query.All(
			query.Equal(f["record"], query.Int(caller.UserID)),
			query.Equal(f["visibleToUser"], query.Bool(true)),
		),
	}}, nil
}
