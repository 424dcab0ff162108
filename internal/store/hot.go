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
// commits, up to maxHot of them; later batches run them as they are. The
// read pools do the same (readPool).

// maxHot bounds the writer's prepared statements; statements whose text
// varies (lists of values, compiled criteria) mostly stay unprepared.
const maxHot = 64

// hotStatements are the writer's prepared statements.
type hotStatements struct {
	max   int          // prepared statements at most
	mu    sync.RWMutex // read-locked on the hot path: a prepared statement's lookup
	stmts map[string]*sql.Stmt
	seen  map[string]int // texts run unprepared since the last preparing
	// always are texts prepared the first time they run: the writer's own
	// statements that run once a batch (the audit log's).
	always map[string]bool
}

func newHotStatements(max int, always ...string) *hotStatements {
	h := &hotStatements{max: max, stmts: map[string]*sql.Stmt{}, seen: map[string]int{}, always: map[string]bool{}}
	for _, q := range always {
		h.always[q] = true
	}
	return h
}

// cached returns the prepared statement of query, or nil.
func (h *hotStatements) cached(query string) *sql.Stmt {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.stmts[query]
}

// note counts a run of query unprepared and returns how many there were
// since the count last began; the caller holds mu. The count starts over
// when it holds 4*max texts: one-off texts never keep a hot one out.
func (h *hotStatements) note(query string) int {
	if _, ok := h.seen[query]; !ok && len(h.seen) >= 4*h.max {
		clear(h.seen)
	}
	h.seen[query]++
	return h.seen[query]
}

// lookup returns the prepared statement of query, or nil and notes that
// it ran unprepared.
func (h *hotStatements) lookup(query string) *sql.Stmt {
	if s := h.cached(query); s != nil {
		return s
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.stmts[query]; s != nil {
		return s
	}
	h.note(query)
	return nil
}

// prepare prepares, on pool, the statements run more than once since the
// last call. It runs between batches, when the writer's connection is
// free.
func (h *hotStatements) prepare(pool *sql.DB) {
	h.mu.Lock()
	var due []string
	for q, n := range h.seen {
		if (n > 1 || h.always[q]) && len(h.stmts)+len(due) < h.max {
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

// stmt returns the prepared statement of query on pool, preparing it the
// second time it is asked for (nil while it is not, or cannot be).
// Unlike prepare, it prepares at once: a read pool's connections are never
// all held by one transaction.
func (h *hotStatements) stmt(ctx context.Context, pool *sql.DB, query string) *sql.Stmt {
	if s := h.cached(query); s != nil {
		return s
	}
	h.mu.Lock()
	if s := h.stmts[query]; s != nil {
		h.mu.Unlock()
		return s
	}
	due := h.note(query) > 1 && len(h.stmts) < h.max
	h.mu.Unlock()
	if !due {
		return nil
	}
	s, err := pool.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if old := h.stmts[query]; old != nil {
		_ = s.Close()
		return old
	}
	h.stmts[query] = s
	delete(h.seen, query)
	return s
}

// readPool is a pool of connections that read. On SQLite it keeps the
// statements it runs again and again prepared (hot is nil elsewhere:
// pgx keeps its own statement cache).
type readPool struct {
	*sql.DB
	hot *hotStatements
}

func newReadPool(pool *sql.DB, cache bool) *readPool {
	r := &readPool{DB: pool}
	if cache {
		r.hot = newHotStatements(maxHotReads)
	}
	return r
}

// maxHotReads bounds a read pool's prepared statements: one a resource
// for single reads, and the lists clients repeat.
const maxHotReads = 128

func (p *readPool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if p.hot != nil {
		if s := p.hot.stmt(ctx, p.DB, query); s != nil {
			return s.QueryContext(ctx, args...)
		}
	}
	return p.DB.QueryContext(ctx, query, args...)
}

func (p *readPool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if p.hot != nil {
		if s := p.hot.stmt(ctx, p.DB, query); s != nil {
			// A single row of SQLite in WAL mode never waits for a
			// writer: the read goes without the request's cancellation,
			// which would cost two goroutines watching it (decisions:
			// "The cost of a single read").
			return s.QueryRowContext(context.WithoutCancel(ctx), args...)
		}
	}
	return p.DB.QueryRowContext(ctx, query, args...)
}

func (p *readPool) Close() error {
	if p.hot != nil {
		p.hot.close()
	}
	return p.DB.Close()
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
