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
	"planwerk/internal/store"
)

// maxApplyUsers bounds the users of one apply.
const maxApplyUsers = 1000

// Apply gives each user the skills of a skill set they lack (new or
// re-activated assignments), all or nothing, and returns the users'
// assignments of the set's skills. Later changes to the set do not touch
// them. Admins only. Input: {"users": [ID, ...]}.
func (s *Service) Apply(ctx context.Context, caller auth.Principal, setID int64, input map[string]any) ([]store.Doc, error) {
	if !caller.IsAdmin {
		return nil, errs.Forbid("only admins may apply skill sets")
	}
	if _, err := s.db.Records(nil, caller.TenantID, records.Collection(s.sets)).Get(ctx, setID); err != nil {
		return nil, err
	}
	users, at, err := parseUsers(input)
	if err != nil {
		return nil, err
	}
	var out []store.Doc
	err = s.db.Tx(ctx, func(tx store.Querier) error {
		out = out[:0]
		if err := s.checkUsers(ctx, tx, caller.TenantID, users, at); err != nil {
			return err
		}
		skills, err := s.setSkills(ctx, tx, caller.TenantID, setID)
		if err != nil {
			return err
		}
		for _, u := range users {
			for _, tag := range skills {
				rec, err := s.give(ctx, tx, caller, u, tag)
				if err != nil {
					return err
				}
				out = append(out, rec.Doc)
			}
		}
		return nil
	})
	return out, err
}

// parseUsers reads the distinct users of an apply, with each one's
// position in the request (for problems: the list of distinct users is
// shorter when the request repeats one).
func parseUsers(input map[string]any) (users []int64, at []int, err error) {
	raw, ok := input["users"].([]any)
	if !ok || len(raw) == 0 {
		return nil, nil, errs.Field("users", "must be a non-empty array of user ids")
	}
	if len(raw) > maxApplyUsers {
		return nil, nil, errs.Field("users", fmt.Sprintf("at most %d users at once", maxApplyUsers))
	}
	for i, v := range raw {
		id, ok := records.AsID(v)
		if !ok || id <= 0 {
			return nil, nil, errs.Field(fmt.Sprintf("users[%d]", i), "must be a user id")
		}
		if !slices.Contains(users, id) {
			users = append(users, id)
			at = append(at, i)
		}
	}
	return users, at, nil
}

// checkUsers names every user of the request the tenant does not have.
func (s *Service) checkUsers(ctx context.Context, tx store.Querier, tenantID int64, users []int64, at []int) error {
	var problems []errs.Problem
	all := s.db.Records(tx, tenantID, store.Users)
	for i, u := range users {
		ok, err := all.Exists(ctx, u)
		if err != nil {
			return err
		}
		if !ok {
			problems = append(problems, errs.Problem{Field: fmt.Sprintf("users[%d]", at[i]), Message: fmt.Sprintf("no user %d in this tenant", u)})
		}
	}
	if len(problems) > 0 {
		return errs.Fields(problems...)
	}
	return nil
}

// give returns the user's active assignment of the skill, creating or
// re-activating it as needed.
func (s *Service) give(ctx context.Context, tx store.Querier, caller auth.Principal, user, tag int64) (store.Record, error) {
	rec, old, err := s.findAssignment(ctx, tx, caller.TenantID, user, tag)
	if err != nil {
		return store.Record{}, err
	}
	if rec != nil {
		if status, _ := old.Int("status"); status != 0 {
			return *rec, nil
		}
	}
	return s.insertAssignment(ctx, tx, caller.TenantID, records.Doc{"user": user, "tag": tag, "status": int64(1)})
}

// setSkills returns the skills (tags with a type) attached to a skill set.
func (s *Service) setSkills(ctx context.Context, tx store.Querier, tenantID int64, setID int64) ([]int64, error) {
	f := s.tagAssignments.Schema().Fields
	recs, err := s.db.Records(tx, tenantID, records.Collection(s.tagAssignments)).Find(ctx,
		query.All(query.Equal(f["model"], query.Str("skillSet")), query.Equal(f["record"], query.Int(setID))), 10000)
	if err != nil {
		return nil, err
	}
	var tags []int64
	for _, r := range recs {
		doc, err := records.Decode(r.Doc)
		if err != nil {
			return nil, err
		}
		tag, ok := doc.Ref("tag")
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
