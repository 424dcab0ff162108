package store

import (
	"context"
	"errors"
	"time"
)

// A write transaction ends by its request's deadline, whatever the
// database does, and a write its request has given up on is not
// committed afterwards (docs/decisions.md "A write past its deadline").
//
// Every wait before the commit (the write share, a connection of the
// pool, each statement, a lock, the pause between attempts) ends at the
// deadline. The commit is sent only before it, and its answer is awaited
// commitGrace longer: a commit the database began in time, but whose
// answer is slow (a WAL flush on a slow disk), is then still heard, and
// answered as it happened. A commit the database reaches only after the
// deadline refuses itself: on PostgreSQL the statement before COMMIT
// (planwerk_commit_by, migration 00029) raises once the database's
// clock is past the deadline, which the COMMIT then cannot outlive; on
// SQLite, which runs in this process, the writer commits no batch that
// holds a write whose request has already been told it failed.

// commitGrace is how long past its request's deadline a commit's answer
// is awaited: the time a commit the database began in time may take to
// come back, less than the second by which the request must be answered.
const commitGrace = 300 * time.Millisecond

// commitContext is the context the answer of a commit is awaited with:
// ctx's values and its deadline plus commitGrace, but not its
// cancellation, so that a client that goes away during the commit does
// not cut the connection while the outcome is on its way. Without a
// deadline it is ctx.
func commitContext(ctx context.Context) (context.Context, context.CancelFunc) {
	d, ok := ctx.Deadline()
	if !ok {
		return ctx, func() {}
	}
	return context.WithDeadline(context.WithoutCancel(ctx), d.Add(commitGrace))
}

// cleanupContext bounds the work that ends a transaction that did not
// commit (its ROLLBACK): by the request's deadline plus commitGrace, or
// by a few seconds when the request has none. It does not end with the
// request's cancellation: a client that went away still leaves the
// connection clean.
func cleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return commitContext(ctx)
	}
	return context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
}

// ErrCommitTooLate marks a commit the database refused because it came
// after its request's deadline: nothing of the transaction was written.
var ErrCommitTooLate = errors.New("the commit reached the database after its request's deadline")

// commitByCode is the SQLSTATE planwerk_commit_by raises (migration
// 00029): a class of Planwerk's own.
const commitByCode = "PW001"

// pause waits d between attempts of a transaction, or until ctx ends;
// it reports whether another attempt may start.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return ctx.Err() == nil
	case <-ctx.Done():
		return false
	}
}
