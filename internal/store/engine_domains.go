package store

import "context"

// More of the surface domain packages build on: a writing statement that
// reads its result.

// Single runs fn, whose statements write, as a transaction of its own:
// under group commit in the writer's next batch, otherwise directly on
// the pool, each statement committing itself. It is ExecOne for a
// statement whose result is read (INSERT … RETURNING).
func (db *DB) Single(ctx context.Context, fn func(q Querier) error) error {
	return db.single(ctx, fn)
}
