// Package records applies the rules of the resource registry to reads and
// writes: who may do what, typed and validated attributes, references
// within the tenant, and each resource's special rules (its hooks).
package records

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"

	"planwerk/internal/auth"
	"planwerk/internal/gate"
	"planwerk/internal/query"
	"planwerk/internal/resource"
	"planwerk/internal/store"
)

// Kind classifies a refused request; the HTTP edge maps it to a status.
type Kind int

// Kinds of Error.
const (
	Invalid   Kind = iota + 1 // 400
	Forbidden                 // 403
	NotFound                  // 404
	Conflict                  // 409
)

// Error is a request the rules refuse. Nothing was written.
type Error struct {
	Kind     Kind
	Code     string
	Message  string
	Problems []resource.Problem
}

func (e *Error) Error() string { return e.Message }

func invalid(problems []resource.Problem) *Error {
	return &Error{Kind: Invalid, Code: "invalid", Message: "the record is not valid", Problems: problems}
}

func forbidden(msg string) *Error {
	return &Error{Kind: Forbidden, Code: "forbidden", Message: msg}
}

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
	// same rule as list criteria. Both or neither are set.
	Visible    func(ctx context.Context, caller auth.Principal, doc map[string]any) (bool, error)
	ReadFilter func(ctx context.Context, caller auth.Principal, r *resource.Resource, q *query.Query) (query.Node, error)
	// Insert, Update and Delete replace the generic storage.
	Insert func(ctx context.Context, w *Write) (store.Doc, error)
	Update func(ctx context.Context, w *Write) (store.Doc, error)
	// Delete may return the record as the answer shows it (an archived
	// record); nil means the record as it was.
	Delete func(ctx context.Context, w *Write) (store.Doc, error)
}

// Service reads and writes records.
type Service struct {
	db    *store.DB
	reg   *resource.Registry
	hooks map[string]Hooks
	// expansions shares the work of expanding references in long lists
	// (decoding and copying referenced records) among tenants.
	expansions *gate.Gate
}

// New returns a Service. hooks maps resource names to their rules; the
// rules of tags, skills, absence types and holidays are added here.
func New(db *store.DB, reg *resource.Registry, hooks map[string]Hooks) *Service {
	s := &Service{db: db, reg: reg, hooks: hooks,
		expansions: gate.New("reference expansion", gate.Options{Capacity: 4 * runtime.NumCPU(), PerKey: max(1, runtime.NumCPU()/2), MaxQueue: 64})}
	hooks["tags"] = Hooks{Check: checkTag, ReadFilter: tagsFilter}
	hooks["tag-assignments"] = Hooks{Check: s.checkTagAssignment}
	hooks["skill-assignments"] = Hooks{Check: s.checkSkillAssignment, Insert: s.insertSkillAssignment, Delete: s.archiveSkillAssignment}
	hooks["absence-types"] = Hooks{Check: s.checkAbsenceType, CheckDelete: checkAbsenceTypeDelete}
	hooks["holidays"] = Hooks{ReadFilter: s.holidaysFilter, Visible: s.holidayVisible}
	return s
}

// Share is the fair share of reference expansion, for monitoring.
func (s *Service) Share() *gate.Gate { return s.expansions }

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
func (s *Service) Get(ctx context.Context, caller auth.Principal, r *resource.Resource, id int64, populate []string) (store.Doc, error) {
	rec, err := s.db.GetRecord(ctx, nil, caller.TenantID, Collection(r), id, false)
	if err != nil {
		return nil, err
	}
	if h := s.hooks[r.Name]; h.Visible != nil {
		doc, err := decodeDoc(rec.Doc)
		if err != nil {
			return nil, err
		}
		visible, err := h.Visible(ctx, caller, doc)
		if err != nil {
			return nil, err
		}
		if !visible {
			return nil, fmt.Errorf("%s %d: %w", r.Name, id, store.ErrNotFound)
		}
	}
	if len(populate) == 0 {
		return rec.Doc, nil
	}
	var out store.Doc
	err = s.newPopulator(caller, r, populate, 0).expand(ctx, [][]byte{rec.Doc}, func(doc []byte) error {
		out = bytes.Clone(doc)
		return nil
	})
	return out, err
}

