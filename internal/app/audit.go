package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"planwerk/internal/audit"
	"planwerk/internal/flagfile"
	"planwerk/internal/store"
	"planwerk/internal/tenancy"
)

// verifyPage is how many entries one statement of audit verify reads: a
// statement of its own per page keeps every read short (PostgreSQL's
// statement timeout, SQLite's snapshot) and memory flat.
const verifyPage = 10000

// runAuditVerify walks each tenant's audit chain (or one tenant's) and
// prints, per tenant, how many entries verified. A chain that does not
// verify is an error naming its tenant and the seq of the first entry
// that fails; the other tenants are still walked and printed. With
// --expect, the heads an earlier audit head printed must still be
// reached.
func runAuditVerify(ctx context.Context, args []string, stdio IO) error {
	var slug, expectFile string
	db, _, err := adminDatabase(ctx, "audit verify", args, stdio, readOnly, nil, func(fs *flagSet) {
		fs.StringVar(&slug, "tenant", "", "verify this tenant's chain only (slug; default: every tenant's)")
		fs.StringVar(&expectFile, "expect", "", "a file of heads printed by audit head before: each tenant's chain must still reach them")
	})
	if err != nil {
		return err
	}
	defer db.Close()
	var expect map[string][]audit.Head
	if expectFile != "" {
		if expect, err = readHeads(expectFile); err != nil {
			return err
		}
	}
	tenants, err := verifyTenants(ctx, db, slug)
	if err != nil {
		return err
	}
	var broken []string
	for _, t := range tenants {
		n, err := verifyChain(ctx, db, t.ID, expect[t.Slug])
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

// runAuditHead prints each tenant's head (or one tenant's): the seq and
// hash of its chain's last entry, a line "SLUG SEQ HASH" each, for an
// auditor to keep where the operator cannot change it, and to give to
// audit verify --expect later.
func runAuditHead(ctx context.Context, args []string, stdio IO) error {
	var slug string
	db, _, err := adminDatabase(ctx, "audit head", args, stdio, readOnly, nil, func(fs *flagSet) {
		fs.StringVar(&slug, "tenant", "", "print this tenant's head only (slug; default: every tenant's)")
	})
	if err != nil {
		return err
	}
	defer db.Close()
	tenants, err := verifyTenants(ctx, db, slug)
	if err != nil {
		return err
	}
	for _, t := range tenants {
		h, err := db.AuditHead(ctx, t.ID)
		if err != nil {
			return fmt.Errorf("tenant %s: %w", t.Slug, err)
		}
		fmt.Fprintf(stdio.Stdout, "%s %d %s\n", t.Slug, h.Seq, h.Hash)
	}
	return nil
}

// readHeads reads a file of heads as audit head prints them, by slug: a
// line "SLUG SEQ HASH" each (several of one tenant are all checked);
// blank lines and lines starting with # are left out.
func readHeads(path string) (map[string][]audit.Head, error) {
	raw, err := flagfile.Read(path, flagfile.Max)
	if err != nil {
		return nil, fmt.Errorf("--expect: %s: %w", path, err)
	}
	heads := map[string][]audit.Head{}
	for i, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		var h audit.Head
		if len(f) == 3 {
			h.Seq, err = strconv.ParseInt(f[1], 10, 64)
			h.Hash = f[2]
		}
		if len(f) != 3 || err != nil || h.Seq < 0 || !audit.IsHash(h.Hash) || !tenancy.ValidSlug(f[0]) {
			return nil, fmt.Errorf("--expect: %s line %d: not \"SLUG SEQ HASH\" as audit head prints it", path, i+1)
		}
		heads[f[0]] = append(heads[f[0]], h)
	}
	return heads, nil
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

// verifyChain verifies the tenant's chain from where it starts (its
// first entry, or after the last one a purge removed), a page at a time,
// and returns how many entries verified, or the *audit.Broken of the
// first that does not. Pages are read one statement each, so a purge
// may remove entries while the walk goes on: ahead of it, that would
// look like entries removed. When the chain breaks and the chain's start
// has moved meanwhile, a purge ran; the walk then starts again from the
// new start.
func verifyChain(ctx context.Context, db *store.DB, tenantID int64, expect []audit.Head) (int64, error) {
	for {
		start, err := db.AuditStart(ctx, db.Reader(), tenantID)
		if err != nil {
			return 0, err
		}
		v := audit.NewVerifier(start)
		v.Expect(expect...)
		_, err = audit.Walk(ctx, v, db.AuditPages(tenantID), verifyPage)
		var b *audit.Broken
		if !errors.As(err, &b) {
			return v.Count(), err
		}
		now, serr := db.AuditStart(ctx, db.Reader(), tenantID)
		if serr != nil {
			return 0, serr
		}
		if now == start {
			return v.Count(), b
		}
	}
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
