package store

import "context"

// MigrateTo applies the migrations up to and including version, so that
// tests can build a database as an earlier release left it.
func (db *DB) MigrateTo(ctx context.Context, version int64) error {
	provider, err := db.migrations(db.write)
	if err != nil {
		return err
	}
	_, err = provider.UpTo(ctx, version)
	return err
}

// AddETagColumns runs the Go step 00026 by itself, as the tests run later
// steps' files on a database an earlier release left.
func (db *DB) AddETagColumns(ctx context.Context) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // after Commit, a no-op
	if err := db.addETagColumns(ctx, tx); err != nil {
		return err
	}
	return tx.Commit()
}
