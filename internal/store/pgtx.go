package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// PostgreSQL transactions run on a connection of their own, begun and
// ended with statements, so that their end can be pipelined: the
// statement that records the changes, and with them takes the tenant's
// position lock, travels to the server together with the COMMIT, in one
// round trip. The lock is then held for the server's own work alone,
// never while an answer travels back to this process and waits for a
// CPU, so that one tenant's commits follow each other as fast as the
// server makes them durable.
//
// The same round trip carries the commit's deadline check
// (planwerk_commit_by, deadline.go): a COMMIT that waits in the server's
// socket or behind the position lock past its request's deadline rolls
// the transaction back when the server reaches it.

// pipelinedTx runs fn in a transaction on one connection of the pool.
func (db *DB) pipelinedTx(ctx context.Context, fn func(q Querier) error) (err error) {
	conn, err := db.write.Conn(ctx)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN`); err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	open := true
	// Also when fn panics: the connection goes back to the pool outside
	// any transaction, or (when even the rollback fails) is closed.
	defer func() {
		if open {
			rollback(ctx, conn)
		}
	}()
	t := &txn{Querier: conn}
	if err = fn(t); err != nil {
		return err
	}
	tenants, err := db.commitPipelined(ctx, conn, t)
	if err != nil {
		return err
	}
	open = false
	if len(tenants) > 0 {
		db.signal.fire(tenants...)
	}
	return nil
}

// commitPipelined records the transaction's changes and commits; it
// returns the tenants whose changes they were.
func (db *DB) commitPipelined(ctx context.Context, conn *sql.Conn, t *txn) ([]int64, error) {
	batch := &pgx.Batch{}
	entries, err := db.auditEntries(t)
	if err != nil {
		return nil, err
	}
	tenants, byTenant := t.byTenant()
	all := unionSorted(tenants, entries)
	var audited []statement
	if len(all) == 1 && len(entries[all[0]]) > 0 {
		audited = db.dialect.(pipelining).auditStatements(all[0], entries[all[0]])
	}
	switch {
	case len(all) == 1 && len(byTenant[all[0]]) <= changesPerInsert && (len(entries[all[0]]) == 0 || len(audited) == 1):
		// The usual case: the statements go with the COMMIT.
		if len(t.changes) > 0 {
			for _, st := range db.dialect.(pipelining).claimStatements(all[0], len(t.changes), t.changes) {
				batch.Queue(st.query, st.args...)
			}
			if db.observeChanges != nil {
				defer db.observeChanges(len(t.changes))
			}
		} else {
			batch.Queue(lockPositions, all[0])
		}
		for _, st := range audited {
			batch.Queue(st.query, st.args...)
		}
	case len(all) > 0:
		if _, err := db.flush(ctx, t, entries); err != nil {
			return nil, err
		}
	}
	if deadline, ok := ctx.Deadline(); ok {
		batch.Queue(commitBy, deadline)
	}
	batch.Queue(`COMMIT`)
	// A request that has given up sends no COMMIT; one that has not
	// hears the commit's outcome up to commitGrace after its deadline.
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	wait, cancel := commitContext(ctx)
	defer cancel()
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("a PostgreSQL connection of %T", dc)
		}
		return c.Conn().SendBatch(wait, batch).Close()
	})
	if err != nil {
		if commitRefused(err) {
			err = fmt.Errorf("%w: %w", ErrCommitTooLate, err)
		}
		return nil, fmt.Errorf("commit: %w", err)
	}
	return tenants, nil
}

// commitBy is the commit's deadline check (migration 00029).
const commitBy = `SELECT planwerk_commit_by($1)`

// commitRefused reports whether err is the deadline check's refusal.
func commitRefused(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == commitByCode
}

// rollback ends the connection's transaction, whether or not the request
// that ran it is still there, by the request's deadline and commitGrace.
func rollback(ctx context.Context, conn *sql.Conn) {
	ctx, cancel := cleanupContext(ctx)
	defer cancel()
	if _, err := conn.ExecContext(ctx, `ROLLBACK`); err == nil {
		return
	}
	// The transaction may still be open on the server, holding its
	// locks: the connection goes now (its socket closed, nothing more
	// sent), and the server ends the transaction with it, rather than
	// when the pool next hands the connection out.
	_ = conn.Raw(func(dc any) error {
		if c, ok := dc.(*stdlib.Conn); ok {
			_ = c.Conn().PgConn().Conn().Close()
		}
		return driver.ErrBadConn
	})
}
