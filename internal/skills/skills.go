// Package skills holds the rules of tags, skills and skill sets
// (docs/api.md "Skills"): a skill is a tag with a type and a category; skills
// join skill sets, plain tags attach to other records; a user holds each
// skill once, and removing it archives the assignment.
package skills

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"planwerk/internal/auth"
	"planwerk/internal/errs"
	"planwerk/internal/query"
	"planwerk/internal/records"
	"planwerk/internal/resource"
	"planwerk/internal/store"
)

// Store is what the rules need of the database.
type Store interface {
	Records(q store.Querier, tenantID int64, c store.Collection) store.Records
	Tx(ctx context.Context, fn func(q store.Querier) error) error
}

// Service applies the rules.
type Service struct {
	db  Store
	reg *resource.Registry
	// The collections the rules read across resources.
	tags, assignments, tagAssignments, sets *resource.Resource
}

// New returns a Service.
func New(db Store, reg *resource.Registry) *Service {
	return &Service{db: db, reg: reg, tags: reg.Must("tags"), assignments: reg.Must("skill-assignments"),
		tagAssignments: reg.Must("tag-assignments"), sets: reg.Must("skill-sets")}
}

// plainTagModels are the records plain tags attach to.
var plainTagModels = []string{"client", "project", "task", "user", "expenseCategory"}

// CheckTag (Check): a skill (type set) needs a TagCategory; a plain tag
// has none.
func CheckTag(_ context.Context, c records.Change) error {
	_, isSkill := c.New.Int("type")
	hasCategory := c.New.Has("category")
	switch {
	case isSkill && !hasCategory:
		return errs.Field("category", "is required for skills (type 1, 2 or 3)")
	case !isSkill && hasCategory:
		return errs.Field("category", "is only for skills: a plain tag (type null) cannot have a category")
	}
	return nil
}

// FilterTags (ReadFilter): GET /v1/tags lists plain tags only, unless
// includeSkills=true or the criteria name the type attribute.
func FilterTags(_ context.Context, _ auth.Principal, r *resource.Resource, q *query.Query) (query.Node, error) {
	if q.Params.Get("includeSkills") == "true" || mentions(q.Where, "type") {
		return nil, nil
	}
	return query.Equal(r.Schema().Fields["type"], query.Null()), nil
}

// mentions reports whether criteria constrain the attribute.
func mentions(n query.Node, name string) bool {
	switch n := n.(type) {
	case *query.And:
		return slices.ContainsFunc(n.Terms, func(t query.Node) bool { return mentions(t, name) })
	case *query.Or:
		return slices.ContainsFunc(n.Terms, func(t query.Node) bool { return mentions(t, name) })
	case *query.Cond:
		return n.Field.Name == name
	}
	return false
}

// tagType reads the type of a tag in the tenant: (type, is a skill).
func (s *Service) tagType(ctx context.Context, tx store.Querier, tenantID, tagID int64) (int64, bool, error) {
	rec, err := s.db.Records(tx, tenantID, records.Collection(s.tags)).Get(ctx, tagID)
	if err != nil {
		return 0, false, err
	}
	doc, err := records.Decode(rec.Doc)
	if err != nil {
		return 0, false, err
	}
	t, ok := doc.Int("type")
	return t, ok, nil
}

// CheckTagAssignment (Check): skills join skill sets only (a user gets a
// skill through SkillAssignment); plain tags attach to clients, projects,
// tasks, users and expense categories.
func (s *Service) CheckTagAssignment(ctx context.Context, c records.Change) error {
	isSkill, known, err := s.writesSkill(ctx, c)
	if err != nil || !known {
		return err
	}
	model, _ := c.New.String("model")
	switch {
	case isSkill && model == "user":
		return errs.Field("tag", "a skill is given to a user with a SkillAssignment, not a TagAssignment")
	case isSkill && model != "skillSet":
		return errs.Field("model", "a skill attaches only to a skillSet")
	case !isSkill && !slices.Contains(plainTagModels, model):
		return errs.Field("model", "a plain tag attaches to a client, project, task, user or expenseCategory")
	}
	return nil
}

