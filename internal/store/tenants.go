package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
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
	State        string // TenantActive, TenantSuspended, TenantImporting or TenantDeleting
}

// A tenant's states. Only an active tenant is served; a suspended one is
// refused (403 tenant_suspended) with its data kept; an importing or
// deleting one is unknown to the service.
const (
	TenantActive    = "active"
	TenantSuspended = "suspended"
	TenantImporting = "importing"
	TenantDeleting  = "deleting"
)

// TenantSetup gives a new tenant what the domain gives every tenant, inside
// the transaction that creates it.
type TenantSetup = func(ctx context.Context, q Querier, tenantID int64) error

// InsertTenant adds a tenant in q, a transaction of the caller's that
// goes on to give it its first user and what every tenant starts with. A
// slug already taken returns ErrConflict.
func (db *DB) InsertTenant(ctx context.Context, q Querier, slug, name string) (Tenant, error) {
	now := Timestamp(time.Now())
	tenant := Tenant{Slug: slug, Name: name, CreatedAt: now, State: TenantActive}
	err := q.QueryRowContext(ctx, db.dialect.insertTenant(), slug, name, now).Scan(&tenant.ID)
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
	t, err := db.tenantWhere(ctx, `t.slug = $1`, slug)
	if err != nil {
		return Tenant{}, fmt.Errorf("tenant %q: %w", slug, err)
	}
	return t, nil
}

// TenantByID finds a tenant by its id.
func (db *DB) TenantByID(ctx context.Context, id int64) (Tenant, error) {
	t, err := db.tenantWhere(ctx, `t.id = $1`, id)
	if err != nil {
		return Tenant{}, fmt.Errorf("tenant %d: %w", id, err)
	}
	return t, nil
}

// tenantWhere reads the one tenant cond selects, with its state, on the
// lookup pool.
func (db *DB) tenantWhere(ctx context.Context, cond string, arg any) (Tenant, error) {
	var t Tenant
	var storage sql.NullInt64
	err := db.lookup.QueryRowContext(ctx,
		`SELECT t.id, t.slug, t.name, t.storage_bytes, t.created_at, COALESCE(s.state, 'active')
		   FROM tenants t LEFT JOIN tenant_states s ON s.tenant_id = t.id WHERE `+cond, arg).
		Scan(&t.ID, &t.Slug, &t.Name, &storage, &t.CreatedAt, &t.State)
	if errors.Is(err, sql.ErrNoRows) {
		return Tenant{}, ErrNotFound
	}
	if err != nil {
		return Tenant{}, err
	}
	if storage.Valid {
		t.StorageBytes = &storage.Int64
	}
	return t, nil
}

// SetTenantState moves the tenant with slug to state when its state is
// one of from, and returns it as it was. A tenant in another state
// returns ErrConflict with the tenant; an unknown slug ErrNotFound.
func (db *DB) SetTenantState(ctx context.Context, slug, state string, from ...string) (Tenant, error) {
	var t Tenant
	err := db.Tx(ctx, func(q Querier) error {
		var storage sql.NullInt64
		err := q.QueryRowContext(ctx, `SELECT id, slug, name, storage_bytes, created_at FROM tenants WHERE slug = $1`+db.dialect.forUpdate(), slug).
			Scan(&t.ID, &t.Slug, &t.Name, &storage, &t.CreatedAt)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("tenant %q: %w", slug, ErrNotFound)
		}
		if err != nil {
			return err
		}
		if storage.Valid {
			t.StorageBytes = &storage.Int64
		}
		var st sql.NullString
		err = q.QueryRowContext(ctx, `SELECT state FROM tenant_states WHERE tenant_id = $1`, t.ID).Scan(&st)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		t.State = cmp.Or(st.String, TenantActive)
		if !slices.Contains(from, t.State) {
			return fmt.Errorf("tenant %q is %s: %w", slug, t.State, ErrConflict)
		}
		if t.State == state {
			return nil
		}
		if err := db.putTenantState(ctx, q, t.ID, state); err != nil {
			return err
		}
		return db.Audit(ctx, q, t.ID, AuditNote{Resource: "tenant", Op: OpUpdate,
			Before: fmt.Appendf(nil, `{"state":%q}`, t.State), After: fmt.Appendf(nil, `{"state":%q}`, state)})
	})
	if err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrConflict) {
		return t, fmt.Errorf("set state of %q: %w", slug, err)
	}
	return t, err
}

// putTenantState stores the tenant's state in q: an active tenant has no
// row.
func (db *DB) putTenantState(ctx context.Context, q Querier, tenantID int64, state string) error {
	var err error
	if state == TenantActive {
		_, err = q.ExecContext(ctx, `DELETE FROM tenant_states WHERE tenant_id = $1`, tenantID)
	} else {
		_, err = q.ExecContext(ctx, `INSERT INTO tenant_states (tenant_id, state, updated_at) VALUES ($1, $2, $3)
			ON CONFLICT (tenant_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`, tenantID, state, Timestamp(time.Now()))
	}
	if err != nil {
		return fmt.Errorf("tenant state: %w", err)
	}
	return nil
}

// TenantStateSince returns when the tenant last changed state; the zero
// time when it is active, or has been since before states were kept.
func (db *DB) TenantStateSince(ctx context.Context, tenantID int64) (time.Time, error) {
	var at string
	err := db.read.QueryRowContext(ctx, `SELECT updated_at FROM tenant_states WHERE tenant_id = $1`, tenantID).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("tenant state: %w", err)
	}
	return time.Parse(TimeFormat, at)
}
