package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// TenantSummary is a line of the tenant list.
type TenantSummary struct {
	Tenant
	Users       int64
	StorageUsed int64
}

// ListTenants returns every tenant with its user count and storage used.
func (db *DB) ListTenants(ctx context.Context) ([]TenantSummary, error) {
	rows, err := db.read.QueryContext(ctx, `
		SELECT t.id, t.slug, t.name, t.storage_bytes, t.created_at, COALESCE(s.state, 'active'),
		       COALESCE(u.n, 0), COALESCE(f.bytes, 0)
		  FROM tenants t
		  LEFT JOIN tenant_states s ON s.tenant_id = t.id
		  LEFT JOIN (SELECT tenant_id, COUNT(*) AS n FROM users GROUP BY tenant_id) u ON u.tenant_id = t.id
		  LEFT JOIN (SELECT tenant_id, SUM(size) AS bytes FROM uploads GROUP BY tenant_id) f ON f.tenant_id = t.id
		 ORDER BY t.slug`)
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	defer rows.Close()
	var out []TenantSummary
	for rows.Next() {
		var t TenantSummary
		var storage sql.NullInt64
		if err := rows.Scan(&t.ID, &t.Slug, &t.Name, &storage, &t.CreatedAt, &t.State, &t.Users, &t.StorageUsed); err != nil {
			return nil, fmt.Errorf("list tenants: %w", err)
		}
		if storage.Valid {
			t.StorageBytes = &storage.Int64
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// SetTenantStorage sets a tenant's storage cap in bytes.
func (db *DB) SetTenantStorage(ctx context.Context, slug string, bytes int64) error {
	err := db.Tx(ctx, func(q Querier) error {
		var id int64
		var was sql.NullInt64
		err := q.QueryRowContext(ctx, `SELECT id, storage_bytes FROM tenants WHERE slug = $1`+db.dialect.forUpdate(), slug).Scan(&id, &was)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("tenant %q: %w", slug, ErrNotFound)
		}
		if err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, `UPDATE tenants SET storage_bytes = $1, updated_at = $2 WHERE id = $3`, bytes, Timestamp(time.Now()), id); err != nil {
			return err
		}
		before := []byte(`{"storageBytes":null}`)
		if was.Valid {
			before = fmt.Appendf(nil, `{"storageBytes":%d}`, was.Int64)
		}
		return db.Audit(ctx, q, id, AuditNote{Resource: "tenant", Op: OpUpdate, Before: before, After: fmt.Appendf(nil, `{"storageBytes":%d}`, bytes)})
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("set storage of %q: %w", slug, err)
	}
	return err
}

// ErrBackupUnsupported: online backups by this command are of a database
// in a local file (SQLite).
var ErrBackupUnsupported = errors.New("backup: for PostgreSQL use pg_dump (see README)")

// Backup writes a consistent copy of a SQLite database to path while the
// service keeps running. path must not exist. VACUUM INTO reads one
// snapshot on a read-only connection of its own: in WAL mode a reader
// neither waits for nor blocks the writer, so the copy is made even while
// another connection holds the write lock for longer than any busy timeout.
func (db *DB) Backup(ctx context.Context, path string) (err error) {
	file, ok := db.dialect.file()
	if !ok {
		return ErrBackupUnsupported
	}
	// Claim path first (VACUUM INTO accepts an empty file): the copy holds
	// every tenant's data, so it is readable by its owner only, and a
	// failed copy can be removed without touching a file of someone else's.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("backup: %s exists", path)
	}
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	f.Close()
	defer func() {
		if err != nil {
			os.Remove(path)
		}
	}()
	// No query_only here: it refuses VACUUM INTO, which writes to path.
	// mode=ro is what keeps the live database untouched.
	conn, err := sql.Open("sqlite", "file:"+file+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `VACUUM INTO $1`, path); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	return nil
}
