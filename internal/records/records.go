// Package records applies the rules of the resource registry to reads and
// writes: who may do what, typed and validated attributes, references
// within the tenant, and each resource's special rules (its hooks).
package records

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"

	"planwerk/internal/auth"
	"planwerk/internal/errs"
	"planwerk/internal/etag"
	"planwerk/internal/gate"
	"planwerk/internal/query"
	"planwerk/internal/resource"
	"planwerk/internal/store"
)

// Store is what the engine needs of the database.
type Store interface {
	Records(q store.Querier, tenantID int64, c store.Collection) store.Records
	ListRecords(ctx context.Context, tenantID int64, c store.Collection, q *query.Query, fn func(doc []byte) error) (next string, err error)
	EachByID(ctx context.Context, tenantID int64, c store.Collection, ids []int64, fn func(id int64, doc []byte) error) error
	Tx(ctx context.Context, fn func(q store.Querier) error) error
}

// Service reads and writes records.
type Service struct {
	db    Store
	reg   *resource.Registry
	hooks Rules
	// expansions shares the work of expanding references in long lists
	// (decoding and copying referenced records) among tenants.
	expansions *gate.Gate
}

// New returns a Service applying the registry and the special rules of
// its resources. A rule bound to a name the registry does not know is an
// error: it would silently never run.
func New(db Store, reg *resource.Registry, rules Rules) (*Service, error) {
	if err := rules.check(reg); err != nil {
		return nil, err
	}
	return &Service{db: db, reg: reg, hooks: rules,
		expansions: gate.New("reference expansion", gate.Options{Capacity: 4 * runtime.NumCPU(), PerKey: max(1, runtime.NumCPU()/2), MaxQueue: 64})}, nil
}

// Share is the fair share of reference expansion, for monitoring.
func (s *Service) Share() *gate.Gate { return s.expansions }

// in is the caller's tenant's handle on a resource's records.
func (s *Service) in(q store.Querier, caller auth.Principal, r *resource.Resource) store.Records {
	return s.db.Records(q, caller.TenantID, Collection(r))
}

// Collection returns where a resource's records live.
func Collection(r *resource.Resource) store.Collection {
	if r.Table != "records" {
		return store.Collection{Table: r.Table}
	}
	if r.Source != "" {
		return store.Collection{Table: "records", Resource: r.Source}
	}
	return store.Collection{Table: "records", Resource: r.Name}
}

// Get returns one record.
func (s *Service) Get(ctx context.Context, caller auth.Principal, r *resource.Resource, id int64, populate []string) (store.Record, error) {
	rec, err := s.in(nil, caller, r).Get(ctx, id)
	if err != nil {
		return store.Record{}, err
	}
	if h := s.hooks[r.Name]; h.Visible != nil {
		doc, err := Decode(rec.Doc)
		if err != nil {
			return store.Record{}, err
		}
		visible, err := h.Visible(ctx, caller, doc.View())
		if err != nil {
			return store.Record{}, err
		}
		if !visible {
			return store.Record{}, fmt.Errorf("%s %d: %w", r.Name, id, store.ErrNotFound)
		}
	}
	if len(populate) == 0 {
		return rec, nil
	}
	// The expanded document is another representation: its tag is its
	// own (an empty ETag: Tag computes it).
	out := store.Record{ID: rec.ID}
	err = s.newPopulator(caller, r, populate, 0).expand(ctx, [][]byte{rec.Doc}, func(doc []byte) error {
		out.Doc = bytes.Clone(doc)
		return nil
	})
	return out, err
}

// mayWrite applies the write policy of the registry to a record's owner.
func mayWrite(caller auth.Principal, r *resource.Resource, doc map[string]any) error {
	if caller.IsAdmin {
		return nil
	}
	if r.Write == resource.OwnRecords {
		if owner, ok := AsID(doc["user"]); ok && owner == caller.UserID {
			return nil
		}
		return errs.Forbid("members may only write their own " + r.Name)
	}
	return errs.Forbid("only admins may write " + r.Name)
}

