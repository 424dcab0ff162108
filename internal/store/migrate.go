package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"strings"
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
	unlock, err := db.migrationLock(ctx)
	if err != nil {
		return 0, fmt.Errorf("migrate: lock: %w", err)
	}
	defer unlock()

	sub, err := fs.Sub(migrationFiles, "migrations/"+db.dialect.name())
	if err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	gooseDialect := goose.DialectSQLite3
	if db.dialect.name() == "postgres" {
		gooseDialect = goose.DialectPostgres
	}
	provider, err := goose.NewProvider(gooseDialect, db.write, sub,
		goose.WithDisableGlobalRegistry(true),
		goose.WithTableName("schema_migrations"))
	if err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	results, err := provider.Up(ctx)
	if err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	return len(results), nil
}

func (db *DB) migrationLock(ctx context.Context) (func(), error) {
	if db.dialect.name() == "postgres" {
		return postgresMigrationLock(ctx, db.write)
	}
	return fileLock(strings.TrimPrefix(db.dsn, "sqlite:") + ".migrate-lock")
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
