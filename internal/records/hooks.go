package records

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"planwerk/internal/auth"
	"planwerk/internal/query"
	"planwerk/internal/resource"
	"planwerk/internal/store"
)

// Write is one write in progress, as the hooks that may change it see it:
// Prepare, Normalize and the storage hooks (Insert, Update, Delete).
type Write struct {
	Tx        store.Querier
	Caller    auth.Principal
	Res       *resource.Resource
	ID        int64
	CreatedAt string
	Old       Doc // nil on create
	New       Doc // nil on delete
	WriteOnly Doc
	// Prepared carries what a hook's Prepare computed outside the
	// transaction (a password hash).
	Prepared Doc
	// afterCommit runs once the write has committed.
	afterCommit []func()
}

// AfterCommit makes fn run once the write has committed (never when it
// rolls back).
func (w *Write) AfterCommit(fn func()) { w.afterCommit = append(w.afterCommit, fn) }

// Changed reports whether the write changes the attribute: its value
// before differs from its value after.
func (w *Write) Changed(name string) bool { return !same(w.Old[name], w.New[name]) }

// same reports whether two values of an attribute are equal, whole
// numbers by value whatever their decoded form.
func same(a, b any) bool {
	if x, ok := AsID(a); ok {
		y, ok := AsID(b)
		return ok && x == y
	}
	return reflect.DeepEqual(a, b)
}

func (w *Write) committed() {
	for _, fn := range w.afterCommit {
		fn()
	}
}

// change is the write as a Check sees it.
func (w *Write) change() Change {
	return Change{Tx: w.Tx, Caller: w.Caller, Res: w.Res, ID: w.ID,
		Old: w.Old.View(), New: w.New.View(), WriteOnly: w.WriteOnly.View(), Prepared: w.Prepared.View()}
}

// Change is a write in progress as a Check sees it: its documents are
// read-only, so a Check can refuse the write but not change it. Tx is for
// the reads (and locks) a refusal needs.
type Change struct {
	Tx        store.Querier
	Caller    auth.Principal
	Res       *resource.Resource
	ID        int64
	Old       DocView // empty on create
	New       DocView // empty on delete
	WriteOnly DocView
	Prepared  DocView
}

// Hooks are a resource's special rules, by kind: the kind says what a
// rule may do. Every field is optional. A write runs them in this order:
// Prepare; then in the transaction, after the generic checks, Normalize,
// Check (or CheckDelete), and Insert, Update or Delete.
type Hooks struct {
	// Prepare runs before the transaction, for slow work (hashing); it
	// may fill in Prepared.
	Prepare func(ctx context.Context, w *Write) error
	// Normalize may fill in or change values of the new document of a
	// create or update, before it is checked.
	Normalize func(ctx context.Context, w *Write) error
	// Check may refuse a create or update; it cannot change it.
	Check func(ctx context.Context, c Change) error
	// CheckDelete may refuse a delete; it cannot change it.
	CheckDelete func(ctx context.Context, c Change) error
	// Visible says whether the caller may see a record; ReadFilter is the
	// same rule as list criteria. Both or neither are set, except that a
	// ReadFilter alone may narrow what a list shows by default.
	Visible    func(ctx context.Context, caller auth.Principal, doc DocView) (bool, error)
	ReadFilter func(ctx context.Context, caller auth.Principal, r *resource.Resource, q *query.Query) (query.Node, error)
	// Insert, Update and Delete replace the generic storage.
	Insert func(ctx context.Context, w *Write) (store.Record, error)
	Update func(ctx context.Context, w *Write) (store.Record, error)
	// Delete may return the record as the answer shows it (an archived
	// record); one without a document means the record as it was.
	Delete func(ctx context.Context, w *Write) (store.Record, error)
	// Stored runs after the storage of a create, update or delete, in
	// its transaction, to keep what is derived from the record (w.Old:
	// the document before, nil on create; w.New: after, nil on delete).
	Stored func(ctx context.Context, w *Write) error
}

// writes reports whether any rule of h concerns writes.
func (h Hooks) writes() bool {
	return h.Prepare != nil || h.Normalize != nil || h.Check != nil || h.CheckDelete != nil ||
		h.Insert != nil || h.Update != nil || h.Delete != nil || h.Stored != nil
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
		case r.ReadOnly && h.writes():
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
