package store

import "context"

// More of the surface domain packages build on: what the tables of
// users, tokens and API clients need besides engine.go's.

// RecordChange adds a change of a record a domain keeps in a table of its
// own (a user) to the change outbox: in q's transaction, where the
// changes get their positions when it commits, or as a transaction of its
// own when q is the database itself. op is OpCreate, OpUpdate or OpDelete.
// Its audit entry shows an update's record as the transaction read it
// with a lock (GetRecord), and extra as changed besides what the
// documents show (a password).
func (db *DB) RecordChange(ctx context.Context, q Querier, tenantID int64, resource string, id int64, op string, doc []byte, extra ...string) error {
	return db.recordChange(ctx, q, tenantID, resource, id, op, doc, extra...)
}

// CrossTenantRead prepares the transaction q for a read across all
// tenants that it follows with writes (creating a tenant checks that no
// user of any tenant has its admin's e-mail address).
func (db *DB) CrossTenantRead(ctx context.Context, q Querier) error {
	return db.dialect.crossTenantRead(ctx, q)
}

// PurgeRows is housekeeping's batched delete across tenants: it runs del,
// a DELETE whose last parameter (after args) bounds the rows it deletes,
// batch after batch, each a short transaction of its own, until one
// deletes fewer than a batch, and returns how many rows went; what names
// the rows in errors. A ctx that ends stops it between batches.
func (db *DB) PurgeRows(ctx context.Context, what, del string, args ...any) (int64, error) {
	return db.purgeRows(ctx, what, del, args...)
}
