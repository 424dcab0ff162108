package records

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"planwerk/internal/auth"
	"planwerk/internal/query"
	"planwerk/internal/resource"
	"planwerk/internal/store"
)

// The rules of tags, skills and skill sets (SPEC.md "Tag, TagAssignment,
// TagCategory" and "SkillAssignment, SkillSet, SkillSetCategory").

// plainTagModels are the records plain tags attach to.
var plainTagModels = []string{"client", "project", "task", "user", "expenseCategory"}

func problem(field, msg string) error {
	return invalid([]resource.Problem{{Field: field, Message: msg}})
}

func conflict(msg string) error {
	return &Error{Kind: Conflict, Code: "conflict", Message: msg}
}

// checkTag: a skill (type set) needs a TagCategory; a plain tag has none.
func checkTag(_ context.Context, w *Write) error {
	_, isSkill := asID(w.New["type"])
	hasCategory := w.New["category"] != nil
	switch {
	case isSkill && !hasCategory:
		return problem("category", "is required for skills (type 1, 2 or 3)")
	case !isSkill && hasCategory:
		return problem("category", "is only for skills: a plain tag (type null) cannot have a category")
	}
	return nil
}

// tagsFilter: GET /v1/tags lists plain tags only, unless includeSkills=true
// or the criteria name the type attribute.
func tagsFilter(_ context.Context, _ auth.Principal, r *resource.Resource, q *query.Query) (query.Node, error) {
	if q.Params.Get("includeSkills") == "true" || mentions(q.Where, "type") {
		return nil, nil
	}
	return &query.Cond{Field: r.Schema().Fields["type"], Op: query.Eq, Values: []query.Value{{Kind: query.KindNull}}}, nil
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
	tags, _ := s.reg.Get("tags")
	rec, err := s.db.GetRecord(ctx, tx, tenantID, Collection(tags), tagID, false)
	if err != nil {
		return 0, false, err
	}
	doc, err := decodeDoc(rec.Doc)
	if err != nil {
		return 0, false, err
	}
	t, ok := asID(doc["type"])
	return t, ok, nil
}

// checkTagAssignment: skills join skill sets only (a user gets a skill
// through SkillAssignment); plain tags attach to clients, projects, tasks,
// users and expense categories.
func (s *Service) checkTagAssignment(ctx context.Context, w *Write) error {
	tagID, _ := asID(w.New["tag"])
	_, isSkill, err := s.tagType(ctx, w.Tx, w.Caller.TenantID, tagID)
	if danglingTag(err) {
		return nil
	}
	if err != nil {
		return err
	}
	model, _ := w.New["model"].(string)
	switch {
	case isSkill && model == "user":
		return problem("tag", "a skill is given to a user with a SkillAssignment, not a TagAssignment")
	case isSkill && model != "skillSet":
		return problem("model", "a skill attaches only to a skillSet")
	case !isSkill && !slices.Contains(plainTagModels, model):
		return problem("model", "a plain tag attaches to a client, project, task, user or expenseCategory")
	}
	return nil
}

