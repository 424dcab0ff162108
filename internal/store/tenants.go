package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"planwerk/internal/query"
)

// TimeFormat is the wire and storage format of record timestamps. Being
// fixed-width UTC, its strings sort in time order on both engines.
const TimeFormat = query.TimestampLayout

// Timestamp formats t for storage.
func Timestamp(t time.Time) string { return t.UTC().Format(TimeFormat) }

// Tenant is one customer account.
type Tenant struct {
	ID           int64
	Slug         string
	Name         string
	StorageBytes *int64 // nil: the service default applies
	CreatedAt    string
}

// NewAdmin describes the first user of a new tenant.
type NewAdmin struct {
	Email        string
	PasswordHash string
}

// TenantSetup gives a new tenant what the domain gives every tenant, inside
// the transaction that creates it.
type TenantSetup = func(ctx context.Context, q Querier, tenantID int64) error

// CreateTenant creates a tenant and its first user, an admin, in one
// transaction, in which it then runs setup (what the domain gives every
// new tenant). A slug already taken, or an admin e-mail address that a
// user of any tenant already has, returns ErrConflict.
func (db *DB) CreateTenant(ctx context.Context, slug, name string, admin NewAdmin, setup ...TenantSetup) (Tenant, User, error) {
	var (
		tenant Tenant
		user   User
	)
	err := db.Tx(ctx, func(q Querier) error {
		var err error
		tenant, user, err = db.AddTenant(ctx, q, slug, name, admin, setup...)
		return err
	})
	if err != nil {
		return Tenant{}, User{}, fmt.Errorf("create tenant: %w", err)
	}
	return tenant, user, nil
}

// AddTenant is CreateTenant in q, a transaction of the caller's, which
// may create several tenants at once (a bulk load).
func (db *DB) AddTenant(ctx context.Context, q Querier, slug, name string, admin NewAdmin, setup ...TenantSetup) (Tenant, User, error) {
	// The one lookup across tenants, over users (email_key): an operator
	// command, not a request. The lock (of no tenant: 0) keeps two
	// concurrent creates from both passing the check.
	if err := db.dialect.lock(ctx, q, 0, "planwerk-admin-email:"+EmailKey(admin.Email)); err != nil {
		return Tenant{}, User{}, err
	}
	if err := db.dialect.crossTenantRead(ctx, q); err != nil {
		return Tenant{}, User{}, err
	}
	var taken int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM users WHERE email_key = $1 LIMIT 1`, EmailKey(admin.Email)).Scan(&taken)
	if err == nil {
		return Tenant{}, User{}, fmt.Errorf("admin e-mail %q: %w", admin.Email, ErrConflict)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return Tenant{}, User{}, fmt.Errorf("check admin e-mail: %w", err)
	}
	now := Timestamp(time.Now())
	tenant := Tenant{Slug: slug, Name: name, CreatedAt: now}
	err = q.QueryRowContext(ctx,
		`INSERT INTO tenants (slug, name, created_at, updated_at) VALUES ($1, $2, $3, $3) RETURNING id`,
		slug, name, now).Scan(&tenant.ID)
	if db.dialect.uniqueViolation(err) {
		return Tenant{}, User{}, fmt.Errorf("tenant %q: %w", slug, ErrConflict)
	}
	if err != nil {
		return Tenant{}, User{}, fmt.Errorf("insert tenant: %w", err)
	}
	user, err := db.CreateUser(ctx, q, tenant.ID, NewUser{Email: admin.Email, PasswordHash: admin.PasswordHash, IsAdmin: true, Owner: true})
	if err != nil {
		return Tenant{}, User{}, err
	}
	for _, fn := range setup {
		if err := fn(ctx, q, tenant.ID); err != nil {
			return Tenant{}, User{}, err
		}
	}
	return tenant, user, nil
}

// TenantBySlug finds a tenant by its slug.
func (db *DB) TenantBySlug(ctx context.Context, slug string) (Tenant, error) {
	var t Tenant
	var storage sql.NullInt64
	err := db.lookup.QueryRowContext(ctx,
		`SELECT id, slug, name, storage_bytes, created_at FROM tenants WHERE slug = $1`, slug).
		Scan(&t.ID, &t.Slug, &t.Name, &storage, &t.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return Tenant{}, fmt.Errorf("tenant %q: %w", slug, ErrNotFound)
	}
	if err != nil {
		return Tenant{}, fmt.Errorf("tenant %q: %w", slug, err)
	}
	if storage.Valid {
		t.StorageBytes = &storage.Int64
	}
	return t, nil
}
