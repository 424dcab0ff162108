package store

import (
	"context"
	"fmt"
	"time"
)

// Housekeeping: the purges below are the store's deliberate cross-tenant
// statements. None walks the tenants: each finds what to delete through an
// index leading with the column it purges by (migration 00015), so a run
// costs what it deletes, and one with nothing to delete costs a single
// index probe however many tenants there are. Each deletes in batches,
// every batch a short transaction of its own that takes its turn at the
// pools like any tenant's (the fair share of key 0, which no tenant has),
// so requests run between batches. A run ends when nothing is left or
// when ctx ends; what is left then goes at the next run.

// Bounds of one purge batch.
const (
	// purgeBatch is the most rows a batch deletes (of the changes: the
	// most it selects; see purgeChangesBatch).
	purgeBatch = 500
	// purgeTenants is the most tenants a batch of the change purge
	// touches, each with two statements.
	purgeTenants = 50
)

// errPurgeCut reports a purge that ctx ended before it was done.
func errPurgeCut(ctx context.Context, what string, done int64) error {
	return fmt.Errorf("purge %s: stopped after %d, the rest goes next time: %w", what, done, context.Cause(ctx))
}

// purgeRows runs del, a DELETE whose last parameter bounds the rows it
// deletes, batch after batch until one deletes fewer than purgeBatch, and
// returns how many rows went.
func (db *DB) purgeRows(ctx context.Context, what, del string, args ...any) (int64, error) {
	args = append(args, purgeBatch)
	var total int64
	for {
		if ctx.Err() != nil {
			return total, errPurgeCut(ctx, what, total)
		}
		var n int64
		err := db.Tx(ctx, func(q Querier) error {
			res, err := q.ExecContext(ctx, del, args...)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		if err != nil {
			return total, fmt.Errorf("purge %s: %w", what, err)
		}
		total += n
		if n < purgeBatch {
			return total, nil
		}
	}
}

// PurgeChanges deletes the changes of every tenant recorded before cutoff
// and remembers, per tenant, the position up to which they were purged:
// cross-tenant housekeeping over the changes' at index.
func (db *DB) PurgeChanges(ctx context.Context, cutoff time.Time) error {
	before := Timestamp(cutoff)
	var total int64
	for {
		if ctx.Err() != nil {
			return errPurgeCut(ctx, "changes", total)
		}
		n, more, err := db.purgeChangesBatch(ctx, before)
		if err != nil {
			return fmt.Errorf("purge changes: %w", err)
		}
		total += n
		if !more {
			return nil
		}
	}
}

// purgeChangesBatch purges, in one transaction, the tenants of the oldest
// changes before `before` (at most purgeBatch changes of at most
// purgeTenants tenants). A tenant's purge is what it always was: every
// change up to the last of its positions found, which the feed then
// reports as purged. (Positions are handed out at commit and times
// stamped before, so a few changes just below that position may be a
// little younger than the cutoff; they go too, keeping "everything up to
// purged_through is gone" exact.) more says whether older changes may be
// left.
func (db *DB) purgeChangesBatch(ctx context.Context, before string) (deleted int64, more bool, err error) {
	err = db.Tx(ctx, func(q Querier) error {
		deleted, more = 0, false
		through, tenants, full, err := oldestChanges(ctx, q, before)
		if err != nil {
			return err
		}
		more = full
		for _, tenantID := range tenants {
			// Per tenant, over the primary key: a deliberate statement of
			// one tenant's, as every request's are.
			res, err := q.ExecContext(ctx, `DELETE FROM changes WHERE tenant_id = $1 AND seq <= $2`, tenantID, through[tenantID])
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			deleted += n
			if _, err := q.ExecContext(ctx,
				`UPDATE change_positions SET purged_through = $1 WHERE tenant_id = $2 AND purged_through < $1`,
				through[tenantID], tenantID); err != nil {
				return err
			}
		}
		return nil
	})
	return deleted, more, err
}

// oldestChanges reads the oldest changes before `before`, across tenants,
// and returns for each of their tenants (at most purgeTenants, in the
// order met) the highest position read. full says whether a bound cut
// the read short, so that older changes may be left.
func oldestChanges(ctx context.Context, q Querier, before string) (through map[int64]int64, tenants []int64, full bool, err error) {
	rows, err := q.QueryContext(ctx, `SELECT tenant_id, seq FROM changes WHERE at < $1 ORDER BY at LIMIT $2`, before, purgeBatch)
	if err != nil {
		return nil, nil, false, err
	}
	defer rows.Close()
	through = map[int64]int64{}
	n := 0
	for rows.Next() {
		var tenantID, seq int64
		if err := rows.Scan(&tenantID, &seq); err != nil {
			return nil, nil, false, err
		}
		n++
		last, seen := through[tenantID]
		if !seen {
			if len(tenants) == purgeTenants {
				return through, tenants, true, nil
			}
			tenants = append(tenants, tenantID)
		}
		through[tenantID] = max(last, seq)
	}
	return through, tenants, n == purgeBatch, rows.Err()
}