// Create validates and stores a new record.
func (s *Service) Create(ctx context.Context, caller auth.Principal, r *resource.Resource, input map[string]any) (store.Record, error) {
	if !caller.IsAdmin && r.Write == resource.AdminOnly {
		return store.Record{}, errs.Forbid("only admins may write " + r.Name)
	}
	doc, writeOnly, problems := r.Apply(input, nil)
	if r.Write == resource.OwnRecords && doc["user"] == nil && !errs.Named(problems, "user") {
		doc["user"] = caller.UserID
	}
	if len(problems) > 0 {
		return store.Record{}, errs.Fields(problems...)
	}
	if err := mayWrite(caller, r, doc); err != nil {
		return store.Record{}, err
	}
	w := &Write{Caller: caller, Res: r, New: doc, WriteOnly: writeOnly, Prepared: map[string]any{}}
	h := s.hooks[r.Name]
	if h.Prepare != nil {
		if err := h.Prepare(ctx, w); err != nil {
			return store.Record{}, err
		}
	}
	var out store.Record
	err := s.db.Tx(ctx, func(tx store.Querier) error {
		w.Tx = tx
		if err := s.checkRefs(ctx, w, nil); err != nil {
			return err
		}
		if err := normalizeAndCheck(ctx, h, w); err != nil {
			return err
		}
		var err error
		if h.Insert != nil {
			out, err = h.Insert(ctx, w)
		} else {
			out, err = s.in(tx, caller, r).Insert(ctx, w.New)
		}
		return stored(ctx, h, w, err)
	})
	if err != nil {
		return store.Record{}, err
	}
	w.committed()
	return out, nil
}

// Update applies a partial write to a record. ifMatch is the request's
// If-Match header ("" for none): the record must still have one of its
// entity tags, checked on the locked row, so that of two writers that
// read the same version only one wins.
func (s *Service) Update(ctx context.Context, caller auth.Principal, r *resource.Resource, id int64, input map[string]any, ifMatch string) (store.Record, error) {
	h := s.hooks[r.Name]
	w := &Write{Caller: caller, Res: r, ID: id, Prepared: map[string]any{}}
	if h.Prepare != nil {
		if err := s.prepareUpdate(ctx, w, input, ifMatch, h.Prepare); err != nil {
			return store.Record{}, err
		}
	}
	var out store.Record
	err := s.db.Tx(ctx, func(tx store.Querier) error {
		w.Tx = tx
		_, old, err := s.lockForWrite(ctx, tx, caller, r, id, ifMatch)
		if err != nil {
			return err
		}
		doc, writeOnly, problems := r.Apply(input, old)
		if len(problems) > 0 {
			return errs.Fields(problems...)
		}
		w.WriteOnly = writeOnly
		if err := mayWrite(caller, r, doc); err != nil {
			return err
		}
		w.Old, w.New = old, doc
		w.CreatedAt, _ = old.String("createdAt")
		if err := s.checkRefs(ctx, w, old); err != nil {
			return err
		}
		if err := normalizeAndCheck(ctx, h, w); err != nil {
			return err
		}
		if h.Update != nil {
			out, err = h.Update(ctx, w)
		} else {
			out, err = s.in(tx, caller, r).Update(ctx, id, w.CreatedAt, w.New)
		}
		return stored(ctx, h, w, err)
	})
	if err != nil {
		return store.Record{}, err
	}
	w.committed()
	return out, nil
}

// stored runs the Stored hook of a write whose storage succeeded (err
// nil); it returns err otherwise.
func stored(ctx context.Context, h Hooks, w *Write, err error) error {
	if err != nil || h.Stored == nil {
		return err
	}
	return h.Stored(ctx, w)
}

// normalizeAndCheck runs a create's or update's Normalize, then its Check
// on the normalized write.
func normalizeAndCheck(ctx context.Context, h Hooks, w *Write) error {
	if h.Normalize != nil {
		if err := h.Normalize(ctx, w); err != nil {
			return err
		}
	}
	if h.Check != nil {
		return h.Check(ctx, w.change())
	}
	return nil
}

// prepareUpdate validates an update against the current record, then
// runs the slow Prepare step outside the transaction, which validates
// again on the locked row.
func (s *Service) prepareUpdate(ctx context.Context, w *Write, input map[string]any, ifMatch string, prepare func(context.Context, *Write) error) error {
	cur, err := s.in(nil, w.Caller, w.Res).Get(ctx, w.ID)
	if err != nil {
		return err
	}
	if err := precondition(cur, ifMatch); err != nil {
		return err // before the slow step; the transaction checks again
	}
	old, err := Decode(cur.Doc)
	if err != nil {
		return err
	}
	if err := mayWrite(w.Caller, w.Res, old); err != nil {
		return err
	}
	doc, writeOnly, problems := w.Res.Apply(input, old)
	if len(problems) > 0 {
		return errs.Fields(problems...)
	}
	w.Old, w.New, w.WriteOnly = old, doc, writeOnly
	return prepare(ctx, w)
}

