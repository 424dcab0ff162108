package records

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"planwerk/internal/auth"
	"planwerk/internal/query"
	"planwerk/internal/resource"
	"planwerk/internal/store"
)

// Write is one write in progress, handed to hooks.
type Write struct {
	Tx        store.Querier
	Caller    auth.Principal
	Res       *resource.Resource
	ID        int64
	CreatedAt string
	Old       map[string]any // nil on create
	New       map[string]any // nil on delete
	WriteOnly map[string]any
	// Prepared carries what a hook's Prepare computed outside the
	// transaction (a password hash).
	Prepared map[string]any
	// afterCommit runs once the write has committed.
	afterCommit []func()
}

// AfterCommit makes fn run once the write has committed (never when it
// rolls back).
func (w *Write) AfterCommit(fn func()) { w.afterCommit = append(w.afterCommit, fn) }

func (w *Write) committed() {
	for _, fn := range w.afterCommit {
		fn()
	}
}

// Hooks are a resource's special rules. Every field is optional.
type Hooks struct {
	// Prepare runs before the transaction, for slow work (hashing).
	Prepare func(ctx context.Context, w *Write) error
	// Check validates a create or update inside the transaction.
	Check func(ctx context.Context, w *Write) error
	// CheckDelete may refuse a delete inside the transaction.
	CheckDelete func(ctx context.Context, w *Write) error
	// Visible says whether the caller may see a record; ReadFilter is the
	// same rule as list criteria. Both or neither are set, except that a
	// ReadFilter alone may narrow what a list shows by default.
	Visible    func(ctx context.Context, caller auth.Principal, doc map[string]any) (bool, error)
	ReadFilter func(ctx context.Context, caller auth.Principal, r *resource.Resource, q *query.Query) (query.Node, error)
	// Insert, Update and Delete replace the generic storage.
	Insert func(ctx context.Context, w *Write) (store.Doc, error)
	Update func(ctx context.Context, w *Write) (store.Doc, error)
	// Delete may return the record as the answer shows it (an archived
	// record); nil means the record as it was.
	Delete func(ctx context.Context, w *Write) (store.Doc, error)
}

// Rules binds resources, by their registry name, to their special rules.
// The service takes one such table, checked against the registry when it
// starts: a rule bound to a name the registry does not know would never
// run.
type Rules map[string]Hooks

// check returns an error naming every resource of the table the registry
// does not know, and every rule that would never run on its resource.
func (rules Rules) check(reg *resource.Registry) error {
	var bad []string
	for name, h := range rules {
		r, ok := reg.Get(name)
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("%q is no resource of the registry", name))
		case r.ReadOnly && (h.Prepare != nil || h.Check != nil || h.CheckDelete != nil || h.Insert != nil || h.Update != nil || h.Delete != nil):
			bad = append(bad, fmt.Sprintf("%q is read-only: its write rules would never run", name))
		case h.Visible != nil && h.ReadFilter == nil:
			bad = append(bad, fmt.Sprintf("%q: a Visible rule needs its ReadFilter, or lists would show what Get hides", name))
		}
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		return fmt.Errorf("rules: %s", strings.Join(bad, "; "))
	}
	return nil
}
