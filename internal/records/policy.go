package records

import (
	"planwerk/internal/auth"
	"planwerk/internal/resource"
	"planwerk/internal/store"
)

// MayWrite reports whether the caller may change the stored record doc of
// r (or anything attached to it, such as its file): nil, or a 403 Error.
func (s *Service) MayWrite(caller auth.Principal, r *resource.Resource, doc store.Doc) error {
	m, err := Decode(doc)
	if err != nil {
		return err
	}
	return mayWrite(caller, r, m)
}
