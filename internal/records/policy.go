package records

import (
	"context"

	"planwerk/internal/auth"
	"planwerk/internal/errs"
	"planwerk/internal/query"
	"planwerk/internal/resource"
	"planwerk/internal/store"
)

// MayCreate reports whether the caller may create records of r at all,
// whatever the record: nil, or the 403 Error Create refuses with. (Create
// applies the rest of the write rule to the record: a member's own.)
func MayCreate(caller auth.Principal, r *resource.Resource) error {
	if !caller.IsAdmin && r.Write == resource.AdminOnly {
		return errs.Forbid("only admins may write " + r.Name)
	}
	return nil
}

// MayWrite reports whether the caller may change the stored record doc of
// r (or anything attached to it, such as its file): nil, or a 403 Error.
func (s *Service) MayWrite(caller auth.Principal, r *resource.Resource, doc store.Doc) error {
	m, err := Decode(doc)
	if err != nil {
		return err
	}
	return mayWrite(caller, r, m)
}

// Restriction is what a list of r shows the caller at most, as criteria
// (nil: every record the other criteria select): the resource's
// ReadFilter, as Query applies it. Reports over a resource's records
// apply it too, so that they count what the list would show.
func (s *Service) Restriction(ctx context.Context, caller auth.Principal, r *resource.Resource, q *query.Query) (query.Node, error) {
	if h := s.hooks[r.Name]; h.ReadFilter != nil {
		return h.ReadFilter(ctx, caller, r, q)
	}
	return nil, nil
}
