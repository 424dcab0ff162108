package files

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"planwerk/internal/jsontext"
	"planwerk/internal/store"
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

// Engine is what the uploads' table is built on (a *store.DB). It is a
// Querier itself, on its write pool: NewID given the engine draws an id
// as a write of its own.
type Engine interface {
	store.Querier
	Tx(ctx context.Context, fn func(q store.Querier) error) error
	Lock(ctx context.Context, q store.Querier, tenantID int64, key string) error
	NewID(ctx context.Context, q store.Querier, tenantID int64) (int64, error)
	TouchRecord(ctx context.Context, q store.Querier, tenantID int64, c store.Collection, id int64) error
	Reader() store.Querier
	IsUniqueViolation(err error) bool
	RecordChange(ctx context.Context, q store.Querier, tenantID int64, resource string, id int64, op string, doc []byte, extra ...string) error
}

// Tables is the Store of the uploads table (and of the service secrets
// that sign download URLs), on the engine it passes the rest of Store
// on to.
type Tables struct {
	db Engine
}

// NewTables returns the uploads' table in db.
func NewTables(db Engine) *Tables { return &Tables{db: db} }

// Tx runs fn in a transaction of the engine.
func (t *Tables) Tx(ctx context.Context, fn func(q store.Querier) error) error {
	return t.db.Tx(ctx, fn)
}

// Lock takes the tenant's lock named key until q ends.
func (t *Tables) Lock(ctx context.Context, q store.Querier, tenantID int64, key string) error {
	return t.db.Lock(ctx, q, tenantID, key)
}

// TouchRecord gives a record a new version.
func (t *Tables) TouchRecord(ctx context.Context, q store.Querier, tenantID int64, c store.Collection, id int64) error {
	return t.db.TouchRecord(ctx, q, tenantID, c, id)
}

// UploadID allocates the id of a new upload of the tenant, outside any
// transaction: as a write of its own.
func (t *Tables) UploadID(ctx context.Context, tenantID int64) (int64, error) {
	return t.db.NewID(ctx, t.db, tenantID)
}

const uploadColumns = `id, filename, model, record, size, content_type, created_at, storage_key`

func scanUpload(row interface{ Scan(...any) error }) (Upload, error) {
	var u Upload
	err := row.Scan(&u.ID, &u.Filename, &u.Model, &u.Record, &u.Size, &u.ContentType, &u.CreatedAt, &u.StorageKey)
	return u, err
}