// lockForWrite reads and locks the record a write changes: 404 when the
// caller cannot see it, 403 when the caller may not change it, 412 when
// it no longer matches ifMatch.
func (s *Service) lockForWrite(ctx context.Context, tx store.Querier, caller auth.Principal, r *resource.Resource, id int64, ifMatch string) (store.Record, Doc, error) {
	cur, err := s.in(tx, caller, r).Lock(ctx, id)
	if err != nil {
		return store.Record{}, nil, err
	}
	old, err := Decode(cur.Doc)
	if err != nil {
		return store.Record{}, nil, err
	}
	if h := s.hooks[r.Name]; h.Visible != nil {
		if visible, err := h.Visible(ctx, caller, old.View()); err != nil || !visible {
			return store.Record{}, nil, errors.Join(err, fmt.Errorf("%s %d: %w", r.Name, id, store.ErrNotFound))
		}
	}
	if err := mayWrite(caller, r, old); err != nil {
		return store.Record{}, nil, err
	}
	if err := precondition(cur, ifMatch); err != nil {
		return store.Record{}, nil, err
	}
	return cur, old, nil
}

// precondition refuses a write whose If-Match names no current tag of
// the record.
func precondition(cur store.Record, ifMatch string) error {
	if ifMatch == "" || etag.Match(ifMatch, cur.Tag()) {
		return nil
	}
	return errs.New(errs.PreconditionFailed, "precondition_failed",
		"the record changed since the version If-Match names; read it again and resend the change")
}

// Delete removes a record and returns it as it was; ifMatch as for Update.
func (s *Service) Delete(ctx context.Context, caller auth.Principal, r *resource.Resource, id int64, ifMatch string) (store.Record, error) {
	h := s.hooks[r.Name]
	var out store.Record
	var w *Write
	err := s.db.Tx(ctx, func(tx store.Querier) error {
		cur, old, err := s.lockForWrite(ctx, tx, caller, r, id, ifMatch)
		if err != nil {
			return err
		}
		out = cur
		w = &Write{Tx: tx, Caller: caller, Res: r, ID: id, Old: old}
		if h.CheckDelete != nil {
			if err := h.CheckDelete(ctx, w.change()); err != nil {
				return err
			}
		}
		if h.Delete != nil {
			rec, err := h.Delete(ctx, w)
			if rec.Doc != nil {
				out = rec
			}
			return stored(ctx, h, w, err)
		}
		return stored(ctx, h, w, s.in(tx, caller, r).Delete(ctx, id))
	})
	if err != nil {
		return store.Record{}, err
	}
	w.committed()
	return out, nil
}

// checkRefs makes sure every reference that a write sets or changes names
// a record of the caller's tenant.
func (s *Service) checkRefs(ctx context.Context, w *Write, old map[string]any) error {
	var problems []errs.Problem
	for _, a := range w.Res.Attrs {
		if a.Ref == "" && a.RefByModel == "" {
			continue
		}
		v := w.New[a.Name]
		if v == nil {
			continue
		}
		target, ok := w.Res.RefTarget(a, w.New)
		if !ok {
			problems = append(problems, errs.Problem{Field: a.Name, Message: "cannot refer to a record of model " + fmt.Sprint(w.New[a.RefByModel])})
			continue
		}
		id, _ := AsID(v)
		if old != nil {
			oldTarget, _ := w.Res.RefTarget(a, old)
			if oldID, ok := AsID(old[a.Name]); ok && oldID == id && oldTarget == target {
				continue // unchanged
			}
		}
		tr, ok := s.reg.Get(target)
		if !ok {
			return fmt.Errorf("registry: %s refers to unknown resource %s", a.Name, target)
		}
		exists, err := s.in(w.Tx, w.Caller, tr).Exists(ctx, id)
		if err != nil {
			return err
		}
		if !exists {
			problems = append(problems, errs.Problem{Field: a.Name, Message: fmt.Sprintf("names no %s record %d in this tenant", target, id)})
		}
	}
	if len(problems) > 0 {
		return errs.Fields(problems...)
	}
	return nil
}

// Visible reports whether the caller may read a record of the resource
// named name, as Get decides: the change feed shows only such records.
// Names the registry does not know (uploads) are for their own service.
func (s *Service) Visible(ctx context.Context, caller auth.Principal, name string, doc []byte) (bool, error) {
	h := s.hooks[name]
	if h.Visible == nil {
		return true, nil
	}
	m, err := Decode(doc)
	if err != nil {
		return false, err
	}
	return h.Visible(ctx, caller, m.View())
}
