package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Upload is a file attached to a Document or Expense.
type Upload struct {
	ID          int64  `json:"id"`
	Filename    string `json:"filename"`
	Model       string `json:"model"`
	Record      int64  `json:"record"`
	Size        int64  `json:"size"`
	ContentType string `json:"contentType"`
	CreatedAt   string `json:"createdAt"`
	StorageKey  string `json:"-"`
}

const uploadColumns = `id, filename, model, record, size, content_type, created_at, storage_key`

func scanUpload(row interface{ Scan(...any) error }) (Upload, error) {
	var u Upload
	err := row.Scan(&u.ID, &u.Filename, &u.Model, &u.Record, &u.Size, &u.ContentType, &u.CreatedAt, &u.StorageKey)
	return u, err
}

// UploadByID finds an upload of the tenant.
func (db *DB) UploadByID(ctx context.Context, q Querier, tenantID, id int64) (Upload, error) {
	if q == nil {
		q = db.read
	}
	u, err := scanUpload(q.QueryRowContext(ctx,
		`SELECT `+uploadColumns+` FROM uploads WHERE tenant_id = $1 AND id = $2`, tenantID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Upload{}, fmt.Errorf("upload %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Upload{}, fmt.Errorf("upload %d: %w", id, err)
	}
	return u, nil
}

// UploadOf returns the upload of a record, or ErrNotFound.
func (db *DB) UploadOf(ctx context.Context, q Querier, tenantID int64, model string, record int64) (Upload, error) {
	if q == nil {
		q = db.read
	}
	u, err := scanUpload(q.QueryRowContext(ctx,
		`SELECT `+uploadColumns+` FROM uploads WHERE tenant_id = $1 AND model = $2 AND record = $3`, tenantID, model, record))
	if errors.Is(err, sql.ErrNoRows) {
		return Upload{}, fmt.Errorf("upload of %s %d: %w", model, record, ErrNotFound)
	}
	if err != nil {
		return Upload{}, fmt.Errorf("upload of %s %d: %w", model, record, err)
	}
	return u, nil
}

// StorageUsed is the bytes of all the tenant's uploads, except the one
// with id except (0: none).
func (db *DB) StorageUsed(ctx context.Context, q Querier, tenantID, except int64) (int64, error) {
	if q == nil {
		q = db.read
	}
	var n sql.NullInt64
	err := q.QueryRowContext(ctx,
		`SELECT SUM(size) FROM uploads WHERE tenant_id = $1 AND id <> $2`, tenantID, except).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("storage used: %w", err)
	}
	return n.Int64, nil
}

// InsertUpload records a stored file. A record that already has one
// returns ErrConflict.
func (db *DB) InsertUpload(ctx context.Context, q Querier, tenantID int64, u *Upload) error {
	u.CreatedAt = Timestamp(time.Now())
	_, err := q.ExecContext(ctx,
		`INSERT INTO uploads (tenant_id, id, model, record, filename, content_type, size, storage_key, created_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		tenantID, u.ID, u.Model, u.Record, u.Filename, u.ContentType, u.Size, u.StorageKey, u.CreatedAt)
	if db.dialect.uniqueViolation(err) {
		return fmt.Errorf("upload of %s %d: %w", u.Model, u.Record, ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("insert upload: %w", err)
	}
	return db.recordChange(ctx, q, tenantID, "uploads", u.ID, OpCreate, docOf(u))
}

// DeleteUpload removes an upload's row.
func (db *DB) DeleteUpload(ctx context.Context, q Querier, tenantID, id int64) error {
	u, err := scanUpload(q.QueryRowContext(ctx,
		`DELETE FROM uploads WHERE tenant_id = $1 AND id = $2 RETURNING `+uploadColumns, tenantID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("upload %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete upload %d: %w", id, err)
	}
	return db.recordChange(ctx, q, tenantID, "uploads", id, OpDelete, docOf(u))
}

// StorageKeyInUse reports whether an upload row names the storage key.
func (db *DB) StorageKeyInUse(ctx context.Context, tenantID int64, key string) (bool, error) {
	var one int
	err := db.read.QueryRowContext(ctx,
		`SELECT 1 FROM uploads WHERE tenant_id = $1 AND storage_key = $2`, tenantID, key).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// Secret returns the service secret of a name, creating a random one of
// size bytes the first time. Every instance gets the same secret.
func (db *DB) Secret(ctx context.Context, name string, size int) ([]byte, error) {
	fresh := make([]byte, size)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	if _, err := db.write.ExecContext(ctx,
		`INSERT INTO service_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, name, fresh); err != nil {
		return nil, fmt.Errorf("secret %s: %w", name, err)
	}
	var v []byte
	if err := db.write.QueryRowContext(ctx, `SELECT value FROM service_secrets WHERE name = $1`, name).Scan(&v); err != nil {
		return nil, fmt.Errorf("secret %s: %w", name, err)
	}
	return v, nil
}
