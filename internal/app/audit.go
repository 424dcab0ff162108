package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"planwerk/internal/audit"
	"planwerk/internal/store"
)

// verifyPage is how many entries one statement of audit verify reads: a
// statement of its own per page keeps every read short (PostgreSQL's
// statement timeout, SQLite's snapshot) and memory flat.
const verifyPage = 10000

// runAuditVerify walks each tenant's audit chain (or one tenant's) and
// prints, per tenant, how many entries verified. A chain that does not
// verify is an error naming its tenant and the seq of the first entry
// that fails; the other tenants are still walked and printed.
func runAuditVerify(ctx context.Context, args []string, stdio IO) error {
	var slug string
	db, _, err := adminDatabase(ctx, "audit verify", args, stdio, readOnly, nil, func(fs *flagSet) {
		fs.StringVar(&slug, "tenant", "", "verify this tenant's chain only (slug; default: every tenant's)")
	})
	if err != nil {
		return err
	}
	defer db.Close()
	tenants, err := verifyTenants(ctx, db, slug)
	if err != nil {
		return err
	}
	var broken []string
	for _, t := range tenants {
		n, err := verifyChain(ctx, db, t.ID)
		var b *audit.Broken
		switch {
		case errors.As(err, &b):
			broken = append(broken, fmt.Sprintf("tenant %s: %v", t.Slug, b))
		case err != nil:
			return fmt.Errorf("tenant %s: %w", t.Slug, err)
		default:
			fmt.Fprintf(stdio.Stdout, "tenant %s: %d entries verified\n", t.Slug, n)
		}
	}
	if len(broken) > 0 {
		return errors.New(strings.Join(broken, "; "))
	}
	return nil
}

// verifyTenants are the tenants audit verify walks: the one of slug, or
// every tenant, in slug order.
func verifyTenants(ctx context.Context, db *store.DB, slug string) ([]store.Tenant, error) {
	if slug != "" {
		t, err := db.TenantBySlug(ctx, slug)
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("no tenant %q", slug)
		}
		return []store.Tenant{t}, err
	}
	all, err := db.ListTenants(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]store.Tenant, len(all))
	for i, t := range all {
		out[i] = t.Tenant
	}
	return out, nil
}

// verifyChain verifies the tenant's chain from its oldest entry, a page
// at a time, and returns how many entries verified, or the *audit.Broken
// of the first that does not. Pages are read one statement each, so a
// purge may remove entries while the walk goes on: ahead of it, that
// would look like entries removed. When the chain breaks and the first
// entry the walk read is gone, a purge ran; the walk then starts again
// from the oldest entry left.
func verifyChain(ctx context.Context, db *store.DB, tenantID int64) (int64, error) {
	for {
		v, first, err := walkChain(ctx, db, tenantID)
		var b *audit.Broken
		if !errors.As(err, &b) || first == 0 {
			return v.Count(), err
		}
		oldest, err := oldestSeq(ctx, db, tenantID)
		if err != nil {
			return 0, err
		}
		if oldest <= first {
			return v.Count(), b
		}
	}
}

// walkChain feeds the tenant's entries, oldest first, to a Verifier and
// returns it, with the seq of the first entry read (0: none).
func walkChain(ctx context.Context, db *store.DB, tenantID int64) (v *audit.Verifier, first int64, err error) {
	v = &audit.Verifier{}
	var after int64
	for {
		n := 0
		err := db.AuditEntries(ctx, tenantID, store.AuditFilter{After: after, Limit: verifyPage}, func(e audit.Entry) error {
			if n++; first == 0 {
				first = e.Seq
			}
			after = e.Seq
			return v.Next(e)
		})
		if err != nil || n < verifyPage {
			return v, first, err
		}
	}
}

// oldestSeq is the seq of the tenant's oldest entry (0: none).
func oldestSeq(ctx context.Context, db *store.DB, tenantID int64) (int64, error) {
	var seq int64
	err := db.AuditEntries(ctx, tenantID, store.AuditFilter{Limit: 1}, func(e audit.Entry) error {
		seq = e.Seq
		return nil
	})
	return seq, err
}

// purgeAudit deletes, tenant by tenant, the audit entries older than
// cutoff (store.PurgeAudit: never a tenant's newest, and the chain left
// verifies), within purgeBudget. A run cut short starts the next one at
// the tenant it did not finish, so that a long first purge of one tenant
// does not keep the others waiting; next holds that tenant's id between
// runs. A tenant whose purge fails does not keep the others from theirs;
// the error names each.
func purgeAudit(ctx context.Context, db *store.DB, cutoff time.Time, next *int64, log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, purgeBudget)
	defer cancel()
	tenants, err := db.AuditTenants(ctx)
	if err != nil {
		return fmt.Errorf("purge audit log: %w", err)
	}
	// From the tenant the last run stopped at, round to the one before.
	start := 0
	for start < len(tenants) && tenants[start] < *next {
		start++
	}
	before := store.Timestamp(cutoff)
	var failed []error
	for i := range tenants {
		id := tenants[(start+i)%len(tenants)]
		n, err := db.PurgeAudit(ctx, id, before)
		if n > 0 {
			log.Info("purged audit log", "tenant", id, "removed", n)
		}
		if err != nil {
			failed = append(failed, fmt.Errorf("tenant %d: %w", id, err))
		}
		if ctx.Err() != nil {
			*next = id
			return errors.Join(failed...)
		}
	}
	*next = 0
	return errors.Join(failed...)
}
