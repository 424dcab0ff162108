package store

import (
	"context"

	"planwerk/internal/query"
)

// Records is one tenant's records of one collection, read and written in
// q (nil: outside a transaction, on the read pool). Every statement it
// builds starts with the tenant's condition: a caller names the tenant
// once, when it takes the handle, and cannot leave the condition out.
// It is an interface so that a domain's tests may stand in for it.
type Records interface {
	// Get reads one record; ErrNotFound when the tenant has none of that id.
	Get(ctx context.Context, id int64) (Record, error)
	// Lock reads one record and keeps its row locked until the
	// transaction ends.
	Lock(ctx context.Context, id int64) (Record, error)
	// Share reads one record and keeps its row from changing until the
	// transaction ends; other transactions may share it so, and one that
	// changes or Locks the row waits for them all (and they for it).
	Share(ctx context.Context, id int64) (Record, error)
	// Exists reports whether the tenant has the record.
	Exists(ctx context.Context, id int64) (bool, error)
	// Existing returns which of ids the tenant has, in one statement.
	Existing(ctx context.Context, ids []int64) (map[int64]bool, error)
	// Find returns the records that match where, in id order, at most limit.
	Find(ctx context.Context, where query.Node, limit int) ([]Record, error)
	// FindLocked is Find that keeps the rows locked until the
	// transaction ends, as Lock does.
	FindLocked(ctx context.Context, where query.Node, limit int) ([]Record, error)
	// Insert stores a new record under a new id and returns it.
	Insert(ctx context.Context, doc map[string]any) (Record, error)
	// Update replaces a record's document, keeping its id and creation
	// time, and returns the record as it is now.
	Update(ctx context.Context, id int64, createdAt string, doc map[string]any) (Record, error)
	// PutAll inserts (ID 0) and updates records as Insert and Update
	// would, together in a few statements, and returns them in the order
	// of puts (see PutRecords).
	PutAll(ctx context.Context, puts []Put) ([]Record, error)
	// Delete removes a record.
	Delete(ctx context.Context, id int64) error
	// Set sets a string attribute of the records that match where (see
	// SetAttribute) and returns how many changed.
	Set(ctx context.Context, where query.Node, name, value string) (int64, error)
}

// scoped is the database's Records.
type scoped struct {
	db     *DB
	q      Querier
	tenant int64
	c      Collection
}

// Records returns the handle on a tenant's collection.
func (db *DB) Records(q Querier, tenantID int64, c Collection) Records {
	return scoped{db: db, q: q, tenant: tenantID, c: c}
}

func (r scoped) Get(ctx context.Context, id int64) (Record, error) {
	return r.db.GetRecord(ctx, r.q, r.tenant, r.c, id, false)
}

func (r scoped) Lock(ctx context.Context, id int64) (Record, error) {
	return r.db.GetRecord(ctx, r.q, r.tenant, r.c, id, true)
}

func (r scoped) Share(ctx context.Context, id int64) (Record, error) {
	return r.db.getRecord(ctx, r.q, r.tenant, r.c, id, shareLock)
}

func (r scoped) Exists(ctx context.Context, id int64) (bool, error) {
	return r.db.RecordExists(ctx, r.q, r.tenant, r.c, id)
}

func (r scoped) Existing(ctx context.Context, ids []int64) (map[int64]bool, error) {
	return r.db.ExistingRecords(ctx, r.q, r.tenant, r.c, ids)
}

func (r scoped) Find(ctx context.Context, where query.Node, limit int) ([]Record, error) {
	return r.db.FindRecords(ctx, r.q, r.tenant, r.c, where, limit)
}

func (r scoped) FindLocked(ctx context.Context, where query.Node, limit int) ([]Record, error) {
	return r.db.findRecords(ctx, r.q, r.tenant, r.c, where, limit, true)
}

func (r scoped) Insert(ctx context.Context, doc map[string]any) (Record, error) {
	return r.db.insertNew(ctx, r.q, r.tenant, r.c, doc)
}

func (r scoped) Update(ctx context.Context, id int64, createdAt string, doc map[string]any) (Record, error) {
	return r.db.UpdateRecord(ctx, r.q, r.tenant, r.c, id, createdAt, doc)
}

func (r scoped) PutAll(ctx context.Context, puts []Put) ([]Record, error) {
	return r.db.PutRecords(ctx, r.q, r.tenant, r.c, puts)
}

func (r scoped) Delete(ctx context.Context, id int64) error {
	return r.db.DeleteRecord(ctx, r.q, r.tenant, r.c, id)
}

func (r scoped) Set(ctx context.Context, where query.Node, name, value string) (int64, error) {
	return r.db.SetAttribute(ctx, r.q, r.tenant, r.c, where, name, value)
}
