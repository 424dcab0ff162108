package timetrack

import (
	"context"
	"slices"
	"strconv"

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
//  3. join for each day: from here on no WORK entry joins the days;
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

// join takes the join lock of a day an entry is brought into.
func (l dayLocks) join(ctx context.Context, p pair) error {
	return l.db.Lock(ctx, l.tx, l.tenant, "project-day-join:"+l.key(p))
}

// hold takes the locks of the days for the rest of the transaction, in a
// fixed order so two transactions never wait for each other in a circle,
// and returns the days sorted and without repeats.
func (l dayLocks) hold(ctx context.Context, pairs []pair) ([]pair, error) {
	slices.SortFunc(pairs, comparePairs)
	pairs = slices.Compact(pairs)
	for _, p := range pairs {
		if err := l.db.Lock(ctx, l.tx, l.tenant, "project-day:"+l.key(p)); err != nil {
			return nil, err
		}
	}
	return pairs, nil
}

func (l dayLocks) key(p pair) string {
	return strconv.FormatInt(p.project, 10) + ":" + p.day
}
