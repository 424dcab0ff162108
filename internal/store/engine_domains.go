package store

import "context"

// More of the surface domain packages build on: a writing statement that
// reads its result, the change outbox of a domain's own table, and the
// batched deletes of housekeeping.

// Single runs fn, whose statements write, as a transaction of its own:
// under group commit in the writer's next batch, otherwise directly on
// the pool, each statement committing itself. It is ExecOne for a
// statement whose result is read (INSERT … RETURNING).
func (db *DB) Single(ctx context.Context, fn func(q Querier) error) error {
	return db.single(ctx, fn)
}

// RecordChange notes for the change feed that a record of resource
// (uploads, …) was created, changed or deleted (op) in q; doc is the
// record after the change, as it was for a delete. Inside Tx the change
// is stored with the transaction; outside, at once.
func (db *DB) RecordChange(ctx context.Context, q Querier, tenantID int64, resource string, id int64, op string, doc []byte) error {
	return db.recordChange(ctx, q, tenantID, resource, id, op, doc)
}

// PurgeRows runs del, a cross-tenant DELETE whose last parameter bounds
// the rows it deletes, batch after batch (each a short transaction of its
// own) until one deletes fewer than a batch or ctx ends, and returns how
// many rows went; what names the rows in errors. See purge.go.
func (db *DB) PurgeRows(ctx context.Context, what, del string, args ...any) (int64, error) {
	return db.purgeRows(ctx, what, del, args...)
}
