package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pressly/goose/v3"

	"planwerk/internal/query"
)

// dialect holds everything that differs between the engines. The rest of
// the store asks it, never which engine it runs on.
type dialect interface {
	// name names the engine in logs and messages: "sqlite" or "postgres".
	name() string
	// compiler writes list-language criteria and sort keys in the
	// engine's SQL.
	compiler() query.Dialect
	// nextID returns a fresh record id for the tenant.
	nextID(ctx context.Context, q Querier, tenantID int64) (int64, error)
	// uniqueViolation reports whether err broke a unique constraint.
	uniqueViolation(err error) bool
	// retryable reports whether a transaction failing with err may be run again.
	retryable(err error) bool
	// lock serialises transactions that use the same key until they end.
	lock(ctx context.Context, q Querier, key string) error
	// docColumn is how a SELECT reads the document, as JSON text.
	docColumn() string
	// storedDoc is docColumn for the tables records and users, which keep
	// the text as written: reads then copy it instead of rendering it.
	storedDoc() string
	// forUpdate is the clause that keeps the rows a SELECT reads locked
	// until the transaction ends.
	forUpdate() string
	// setAttribute is the document with the string attribute name (a
	// constant of Planwerk's) set to the bound value v, and updatedAt to
	// the bound timestamp now.
	setAttribute(name, v, now string) string
	// notifyChanges is the statement that announces, at commit, that the
	// transaction recorded changes ("" where nothing listens).
	notifyChanges() string
	// migrations names the folder of the engine's migrations and the
	// goose dialect that runs them.
	migrations() (folder string, d goose.Dialect)
	// tableExists is a query for whether the table exists where goose
	// looks for it.
	tableExists(table string) string
	// migrationLock excludes other migration runs on the same database
	// until the returned function is called; pool is the write pool.
	migrationLock(ctx context.Context, pool *sql.DB) (func(), error)
	// file is the path of a database that is a file of this machine's;
	// ok is false for a database on a server.
	file() (path string, ok bool)
}

// sqliteDialect is SQLite's, on the database file at path.
type sqliteDialect struct{ path string }

func (sqliteDialect) name() string { return "sqlite" }

func (sqliteDialect) compiler() query.Dialect { return query.SQLite }

// SQLite has a single writer, so a per-tenant counter row costs nothing extra.
func (sqliteDialect) nextID(ctx context.Context, q Querier, tenantID int64) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx,
		`INSERT INTO tenant_sequences (tenant_id, last_id) VALUES ($1, 1)
		 ON CONFLICT (tenant_id) DO UPDATE SET last_id = tenant_sequences.last_id + 1
		 RETURNING last_id`,
		tenantID).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("next id: %w", err)
	}
	return id, nil
}

func (sqliteDialect) uniqueViolation(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

func (sqliteDialect) retryable(error) bool { return false }

// SQLite write transactions already exclude each other.
func (sqliteDialect) lock(context.Context, Querier, string) error { return nil }

func (sqliteDialect) docColumn() string { return "doc" }

// SQLite stores the document as text already.
func (sqliteDialect) storedDoc() string { return "doc" }

// SQLite write transactions already hold the database's write lock.
func (sqliteDialect) forUpdate() string { return "" }

// SQLite has one writing process: its commits wake waiters directly.
func (sqliteDialect) notifyChanges() string { return "" }

func (sqliteDialect) setAttribute(name, v, now string) string {
	return "json_set(doc, '$." + name + "', " + v + ", '$.updatedAt', " + now + ")"
}

func (sqliteDialect) migrations() (string, goose.Dialect) {
	return "migrations/sqlite", goose.DialectSQLite3
}

func (sqliteDialect) tableExists(table string) string {
	return `SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '` + table + `')`
}

// SQLite runs take an exclusive lock on a file beside the database.
func (d sqliteDialect) migrationLock(context.Context, *sql.DB) (func(), error) {
	return fileLock(d.path + ".migrate-lock")
}

func (d sqliteDialect) file() (string, bool) { return d.path, true }

// postgresDialect is PostgreSQL's.
type postgresDialect struct{}

func (postgresDialect) name() string { return "postgres" }

func (postgresDialect) compiler() query.Dialect { return query.Postgres }

// PostgreSQL uses one sequence: it never blocks concurrent writers and works
// unchanged when tables are distributed by tenant.
func (postgresDialect) nextID(ctx context.Context, q Querier, _ int64) (int64, error) {
	var id int64
	if err := q.QueryRowContext(ctx, `SELECT nextval('record_ids')`).Scan(&id); err != nil {
		return 0, fmt.Errorf("next id: %w", err)
	}
	return id, nil
}

func (postgresDialect) uniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}

func (postgresDialect) retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01")
}

func (postgresDialect) lock(ctx context.Context, q Querier, key string) error {
	if _, err := q.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, key); err != nil {
		return fmt.Errorf("lock %q: %w", key, err)
	}
	return nil
}

// PostgreSQL renders jsonb as text.
func (postgresDialect) docColumn() string { return "doc::text" }

// doc_text is generated from doc by the database on every write
// (migration 00014): the same text as doc::text, rendered once.
func (postgresDialect) storedDoc() string { return "doc_text" }

func (postgresDialect) forUpdate() string { return " FOR UPDATE" }

func (postgresDialect) notifyChanges() string {
	return "SELECT pg_notify('" + changesChannel + "', '')"
}

func (postgresDialect) setAttribute(name, v, now string) string {
	return "jsonb_set(jsonb_set(doc, '{" + name + "}', to_jsonb(" + v + "::text)), '{updatedAt}', to_jsonb(" + now + "::text))"
}

func (postgresDialect) migrations() (string, goose.Dialect) {
	return "migrations/postgres", goose.DialectPostgres
}

// goose looks in the current schema.
func (postgresDialect) tableExists(table string) string {
	return `SELECT EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = '` + table + `')`
}

// PostgreSQL runs take an advisory lock scoped to the current schema.
func (postgresDialect) migrationLock(ctx context.Context, pool *sql.DB) (func(), error) {
	return postgresMigrationLock(ctx, pool)
}

func (postgresDialect) file() (string, bool) { return "", false }
