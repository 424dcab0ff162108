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

// CheckDocument (Check): a Document's category must belong to its model.
func CheckDocument(_ context.Context, c records.Change) error {
	cat, ok := c.New.Ref("category")
	if !ok {
		return nil
	}
	model, _ := c.New.String("model")
	if want := Categories[cat]; want != model {
		return errs.Field("category", fmt.Sprintf("%d is for %s documents, not %s documents", cat, want, model))
	}
	return nil
}

// VisibleDocument (Visible): members see a user-model Document only when
// it is about themselves and visibleToUser is true.
func VisibleDocument(_ context.Context, caller auth.Principal, doc records.DocView) (bool, error) {
	if model, _ := doc.String("model"); caller.IsAdmin || model != "user" {
		return true, nil
	}
	record, _ := doc.Ref("record")
	return record == caller.UserID && doc.Bool("visibleToUser"), nil
}

// FilterDocuments (ReadFilter) is VisibleDocument as list criteria.
func FilterDocuments(_ context.Context, caller auth.Principal, r *resource.Resource, _ *query.Query) (query.Node, error) {
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