// checkSkillAssignment: the tag must be a skill; status defaults to active.
func (s *Service) checkSkillAssignment(ctx context.Context, w *Write) error {
	if w.New["status"] == nil {
		w.New["status"] = int64(1)
	}
	tagID, _ := asID(w.New["tag"])
	_, isSkill, err := s.tagType(ctx, w.Tx, w.Caller.TenantID, tagID)
	if danglingTag(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !isSkill {
		return problem("tag", "must be a skill (a Tag with type 1, 2 or 3)")
	}
	return nil
}

// danglingTag reports whether a tag lookup failed because the tag is gone.
// checkRefs has already made sure that every tag a write sets or changes
// exists, so a missing tag is one the record kept after the tag was
// deleted: references do not cascade, and such a record stays editable
// (without this, changing any attribute of it answered 404 for a record
// that exists).
func danglingTag(err error) bool {
	return errors.Is(err, store.ErrNotFound)
}

// findAssignment returns a user's assignment of a skill, if any.
func (s *Service) findAssignment(ctx context.Context, tx store.Querier, tenantID, user, tag int64) (*store.Record, map[string]any, error) {
	r, _ := s.reg.Get("skill-assignments")
	f := r.Schema().Fields
	recs, err := s.db.FindRecords(ctx, tx, tenantID, Collection(r), &query.And{Terms: []query.Node{
		&query.Cond{Field: f["user"], Op: query.Eq, Values: []query.Value{intValue(user)}},
		&query.Cond{Field: f["tag"], Op: query.Eq, Values: []query.Value{intValue(tag)}},
	}}, 1)
	if err != nil || len(recs) == 0 {
		return nil, nil, err
	}
	doc, err := decodeDoc(recs[0].Doc)
	return &recs[0], doc, err
}

func intValue(n int64) query.Value {
	return query.Value{Kind: query.KindNumber, Int: n, Num: float64(n), IsInt: true}
}

// insertSkillAssignment: a user holds each skill once. An active one →
// 409; an archived one is re-activated with the values sent.
func (s *Service) insertSkillAssignment(ctx context.Context, w *Write) (store.Doc, error) {
	user, _ := asID(w.New["user"])
	tag, _ := asID(w.New["tag"])
	rec, old, err := s.findAssignment(ctx, w.Tx, w.Caller.TenantID, user, tag)
	if err != nil {
		return nil, err
	}
	r := w.Res
	if rec == nil {
		id, err := s.db.NewID(ctx, w.Tx, w.Caller.TenantID)
		if err != nil {
			return nil, err
		}
		doc, err := s.db.InsertRecord(ctx, w.Tx, w.Caller.TenantID, Collection(r), id, w.New)
		if errors.Is(err, store.ErrConflict) {
			return nil, conflict("the user already holds this skill")
		}
		return doc, err
	}
	if status, _ := asID(old["status"]); status != 0 {
		return nil, conflict(fmt.Sprintf("the user already holds this skill (skill assignment %d)", rec.ID))
	}
	merged := old
	for k, v := range w.New {
		merged[k] = v
	}
	merged["status"] = int64(1)
	createdAt, _ := old["createdAt"].(string)
	return s.db.UpdateRecord(ctx, w.Tx, w.Caller.TenantID, Collection(r), rec.ID, createdAt, merged)
}

// archiveSkillAssignment: removing a skill from a user sets status 0 and
// keeps the record.
func (s *Service) archiveSkillAssignment(ctx context.Context, w *Write) (store.Doc, error) {
	doc := w.Old
	doc["status"] = int64(0)
	createdAt, _ := doc["createdAt"].(string)
	return s.db.UpdateRecord(ctx, w.Tx, w.Caller.TenantID, Collection(w.Res), w.ID, createdAt, doc)
}

// ApplySkillSet gives each user the skills of a skill set they lack (new
// or re-activated assignments), all or nothing, and returns the users'
// assignments of the set's skills. Later changes to the set do not touch
// them. Admins only.
func (s *Service) ApplySkillSet(ctx context.Context, caller auth.Principal, setID int64, input map[string]any) ([]store.Doc, error) {
	if !caller.IsAdmin {
		return nil, forbidden("only admins may apply skill sets")
	}
	sets, _ := s.reg.Get("skill-sets")
	if _, err := s.db.GetRecord(ctx, nil, caller.TenantID, Collection(sets), setID, false); err != nil {
		return nil, err
	}
	raw, ok := input["users"].([]any)
	if !ok || len(raw) == 0 {
		return nil, problem("users", "must be a non-empty array of user ids")
	}
	if len(raw) > 1000 {
		return nil, problem("users", "at most 1000 users at once")
	}
	var (
		users []int64
		// at is each user's position in the request, for problems: the
		// list of distinct users is shorter when the request repeats one.
		at []int
	)
	for i, v := range raw {
		id, ok := asID(v)
		if !ok || id <= 0 {
			return nil, problem(fmt.Sprintf("users[%d]", i), "must be a user id")
		}
		if !slices.Contains(users, id) {
			users = append(users, id)
			at = append(at, i)
		}
	}
	assignments, _ := s.reg.Get("skill-assignments")
	tagAssignments, _ := s.reg.Get("tag-assignments")
	var out []store.Doc
	err := s.db.Tx(ctx, func(tx store.Querier) error {
		out = out[:0]
		var problems []resource.Problem
		for i, u := range users {
			ok, err := s.db.RecordExists(ctx, tx, caller.TenantID, store.Users, u)
			if err != nil {
				return err
			}
			if !ok {
				problems = append(problems, resource.Problem{Field: fmt.Sprintf("users[%d]", at[i]), Message: fmt.Sprintf("no user %d in this tenant", u)})
			}
		}
		if len(problems) > 0 {
			return invalid(problems)
		}
		skills, err := s.setSkills(ctx, tx, caller.TenantID, tagAssignments, setID)
		if err != nil {
			return err
		}
		for _, u := range users {
			for _, tag := range skills {
				w := &Write{Tx: tx, Caller: caller, Res: assignments,
					New: map[string]any{"user": u, "tag": tag, "status": int64(1)}}
				rec, old, err := s.findAssignment(ctx, tx, caller.TenantID, u, tag)
				if err != nil {
					return err
				}
				if rec != nil {
					if status, _ := asID(old["status"]); status != 0 {
						out = append(out, rec.Doc)
						continue
					}
				}
				doc, err := s.insertSkillAssignment(ctx, w)
				if err != nil {
					return err
				}
				out = append(out, doc)
			}
		}
		return nil
	})
	return out, err
}

// setSkills returns the skills (tags with a type) attached to a skill set.
func (s *Service) setSkills(ctx context.Context, tx store.Querier, tenantID int64, ta *resource.Resource, setID int64) ([]int64, error) {
	f := ta.Schema().Fields
	recs, err := s.db.FindRecords(ctx, tx, tenantID, Collection(ta), &query.And{Terms: []query.Node{
		&query.Cond{Field: f["model"], Op: query.Eq, Values: []query.Value{{Kind: query.KindString, Str: "skillSet"}}},
		&query.Cond{Field: f["record"], Op: query.Eq, Values: []query.Value{intValue(setID)}},
	}}, 10000)
	if err != nil {
		return nil, err
	}
	var tags []int64
	for _, r := range recs {
		doc, err := decodeDoc(r.Doc)
		if err != nil {
			return nil, err
		}
		tag, ok := asID(doc["tag"])
		if !ok || slices.Contains(tags, tag) {
			continue
		}
		// A deleted tag is no skill of the set; any other failure must
		// fail the apply, not silently leave skills out.
		_, isSkill, err := s.tagType(ctx, tx, tenantID, tag)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		if err == nil && isSkill {
			tags = append(tags, tag)
		}
	}
	slices.Sort(tags)
	return tags, nil
}