// UploadByID finds an upload of the tenant (q nil: on the read pool).
func (t *Tables) UploadByID(ctx context.Context, q store.Querier, tenantID, id int64) (Upload, error) {
	if q == nil {
		q = t.db.Reader()
	}
	u, err := scanUpload(q.QueryRowContext(ctx,
		`SELECT `+uploadColumns+` FROM uploads WHERE tenant_id = $1 AND id = $2`, tenantID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Upload{}, fmt.Errorf("upload %d: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return Upload{}, fmt.Errorf("upload %d: %w", id, err)
	}
	return u, nil
}

// UploadOf returns the upload of a record, or store.ErrNotFound (q nil:
// on the read pool).
func (t *Tables) UploadOf(ctx context.Context, q store.Querier, tenantID int64, model string, record int64) (Upload, error) {
	if q == nil {
		q = t.db.Reader()
	}
	u, err := scanUpload(q.QueryRowContext(ctx,
		`SELECT `+uploadColumns+` FROM uploads WHERE tenant_id = $1 AND model = $2 AND record = $3`, tenantID, model, record))
	if errors.Is(err, sql.ErrNoRows) {
		return Upload{}, fmt.Errorf("upload of %s %d: %w", model, record, store.ErrNotFound)
	}
	if err != nil {
		return Upload{}, fmt.Errorf("upload of %s %d: %w", model, record, err)
	}
	return u, nil
}

// StorageUsed is the bytes of all the tenant's uploads, except the one
// with id except (0: none); q nil: on the read pool.
func (t *Tables) StorageUsed(ctx context.Context, q store.Querier, tenantID, except int64) (int64, error) {
	if q == nil {
		q = t.db.Reader()
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
// returns store.ErrConflict.
func (t *Tables) InsertUpload(ctx context.Context, q store.Querier, tenantID int64, u *Upload) error {
	u.CreatedAt = store.Timestamp(time.Now())
	_, err := q.ExecContext(ctx,
		`INSERT INTO uploads (tenant_id, id, model, record, filename, content_type, size, storage_key, created_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		tenantID, u.ID, u.Model, u.Record, u.Filename, u.ContentType, u.Size, u.StorageKey, u.CreatedAt)
	if t.db.IsUniqueViolation(err) {
		return fmt.Errorf("upload of %s %d: %w", u.Model, u.Record, store.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("insert upload: %w", err)
	}
	return t.db.RecordChange(ctx, q, tenantID, "uploads", u.ID, store.OpCreate, changeDoc(u))
}

// DeleteUpload removes an upload's row.
func (t *Tables) DeleteUpload(ctx context.Context, q store.Querier, tenantID, id int64) error {
	u, err := scanUpload(q.QueryRowContext(ctx,
		`DELETE FROM uploads WHERE tenant_id = $1 AND id = $2 RETURNING `+uploadColumns, tenantID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("upload %d: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete upload %d: %w", id, err)
	}
	return t.db.RecordChange(ctx, q, tenantID, "uploads", id, store.OpDelete, changeDoc(u))
}

// UploadsAfter returns up to limit uploads of the tenant whose ids come
// after after, in id order: the erasure's walk over a tenant's uploads.
func (t *Tables) UploadsAfter(ctx context.Context, tenantID, after int64, limit int) ([]Upload, error) {
	rows, err := t.db.Reader().QueryContext(ctx,
		`SELECT `+uploadColumns+` FROM uploads WHERE tenant_id = $1 AND id > $2 ORDER BY id LIMIT $3`, tenantID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("uploads: %w", err)
	}
	defer rows.Close()
	var out []Upload
	for rows.Next() {
		u, err := scanUpload(rows)
		if err != nil {
			return nil, fmt.Errorf("uploads: %w", err)
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("uploads: %w", err)
	}
	return out, nil
}

// EraseUploads deletes the rows of the tenant's uploads ids, in one
// transaction, recording no change: the tenant's changes are erased too.
func (t *Tables) EraseUploads(ctx context.Context, tenantID int64, ids []int64) error {
	return t.db.Tx(ctx, func(q store.Querier) error {
		for _, id := range ids {
			if _, err := q.ExecContext(ctx, `DELETE FROM uploads WHERE tenant_id = $1 AND id = $2`, tenantID, id); err != nil {
				return fmt.Errorf("erase upload %d: %w", id, err)
			}
		}
		return nil
	})
}

// changeDoc is an upload as the change feed shows it.
func changeDoc(u any) []byte {
	b, _ := jsontext.Marshal(u)
	return b
}

// StorageKeyInUse reports whether an upload row names the storage key.
func (t *Tables) StorageKeyInUse(ctx context.Context, tenantID int64, key string) (bool, error) {
	var one int
	err := t.db.Reader().QueryRowContext(ctx,
		`SELECT 1 FROM uploads WHERE tenant_id = $1 AND storage_key = $2`, tenantID, key).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// Secret returns the service secret of a name, creating a random one of
// size bytes the first time. Every instance gets the same secret. It
// reads where it writes, on the engine's write pool, so that the secret
// it reads is the one kept.
func (t *Tables) Secret(ctx context.Context, name string, size int) ([]byte, error) {
	fresh := make([]byte, size)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	if _, err := t.db.ExecContext(ctx,
		`INSERT INTO service_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, name, fresh); err != nil {
		return nil, fmt.Errorf("secret %s: %w", name, err)
	}
	var v []byte
	if err := t.db.QueryRowContext(ctx, `SELECT value FROM service_secrets WHERE name = $1`, name).Scan(&v); err != nil {
		return nil, fmt.Errorf("secret %s: %w", name, err)
	}
	return v, nil
}
