package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Group commit. SQLite has one writer, and with synchronous(FULL) every
// commit waits for the disk: committed one by one, concurrent writes
// would each pay a sync of their own. Instead, a committer goroutine
// keeps one transaction open for a batch of writes and hands it to them
// in turn; each runs in its own goroutine, inside a savepoint of its own,
// so that a write that fails is rolled back alone while its neighbours
// stay. When no write is waiting (or the batch is full, or its wait is
// up), the batch commits with one sync, and only then does each of its
// writes hear that it succeeded: an acknowledged write is on disk.
//
// A write whose error leaves the transaction unusable (an interrupted
// statement, a full disk) breaks the batch: the transaction is rolled
// back, and the writes that had done their part run again in the next
// batch, as on PostgreSQL after a serialization failure. So does a write
// whose request gave up (its deadline passed, its client went away)
// after its turn but before the batch began to commit: it was told it
// failed, so the batch must not commit it, and it cannot be taken out
// alone. A request whose deadline passes once the commit has begun waits
// for its outcome a little longer (deadline.go).

// errBatchAborted tells a write that its batch was rolled back for a
// neighbour's fault: it runs again.
var errBatchAborted = errors.New("the batch of writes this one was part of was rolled back")

// errClosed is a write that came after the database was closed (the
// service is shutting down): unavailable, like a lost connection.
var errClosed = fmt.Errorf("the database is closed: %w", sql.ErrConnDone)

// committer runs the batches of a write pool of one connection.
type committer struct {
	pool *sql.DB
	// queue holds the writes waiting for their turn; the write gate bounds
	// how many there are, its capacity is that bound.
	queue chan *commitJob
	// wait is how long a batch may wait for more writes before it
	// commits; it waits only while it is smaller than the batch before,
	// so a lone writer never waits at all.
	wait     time.Duration
	maxBatch int
	// observe learns the size of each committed batch; may be nil.
	observe func(writes int)
	// changed is called after a commit that recorded changes, with their
	// tenants (it wakes the feed's waiters), whether or not their requests
	// still listen.
	changed func(tenants ...int64)
	hot     *hotStatements
	// heads are the audit chains' heads as committed batches left them,
	// so that a batch reads none it knows. Another process's entries
	// (an operator's command) make the next entry's seq collide: the
	// batch fails, heads are forgotten, and its writes run again.
	heads   map[int64]chainHead
	stop    chan struct{}
	stopped chan struct{}
	closing sync.Once
}

// commitJob is one write's place in a batch.
type commitJob struct {
	ctx    context.Context
	turn   chan turnGrant  // the committer's go-ahead
	done   chan turnResult // the write's report that its turn is over
	result chan error      // the batch's outcome, for writes that kept their work
	// state is decided once, between a kept write's turn and its batch's
	// commit, by whichever comes first: the committer, which commits the
	// write (jobCommitting), or its request, which gives up on it
	// (jobAbandoned) and is then told it failed: the batch must not
	// commit it.
	state atomic.Int32
	// entries are a kept write's audit entries, made after its turn by
	// whichever needs them first: the write, beside the turns of the
	// writes after it, or the committer at the batch's end.
	entries auditEntries
}

// auditEntries makes a write's audit entries once.
type auditEntries struct {
	once sync.Once
	make func() ([]pendingEntry, error) // set by the write's turn
	es   []pendingEntry
	err  error
}

func (a *auditEntries) get() ([]pendingEntry, error) {
	a.once.Do(func() { a.es, a.err = a.make() })
	return a.es, a.err
}

// The states of a kept write (commitJob.state).
const (
	jobWaiting int32 = iota
	jobCommitting
	jobAbandoned
)

type turnGrant struct {
	tx  *sql.Tx
	err error // the batch could not begin
}

type turnResult struct {
	kept    bool    // the write's work stays in the transaction
	broken  bool    // the transaction can no longer be used
	changed []int64 // the tenants whose changes the write recorded for the feed
}

func newCommitter(pool *sql.DB, maxBatch int, wait time.Duration, changed func(tenants ...int64)) *committer {
	c := &committer{pool: pool, queue: make(chan *commitJob, maxBatch), wait: wait, maxBatch: maxBatch, changed: changed,
		hot: newHotStatements(maxHot, auditWriterStatements()...), heads: map[int64]chainHead{}, stop: make(chan struct{}), stopped: make(chan struct{})}
	go c.run()
	return c
}

// close stops the committer; closing again does nothing.
func (c *committer) close() {
	c.closing.Do(func() { close(c.stop) })
	<-c.stopped
}