// NormalizeSkillAssignment (Normalize): status defaults to active.
func NormalizeSkillAssignment(_ context.Context, w *records.Write) error {
	if !w.New.Has("status") {
		w.New["status"] = int64(1)
	}
	return nil
}

// CheckSkillAssignment (Check): the tag must be a skill.
func (s *Service) CheckSkillAssignment(ctx context.Context, c records.Change) error {
	isSkill, known, err := s.writesSkill(ctx, c)
	if err != nil || !known {
		return err
	}
	if !isSkill {
		return errs.Field("tag", "must be a skill (a Tag with type 1, 2 or 3)")
	}
	return nil
}

// writesSkill reports whether the tag a write names is a skill; known is
// false when the tag is gone. The generic reference check has already
// made sure that every tag a write sets or changes exists, so a missing
// tag is one the record kept after the tag was deleted: references do not
// cascade, and such a record stays editable (without this, changing any
// attribute of it answered 404 for a record that exists).
func (s *Service) writesSkill(ctx context.Context, c records.Change) (isSkill, known bool, err error) {
	tagID, _ := c.New.Ref("tag")
	_, isSkill, err = s.tagType(ctx, c.Tx, c.Caller.TenantID, tagID)
	if errors.Is(err, store.ErrNotFound) {
		return false, false, nil
	}
	return isSkill, err == nil, err
}

// findAssignment returns a user's assignment of a skill, if any.
func (s *Service) findAssignment(ctx context.Context, tx store.Querier, tenantID, user, tag int64) (*store.Record, records.Doc, error) {
	f := s.assignments.Schema().Fields
	recs, err := s.db.Records(tx, tenantID, records.Collection(s.assignments)).Find(ctx,
		query.All(query.Equal(f["user"], query.Int(user)), query.Equal(f["tag"], query.Int(tag))), 1)
	if err != nil || len(recs) == 0 {
		return nil, nil, err
	}
	doc, err := records.Decode(recs[0].Doc)
	return &recs[0], doc, err
}

// InsertSkillAssignment (Insert): a user holds each skill once. An active
// one → 409; an archived one is re-activated with the values sent.
func (s *Service) InsertSkillAssignment(ctx context.Context, w *records.Write) (store.Record, error) {
	return s.insertAssignment(ctx, w.Tx, w.Caller.TenantID, w.New)
}

// insertAssignment stores a new assignment, or re-activates an archived
// one of the same user and skill with the values of doc.
func (s *Service) insertAssignment(ctx context.Context, tx store.Querier, tenantID int64, doc records.Doc) (store.Record, error) {
	user, _ := doc.Ref("user")
	tag, _ := doc.Ref("tag")
	rec, old, err := s.findAssignment(ctx, tx, tenantID, user, tag)
	if err != nil {
		return store.Record{}, err
	}
	coll := s.db.Records(tx, tenantID, records.Collection(s.assignments))
	if rec == nil {
		out, err := coll.Insert(ctx, doc)
		if errors.Is(err, store.ErrConflict) {
			return store.Record{}, errs.Conflicts("the user already holds this skill")
		}
		return out, err
	}
	if status, _ := old.Int("status"); status != 0 {
		return store.Record{}, errs.Conflicts(fmt.Sprintf("the user already holds this skill (skill assignment %d)", rec.ID))
	}
	merged := old
	for k, v := range doc {
		merged[k] = v
	}
	merged["status"] = int64(1)
	createdAt, _ := old.String("createdAt")
	return coll.Update(ctx, rec.ID, createdAt, merged)
}

// ArchiveSkillAssignment (Delete): removing a skill from a user sets
// status 0 and keeps the record.
func (s *Service) ArchiveSkillAssignment(ctx context.Context, w *records.Write) (store.Record, error) {
	doc := w.Old
	doc["status"] = int64(0)
	createdAt, _ := doc.String("createdAt")
	return s.db.Records(w.Tx, w.Caller.TenantID, records.Collection(w.Res)).Update(ctx, w.ID, createdAt, doc)
}
