package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"planwerk/internal/config"
	"planwerk/internal/store"
	"planwerk/internal/tracing"
)

// openDatabase opens and migrates the database of cfg, for the commands
// that own the schema: serve, migrate and tenant create.
func openDatabase(ctx context.Context, cfg config.Config, log *slog.Logger) (*store.DB, error) {
	opts := store.DefaultOptions()
	// A statement never outlives the request that runs it: the server ends
	// it even when the client can no longer.
	opts.StatementTimeout = cfg.RequestTimeout
	opts.Trace = tracing.Enabled()
	db, err := store.OpenWith(ctx, cfg.Database, opts)
	if err != nil {
		return nil, err
	}
	n, err := db.Migrate(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	if n > 0 {
		log.Info("database migrated", "engine", db.Engine(), "applied", n)
	}
	return db, nil
}

// access is what an administration command may do to the database.
type access int

const (
	// readOnly commands (backup, tenant list) only read, on a read-only
	// connection, and so never wait for a busy service's write lock.
	readOnly access = iota
	// readWrite commands (tenant set-storage, user reset-password) write
	// the rows they are for and nothing else.
	readWrite
)

// openCurrent opens the database of cfg for a command that must not
// migrate it: the schema has to be at the current version already, else
// the operator is told to run planwerk migrate. The check itself runs on a
// read-only connection, so a missing or never-migrated database is left as
// it is.
func openCurrent(ctx context.Context, cfg config.Config, mode access) (*store.DB, error) {
	ro, err := openReadOnly(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := checkSchema(ctx, ro); err != nil {
		ro.Close()
		return nil, err
	}
	if mode == readOnly {
		return ro, nil
	}
	if err := ro.Close(); err != nil {
		return nil, fmt.Errorf("close read-only database: %w", err)
	}
	return store.Open(ctx, cfg.Database)
}

// openReadOnly opens the database of cfg read-only, without checking its
// schema.
func openReadOnly(ctx context.Context, cfg config.Config) (*store.DB, error) {
	db, err := store.OpenReadOnly(ctx, cfg.Database)
	return db, notMigrated(err)
}

// checkSchema fails unless db is at the current migration version.
func checkSchema(ctx context.Context, db *store.DB) error {
	return notMigrated(db.CheckSchema(ctx))
}

// notMigrated turns store.ErrNotMigrated into a usage error that says what
// to do; other errors, and nil, pass unchanged.
func notMigrated(err error) error {
	if errors.Is(err, store.ErrNotMigrated) {
		return fmt.Errorf("%w: %v; run \"planwerk migrate\" first", ErrUsage, err)
	}
	return err
}
