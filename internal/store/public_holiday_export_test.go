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
