package users

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"planwerk/internal/jsontext"
	"planwerk/internal/store"
)

// NewAdmin describes the first user of a new tenant.
type NewAdmin struct {
	Email        string
	PasswordHash string
}

// CreateTenant creates a tenant and its first user, an admin, in one
// transaction, in which it then runs setup (what the domain gives every
// new tenant). A slug already taken, or an admin e-mail address that a
// user of any tenant already has, returns store.ErrConflict.
func (t *Tables) CreateTenant(ctx context.Context, slug, name string, admin NewAdmin, setup ...store.TenantSetup) (store.Tenant, User, error) {
	var (
		tenant store.Tenant
		user   User
	)
	err := t.db.Tx(ctx, func(q store.Querier) error {
		var err error
		tenant, user, err = t.AddTenant(ctx, q, slug, name, admin, setup...)
		return err
	})
	if err != nil {
		return store.Tenant{}, User{}, fmt.Errorf("create tenant: %w", err)
	}
	return tenant, user, nil
}

// AddTenant is CreateTenant in q, a transaction of the caller's, which
// may create several tenants at once (a bulk load).
func (t *Tables) AddTenant(ctx context.Context, q store.Querier, slug, name string, admin NewAdmin, setup ...store.TenantSetup) (store.Tenant, User, error) {
	// The one lookup across tenants, over users (email_key): an operator
	// command, not a request. The lock (of no tenant: 0) keeps two
	// concurrent creates from both passing the check.
	if err := t.db.Lock(ctx, q, 0, "planwerk-admin-email:"+EmailKey(admin.Email)); err != nil {
		return store.Tenant{}, User{}, err
	}
	if err := t.db.CrossTenantRead(ctx, q); err != nil {
		return store.Tenant{}, User{}, err
	}
	var taken int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM users WHERE email_key = $1 LIMIT 1`, EmailKey(admin.Email)).Scan(&taken)
	if err == nil {
		return store.Tenant{}, User{}, fmt.Errorf("admin e-mail %q: %w", admin.Email, store.ErrConflict)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return store.Tenant{}, User{}, fmt.Errorf("check admin e-mail: %w", err)
	}
	tenant, err := t.db.InsertTenant(ctx, q, slug, name)
	if err != nil {
		return store.Tenant{}, User{}, err
	}
	created, err := jsontext.Marshal(map[string]string{"slug": tenant.Slug, "name": tenant.Name})
	if err != nil {
		return store.Tenant{}, User{}, err
	}
	if err := t.db.Audit(ctx, q, tenant.ID, store.AuditNote{Resource: "tenant", Op: store.OpCreate, After: created}); err != nil {
		return store.Tenant{}, User{}, err
	}
	user, err := t.CreateUser(ctx, q, tenant.ID, NewUser{Email: admin.Email, PasswordHash: admin.PasswordHash, IsAdmin: true, Owner: true})
	if err != nil {
		return store.Tenant{}, User{}, err
	}
	for _, fn := range setup {
		if err := fn(ctx, q, tenant.ID); err != nil {
			return store.Tenant{}, User{}, err
		}
	}
	return tenant, user, nil
}
