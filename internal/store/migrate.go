package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/pressly/goose/v3"
)

//go:embed migrations
var migrationFiles embed.FS

// Migrate applies every pending migration and returns how many it applied.
// It is safe to run twice and from several processes at once: PostgreSQL
// runs take an advisory lock scoped to the current schema, SQLite runs an
// exclusive lock on a file beside the database.
func (db *DB) Migrate(ctx context.Context) (int, error) {
	unlock, err := db.dialect.migrationLock(ctx, db.write)
	if err != nil {
		return 0, fmt.Errorf("migrate: lock: %w", err)
	}
	defer unlock()

	provider, err := db.migrations(db.write)
	if err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	results, err := provider.Up(ctx)
	if err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	if len(results) > 0 {
		if err := db.afterMigrations(ctx); err != nil {
			return len(results), fmt.Errorf("migrate: %w", err)
		}
	}
	return len(results), nil
}

// CheckSchema reports ErrNotMigrated unless every migration this program
// knows has been applied. It only reads: a database that was never
// migrated is reported, not given a version table.
func (db *DB) CheckSchema(ctx context.Context) error {
	exists, err := db.migrationTableExists(ctx)
	if err != nil {
		return fmt.Errorf("check schema: %w", err)
	}
	if !exists {
		return fmt.Errorf("check schema: %s database was never migrated: %w", db.dialect.name(), ErrNotMigrated)
	}
	provider, err := db.migrations(db.read.DB)
	if err != nil {
		return fmt.Errorf("check schema: %w", err)
	}
	pending, err := provider.HasPending(ctx)
	if err != nil {
		return fmt.Errorf("check schema: %w", err)
	}
	if !pending {
		return nil
	}
	current, target, err := provider.GetVersions(ctx)
	if err != nil {
		return fmt.Errorf("check schema: %w", err)
	}
	return fmt.Errorf("check schema: %s database at version %d, this program needs %d: %w",
		db.dialect.name(), current, target, ErrNotMigrated)
}

// migrationTable records the applied migrations.
const migrationTable = "schema_migrations"

// migrationTableExists looks for the version table in the catalogue, where
// goose looks for it (PostgreSQL: the current schema).
func (db *DB) migrationTableExists(ctx context.Context) (bool, error) {
	var exists bool
	if err := db.read.QueryRowContext(ctx, db.dialect.tableExists(migrationTable)).Scan(&exists); err != nil {
		return false, err
	}
	return exists, nil
}

// migrations returns a goose provider for this engine's migrations that
// runs its statements on pool.
func (db *DB) migrations(pool *sql.DB) (*goose.Provider, error) {
	folder, dialect := db.dialect.migrations()
	sub, err := fs.Sub(migrationFiles, folder)
	if err != nil {
		return nil, err
	}
	return goose.NewProvider(dialect, pool, sub,
		goose.WithDisableGlobalRegistry(true),
		goose.WithGoMigrations(db.goMigrations()...),
		goose.WithTableName(migrationTable))
}

// postgresMigrationLock holds a session advisory lock keyed by the schema
// name on a dedicated connection until the returned function is called.
func postgresMigrationLock(ctx context.Context, pool *sql.DB) (func(), error) {
	conn, err := pool.Conn(ctx)
	if err != nil {
		return nil, err
	}
	const key = `hashtextextended('planwerk-migrate:' || current_schema(), 0)`
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(`+key+`)`); err != nil {
		conn.Close()
		return nil, err
	}
	return func() {
		if _, err := conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock(`+key+`)`); err != nil {
			// Never hand a session that may still hold the lock back to the pool.
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		conn.Close()
	}, nil
}

// fileLock takes an exclusive flock on path, waiting for other holders.
func fileLock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
