package store

import (
	"context"

	"planwerk/internal/query"
)

// Records is one tenant's records of one collection, read and written in
// q (nil: outside a transaction, on the read pool). Every statement it
// builds starts with the tenant's condition: a caller names the tenant
// once, when it takes the handle, and cannot leave the condition out.
type Records struct {
	db     *DB
	q      Querier
	tenant int64
	c      Collection
}

// Records returns the handle on a tenant's collection.
func (db *DB) Records(q Querier, tenantID int64, c Collection) Records {
	return Records{db: db, q: q, tenant: tenantID, c: c}
}

// Get reads one record; ErrNotFound when the tenant has none of that id.
func (r Records) Get(ctx context.Context, id int64) (Record, error) {
	return r.db.GetRecord(ctx, r.q, r.tenant, r.c, id, false)
}

// Lock reads one record and keeps its row locked until the transaction ends.
func (r Records) Lock(ctx context.Context, id int64) (Record, error) {
	return r.db.GetRecord(ctx, r.q, r.tenant, r.c, id, true)
}

// Exists reports whether the tenant has the record.
func (r Records) Exists(ctx context.Context, id int64) (bool, error) {
	return r.db.RecordExists(ctx, r.q, r.tenant, r.c, id)
}

// Find returns the records that match where, in id order, at most limit.
func (r Records) Find(ctx context.Context, where query.Node, limit int) ([]Record, error) {
	return r.db.FindRecords(ctx, r.q, r.tenant, r.c, where, limit)
}

// Insert stores a new record under a new id and returns its document.
func (r Records) Insert(ctx context.Context, doc map[string]any) (Doc, error) {
	return r.db.insertNew(ctx, r.q, r.tenant, r.c, doc)
}

// Update replaces a record's document, keeping its id and creation time.
func (r Records) Update(ctx context.Context, id int64, createdAt string, doc map[string]any) (Doc, error) {
	return r.db.UpdateRecord(ctx, r.q, r.tenant, r.c, id, createdAt, doc)
}

// Delete removes a record.
func (r Records) Delete(ctx context.Context, id int64) error {
	return r.db.DeleteRecord(ctx, r.q, r.tenant, r.c, id)
}

// Set sets a string attribute of the records that match where (see
// SetAttribute) and returns how many changed.
func (r Records) Set(ctx context.Context, where query.Node, name, value string) (int64, error) {
	return r.db.SetAttribute(ctx, r.q, r.tenant, r.c, where, name, value)
}