func (c *committer) run() {
	defer close(c.stopped)
	defer c.hot.close()
	last := 0
	for {
		select {
		case j := <-c.queue:
			last = c.batch(j, last)
			c.hot.prepare(c.pool)
		case <-c.stop:
			return
		}
	}
}

// batch runs one batch that starts with first and returns its size;
// last is the size of the batch before.
func (c *committer) batch(first *commitJob, last int) int {
	// The transaction belongs to the batch, not to any one request: a
	// request that ends early must not roll back its neighbours' work.
	tx, err := c.pool.BeginTx(context.Background(), nil)
	if err != nil {
		c.grant(first, turnGrant{err: fmt.Errorf("begin transaction: %w", err)})
		return 0
	}
	var kept []*commitJob
	broken := false
	var changed []int64
	size := 0
	give := func(j *commitJob) {
		size++
		if !c.grant(j, turnGrant{tx: tx}) {
			return
		}
		r := <-j.done
		if r.kept {
			kept = append(kept, j)
			changed = append(changed, r.changed...)
		}
		broken = broken || r.broken
	}
	give(first)
	deadline := time.Now().Add(c.wait)
	for !broken && size < c.maxBatch {
		select {
		case j := <-c.queue:
			give(j)
			continue
		default:
		}
		left := time.Until(deadline)
		if size >= last || left <= 0 {
			break
		}
		t := time.NewTimer(left)
		select {
		case j := <-c.queue:
			t.Stop()
			give(j)
			continue
		case <-t.C:
		}
		break
	}
	var failed *commitJob // a write whose audit entries could not be made
	var heads map[int64]chainHead
	if !broken {
		// A write whose request has given up since its turn cannot be
		// taken out of the transaction alone (its savepoint is
		// released): the batch is rolled back, and the others run again.
		broken = !commit(kept)
	}
	if !broken {
		heads, failed, err = c.appendAudit(tx, kept)
		broken = err != nil
	}
	if broken {
		_ = tx.Rollback()
		clear(c.heads)
		for _, j := range kept {
			if j == failed {
				j.result <- err
			} else {
				j.result <- errBatchAborted
			}
		}
		return size
	}
	err = tx.Commit()
	if err != nil {
		err = fmt.Errorf("commit: %w", err)
		clear(c.heads)
	} else {
		if len(c.heads)+len(heads) > maxHeads {
			clear(c.heads)
		}
		maps.Copy(c.heads, heads)
		if c.observe != nil {
			c.observe(len(kept))
		}
		if len(changed) > 0 {
			c.changed(changed...)
		}
	}
	for _, j := range kept {
		j.result <- err
	}
	return size
}

// appendAudit stores the audit entries of the batch's kept writes, in
// the order of their turns (the order of their changes' positions), as
// the batch's last statements: each tenant's chain head is read once a
// batch, and no write's turn spends time on its entries. A write whose
// entries could not be made is returned with the error; it fails alone,
// the others run again.
func (c *committer) appendAudit(tx *sql.Tx, kept []*commitJob) (map[int64]chainHead, *commitJob, error) {
	byTenant := map[int64][]pendingEntry{}
	var tenants []int64
	for _, j := range kept {
		es, err := j.entries.get()
		if err != nil {
			return nil, j, err
		}
		for _, p := range es {
			if _, ok := byTenant[p.tenant]; !ok {
				tenants = append(tenants, p.tenant)
			}
			byTenant[p.tenant] = append(byTenant[p.tenant], p)
		}
	}
	slices.Sort(tenants)
	// Like the savepoint statements, these belong to no one request.
	ctx := context.Background()
	q := hotTx{Tx: tx, hot: c.hot}
	heads := make(map[int64]chainHead, len(tenants))
	var rows []any
	for _, id := range tenants {
		var known *chainHead
		if h, ok := c.heads[id]; ok {
			known = &h
		}
		var err error
		var h chainHead
		if rows, h, err = linkChain(ctx, q, id, known, byTenant[id], rows); err != nil {
			return nil, nil, err
		}
		heads[id] = h
	}
	// The tenants' entries share statements.
	return heads, nil, insertRows(ctx, q, insertAuditSQLite, rows)
}

// commit claims the kept writes for the commit; it reports false when
// one of them was given up by its request first.
func commit(kept []*commitJob) bool {
	all := true
	for _, j := range kept {
		all = j.state.CompareAndSwap(jobWaiting, jobCommitting) && all
	}
	return all
}

// maxHeads bounds the chain heads the committer remembers.
const maxHeads = 1 << 16

// grant gives j its turn, unless its request ended while it waited.
func (c *committer) grant(j *commitJob, g turnGrant) bool {
	select {
	case j.turn <- g:
		return g.err == nil
	case <-j.ctx.Done():
		return false
	}
}