func asID(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	case int64:
		return n, true
	case float64:
		return int64(n), n == float64(int64(n))
	}
	return 0, false
}

func decodeDoc(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("decode record: %w", err)
	}
	return m, nil
}

// mayWrite applies the write policy of the registry to a record's owner.
func mayWrite(caller auth.Principal, r *resource.Resource, doc map[string]any) error {
	if caller.IsAdmin {
		return nil
	}
	if r.Write == resource.OwnRecords {
		if owner, ok := asID(doc["user"]); ok && owner == caller.UserID {
			return nil
		}
		return forbidden("members may only write their own " + r.Name)
	}
	return forbidden("only admins may write " + r.Name)
}

// Create validates and stores a new record.
func (s *Service) Create(ctx context.Context, caller auth.Principal, r *resource.Resource, input map[string]any) (store.Doc, error) {
	if !caller.IsAdmin && r.Write == resource.AdminOnly {
		return nil, forbidden("only admins may write " + r.Name)
	}
	doc, writeOnly, problems := r.Apply(input, nil)
	if r.Write == resource.OwnRecords && doc["user"] == nil && !hasField(problems, "user") {
		doc["user"] = caller.UserID
	}
	if len(problems) > 0 {
		return nil, invalid(problems)
	}
	if err := mayWrite(caller, r, doc); err != nil {
		return nil, err
	}
	w := &Write{Caller: caller, Res: r, New: doc, WriteOnly: writeOnly, Prepared: map[string]any{}}
	h := s.hooks[r.Name]
	if h.Prepare != nil {
		if err := h.Prepare(ctx, w); err != nil {
			return nil, err
		}
	}
	var out store.Doc
	err := s.db.Tx(ctx, func(tx store.Querier) error {
		w.Tx = tx
		if err := s.checkRefs(ctx, w, nil); err != nil {
			return err
		}
		if h.Check != nil {
			if err := h.Check(ctx, w); err != nil {
				return err
			}
		}
		var err error
		if h.Insert != nil {
			out, err = h.Insert(ctx, w)
			return err
		}
		if w.ID, err = s.db.NewID(ctx, tx, caller.TenantID); err != nil {
			return err
		}
		out, err = s.db.InsertRecord(ctx, tx, caller.TenantID, Collection(r), w.ID, doc)
		return err
	})
	if err != nil {
		return nil, err
	}
	w.committed()
	return out, nil
}

func hasField(ps []resource.Problem, f string) bool {
	for _, p := range ps {
		if p.Field == f {
			return true
		}
	}
	return false
}

// Update applies a partial write to a record.
func (s *Service) Update(ctx context.Context, caller auth.Principal, r *resource.Resource, id int64, input map[string]any) (store.Doc, error) {
	h := s.hooks[r.Name]
	w := &Write{Caller: caller, Res: r, ID: id, Prepared: map[string]any{}}
	var (
		problems []resource.Problem
		doc      map[string]any
	)
	// Validate the input against the current record before the slow
	// Prepare step; the transaction below validates again on the locked row.
	if h.Prepare != nil {
		cur, err := s.db.GetRecord(ctx, nil, caller.TenantID, Collection(r), id, false)
		if err != nil {
			return nil, err
		}
		old, err := decodeDoc(cur.Doc)
		if err != nil {
			return nil, err
		}
		if err := mayWrite(caller, r, old); err != nil {
			return nil, err
		}
		if doc, w.WriteOnly, problems = r.Apply(input, old); len(problems) > 0 {
			return nil, invalid(problems)
		}
		w.Old, w.New = old, doc
		if err := h.Prepare(ctx, w); err != nil {
			return nil, err
		}
	}
	var out store.Doc
	err := s.db.Tx(ctx, func(tx store.Querier) error {
		w.Tx = tx
		_, old, err := s.lockForWrite(ctx, tx, caller, r, id)
		if err != nil {
			return err
		}
		doc, w.WriteOnly, problems = r.Apply(input, old)
		if len(problems) > 0 {
			return invalid(problems)
		}
		if err := mayWrite(caller, r, doc); err != nil {
			return err
		}
		w.Old, w.New = old, doc
		w.CreatedAt, _ = old["createdAt"].(string)
		if err := s.checkRefs(ctx, w, old); err != nil {
			return err
		}
		if h.Check != nil {
			if err := h.Check(ctx, w); err != nil {
				return err
			}
		}
		if h.Update != nil {
			out, err = h.Update(ctx, w)
			return err
		}
		out, err = s.db.UpdateRecord(ctx, tx, caller.TenantID, Collection(r), id, w.CreatedAt, doc)
		return err
	})
	if err != nil {
		return nil, err
	}
	w.committed()
	return out, nil
}

