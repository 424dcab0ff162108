package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
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
	// any transaction, or (when even the rollback fails) is discarded by
	// the driver's session reset, which refuses a connection in one.
	defer func() {
		if open {
			rollback(conn)
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
	batch.Queue(`COMMIT`)
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("a PostgreSQL connection of %T", dc)
		}
		return c.Conn().SendBatch(ctx, batch).Close()
	})
	if err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	return tenants, nil
}

// rollback ends the connection's transaction, whether or not the request
// that ran it is still there.
func rollback(conn *sql.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// When it fails, the session reset discards the connection.
	_, _ = conn.ExecContext(ctx, `ROLLBACK`)
}
