package timetrack

import (
	"context"
	"errors"
	"slices"
	"strconv"

	"planwerk/internal/records"
	"planwerk/internal/store"
)

// dayLocks is the lock protocol that keeps WORK entries off approved
// project days, shared by entry writes and approvals. (PostgreSQL takes
// the locks; SQLite runs one writer at a time and they are free.)
//
// A write of a WORK entry holds the entry's row (records reads it FOR
// UPDATE) before it takes any lock here; then
//   - join: the join lock of a day it brings the entry into (creates it
//     there or moves it in), and
//   - hold: the locks of every day it leaves or enters, in a fixed order,
//     until it commits; under them it reads whether a day is approved.
//
// An approval must not hold a day while it waits for the rows of its
// entries, or it would deadlock with such writers (PostgreSQL aborts one
// side, and under steady edits an approval failed after its retries). So
// it takes the rows before the days:
//  1. approvals: one approval of the tenant at a time (writers never take it);
//  2. the rows of the days' WORK entries, by writing their new state;
//     holding no lock a writer wants, it waits for nobody who waits for it;
//  3. join for each day (one statement): from here on no WORK entry
//     joins the days;
//  4. the rows again, to hold those of entries that joined during step 2;
//     from here on no entry joins or leaves the days;
//  5. hold: writers holding a day hold no row of the approval's.
//
// An entry that joins, leaves and rejoins a day within the milliseconds
// between steps 2 and 4 can still close a cycle; PostgreSQL breaks it and
// the transaction is retried.
type dayLocks struct {
	db     Store
	tx     store.Querier
	tenant int64
}

func (s *Service) locks(tx store.Querier, tenantID int64) dayLocks {
	return dayLocks{db: s.db, tx: tx, tenant: tenantID}
}

// approvals serialises the approvals of the tenant (step 1).
func (l dayLocks) approvals(ctx context.Context) error {
	return l.db.Lock(ctx, l.tx, l.tenant, "approval")
}

// join takes the join locks of the days an entry or an approval brings
// entries into, in the order given, in one statement.
func (l dayLocks) join(ctx context.Context, pairs ...pair) error {
	keys := make([]string, len(pairs))
	for i, p := range pairs {
		keys[i] = "project-day-join:" + l.key(p)
	}
	return l.db.LockAll(ctx, l.tx, l.tenant, keys)
}

// hold takes the locks of the days for the rest of the transaction, in a
// fixed order so two transactions never wait for each other in a circle,
// and returns the days sorted and without repeats. The locks are one
// statement, which takes them one after the other in that order.
func (l dayLocks) hold(ctx context.Context, pairs []pair) ([]pair, error) {
	slices.SortFunc(pairs, comparePairs)
	pairs = slices.Compact(pairs)
	keys := make([]string, len(pairs))
	for i, p := range pairs {
		keys[i] = "project-day:" + l.key(p)
	}
	if err := l.db.LockAll(ctx, l.tx, l.tenant, keys); err != nil {
		return nil, err
	}
	return pairs, nil
}

func (l dayLocks) key(p pair) string {
	return strconv.FormatInt(p.project, 10) + ":" + p.day
}

// readTask reads a task a WORK entry names, in the entry's write; when
// the write brings the entry to the task (join), with the task's row held
// FOR SHARE until the write ends. found is false for a task that is gone.
//
// The task's row is the lock that keeps a WORK entry and its task in
// agreement about the project while both change (PostgreSQL; SQLite runs
// one writer at a time):
//   - a change of a task locks the task's row FOR UPDATE first (records
//     does so for every update); under it CheckTask reads the entries that
//     name the task;
//   - a write that brings a WORK entry to a (task, project) reads the task
//     here, FOR SHARE, after every lock of dayLocks, and compares the
//     projects under it. Entries share the row, so those joining one task
//     do not wait for each other; a change of the task waits for them all,
//     and they for it.
//
// Whichever comes second waits for the first to commit, and its next read
// (each statement of a PostgreSQL write transaction reads what has
// committed before it) sees the first one's write: a task given a project
// and an entry of another project naming it cannot both commit.
//
// The task's row is the last lock an entry write takes, and a change of a
// task waits for no other lock while it holds it, so the row closes no
// cycle with dayLocks: who holds a task's row waits for nobody.
func (s *Service) readTask(ctx context.Context, c records.Change, id int64, join bool) (doc records.Doc, found bool, err error) {
	tasks := s.db.Records(c.Tx, c.Caller.TenantID, records.Collection(s.tasks))
	read := tasks.Get
	if join {
		read = tasks.Share
	}
	rec, err := read(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	doc, err = records.Decode(rec.Doc)
	return doc, err == nil, err
}