// lockForWrite reads and locks the record a write changes: 404 when the
// caller cannot see it, 403 when the caller may not change it.
func (s *Service) lockForWrite(ctx context.Context, tx store.Querier, caller auth.Principal, r *resource.Resource, id int64) (store.Record, map[string]any, error) {
	cur, err := s.db.GetRecord(ctx, tx, caller.TenantID, Collection(r), id, true)
	if err != nil {
		return store.Record{}, nil, err
	}
	old, err := decodeDoc(cur.Doc)
	if err != nil {
		return store.Record{}, nil, err
	}
	if h := s.hooks[r.Name]; h.Visible != nil {
		if visible, err := h.Visible(ctx, caller, old); err != nil || !visible {
			return store.Record{}, nil, errors.Join(err, fmt.Errorf("%s %d: %w", r.Name, id, store.ErrNotFound))
		}
	}
	if err := mayWrite(caller, r, old); err != nil {
		return store.Record{}, nil, err
	}
	return cur, old, nil
}

// Delete removes a record and returns it as it was.
func (s *Service) Delete(ctx context.Context, caller auth.Principal, r *resource.Resource, id int64) (store.Doc, error) {
	h := s.hooks[r.Name]
	var out store.Doc
	var w *Write
	err := s.db.Tx(ctx, func(tx store.Querier) error {
		cur, old, err := s.lockForWrite(ctx, tx, caller, r, id)
		if err != nil {
			return err
		}
		out = cur.Doc
		w = &Write{Tx: tx, Caller: caller, Res: r, ID: id, Old: old}
		if h.CheckDelete != nil {
			if err := h.CheckDelete(ctx, w); err != nil {
				return err
			}
		}
		if h.Delete != nil {
			doc, err := h.Delete(ctx, w)
			if doc != nil {
				out = doc
			}
			return err
		}
		return s.db.DeleteRecord(ctx, tx, caller.TenantID, Collection(r), id)
	})
	if err != nil {
		return nil, err
	}
	w.committed()
	return out, nil
}

// checkRefs makes sure every reference that a write sets or changes names
// a record of the caller's tenant.
func (s *Service) checkRefs(ctx context.Context, w *Write, old map[string]any) error {
	var problems []resource.Problem
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
			problems = append(problems, resource.Problem{Field: a.Name, Message: "cannot refer to a record of model " + fmt.Sprint(w.New[a.RefByModel])})
			continue
		}
		id, _ := asID(v)
		if old != nil {
			oldTarget, _ := w.Res.RefTarget(a, old)
			if oldID, ok := asID(old[a.Name]); ok && oldID == id && oldTarget == target {
				continue // unchanged
			}
		}
		tr, ok := s.reg.Get(target)
		if !ok {
			return fmt.Errorf("registry: %s refers to unknown resource %s", a.Name, target)
		}
		exists, err := s.db.RecordExists(ctx, w.Tx, w.Caller.TenantID, Collection(tr), id)
		if err != nil {
			return err
		}
		if !exists {
			problems = append(problems, resource.Problem{Field: a.Name, Message: fmt.Sprintf("names no %s record %d in this tenant", target, id)})
		}
	}
	if len(problems) > 0 {
		return invalid(problems)
	}
	return nil
}
