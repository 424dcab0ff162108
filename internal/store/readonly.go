package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/puzpuzpuz/xsync/v4"

	"planwerk/internal/gate"
)

// ErrNotMigrated means the database's schema is not at the version this
// program was built for: it was never migrated, or migrations are pending.
var ErrNotMigrated = errors.New("schema not at the current version")

// OpenReadOnly connects to the database named by dsn (as for Open) for
// commands that only read: nothing is created, migrated or written, so
// they never wait for, or take, the write lock of a busy service. A SQLite
// file that does not exist is ErrNotMigrated.
func OpenReadOnly(ctx context.Context, dsn string) (*DB, error) {
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		return openSQLiteReadOnly(ctx, dsn, strings.TrimPrefix(dsn, "sqlite:"))
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return openPostgresReadOnly(ctx, dsn)
	default:
		return nil, fmt.Errorf("open database: %q is neither sqlite:PATH nor a postgres:// URL", dsn)
	}
}

func openSQLiteReadOnly(ctx context.Context, dsn, path string) (*DB, error) {
	// Opening a missing file would create it; a read-only command must not.
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("open database: no SQLite database at %s: %w", path, ErrNotMigrated)
	} else if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	// mode=ro opens the file read-only; query_only refuses any statement
	// that would write. No journal_mode pragma: switching modes is a write.
	// A WAL database stays readable while a writer holds its lock.
	name := "file:" + path + "?mode=ro&_pragma=busy_timeout(10000)&_pragma=query_only(1)"
	return readOnlyDB(ctx, sqliteDialect{path: path}, dsn, func() (*sql.DB, error) { return sql.Open("sqlite", name) })
}

func openPostgresReadOnly(ctx context.Context, dsn string) (*DB, error) {
	cfg, err := postgresConfig(dsn, DefaultOptions())
	if err != nil {
		return nil, err
	}
	// Every transaction of the session is read-only: the server refuses writes.
	cfg.RuntimeParams["default_transaction_read_only"] = "on"
	return readOnlyDB(ctx, postgresDialect{}, dsn, func() (*sql.DB, error) { return stdlib.OpenDB(*cfg), nil })
}

// readOnlyDB serves writes, reads and lookups from one small read-only
// pool, and readiness checks from a connection of its own, as Open does.
// An administration command is one client: its gates admit it alone.
func readOnlyDB(ctx context.Context, d dialect, dsn string, open func() (*sql.DB, error)) (*DB, error) {
	pool, err := open()
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	pool.SetMaxOpenConns(2)
	pool.SetMaxIdleConns(2)
	health, err := open()
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	health.SetMaxOpenConns(1)
	shared := newReadPool(pool, false)
	db := &DB{gets: xsync.NewMap[getKey, string](), write: pool, read: shared, lookup: shared, health: health, dialect: d, dsn: dsn,
		writes: gate.New("database writes", gate.Options{Capacity: 1, PerKey: 1}),
		reads:  gate.New("database reads", gate.Options{Capacity: 1, PerKey: 1}),
	}
	if err := db.Ping(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}
