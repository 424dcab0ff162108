package users

import (
	"context"
	"errors"
	"strings"

	"planwerk/internal/store"
	"planwerk/internal/tenancy"
)

// TenantSpec describes a tenant to create.
type TenantSpec struct {
	Slug, Name, AdminEmail, AdminPassword string
}

// Validate checks a TenantSpec before anything is written.
func (s TenantSpec) Validate() error {
	var problems []string
	if !tenancy.ValidSlug(s.Slug) {
		problems = append(problems, "--slug must be 2 to 63 characters of a-z, 0-9 and -")
	}
	if !ValidEmail(s.AdminEmail) {
		problems = append(problems, "--admin-email must be an e-mail address")
	}
	if s.AdminPassword == "" {
		problems = append(problems, "the admin password must not be empty")
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// CreateTenant creates a tenant with its first admin, and gives it what
// every tenant starts with. The admin's e-mail address must not belong to
// a user of any tenant yet (store.ErrConflict).
func (s *Service) CreateTenant(ctx context.Context, spec TenantSpec) (store.Tenant, User, error) {
	if err := spec.Validate(); err != nil {
		return store.Tenant{}, User{}, err
	}
	if spec.Name == "" {
		spec.Name = spec.Slug
	}
	hash, err := s.hasher.Hash(ctx, spec.AdminPassword)
	if err != nil {
		return store.Tenant{}, User{}, err
	}
	return s.db.CreateTenant(ctx, spec.Slug, spec.Name, NewAdmin{Email: spec.AdminEmail, PasswordHash: hash}, s.setup...)
}
