package store

import "context"

// The surface domain packages build their own tables' queries on. A
// domain keeps its SQL beside its rules (auth's tokens, webhooks'
// deliveries, …) and reaches the engine only through these methods,
// Tx, NewID and Lock: the pools, the dialect and the group commit stay
// here.

// Reader runs plain reads of any length on the read pool.
func (db *DB) Reader() Querier { return db.read }

// Lookup runs the short reads every request makes (a token, a user, a
// key by its primary key). On SQLite they have a pool of their own, so
// slow list readers cannot starve them; on PostgreSQL it is the read pool.
func (db *DB) Lookup() Querier { return db.lookup }

// ExecOne runs one writing statement as a transaction of its own (in
// SQLite's group commit where it is on) and reports whether it changed
// a row; what names the statement in errors.
func (db *DB) ExecOne(ctx context.Context, what, query string, args ...any) (bool, error) {
	return db.writeOne(ctx, what, query, args...)
}

// ForUpdate is the clause that keeps the rows a SELECT reads locked until
// its transaction ends ("" where the engine locks the whole database).
func (db *DB) ForUpdate() string { return db.dialect.forUpdate() }

// IsUniqueViolation reports whether err broke a unique constraint.
func (db *DB) IsUniqueViolation(err error) bool { return db.dialect.uniqueViolation(err) }

// DocColumn is how a SELECT reads a jsonb or text document column named
// doc, as JSON text.
func (db *DB) DocColumn() string { return db.dialect.docColumn() }

// StoredDoc is DocColumn for the tables that keep the document's text as
// written (records, users): a read copies it instead of rendering it.
func (db *DB) StoredDoc() string { return db.dialect.storedDoc() }
