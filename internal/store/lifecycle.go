package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// More of the engine's surface, for moving a tenant between databases
// (internal/lifecycle): a consistent read of everything a tenant has,
// the ids it has drawn, and a lock that keeps two commands off one slug.

// Scan runs fn, whose reads may be long (a report, a sum over a range),
// on the read pool with a slot of the tenant's share of list scans (the
// tenant ctx carries, see gate.WithKey): a tenant runs at most its share
// of them at once, however many it asks for.
func (db *DB) Scan(ctx context.Context, fn func(q Querier) error) error {
	release, err := db.reads.Acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	return fn(db.read)
}

// Snapshot runs fn in one read-only transaction on a reader connection:
// every read of fn sees the database as it was at one moment, while the
// writers go on. No statement timeout ends its reads, however long they
// take. SQLite reads from a snapshot of its write-ahead log, which a
// checkpoint does not move past while the transaction lasts; PostgreSQL
// runs it REPEATABLE READ READ ONLY.
func (db *DB) Snapshot(ctx context.Context, fn func(q Querier) error) error {
	release, err := db.reads.Acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	tx, err := db.dialect.beginSnapshot(ctx, db.read.DB)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	defer tx.Rollback()
	return fn(tx)
}

// IDsHandedOut is the highest record id the tenant is known to have drawn
// besides those its rows hold: on SQLite its counter, which also counts
// the ids of records deleted since; 0 where one sequence serves every
// tenant (PostgreSQL), whose ids a tenant's rows alone tell.
func (db *DB) IDsHandedOut(ctx context.Context, q Querier, tenantID int64) (int64, error) {
	return db.dialect.idsHandedOut(ctx, q, tenantID)
}

// IDsDrawn is the largest record id the database has drawn for any
// tenant: on SQLite the highest of the tenants' counters, on PostgreSQL
// the last value of the sequence every tenant draws from (0 before the
// first).
func (db *DB) IDsDrawn(ctx context.Context, q Querier) (int64, error) {
	n, err := db.dialect.idsDrawn(ctx, q)
	if err != nil {
		return 0, fmt.Errorf("ids drawn: %w", err)
	}
	return n, nil
}

// ReserveIDs makes every id the tenant draws from now on greater than
// held, the largest id its rows hold, and, where the tenant has a
// counter of its own (SQLite), than drawn, the highest it had drawn
// (deleted records' ids included). Where one sequence serves every
// tenant (PostgreSQL) it moves forward only as far as the rows need:
// an id drawn but held by no row collides with nothing, and the sequence
// is every tenant's. It never moves back.
func (db *DB) ReserveIDs(ctx context.Context, q Querier, tenantID, held, drawn int64) error {
	through := db.dialect.idsToReserve(held, drawn)
	if err := db.dialect.reserveIDs(ctx, q, tenantID, through); err != nil {
		return fmt.Errorf("reserve ids through %d: %w", through, err)
	}
	return nil
}

func (sqliteDialect) idsToReserve(held, drawn int64) int64 { return max(held, drawn) }

func (postgresDialect) idsToReserve(held, _ int64) int64 { return held }

// LockTenant keeps other processes from moving the tenant of slug (an
// import, an erasure) until the returned function is called. It does not
// wait: when another process holds the lock it returns ErrConflict. The
// lock ends with the process that holds it, however it ends (SIGKILL
// included): on SQLite an flock on a file in a folder beside the
// database, on PostgreSQL a session advisory lock, for which it waits a
// few seconds.
func (db *DB) LockTenant(ctx context.Context, slug string) (func(), error) {
	release, err := db.dialect.tenantLock(ctx, db.write, slug)
	if errors.Is(err, ErrConflict) {
		return nil, fmt.Errorf("tenant %q is being moved by another command: %w", slug, err)
	}
	if err != nil {
		return nil, fmt.Errorf("lock tenant %q: %w", slug, err)
	}
	return release, nil
}

// Placeholder is the marker of the n-th value (from 1) of a statement
// that binds its values in order, such as a multi-row INSERT.
func (db *DB) Placeholder(n int) string { return db.dialect.placeholder(n) }

// SQLite binds anonymous parameters by position: for a numbered one the
// driver asks SQLite its name, which SQLite finds by a walk through all
// the names before it, so that binding many values took longer than
// running the statement.
func (sqliteDialect) placeholder(int) string { return "?" }

