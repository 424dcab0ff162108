package store

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// SQLite parses and plans a statement each time it is prepared, and
// database/sql prepares each statement it is given anew: for the short
// statements of a write, that costs as much as running them. The writer
// therefore keeps the statements it runs again and again prepared on its
// connection: those a batch ran more than once are prepared after it
// commits, up to maxHot of them; later batches run them as they are.

// maxHot bounds the prepared statements; statements whose text varies
// (lists of values, compiled criteria) mostly stay unprepared.
const maxHot = 64

// hotStatements are the writer's prepared statements.
type hotStatements struct {
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
	seen  map[string]int // texts run unprepared since the last preparing
}

func newHotStatements() *hotStatements {
	return &hotStatements{stmts: map[string]*sql.Stmt{}, seen: map[string]int{}}
}

// lookup returns the prepared statement of query, or nil and notes that
// it ran unprepared.
func (h *hotStatements) lookup(query string) *sql.Stmt {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.stmts[query]; s != nil {
		return s
	}
	if _, ok := h.seen[query]; ok || len(h.seen) < 4*maxHot {
		h.seen[query]++
	}
	return nil
}

// prepare prepares, on pool, the statements run more than once since the
// last call. It runs between batches, when the writer's connection is
// free.
func (h *hotStatements) prepare(pool *sql.DB) {
	h.mu.Lock()
	var due []string
	for q, n := range h.seen {
		if n > 1 && len(h.stmts)+len(due) < maxHot {
			due = append(due, q)
		}
	}
	clear(h.seen)
	h.mu.Unlock()
	for _, q := range due {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s, err := pool.PrepareContext(ctx, q)
		cancel()
		if err != nil {
			continue // it runs unprepared, as before
		}
		h.mu.Lock()
		h.stmts[q] = s
		h.mu.Unlock()
	}
}

func (h *hotStatements) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.stmts {
		_ = s.Close()
	}
	clear(h.stmts)
}

// hotTx is a batch's transaction that runs prepared statements where it
// has them.
type hotTx struct {
	*sql.Tx
	hot *hotStatements
}

func (t hotTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := t.hot.lookup(query); s != nil {
		return t.StmtContext(ctx, s).ExecContext(ctx, args...)
	}
	return t.Tx.ExecContext(ctx, query, args...)
}

func (t hotTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := t.hot.lookup(query); s != nil {
		return t.StmtContext(ctx, s).QueryContext(ctx, args...)
	}
	return t.Tx.QueryContext(ctx, query, args...)
}

func (t hotTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := t.hot.lookup(query); s != nil {
		return t.StmtContext(ctx, s).QueryRowContext(ctx, args...)
	}
	return t.Tx.QueryRowContext(ctx, query, args...)
}