// ObserveBatches makes fn learn how many writes each batch committed
// (for metrics); without group commit it is never called. Call it before
// the database is used.
func (db *DB) ObserveBatches(fn func(writes int)) {
	if db.committer != nil {
		db.committer.observe = fn
	}
}

// single runs fn, whose statements write, as a transaction of its own:
// with group commit in the writer's next batch (a statement run on the
// pool would wait for the writer's connection and pay a sync of its own),
// otherwise directly on the pool, committed by the statement itself.
func (db *DB) single(ctx context.Context, fn func(q Querier) error) error {
	if db.committer != nil {
		return db.Tx(ctx, fn)
	}
	release, err := db.writes.Acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	return fn(db)
}

// writeOne runs one writing statement as a transaction of its own and
// reports whether it changed a row.
func (db *DB) writeOne(ctx context.Context, what, query string, args ...any) (bool, error) {
	var n int64
	err := db.single(ctx, func(q Querier) error {
		res, err := q.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		// Read while the statement's connection is still this write's:
		// database/sql locks the connection to read a result, and once
		// it is back in its pool another statement may hold it, or (the
		// writer's one connection under group commit) the next batch's
		// BEGIN, waiting for a lock held elsewhere, with no deadline.
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	return n > 0, nil
}

// groupTx runs fn as one write of a batch.
func (db *DB) groupTx(ctx context.Context, fn func(q Querier) error) error {
	c := db.committer
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("wait for the writer: %w", err)
	}
	j := &commitJob{ctx: ctx, turn: make(chan turnGrant), done: make(chan turnResult, 1), result: make(chan error, 1)}
	select {
	case c.queue <- j:
	case <-ctx.Done():
		return fmt.Errorf("wait for the writer: %w", ctx.Err())
	case <-c.stopped:
		return errClosed
	}
	var g turnGrant
	select {
	case g = <-j.turn:
	case <-ctx.Done():
		return fmt.Errorf("wait for the writer: %w", ctx.Err())
	case <-c.stopped:
		return errClosed
	}
	if g.err != nil {
		return g.err
	}
	if err := db.turn(ctx, hotTx{Tx: g.tx, hot: c.hot}, j, fn); err != nil {
		return err
	}
	// The write's audit entries are made here, beside the turns of the
	// writes after it, unless the committer, at the batch's end, needed
	// them first; it stores them.
	_, _ = j.entries.get()
	select {
	case err := <-j.result:
		return err
	case <-ctx.Done():
	}
	if j.state.CompareAndSwap(jobWaiting, jobAbandoned) {
		// The batch will not commit this write: it failed.
		return fmt.Errorf("wait for the commit: %w", ctx.Err())
	}
	// The batch is committing it: its outcome is awaited commitGrace
	// longer. Should even that not bring it (a disk that does not
	// complete the sync), the request is told it did not hear, the
	// one case where a write it was not told of may still commit
	// (deadline.go).
	wait, cancel := commitContext(ctx)
	defer cancel()
	select {
	case err := <-j.result:
		return err
	case <-wait.Done():
		return fmt.Errorf("wait for the commit: %w", ctx.Err())
	}
}

// turn runs fn inside a savepoint of the batch's transaction and reports
// to the committer when it is done, whatever happens (a panic included).
func (db *DB) turn(ctx context.Context, tx hotTx, j *commitJob, fn func(q Querier) error) (err error) {
	var r turnResult
	defer func() { j.done <- r }()
	// Savepoint statements run whether or not the request is still there:
	// the transaction is its neighbours' too.
	keep := context.WithoutCancel(ctx)
	if _, err := tx.ExecContext(keep, `SAVEPOINT write`); err != nil {
		r.broken = true
		return fmt.Errorf("begin write: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			r.broken = !undo(keep, tx)
			panic(p)
		}
	}()
	t := &txn{Querier: tx}
	var tenants []int64
	if err = fn(t); err == nil {
		// The audit entries are left to the batch's end.
		tenants, err = db.flush(ctx, t, nil)
	}
	if err != nil {
		r.broken = !undo(keep, tx)
		return err
	}
	if _, err := tx.ExecContext(keep, `RELEASE write`); err != nil {
		r.broken = true
		return fmt.Errorf("end write: %w", err)
	}
	j.entries.make = func() ([]pendingEntry, error) { return db.auditList(t) }
	r.kept, r.changed = true, tenants
	return nil
}

// undo rolls a write back to its savepoint and reports whether the
// transaction is still usable.
func undo(ctx context.Context, tx hotTx) bool {
	if _, err := tx.ExecContext(ctx, `ROLLBACK TO write`); err != nil {
		return false
	}
	_, err := tx.ExecContext(ctx, `RELEASE write`)
	return err == nil
}