func (postgresDialect) placeholder(n int) string { return "$" + strconv.Itoa(n) }

// SQLite's reader begins a deferred transaction: its snapshot is taken at
// its first read and kept to its end.
func (sqliteDialect) beginSnapshot(ctx context.Context, pool *sql.DB) (*sql.Tx, error) {
	return pool.BeginTx(ctx, nil)
}

func (postgresDialect) beginSnapshot(ctx context.Context, pool *sql.DB) (*sql.Tx, error) {
	tx, err := pool.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `SET LOCAL statement_timeout = 0`); err != nil {
		_ = tx.Rollback()
		return nil, err
	}
	return tx, nil
}

func (sqliteDialect) idsHandedOut(ctx context.Context, q Querier, tenantID int64) (int64, error) {
	var last int64
	err := q.QueryRowContext(ctx, `SELECT last_id FROM tenant_sequences WHERE tenant_id = $1`, tenantID).Scan(&last)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("ids handed out: %w", err)
	}
	return last, nil
}

func (postgresDialect) idsHandedOut(context.Context, Querier, int64) (int64, error) { return 0, nil }

func (sqliteDialect) idsDrawn(ctx context.Context, q Querier) (int64, error) {
	var n int64
	err := q.QueryRowContext(ctx, `SELECT coalesce(max(last_id), 0) FROM tenant_sequences`).Scan(&n)
	return n, err
}

func (postgresDialect) idsDrawn(ctx context.Context, q Querier) (int64, error) {
	var n int64
	err := q.QueryRowContext(ctx, `SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM record_ids`).Scan(&n)
	return n, err
}

func (sqliteDialect) reserveIDs(ctx context.Context, q Querier, tenantID, through int64) error {
	_, err := q.ExecContext(ctx, `INSERT INTO tenant_sequences (tenant_id, last_id) VALUES ($1, $2)
		ON CONFLICT (tenant_id) DO UPDATE SET last_id = max(tenant_sequences.last_id, excluded.last_id)`, tenantID, through)
	return err
}

// The sequence serves every tenant, and setval is no transaction's: it
// is set only when a value drawn now is below through, so that it never
// goes back below the ids other writers hold.
func (postgresDialect) reserveIDs(ctx context.Context, q Querier, _ int64, through int64) error {
	_, err := q.ExecContext(ctx, `SELECT setval('record_ids', $1::bigint) FROM (SELECT nextval('record_ids') AS v) n WHERE n.v < $1::bigint`, through)
	return err
}

// On SQLite, an flock on a file of the slug's in the folder
// DATABASE.tenant-locks. The files stay: removing one while another
// process opens it would let two processes lock different files.
func (d sqliteDialect) tenantLock(_ context.Context, _ *sql.DB, slug string) (func(), error) {
	dir := d.path + ".tenant-locks"
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, slug), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrConflict
		}
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// On PostgreSQL, a session advisory lock keyed by the schema and the
// slug, held on a connection of its own. It waits a few seconds for a
// holder that is gone: the server ends a killed process's session when it
// notices, which may be just after the next command asks.
func (postgresDialect) tenantLock(ctx context.Context, pool *sql.DB, slug string) (func(), error) {
	conn, err := pool.Conn(ctx)
	if err != nil {
		return nil, err
	}
	const key = `hashtextextended('planwerk-tenant:' || current_schema() || ':' || $1::text, 0)`
	_, err = conn.ExecContext(ctx, `SET lock_timeout = '5s'`)
	if err == nil {
		_, err = conn.ExecContext(ctx, `SELECT pg_advisory_lock(`+key+`)`, slug)
	}
	if err == nil {
		_, err = conn.ExecContext(ctx, `RESET lock_timeout`)
	}
	if err != nil {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		conn.Close()
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "55P03" {
			return nil, ErrConflict
		}
		return nil, err
	}
	return func() {
		if _, err := conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock(`+key+`)`, slug); err != nil {
			// Never hand a session that may still hold the lock back to the pool.
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		conn.Close()
	}, nil
}

// PutTenantState stores the tenant's state in q, a transaction of the
// caller's that creates the tenant in that state (an import's tenant,
// importing until it is complete).
func (db *DB) PutTenantState(ctx context.Context, q Querier, tenantID int64, state string) error {
	return db.putTenantState(ctx, q, tenantID, state)
}
