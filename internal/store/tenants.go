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

// TenantSetup gives a new tenant what the domain gives every tenant, inside
// the transaction that creates it.
type TenantSetup = func(ctx context.Context, q Querier, tenantID int64) error

// InsertTenant adds a tenant in q, a transaction of the caller's that
// goes on to give it its first user and what every tenant starts with. A
// slug already taken returns ErrConflict.
func (db *DB) InsertTenant(ctx context.Context, q Querier, slug, name string) (Tenant, error) {
	now := Timestamp(time.Now())
	tenant := Tenant{Slug: slug, Name: name, CreatedAt: now}
	err := q.QueryRowContext(ctx,
		`INSERT INTO tenants (slug, name, created_at, updated_at) VALUES ($1, $2, $3, $3) RETURNING id`,
		slug, name, now).Scan(&tenant.ID)
	if db.dialect.uniqueViolation(err) {
		return Tenant{}, fmt.Errorf("tenant %q: %w", slug, ErrConflict)
	}
	if err != nil {
		return Tenant{}, fmt.Errorf("insert tenant: %w", err)
	}
	return tenant, nil
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
